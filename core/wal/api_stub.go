package wal

// This file lists the package's API with placeholder bodies; the wal work
// replaces it with the real implementation (same signatures).

import "time"

// SyncMode says when an appended record is durable.
type SyncMode uint8

// Sync modes.
const (
	SyncFull   SyncMode = iota // Sync waits for an fsync covering the record (default)
	SyncNormal                 // a background fsync runs every Options.Interval; Sync does not wait
	SyncOff                    // never fsync (the OS writes back when it likes)
)

// ParseSyncMode parses "full", "normal" or "off".
func ParseSyncMode(s string) (SyncMode, error) { panic("unimplemented") }

// String returns "full", "normal" or "off".
func (m SyncMode) String() string { panic("unimplemented") }

// Options tune a log. Zero values take defaults.
type Options struct {
	Sync         SyncMode
	SegmentBytes int64         // rotate after a segment reaches this size; default 64 MiB
	Interval     time.Duration // SyncNormal's fsync period; default 5 ms
}

// LSN is the position of a record: (segment number << 32) | (offset within segment) is NOT
// promised; treat it as an opaque, increasing number.
type LSN uint64

// Stats counts the log's work since Open.
type Stats struct {
	Appends  uint64
	Fsyncs   uint64 // file fsyncs (data and directory)
	Bytes    uint64 // record bytes appended, framing included
	Segments int    // live segment files
}

// Log is a write-ahead log in a directory of segment files.
type Log struct{}

// Open opens or creates the log in dir (the directory must exist). It
// checks every segment, truncating a torn tail of the last one; corruption
// elsewhere is an error (kind errs.ErrCorrupt) naming the file and offset.
func Open(dir string, opts Options) (*Log, error) { panic("unimplemented") }

// Replay calls fn for each record in order. Call it before the first Append.
// An error from fn stops the replay and is returned as is.
func (l *Log) Replay(fn func(lsn LSN, kind byte, payload []byte) error) error {
	panic("unimplemented")
}

// Append writes one record (not yet durable) and returns its LSN. Records
// are written in call order. payload may be reused once Append returns.
func (l *Log) Append(kind byte, payload []byte) (LSN, error) { panic("unimplemented") }

// Sync returns once the record at lsn is as durable as the sync mode
// promises. Concurrent callers share one fsync (group commit).
func (l *Log) Sync(lsn LSN) error { panic("unimplemented") }

// Rotate closes the current segment and starts a new one, returning the
// LSN at which the new segment starts.
func (l *Log) Rotate() (LSN, error) { panic("unimplemented") }

// TruncateBefore deletes the segments whose records all have LSN < lsn.
func (l *Log) TruncateBefore(lsn LSN) error { panic("unimplemented") }

// Stats returns counters.
func (l *Log) Stats() Stats { panic("unimplemented") }

// Close syncs (unless SyncOff) and closes the log. Later calls return errs.ErrClosed.
func (l *Log) Close() error { panic("unimplemented") }
