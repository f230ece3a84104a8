package engine

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/internal/namesort"
	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// Direct writes. A transaction whose inserts into one type hold at least
// directWriteBytes of values writes them straight to Parquet files, once,
// instead of to the log and later, flushed, to Parquet again: for a bulk
// load the log's copy is half the bytes written to disk. (DuckDB does the
// same with large appends; so do bulk loads in most LSM stores.)
//
// The protocol keeps the transaction atomic and the log authoritative:
//
//  1. Before the commit mutex, the type's rows go through a private
//     memtable (sorted by device and time, equal keys merged) into new
//     Parquet files in the type's directory, fsynced like a flush's. Their
//     names are random: nothing can refer to them yet.
//  2. Under the commit mutex, the write stays direct only if its property
//     ids are those the commit resolves to and none of its keys can
//     meet older rows the Delta table would not order correctly: no file of
//     the type holds a renamed column, no memtable holds rows of its
//     devices within its time spans, and no earlier commit in flight writes
//     the type. Otherwise its rows go to the log and memtable as usual.
//  3. The commit's log record holds the other writes and an attachment
//     naming the files; once it is durable, publication (in log order)
//     adds them to the type's Delta log and the scans' view.
//
// A crash after step 3's append but before the Delta commit leaves the
// files unnamed by any Delta log: replay publishes them. The txn action of
// every Delta commit carries the log position it covers, growing only, so
// replay knows a published attachment. Files of a commit that never
// reached the log are strays, removed at the next open.

// directWriteBytes is the least value bytes (the log encoding's size) of a
// transaction's inserts into one type that go straight to Parquet.
// DB.directBytes holds it; tests lower it.
const directWriteBytes = 16 << 20

// longDirectBytes is the threshold of a long-format batch that is its
// type's only write in the transaction (a deferred long insert): a
// quarter of directBytes, 4 MiB by default. The usual way splits such a
// batch into a tablet per device, and each costs a few microseconds in the
// log, the memtable and the flush: bench_devices.py --devices 20000 (one
// batch of 200,000 rows, 9.6 MB) ingested 0.36-0.59 M rows/s that way and
// 2.8-3.8 M rows/s straight to Parquet. A tablet of one device pays that
// cost once, so it keeps the whole threshold.
func (db *DB) longDirectBytes() int { return db.directBytes / 4 }

// directThreshold is the threshold of typ's inserts in a transaction
// with long inserts longs.
func (db *DB) directThreshold(typ string, longs []longInsert) int {
	if slices.ContainsFunc(longs, func(l longInsert) bool { return l.deferred && l.typ == typ }) {
		return db.longDirectBytes()
	}
	return db.directBytes
}

// directPart is a transaction's direct write into one type.
type directPart struct {
	typ       schema.TypeID
	name      string
	dir       string
	entries   []int                 // the transaction's entries it holds
	ids       [][]schema.PropertyID // their property ids, as written
	devices   []string              // its devices, in order
	spans     [][2]int64            // each device's first and last time
	lo, hi    int64                 // all its times
	long      *longInsert           // a deferred long insert, the part's only rows
	files     []*newFile
	rows      int64
	logged    bool // in the commit's log record: its files must stay
	published bool // in the Delta log and the view, which holds its files
	pre       *precheck
}

// precheck holds the type's files, as the direct write began, that hold
// no row of the part's devices within their spans: found on a goroutine
// while the part's files are written (and fsynced), so that under
// commitMu canStayDirect looks only at files that came since. A bulk load
// of 100,000 devices a commit spent 30 ms there, alone on one core, once
// the files were written. Files never change, so what it found holds.
type precheck struct {
	done   chan struct{}
	clear  map[*dataFile]bool // set before done is closed
	hashes []uint64           // of the part's devices (segment.DeviceHash), set before done is closed
}

// startPrecheck starts p's precheck, once its devices and spans are known.
// It holds the files it reads, not the memtables, and counts as a direct
// write in progress, which Close waits for: its files are let go by then,
// whether the commit got as far as keepDirect or failed before.
func (db *DB) startPrecheck(p *directPart) {
	files, mems := db.pin(p.typ)
	for _, m := range mems {
		m.Release()
	}
	pc := &precheck{done: make(chan struct{}), clear: make(map[*dataFile]bool, len(files))}
	p.pre = pc
	db.directing.Add(1) // the commit holds one already: no Wait can have begun at zero
	go func() {
		defer db.directing.Done()
		defer close(pc.done)
		defer unpin(files, nil)
		defer func() { _ = recover() }() // what it did not clear is checked under commitMu
		if len(files) > 0 {
			// Published whole or not at all: a panic here leaves no
			// half-filled hashes for canStayDirect to trust.
			hashes := make([]uint64, len(p.devices))
			for i, d := range p.devices {
				hashes[i] = segment.DeviceHash(d)
			}
			pc.hashes = hashes
		}
		for _, f := range files {
			if !p.meets(f, pc.hashes) {
				pc.clear[f] = true
			}
		}
	}()
}

// writeDirect writes the entries of each type that holds directBytes or
// more into Parquet files, resolved against cat (the transaction's view of
// the catalog). Only types that exist in the published catalog qualify:
// the directory of a type being created could be removed by a checkpoint
// before the commit publishes it. On error it removes what it wrote.
func (db *DB) writeDirect(cat *schema.Catalog, entries []entry, longs []longInsert, deletes []txDelete) ([]*directPart, error) {
	bytesOf := db.directSizes(cat, entries, longs, deletes)
	if bytesOf == nil {
		if slices.ContainsFunc(longs, func(l longInsert) bool { return l.deferred }) {
			return nil, fmt.Errorf("direct write: %w", errDeferred)
		}
		return nil, nil
	}
	published := db.catalog.Load()
	var parts []*directPart
	fail := func(err error) ([]*directPart, error) {
		for _, p := range parts {
			removeNewFiles(p.dir, p.files)
		}
		return nil, fmt.Errorf("direct write: %w", err)
	}
	for typ, n := range bytesOf {
		if n < db.directThreshold(typ, longs) {
			continue
		}
		ty, ok := cat.Type(typ)
		if pty, live := published.Type(typ); !ok || !live || pty.ID != ty.ID {
			continue
		}
		var long *longInsert
		for i := range longs {
			if longs[i].typ == typ {
				if long != nil { // two long inserts: device by device
					long = nil
					break
				}
				long = &longs[i]
			}
		}
		var p *directPart
		var err error
		if long != nil && long.deferred {
			p, err = db.writeDeferred(cat, ty, long) // nil: errDeferred below
		} else {
			p, err = db.writeDirectType(cat, ty, entries, long)
		}
		if err != nil {
			return fail(err)
		}
		if p != nil {
			db.indexNewFiles(p.typ, p.files)
			parts = append(parts, p)
		}
	}
	for i := range longs {
		if longs[i].deferred && !slices.ContainsFunc(parts, func(p *directPart) bool { return p.long == &longs[i] }) {
			return fail(errDeferred) // its type does not qualify, or its rows not as they are
		}
	}
	return parts, nil
}

// directSizes returns the bytes of entries per type, or nil when no type
// has enough for a direct write.
func (db *DB) directSizes(cat *schema.Catalog, entries []entry, longs []longInsert, deletes []txDelete) map[string]int {
	if db.log == nil || cat == nil || len(entries)+len(longs) == 0 {
		return nil
	}
	bytesOf := map[string]int{}
	for _, e := range entries {
		if e.t == nil {
			bytesOf[e.typ] += len(e.enc) // a copy: its encoding
		} else {
			bytesOf[e.typ] += tablet.AppendSize(e.t)
		}
	}
	for _, l := range longs {
		if l.deferred { // the only write into its type
			bytesOf[l.typ] = l.bytes
		}
	}
	for _, d := range deletes { // the rows of a type the transaction deletes from go the usual way
		delete(bytesOf, d.typ)
	}
	for typ, n := range bytesOf {
		if n >= db.directThreshold(typ, longs) {
			return bytesOf
		}
	}
	return nil
}

// errDeferred: a deferred long insert cannot be written straight to
// Parquet (its rows are not in order, its columns changed, or the part
// may not stay direct); commit runs again with its entries.
var errDeferred = errors.New("a deferred long-format insert takes the log's way")

// writeDeferred writes deferred long insert long into new files; nil when
// its columns no longer resolve to the ids it was checked with, or its
// rows need a memtable's sorting.
func (db *DB) writeDeferred(cat *schema.Catalog, ty *schema.Type, long *longInsert) (*directPart, error) {
	ids := make([]schema.PropertyID, len(long.t.Columns))
	if _, extra, err := missing(cat, ty.Name, long.t, false, ids); err != nil || len(extra) > 0 || !slices.Equal(ids, long.ids) {
		return nil, nil
	}
	used := make(map[schema.PropertyID]bool, len(ids))
	for _, id := range ids {
		used[id] = true
	}
	layout := writtenLayout(ty, used)
	lr := newLongRows(long, ids, layout)
	if lr == nil {
		return nil, nil
	}
	p := &directPart{typ: ty.ID, name: ty.Name, dir: db.tableDir(ty.ID), long: long, ids: [][]schema.PropertyID{ids}, lo: math.MaxInt64, hi: math.MinInt64}
	return db.writeLong(p, lr, layout)
}

// writtenLayout is the layout of ty's files for writes of properties ids:
// the files hold the columns written, not every property of a wide type
// (a property a file lacks reads as null, as in older files).
func writtenLayout(ty *schema.Type, used map[schema.PropertyID]bool) segment.Layout {
	layout := layoutOf(ty)
	layout.Columns = slices.DeleteFunc(layout.Columns, func(c segment.Column) bool { return !used[c.ID] })
	return layout
}

// writeDirectType writes the entries of ty into new files; nil when they
// do not all resolve without DDL (the commit then reports why). long, when
// not nil, is a long-format insert into ty of the transaction.
func (db *DB) writeDirectType(cat *schema.Catalog, ty *schema.Type, entries []entry, long *longInsert) (*directPart, error) {
	p := &directPart{typ: ty.ID, name: ty.Name, dir: db.tableDir(ty.ID), lo: math.MaxInt64, hi: math.MinInt64}
	used := map[schema.PropertyID]bool{}
	byDevice := map[string]*tabletRows{}
	sorted := true
	for i := range entries {
		if entries[i].typ != ty.Name {
			continue
		}
		if _, err := entries[i].tablet(); err != nil { // a copy, read back for good
			return nil, err
		}
		e := entries[i]
		var ids []schema.PropertyID
		if long != nil && i > long.from && i < long.to {
			ids = p.ids[len(p.ids)-1] // a device of the same batch: the same columns
		} else {
			ids = make([]schema.PropertyID, len(e.t.Columns))
			if _, extra, err := missing(cat, ty.Name, e.t, false, ids); err != nil || len(extra) > 0 {
				return nil, nil
			}
			for _, id := range ids {
				used[id] = true
			}
		}
		p.entries = append(p.entries, i)
		p.ids = append(p.ids, ids)
		if e.t.Rows() == 0 || long != nil {
			continue // a long batch is mapped below, device by device only if it must be
		}
		r := byDevice[e.device]
		if r == nil {
			r = &tabletRows{}
			byDevice[e.device] = r
		}
		sorted = sorted && r.add(e.t, ids)
	}
	layout := writtenLayout(ty, used)
	refs := make([]memtable.ColumnRef, len(layout.Columns))
	for i, c := range layout.Columns {
		refs[i] = memtable.ColumnRef{ID: c.ID, Name: c.Name, Type: c.Type}
	}
	if long != nil {
		if long.from == p.entries[0] && long.to-long.from == len(p.entries) {
			// Every row of ty in the transaction is one long-format batch.
			if lr := newLongRows(long, p.ids[0], layout); lr != nil {
				return db.writeLong(p, lr, layout)
			}
		}
		for k, i := range p.entries { // device by device after all
			e := entries[i]
			if e.t.Rows() == 0 {
				continue
			}
			r := byDevice[e.device]
			if r == nil {
				r = &tabletRows{}
				byDevice[e.device] = r
			}
			sorted = sorted && r.add(e.t, p.ids[k])
		}
	}
	var names []string // the devices, in order
	var all []devRows  // all[i] are names[i]'s rows
	if sorted {
		// The usual bulk load: each device's rows in time order, no time
		// twice. The files are written from the caller's tablets.
		for d := range byDevice {
			names = append(names, d)
		}
		namesort.Sort(names)
		for _, d := range names {
			all = append(all, byDevice[d])
		}
	} else {
		// Sorted, and equal keys merged, by a private memtable.
		mem := memtable.New(memtable.Options{})
		for k, i := range p.entries {
			e := entries[i]
			if err := mem.Chunk(ty.ID, e.device).Write(e.t, p.ids[k]); err != nil {
				return nil, fmt.Errorf("%d rows on device %q: %v: %w", e.t.Rows(), e.device, err, errs.ErrInternal)
			}
		}
		var chunks []*memtable.Chunk
		names, chunks = mem.Directory(ty.ID) // sorted already
		for _, c := range chunks {
			all = append(all, newSnapRows(c.Snapshot()))
		}
	}
	var rows newRows
	for i, d := range names {
		r := all[i]
		lo, hi, ok := r.TimeBounds()
		if !ok {
			continue
		}
		rows.add(d, r)
		p.devices = append(p.devices, d)
		p.spans = append(p.spans, [2]int64{lo, hi})
		p.lo, p.hi = min(p.lo, lo), max(p.hi, hi)
		p.rows += int64(r.Rows())
	}
	if len(rows.names) == 0 {
		return nil, nil
	}
	if err := db.makeTableDir(ty.ID); err != nil {
		return nil, err
	}
	if err := db.injected("direct"); err != nil {
		return nil, err
	}
	db.startPrecheck(p)
	plan := planFlush(rows, nil, runtime.GOMAXPROCS(0), db.fileRows)
	files, err := db.writeFiles(p.dir, "part-"+newUUID(), layout, refs, nil, nil, math.MinInt64, plan)
	if err != nil {
		return nil, err
	}
	p.files = files
	return p, nil
}

// tabletRows is one device's rows in a direct write, when they are in
// time order with no time twice: the transaction's tablets, read in place.
type tabletRows struct {
	parts  []*tablet.Tablet
	ids    [][]schema.PropertyID
	rows   int
	lo, hi int64 // the first and last time
}

// add appends t (whose columns are properties ids) and reports whether
// the rows are still in strict time order.
func (r *tabletRows) add(t *tablet.Tablet, ids []schema.PropertyID) bool {
	for i := 1; i < len(t.Times); i++ {
		if t.Times[i] <= t.Times[i-1] {
			return false
		}
	}
	if len(r.parts) > 0 && t.Times[0] <= r.hi {
		return false
	}
	if len(r.parts) == 0 {
		r.lo = t.Times[0]
	}
	r.hi = t.Times[len(t.Times)-1]
	r.parts = append(r.parts, t)
	r.ids = append(r.ids, ids)
	r.rows += t.Rows()
	return true
}

func (r *tabletRows) Rows() int { return r.rows }

func (r *tabletRows) TimeBounds() (lo, hi int64, ok bool) { return r.lo, r.hi, r.rows > 0 }

func (r *tabletRows) cursor(refs []memtable.ColumnRef, start, end int64, batchRows int) runSource {
	c := &tabletCursor{r: r, refs: refs, start: start, end: end, batch: batchRows}
	c.out.Columns = make([]tablet.Column, len(refs))
	return c
}

// tabletCursor reads a tabletRows in batches, its columns in the order of
// refs; a column a tablet lacks reads as nulls. A batch's buffers are the
// tablets' own: valid until the next call.
type tabletCursor struct {
	r          *tabletRows
	refs       []memtable.ColumnRef
	start, end int64
	batch      int
	part       int   // the part being read
	row, stop  int   // its rows left: [row, stop)
	cols       []int // for each ref, its column in the part (-1: none)
	entered    bool
	out        tablet.Tablet
	nulls      map[schema.PropertyType]tablet.Column
}

func (c *tabletCursor) Next() (*tablet.Tablet, error) {
	for c.part < len(c.r.parts) {
		t := c.r.parts[c.part]
		if !c.entered {
			c.row, c.stop = 0, len(t.Times)
			if c.start > c.r.lo {
				c.row = sortSearch(t.Times, c.start)
			}
			if c.end <= c.r.hi {
				c.stop = sortSearch(t.Times, c.end)
			}
			c.mapColumns(c.r.ids[c.part])
			c.entered = true
		}
		if c.row >= c.stop {
			c.part++
			c.entered = false
			continue
		}
		from, to := c.row, min(c.stop, c.row+c.batch)
		c.row = to
		c.out.Times = t.Times[from:to]
		for j, k := range c.cols {
			if k < 0 {
				c.out.Columns[j] = c.nullColumn(c.refs[j].Type, to-from)
				continue
			}
			col := t.Columns[k]
			col.Offset += from
			c.out.Columns[j] = col
		}
		return &c.out, nil
	}
	return nil, nil
}

// mapColumns finds each ref's column among a part's property ids.
func (c *tabletCursor) mapColumns(ids []schema.PropertyID) {
	if c.cols == nil {
		c.cols = make([]int, len(c.refs))
	}
	for j, ref := range c.refs {
		c.cols[j] = slices.Index(ids, ref.ID)
	}
}

// nullColumn returns a column of n nulls of type pt.
func (c *tabletCursor) nullColumn(pt schema.PropertyType, n int) tablet.Column {
	if c.nulls == nil {
		c.nulls = map[schema.PropertyType]tablet.Column{}
	}
	col, ok := c.nulls[pt]
	if !ok {
		col = tablet.Column{Type: pt, Validity: make([]byte, (c.batch+7)/8)}
		switch {
		case tablet.VarWidth(pt):
			col.Offsets = make([]int32, c.batch+1)
		case pt == schema.Boolean:
			col.Values = make([]byte, (c.batch+7)/8)
		default:
			col.Values = make([]byte, c.batch*tablet.Width(pt))
		}
		c.nulls[pt] = col
	}
	return col
}

// sortSearch returns the index of the first time >= t in sorted times.
func sortSearch(times []int64, t int64) int {
	i, _ := slices.BinarySearch(times, t)
	return i
}

// keepDirect returns, under commitMu, the direct writes that stay direct
// (see step 2 above), marked logged; the others' rows go the log's way.
// cat and writes are the commit's resolution.
func (db *DB) keepDirect(parts []*directPart, cat *schema.Catalog, writes []write) []*directPart {
	if len(parts) == 0 {
		return nil
	}
	if db.beforeKeepDirect != nil {
		db.beforeKeepDirect()
	}
	db.writesMu.Lock()
	defer db.writesMu.Unlock()
	// The view after the lock: a commit leaves typeWrites only once its
	// rows are in the memtable or its files in the view, so a count of
	// zero read now covers every earlier commit.
	v := db.view.Load()
	var kept []*directPart
	for _, p := range parts {
		if db.canStayDirect(v, p, cat, writes) {
			p.logged = true
			kept = append(kept, p)
		}
	}
	return kept
}

func (db *DB) canStayDirect(v *view, p *directPart, cat *schema.Catalog, writes []write) bool {
	ty, live := cat.TypeByID(p.typ)
	if !live || ty.Name != p.name || db.typeWrites[p.typ] > 0 || v.hasDeletes(p.typ) {
		return false
	}
	for k, i := range p.entries {
		if writes[i].typ != p.typ || !slices.Equal(writes[i].ids, p.ids[k]) {
			return false
		}
	}
	if p.long != nil {
		// Not in writes: resolved here, and no UNIQUE index (created
		// since the transaction began) can have been left unchecked.
		ids := make([]schema.PropertyID, len(p.long.t.Columns))
		if _, extra, err := missing(cat, ty.Name, p.long.t, false, ids); err != nil || len(extra) > 0 || !slices.Equal(ids, p.ids[0]) ||
			slices.ContainsFunc(ty.Indexes(), func(ix *schema.Index) bool { return ix.Unique }) {
			return false
		}
	}
	// Times only: they are never from the block pool, so no reference is
	// taken on an imm that the flusher may release meanwhile.
	mems := []*memtable.Memtable{v.mem}
	if v.imm != nil {
		mems = append(mems, v.imm.mem)
	}
	for _, m := range mems {
		if m.DeviceCount(p.typ) == 0 {
			continue // a bulk load's usual case: no lookup per device
		}
		for i, d := range p.devices {
			s := p.spans[i]
			if c, ok := m.Lookup(p.typ, d); ok {
				if lo, hi, ok := c.Snapshot().TimeBounds(); ok && hi >= s[0] && lo <= s[1] {
					return false
				}
			}
		}
	}
	if tb := v.tables[p.typ]; tb != nil {
		var clear map[*dataFile]bool
		var hashes []uint64
		if p.pre != nil {
			<-p.pre.done
			clear, hashes = p.pre.clear, p.pre.hashes
		}
		for _, f := range tb.files {
			if staleNames(f.Layout(), ty) {
				return false
			}
			if !clear[f] && p.meets(f, hashes) {
				return false
			}
		}
	}
	return true
}

// meets reports whether file f holds rows of one of p's devices within
// that device's time span in p; hashes, when not nil, are the devices'
// segment.DeviceHash.
func (p *directPart) meets(f *dataFile, hashes []uint64) bool {
	if minDev, maxDev, lo, hi := f.Bounds(); hi < p.lo || lo > p.hi || maxDev < p.devices[0] || minDev > p.devices[len(p.devices)-1] {
		return false
	}
	if hashes != nil {
		return p.meetsFiltered(f, hashes)
	}
	return p.meetsFile(f)
}

// meetsFiltered is meetsFile through the file's index of device names (a
// Bloom filter, then a hash table): a device costs a cache line or two,
// whatever the file holds. The merge of meetsFile compares
// names along both lists: a bulk load's 100,000 new devices against each
// earlier file's 50,000 took 4 ms a file, so 80-120 ms for the tenth
// batch's 18 files, on a core the batch's own files were waiting for.
func (p *directPart) meetsFiltered(f *dataFile, hashes []uint64) bool {
	for i, h := range hashes {
		if j, ok := f.IndexHash(p.devices[i], h); ok { // the name hashed once for every file
			s := p.spans[i]
			if _, first, last := f.DeviceAt(j); last >= s[0] && first <= s[1] {
				return true
			}
		}
	}
	return false
}

// meetsFile reports whether file f holds rows of one of p's devices
// within that device's time span in p. Both device lists are sorted: one
// merging pass, however many devices each holds.
func (p *directPart) meetsFile(f *dataFile) bool {
	devs, have := p.devices, f.Devices()
	i, j := 0, 0
	for i < len(devs) && j < len(have) {
		switch {
		case devs[i] < have[j]:
			i++
		case devs[i] > have[j]:
			j++
		default:
			s := p.spans[i]
			if _, first, last := f.DeviceAt(j); last >= s[0] && first <= s[1] {
				return true
			}
			i++
			j++
		}
	}
	return false
}

// attachmentsOf returns the log record's attachments for kept parts.
func attachmentsOf(kept []*directPart) []attachment {
	out := make([]attachment, len(kept))
	for i, p := range kept {
		out[i].typ = p.typ
		for _, f := range p.files {
			out[i].files = append(out[i].files, segment.AddFile{Path: f.name, Size: f.size, Stats: f.stats})
		}
	}
	return out
}

// publishDirect adds a logged direct write's files to its type's Delta
// log and to the view. lsn is where its commit record starts. The caller
// holds publishMu, in log order.
func (db *DB) publishDirect(p *directPart, cat *schema.Catalog, lsn wal.LSN) error {
	ty, _ := cat.TypeByID(p.typ)
	adds := make([]segment.AddFile, len(p.files))
	files := make([]*dataFile, len(p.files))
	for i, f := range p.files {
		adds[i] = segment.AddFile{Path: f.name, Size: f.size, Stats: f.stats}
		files[i] = f.dataFile
	}
	if err := db.attach(ty, adds, files, lsn); err != nil {
		return fmt.Errorf("direct write into %q: %w", ty.Name, err)
	}
	return nil
}

// attach commits adds (whose open files are files) to ty's Delta log,
// with the txn version of the record at lsn, and publishes the table.
// On failure the files stay on disk: the log names them.
func (db *DB) attach(ty *schema.Type, adds []segment.AddFile, files []*dataFile, lsn wal.LSN) error {
	db.deltaMu.Lock()
	defer db.deltaMu.Unlock()
	tb, err := db.tableOf(ty.ID)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	for i := range adds {
		adds[i].ModificationTime = now
	}
	commit := segment.Commit{AppID: txnApp, TxnVersion: txnAfter(tb, int64(lsn)+1), Metadata: deltaMetadata(tb, ty), Adds: adds}
	err = db.injected("attach")
	if err == nil && !db.opts.ReadOnly { // a reader adds the files to its view only
		err = tb.delta.Commit(commit, db.syncing())
	}
	if err != nil {
		return err
	}
	nt := &table{id: tb.id, dir: tb.dir, delta: tb.delta, version: tb.delta.Version(), files: slices.Clip(tb.files)}
	nt.files = append(nt.files, files...)
	db.publishTable(ty.ID, nt)
	db.counters.directWrites.Add(1)
	return nil
}

// replayAttach publishes, at Open, an attachment of the record at lsn
// unless its Delta commit was published before the crash.
func (db *DB) replayAttach(a attachment, cat *schema.Catalog, lsn wal.LSN) error {
	ty, ok := cat.TypeByID(a.typ)
	if !ok {
		return fmt.Errorf("attachment to type id %d, which does not exist: %w", a.typ, errs.ErrCorrupt)
	}
	if db.opts.ReadOnly && db.view.Load().tables[a.typ] == nil {
		// The table appeared after the reader listed the tables: opened
		// now, it could hold commits past the log it read. Start over.
		return fmt.Errorf("table of type id %d appeared during a read-only open: %w", a.typ, errs.ErrCorrupt)
	}
	tb, err := db.tableOf(a.typ)
	if err != nil {
		return err
	}
	if db.view.Load().tables[a.typ] != tb {
		// Opened here: keep it, so that the next attachment and Open's
		// openTables do not read its footers again.
		db.publishTable(a.typ, tb)
	}
	if v, ok := tb.delta.TxnVersion(txnApp); ok && v > int64(lsn) {
		return nil
	}
	files := make([]*dataFile, len(a.files))
	for i, af := range a.files {
		f, err := segment.Open(filepath.Join(tb.dir, af.Path), af.Size)
		if err != nil {
			for _, g := range files[:i] {
				g.unref()
			}
			return fmt.Errorf("direct write into %q: %w", ty.Name, err)
		}
		files[i] = &dataFile{File: f, name: af.Path, size: af.Size, stats: af.Stats}
		files[i].refs.Store(1)
	}
	if err := db.attach(ty, slices.Clone(a.files), files, lsn); err != nil {
		for _, f := range files {
			f.unref()
		}
		return fmt.Errorf("direct write into %q: %w", ty.Name, err)
	}
	return nil
}

// closeUnpublished drops the references of logged direct writes whose
// publication failed: their files stay on disk for replay.
func closeUnpublished(kept []*directPart) {
	for _, p := range kept {
		if !p.published {
			for _, f := range p.files {
				f.unref()
			}
		}
	}
}

// dropDirect deletes the files of direct writes that are not in a log
// record.
func dropDirect(parts []*directPart) {
	for _, p := range parts {
		if !p.logged {
			removeNewFiles(p.dir, p.files)
		}
	}
}

// withoutDirect returns entries and writes less those of kept parts.
func withoutDirect(entries []entry, writes []write, kept []*directPart) ([]entry, []write) {
	skip := map[int]bool{}
	for _, p := range kept {
		for _, i := range p.entries {
			skip[i] = true
		}
	}
	es := make([]entry, 0, len(entries)-len(skip))
	ws := make([]write, 0, len(writes)-len(skip))
	for i := range entries {
		if !skip[i] {
			es = append(es, entries[i])
			ws = append(ws, writes[i])
		}
	}
	return es, ws
}

// countWrites counts a commit just appended as in flight for each type it
// writes, and returns those types for uncountWrites. The caller holds
// commitMu, so no direct write is checked meanwhile.
func (db *DB) countWrites(writes []write, kept []*directPart, dels []resolvedDelete) []schema.TypeID {
	ids := make([]schema.TypeID, 0, len(writes)+len(kept)+len(dels))
	for _, w := range writes {
		ids = append(ids, w.typ)
	}
	for _, d := range dels { // a delete in flight is rows not yet in the memtable's view
		ids = append(ids, d.typ)
	}
	for _, p := range kept {
		ids = append(ids, p.typ)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	db.writesMu.Lock()
	for _, id := range ids {
		db.typeWrites[id]++
	}
	db.writesMu.Unlock()
	return ids
}

// uncountWrites ends what countWrites counted, once the commit is in the
// memtable (or failed).
func (db *DB) uncountWrites(ids []schema.TypeID) {
	db.writesMu.Lock()
	for _, id := range ids {
		if db.typeWrites[id]--; db.typeWrites[id] <= 0 {
			delete(db.typeWrites, id)
		}
	}
	db.writesMu.Unlock()
}

// longRows is a long-format batch ready to be written whole: its runs in
// device name order, one per device, each device's rows in strict time
// order, its columns those of the file's layout.
type longRows struct {
	t    *tablet.Tablet
	runs []segment.Run
	ends []int // rows of runs [0, i) in ends[i]
}

// newLongRows puts the runs of long in device order (the rows stay where
// they are) and maps its columns (property ids ids) to layout's; nil when
// some device's rows are not in strict time order (they go through a
// private memtable instead).
func newLongRows(long *longInsert, ids []schema.PropertyID, layout segment.Layout) *longRows {
	t := long.t
	if len(long.byName) == 0 {
		return nil
	}
	// In row order (the same runs as byName's): the times are read as they
	// lie, not a run at a time from all over the batch.
	for _, r := range long.runs {
		for i := r.lo + 1; i < r.hi; i++ {
			if t.Times[i] <= t.Times[i-1] {
				return nil
			}
		}
	}
	n := len(long.byName)
	lr := &longRows{runs: make([]segment.Run, n), ends: make([]int, n+1)}
	for i, r := range long.byName {
		lr.runs[i] = segment.Run{Device: r.device, Lo: r.lo, Hi: r.hi}
		lr.ends[i+1] = lr.ends[i] + r.hi - r.lo
	}
	lr.t = &tablet.Tablet{Times: t.Times, Columns: make([]tablet.Column, len(layout.Columns))}
	for j, c := range layout.Columns {
		k := slices.Index(ids, c.ID)
		if k < 0 {
			return nil // every layout column is one of the batch's
		}
		lr.t.Columns[j] = t.Columns[k]
	}
	return lr
}

// writeLong writes lr into up to GOMAXPROCS files of about equal rows,
// split at device boundaries, in parallel.
func (db *DB) writeLong(p *directPart, lr *longRows, layout segment.Layout) (*directPart, error) {
	p.devices = make([]string, len(lr.runs))
	p.spans = make([][2]int64, len(lr.runs))
	for i, r := range lr.runs {
		lo, hi := lr.t.Times[r.Lo], lr.t.Times[r.Hi-1]
		p.devices[i], p.spans[i] = r.Device, [2]int64{lo, hi}
		p.lo, p.hi = min(p.lo, lo), max(p.hi, hi)
	}
	total := lr.ends[len(lr.runs)]
	p.rows = int64(total)
	db.startPrecheck(p)
	if err := db.makeTableDir(p.typ); err != nil {
		return nil, err
	}
	if err := db.injected("direct"); err != nil {
		return nil, err
	}
	k := int(min(int64(runtime.GOMAXPROCS(0)), max(1, int64(total)/db.fileRows)))
	cuts := []int{0} // device indexes where files start
	for f := 1; f < k; f++ {
		want := total * f / k
		i, _ := slices.BinarySearch(lr.ends, want)
		if i > cuts[len(cuts)-1] && i < len(lr.runs) {
			cuts = append(cuts, i)
		}
	}
	cuts = append(cuts, len(lr.runs))
	prefix := "part-" + newUUID()
	files := make([]*newFile, len(cuts)-1)
	errs := par.Do(len(files), len(files), func(_, f int) (err error) {
		files[f], err = db.writeLongFile(p.dir, fmt.Sprintf("%s-%d.parquet", prefix, f), layout, lr, cuts[f], cuts[f+1])
		return err
	})
	if err := errors.Join(errs...); err != nil {
		removeNewFiles(p.dir, files)
		return nil, err
	}
	p.files = files
	return p, nil
}

// writeLongFile writes devices [a, b) of lr into a new file.
func (db *DB) writeLongFile(dir, name string, layout segment.Layout, lr *longRows, a, b int) (*newFile, error) {
	path := filepath.Join(dir, name)
	w, err := segment.Create(path, layout, segment.WriterOptions{Sync: db.syncing()})
	if err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	defer w.Abort() // a no-op once closed; else (a panic, which par.Do reports) its goroutines end and its file goes
	if err := w.AppendRuns(lr.runs[a:b], lr.t); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	return db.finishFile(w, path)
}
