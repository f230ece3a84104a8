package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// Deletes.
//
// A delete removes the rows of a type, of some devices or all, in a time
// range, that were committed before it (in its transaction: added before
// it); rows written after it stay. It is logged with its commit and takes
// effect at once, in memory, in two parts (memtable.Memtable.Delete):
// tombstones in the live memtable's chunks, which hide the rows that
// arrived before them, and the ranges themselves, which scans apply to
// the older sources (the memtable being flushed, the flushed files).
//
// The flush of that memtable makes the delete physical: the rows it
// writes have passed its tombstones, and every file holding rows the
// ranges cover is rewritten without them in the same Delta commit. So by
// the checkpoint that drops the delete's log record, no file holds a
// deleted row, and nothing about deletes needs storing but the log.
//
// After a crash between that flush and its checkpoint, replay meets the
// delete's record again, and the inserts before it. Applying them again
// would be wrong twice over: the re-inserted rows, written out by a flush
// during replay, would escape a delete already made physical, and the
// delete could take rows a direct write added after it. So every flush's
// Delta commit carries a second txn action, "arcadego.flushed", whose
// version is the memtable's end: the table holds every record of the type
// before it, and replay applies none of those records' inserts and
// deletes to the type (their DDL and other types' parts still apply). The
// records it does apply are newer than every file but the direct writes'
// that follow them, and a type with deletes not yet flushed takes no
// direct write (its rows go through the memtable), so a replayed delete
// applies to every file, as a live one does. A flush fsyncs the log up to
// its memtable's end first, so the marks never pass the durable log.

// DeleteRequest selects the rows a delete removes.
type DeleteRequest struct {
	Type    string
	Devices []string // nil: every device
	Start   *int64   // nil: no lower bound; else time >= *Start
	End     *int64   // nil: no upper bound; else time < *End
}

// txDelete is a delete added to a transaction after its first at entries.
type txDelete struct {
	typ    string
	ranges []memtable.DeleteRange
	at     int
}

// resolvedDelete is a txDelete whose type the commit has resolved.
type resolvedDelete struct {
	typ    schema.TypeID
	ranges []memtable.DeleteRange
	at     int
}

// ranges returns the delete ranges of a request (validated).
func deleteRanges(req DeleteRequest) ([]memtable.DeleteRange, error) {
	start, end := int64(math.MinInt64), int64(math.MaxInt64)
	if req.Start != nil {
		start = *req.Start
	}
	if req.End != nil {
		end = *req.End
	}
	if start >= end {
		return nil, nil // an empty range deletes nothing
	}
	if req.Devices == nil {
		return []memtable.DeleteRange{{All: true, Start: start, End: end}}, nil
	}
	out := make([]memtable.DeleteRange, 0, len(req.Devices))
	for _, d := range slices.Compact(slices.Sorted(slices.Values(req.Devices))) {
		if err := validateDevice(d); err != nil {
			return nil, err
		}
		out = append(out, memtable.DeleteRange{Device: d, Start: start, End: end})
	}
	return out, nil
}

// Delete adds to the transaction the deletion of the rows of req.Type in
// req's devices and time range: the rows committed before the
// transaction and those it added before this call. Later inserts, in
// this transaction or after it, stay. An unknown type is ErrNotFound.
func (tx *Tx) Delete(req DeleteRequest) error {
	if err := tx.check("delete"); err != nil {
		return err
	}
	if err := schema.ValidateName("type", req.Type); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	ranges, err := deleteRanges(req)
	if err != nil {
		return fmt.Errorf("delete from %q: %w", req.Type, err)
	}
	if _, ok := tx.view.Type(req.Type); !ok {
		return fmt.Errorf("delete from %q: type does not exist: %w", req.Type, errs.ErrNotFound)
	}
	if len(ranges) > 0 {
		tx.undefer(req.Type)
		tx.deletes = append(tx.deletes, txDelete{typ: req.Type, ranges: ranges, at: len(tx.entries)})
	}
	return nil
}

// Delete deletes rows as one transaction (see Tx.Delete).
func (db *DB) Delete(req DeleteRequest) error {
	return db.autocommit(func(tx *Tx) error { return tx.Delete(req) })
}

// resolveDeletes maps the deletes' types to ids in cat, which the commit
// publishes; a type gone since the delete was added is a conflict (replay:
// corrupt).
func resolveDeletes(cat *schema.Catalog, dels []txDelete, replay bool) ([]resolvedDelete, error) {
	out := make([]resolvedDelete, len(dels))
	for i, d := range dels {
		ty, ok := cat.Type(d.typ)
		if !ok {
			kind := errs.ErrConflict
			if replay {
				kind = errs.ErrCorrupt
			}
			return nil, fmt.Errorf("delete from %q: the type no longer exists at commit (dropped since the delete was added): %w", d.typ, kind)
		}
		out[i] = resolvedDelete{typ: ty.ID, ranges: d.ranges, at: d.at}
	}
	return out, nil
}

// applyDelete applies a delete to the live memtable: to its rows so far,
// and, through its ranges, to every older source.
func (db *DB) applyDelete(d resolvedDelete) {
	mem := db.view.Load().mem
	for _, r := range d.ranges {
		mem.Delete(d.typ, r, true)
	}
}

// applyInOrder applies writes and deletes to the live memtable in the
// order of their transaction: a delete after the entries before it.
func (db *DB) applyInOrder(cat *schema.Catalog, writes []write, dels []resolvedDelete) error {
	defer db.forgetCopy()
	j := 0
	for i := range writes {
		for j < len(dels) && dels[j].at <= writes[i].entry {
			db.applyDelete(dels[j])
			j++
		}
		if err := db.apply(cat, writes[i:i+1]); err != nil {
			return err
		}
	}
	for ; j < len(dels); j++ {
		db.applyDelete(dels[j])
	}
	return nil
}

// flushedApp is the appId of the flushed mark of flush commits.
const flushedApp = "arcadego.flushed"

// flushedAfter returns the flushed mark of tb's next flush commit, one that
// holds the type's records before pos: marks only grow.
func flushedAfter(tb *table, pos int64) int64 {
	if v, ok := tb.delta.TxnVersion(flushedApp); ok && v > pos {
		return v
	}
	return pos
}

// flushedPast reports whether type typ's table holds the records at lsn
// (its flushed mark is past it): replay skips the type's part of them.
func (db *DB) flushedPast(typ schema.TypeID, lsn wal.LSN) bool {
	var mark int64
	if tb := db.view.Load().tables[typ]; tb != nil {
		mark, _ = tb.delta.TxnVersion(flushedApp)
	} else if db.opts.ReadOnly {
		// A reader opens the tables before the log: a type without one
		// had none then, so the log's records of it are all it has, even
		// if the writer has flushed them since.
		mark = 0
	} else if m, seen := db.marks[typ]; seen {
		mark = m
	} else {
		// Read before Open opens the tables: the Delta log alone. A table
		// that fails here fails its open later.
		if dt, err := segment.OpenTable(db.tableDir(typ), -1); err == nil {
			mark, _ = dt.TxnVersion(flushedApp)
		}
		if db.marks == nil {
			db.marks = map[schema.TypeID]int64{}
		}
		db.marks[typ] = mark
	}
	return mark > int64(lsn)
}

// rangesFor returns the delete ranges of typ that apply to a source older
// than mems[from] (the files: from 0): those of mems[from:], oldest first.
func rangesFor(mems []*memtable.Memtable, typ schema.TypeID, from int) []memtable.DeleteRange {
	var out []memtable.DeleteRange
	for _, m := range mems[from:] {
		out = append(out, m.Deletes(typ)...)
	}
	return out
}

// holdsDeleted reports whether file f may hold rows that dels cover.
func holdsDeleted(f *dataFile, dels []memtable.DeleteRange) bool {
	for _, r := range dels {
		if r.All && f.overlapsTime(r.Start, r.End) || !r.All && f.has(r.Device, r.Start, r.End-1) {
			return true
		}
	}
	return false
}

// hasDeletes reports whether a memtable of v holds deletes of typ not yet
// flushed.
func (v *view) hasDeletes(typ schema.TypeID) bool {
	if len(v.mem.Deletes(typ)) > 0 {
		return true
	}
	return v.imm != nil && len(v.imm.mem.Deletes(typ)) > 0
}

// dropDeleted filters a source's rows of device through delete ranges.
type dropDeleted struct {
	src    runSource
	device string
	ranges []memtable.DeleteRange
}

// filterDeleted wraps src so that the rows of device the ranges cover are
// dropped; src itself when none concerns the device.
func filterDeleted(src runSource, device string, ranges []memtable.DeleteRange) runSource {
	var mine []memtable.DeleteRange
	for _, r := range ranges {
		if r.All || r.Device == device {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return src
	}
	return &dropDeleted{src: src, device: device, ranges: mine}
}

func (d *dropDeleted) Next() (*tablet.Tablet, error) {
	for {
		b, err := d.src.Next()
		if b == nil || err != nil {
			return b, err
		}
		keep := make([]int32, 0, b.Rows())
		for i, t := range b.Times {
			if !d.covered(t) {
				keep = append(keep, int32(i))
			}
		}
		switch len(keep) {
		case b.Rows():
			return b, nil
		case 0:
			continue
		}
		return b.Gather(keep), nil
	}
}

func (d *dropDeleted) covered(t int64) bool {
	for _, r := range d.ranges {
		if r.Covers(d.device, t) {
			return true
		}
	}
	return false
}

// loggedDeletes returns the deletes as the log records them: each after
// the logged entries (writes) that came before it, which excludes direct
// writes (never of a type the transaction deletes from).
func loggedDeletes(dels []txDelete, writes []write) []txDelete {
	if len(dels) == 0 {
		return nil
	}
	out := make([]txDelete, len(dels))
	for i, d := range dels {
		d.at = 0
		for _, w := range writes {
			if w.entry < dels[i].at {
				d.at++
			}
		}
		out[i] = d
	}
	return out
}

// ttlCutoff returns the least time (in ty's unit) a row of ty must have to
// be alive at now: now minus the type's TTL, rounded up; math.MinInt64
// when ty has no TTL.
func ttlCutoff(ty *schema.Type, now time.Time) int64 {
	if ty.TTL <= 0 || !ty.TimeSet || ty.TimeUnit == "" {
		return math.MinInt64
	}
	ns := now.UnixNano() - ty.TTL
	unit := unitNanos[ty.TimeUnit]
	q := ns / unit
	if ns%unit > 0 {
		q++
	}
	return q
}

// expiredRange is the delete range of the rows of every device older than
// cutoff (none for math.MinInt64).
func expiredRange(cutoff int64) []memtable.DeleteRange {
	if cutoff == math.MinInt64 {
		return nil
	}
	return []memtable.DeleteRange{{All: true, Start: math.MinInt64, End: cutoff}}
}

// Commit record encoding of deletes (version 3): after the attachments,
//
//	uvarint deletes, per delete: string type, uvarint at, uvarint ranges,
//	per range: byte all, string device, varint start, varint end

func appendDeletes(dst []byte, dels []txDelete) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(dels)))
	for _, d := range dels {
		dst = appendString(dst, d.typ)
		dst = binary.AppendUvarint(dst, uint64(d.at))
		dst = binary.AppendUvarint(dst, uint64(len(d.ranges)))
		for _, r := range d.ranges {
			all := byte(0)
			if r.All {
				all = 1
			}
			dst = append(dst, all)
			dst = appendString(dst, r.Device)
			dst = binary.AppendVarint(dst, r.Start)
			dst = binary.AppendVarint(dst, r.End)
		}
	}
	return dst
}

func decodeDeletes(buf []byte, pos, entries int) ([]txDelete, int, error) {
	bad := func(what string) ([]txDelete, int, error) {
		return nil, 0, fmt.Errorf("commit record: bad delete %s: %w", what, errs.ErrCorrupt)
	}
	n, k := binary.Uvarint(buf[pos:])
	if k <= 0 || n > uint64(len(buf)) {
		return bad("count")
	}
	pos += k
	dels := make([]txDelete, 0, n)
	for range n {
		var d txDelete
		var ok bool
		if d.typ, pos, ok = readString(buf, pos); !ok {
			return bad("type")
		}
		at, k := binary.Uvarint(buf[pos:])
		if k <= 0 || at > uint64(entries) {
			return bad("position")
		}
		pos += k
		d.at = int(at)
		m, k := binary.Uvarint(buf[pos:])
		if k <= 0 || m > uint64(len(buf)) {
			return bad("range count")
		}
		pos += k
		for range m {
			if pos >= len(buf) || buf[pos] > 1 {
				return bad("range")
			}
			r := memtable.DeleteRange{All: buf[pos] == 1}
			pos++
			if r.Device, pos, ok = readString(buf, pos); !ok {
				return bad("device")
			}
			if r.Start, k = binary.Varint(buf[pos:]); k <= 0 {
				return bad("start")
			}
			pos += k
			if r.End, k = binary.Varint(buf[pos:]); k <= 0 {
				return bad("end")
			}
			pos += k
			d.ranges = append(d.ranges, r)
		}
		dels = append(dels, d)
	}
	return dels, pos, nil
}
