package wal

import (
	"fmt"
	"strings"
	"time"

	"github.com/arcadego/arcadego/core/errs"
)

// SyncMode says when an appended record is durable.
type SyncMode uint8

// Sync modes.
const (
	SyncFull   SyncMode = iota // Sync waits for an fsync covering the record (default)
	SyncNormal                 // a background fsync runs every Options.Interval; Sync does not wait
	SyncOff                    // never fsync (the OS writes back when it likes)
)

// ParseSyncMode parses "full", "normal" or "off" (any letter case).
func ParseSyncMode(s string) (SyncMode, error) {
	switch strings.ToLower(s) {
	case "full":
		return SyncFull, nil
	case "normal":
		return SyncNormal, nil
	case "off":
		return SyncOff, nil
	}
	return 0, fmt.Errorf("sync mode %q: want full, normal or off: %w", s, errs.ErrInvalidArgument)
}

// String returns "full", "normal" or "off".
func (m SyncMode) String() string {
	switch m {
	case SyncFull:
		return "full"
	case SyncNormal:
		return "normal"
	case SyncOff:
		return "off"
	}
	return fmt.Sprintf("SyncMode(%d)", uint8(m))
}

// Options tune a log. Zero values take defaults.
type Options struct {
	Sync         SyncMode
	SegmentBytes int64         // rotate after a segment reaches this size; default 64 MiB
	Interval     time.Duration // SyncNormal's fsync period; default 5 ms
	// First is the number of the oldest segment the log must hold, as a
	// checkpoint recorded it; 0 for a log with no such record. Open then
	// refuses a log whose segment First is missing (errs.ErrCorrupt naming
	// it) and deletes older segments, which a checkpoint left behind when
	// it stopped before deleting them.
	First uint64
	// Last is the number of a segment that existed when the checkpoint
	// was taken (the active one then), 0 for none: a log whose segments
	// end before it has lost its newest segments, errs.ErrCorrupt naming
	// the first one missing.
	Last uint64
	// ReadOnly opens the log of a database another process may be writing:
	// nothing is written, truncated, deleted or fsynced; segments older
	// than First are ignored; the last segment's records end at its first
	// record that is not whole (being written); Append and Rotate fail.
	ReadOnly bool
}

// Validate reports what Open would refuse in o (kind errs.ErrInvalidArgument),
// so a caller can check before it creates anything.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

func (o Options) withDefaults() (Options, error) {
	if o.Sync > SyncOff {
		return o, fmt.Errorf("wal options: sync mode %d: %w", o.Sync, errs.ErrInvalidArgument)
	}
	if o.SegmentBytes < 0 || o.SegmentBytes > maxSegmentBytes {
		return o, fmt.Errorf("wal options: segment bytes %d outside [0, %d]: %w", o.SegmentBytes, int64(maxSegmentBytes), errs.ErrInvalidArgument)
	}
	if o.Interval < 0 {
		return o, fmt.Errorf("wal options: negative interval %v: %w", o.Interval, errs.ErrInvalidArgument)
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = defaultSegmentBytes
	}
	if o.Interval == 0 {
		o.Interval = 5 * time.Millisecond
	}
	return o, nil
}
