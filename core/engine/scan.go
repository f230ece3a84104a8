package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
)

// ScanRequest selects rows of one type.
type ScanRequest struct {
	Type    string
	Devices []string // nil: every device
	// DevicePrefix, when not "", keeps the devices whose names start with
	// it: a range of each source's sorted device directory.
	DevicePrefix string
	Properties   []string // nil: every live property, in creation order
	Start        *int64   // nil: no lower bound; else time >= *Start
	End          *int64   // nil: no upper bound; else time < *End
	BatchRows    int      // rows per batch at most; default 65536
	// ReuseBatches lets the scan decode flushed rows into the memory of
	// batches it returned before, and return rows of the memtables as
	// views of the memtables' own blocks (memtable.Cursor.Views): a batch
	// is then valid only until the next call to Next, or until Close if
	// Batch.Stable, and must not be written to. For callers that copy
	// each batch away (the C ABI's export), it spares a copy of memtable
	// rows, a fresh allocation per column per row group and the page
	// faults of fresh memory.
	ReuseBatches bool
	// Where, if set, keeps only the rows it accepts (see Where); the
	// properties it names need not be among Properties.
	Where *Where
	// takeFiles, if set, is given the files and memtables the scan is
	// about to read (all held for the scan's life) and returns the files
	// the caller answers for itself: the scan skips them. Aggregate's
	// statistics.
	takeFiles func(files []*dataFile, mems []*memtable.Memtable) []bool
	// Buffers, with ReuseBatches, supplies the memory that flushed rows
	// are decoded into (segment.Scanner.Buffers): the C ABI decodes into
	// blocks its result batches then point to, so that those rows too
	// are written once. Its methods may be called from several
	// goroutines at once (a filtered scan reads devices ahead).
	Buffers segment.Buffers
}

// DefaultBatchRows is the batch size of a scan that does not set one.
const DefaultBatchRows = 65536

// Batch is a run of rows of one device, sorted by time; or, with
// Devices set, rows of many devices (Last: a row per device).
type Batch struct {
	Device  string
	Devices []string       // when set, the device of each row (Device is "")
	Rows    *tablet.Tablet // owns its memory, unless the scan reuses batches
	// Stable: the scan will not reuse the batch's memory; it stays valid
	// until Close even with ReuseBatches (rows of memtables only).
	Stable bool
}

// Rows iterates over scan results, device by device in device order. Not
// safe for concurrent use. Close releases the files it holds open; a
// scan that reaches its end releases them itself.
type Rows struct {
	ctx        context.Context
	typ        *schema.Type
	props      []schema.Property
	cols       []segment.Column
	refs       []memtable.ColumnRef
	start, end int64
	batchRows  int
	reuse      bool
	buffers    segment.Buffers
	where      *filter // nil: every row
	// rowFilter hands where to a file that alone holds a device's rows,
	// which then reads the other columns at the rows it keeps only.
	rowFilter *segment.RowFilter
	nOut      int  // props[:nOut] are the result's; the rest only the filter's
	sparse    bool // the request names its devices: point reads
	plan      scanPlan

	// What the scan reads, fixed at its start: the type's files (one
	// reference each) and, per device, its memtable snapshots, oldest
	// first. Later commits are not seen.
	files    []*dataFile
	mems     []*memtable.Memtable // retained until Close
	scanners []*segment.Scanner   // per file, made when first needed
	filePos  []int                // per file, where Next's device lookups are (see hasNext)
	// hits: each device's files and its index in each directory, found
	// while merging the directories into the device list (a scan of every
	// device or a prefix), or by looking each name up once at the start
	// (a scan of a few named devices: lookupDevices); nil for a long list
	// of names, which Next then looks up in each file (hasNext).
	hits []fileHit
	// The devices' memtable snapshots and the memtable of each, in one
	// array for all devices (scanDevice.snapLo): a device costs no
	// allocation of its own.
	snaps   []memtable.Snapshot
	snapMem []int32
	devices []scanDevice
	// dels[i] are the delete ranges that apply to the sources older than
	// memtable i (oldest first): to the files, dels[0].
	dels [][]memtable.DeleteRange

	// A filtered scan of every device (or a prefix) reads the first batch
	// of the next devices on goroutines while the caller takes the
	// current one's (see readAhead). Each device read ahead has a set of
	// scanners of its own, with its own filter (a filter keeps scratch
	// memory); r.scanners and r.rowFilter are the current device's set,
	// and become free when the device read ahead next becomes current.
	aheads []*aheadRead // for devices[next], devices[next+1], … in order
	free   []scanSet    // sets no device uses

	next   int     // index of the next device to read
	cur    *merger // rows of devices[next-1] not yet returned: &merge, or nil
	merge  merger  // reused from device to device
	srcs   []runSource
	found  []fileHit // reused from device to device
	stable bool      // cur's batches are not reused (see Batch.Stable)
	err    error
}

type scanDevice struct {
	name   string
	lo, hi int64 // the times it reads: [lo, hi)
	// snaps[snapLo:snapHi] of Rows: its memtable snapshots, oldest first.
	snapLo, snapHi int32
	// hits[hitLo:hitHi] of Rows: the files that list the device, when the
	// scan has hits (Rows.hits).
	hitLo, hitHi int32
}

// Scan starts a scan. The chunks' snapshots are taken now: later commits
// are not seen.
func (db *DB) Scan(ctx context.Context, req ScanRequest) (*Rows, error) {
	if db.closed.Load() {
		return nil, fmt.Errorf("scan: %w", errs.ErrClosed)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// A name no write could have used is a bad argument, not a miss.
	if err := schema.ValidateName("type", req.Type); err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	for _, name := range req.Properties {
		if err := schema.ValidateName("property", name); err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
	}
	for _, d := range req.Devices {
		if err := validateDevice(d); err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
	}
	cat := db.catalog.Load()
	ty, ok := cat.Type(req.Type)
	if !ok {
		return nil, fmt.Errorf("scan: type %q: %w", req.Type, errs.ErrNotFound)
	}
	r := &Rows{ctx: ctx, typ: ty, start: math.MinInt64, end: math.MaxInt64, batchRows: req.BatchRows, reuse: req.ReuseBatches, buffers: req.Buffers}
	if req.Start != nil {
		r.start = *req.Start
	}
	if req.End != nil {
		r.end = *req.End
	}
	if r.batchRows <= 0 {
		r.batchRows = DefaultBatchRows
	}
	r.start = max(r.start, ttlCutoff(ty, time.Now())) // expired rows are not read
	if req.Properties == nil {
		all := ty.Properties()
		r.props = make([]schema.Property, len(all), len(all)+4) // room for a filter's columns
		for i, p := range all {
			r.props[i] = *p
		}
	} else {
		r.props = make([]schema.Property, 0, len(req.Properties)+4)
		seen := make(map[string]bool, len(req.Properties))
		for _, name := range req.Properties {
			p, ok := ty.Property(name)
			if !ok {
				return nil, fmt.Errorf("scan: property %s.%s: %w", req.Type, name, errs.ErrNotFound)
			}
			if seen[name] {
				return nil, fmt.Errorf("scan: property %q requested twice: %w", name, errs.ErrInvalidArgument)
			}
			seen[name] = true
			r.props = append(r.props, *p)
		}
	}
	r.nOut = len(r.props)
	if req.Where != nil {
		f, err := compileWhere(req.Where, ty, func(p *schema.Property) int {
			if i := slices.IndexFunc(r.props, func(q schema.Property) bool { return q.ID == p.ID }); i >= 0 {
				return i
			}
			r.props = append(r.props, *p)
			return len(r.props) - 1
		})
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		r.where = f
		// Compiled again, against the columns placed above: the same
		// filter with scratch of its own for each set of scanners, which
		// run on goroutines of their own (see readAhead), while r.where
		// filters the batches.
		for k := range 1 + readAheadDevices {
			same, err := compileWhere(req.Where, ty, func(p *schema.Property) int {
				return slices.IndexFunc(r.props, func(q schema.Property) bool { return q.ID == p.ID })
			})
			if err != nil {
				return nil, fmt.Errorf("scan: %w", err)
			}
			rf := &segment.RowFilter{Cols: same.columns(nil), Keep: same.rows}
			if k == 0 {
				r.rowFilter = rf
			} else {
				r.free = append(r.free, scanSet{filter: rf})
			}
		}
	}
	r.refs = make([]memtable.ColumnRef, len(r.props))
	r.cols = make([]segment.Column, len(r.props))
	for i, p := range r.props {
		r.refs[i] = memtable.ColumnRef{ID: p.ID, Name: p.Name, Type: p.Type}
		r.cols[i] = segment.Column{ID: p.ID, Name: p.Name, Type: p.Type}
	}

	files, mems := db.pin(ty.ID)
	r.files, r.mems = files, mems
	r.scanners = make([]*segment.Scanner, len(files))
	if req.takeFiles != nil && len(r.files) > 0 {
		if taken := req.takeFiles(r.files, mems); taken != nil {
			kept := make([]*dataFile, 0, len(r.files))
			for i, f := range r.files {
				if taken[i] {
					f.unref()
				} else {
					kept = append(kept, f)
				}
			}
			r.files, r.scanners = kept, make([]*segment.Scanner, len(kept))
		}
	}
	// An index narrows the scan to the devices and times of the rows
	// that held a matching key; the filter then reads their rows. Else
	// files are pruned by their statistics (which costs a look at every
	// device of the memtables: the index's parts are cheaper).
	plan := planIndex(ty, req.Where)
	if plan == nil && r.where != nil && len(r.files) > 0 {
		r.pruneFiles(ty, mems)
	}
	var windows map[string][2]int64
	r.plan = scanPlan{files: len(r.files), mems: len(mems)}
	if plan != nil {
		var err error
		if windows, r.plan.candidates, err = db.candidates(ty, plan, r.files, mems); err != nil {
			r.Close()
			return nil, fmt.Errorf("scan: %w", err)
		}
		r.plan.index, r.plan.devices = plan, len(windows)
	}

	if r.start >= r.end {
		return r, nil
	}
	var names []string
	var hitEnds []int32 // per name, the end of its hits in r.hits
	// Point reads of a few named devices read pages, not row groups; a
	// long list reads row groups, decoded once for all of it.
	r.sparse = req.Devices != nil && len(req.Devices) <= sparseDevices
	if windows != nil {
		for d := range windows {
			if strings.HasPrefix(d, req.DevicePrefix) && (req.Devices == nil || slices.Contains(req.Devices, d)) {
				names = append(names, d)
			}
		}
		r.sparse = len(names) <= sparseDevices
	} else if req.Devices != nil {
		for _, d := range req.Devices {
			if strings.HasPrefix(d, req.DevicePrefix) {
				names = append(names, d)
			}
		}
		if r.sparse {
			// A few named devices: each is looked up in each file once,
			// here, and Next reads the files found instead of looking
			// again (on a million devices in 20 files, 12 of a point
			// read's 86 µs were these lookups, made twice).
			slices.Sort(names)
			names = slices.Compact(names)
			hitEnds, r.hits = lookupDevices(r.files, names)
		}
	} else {
		var lists []deviceList // each sorted
		for i, f := range r.files {
			if f.overlapsTime(r.start, r.end) {
				devs := f.Devices()
				base, _ := slices.BinarySearch(devs, req.DevicePrefix) // where the prefix's names start
				lists = append(lists, deviceList{names: memtable.PrefixRange(devs[base:], req.DevicePrefix), file: int32(i), base: int32(base)})
			}
		}
		for _, m := range mems {
			lists = append(lists, deviceList{names: m.DevicesWithPrefix(ty.ID, req.DevicePrefix), file: -1})
		}
		names, hitEnds, r.hits = mergeDevices(lists)
	}
	if hitEnds == nil {
		if !slices.IsSorted(names) {
			slices.Sort(names)
		}
		names = slices.Compact(names)
	}
	// The delete ranges and the chunks' tombstones must be of one moment:
	// a delete applied between reading the ones and snapshotting the
	// others would show half (the memtable's rows gone, the files' not).
	// Deletes are rare: read the ranges again after, and start over if one
	// came in between.
	for attempt := 0; ; attempt++ {
		if attempt == 8 {
			// Deletes keep coming: hold them off (they are applied under
			// publishMu) for the moment the snapshots take.
			db.publishMu.Lock()
			defer db.publishMu.Unlock()
		}
		seqs, busy := deleteSeqs(mems)
		if busy {
			runtime.Gosched() // a delete is being applied: a moment
			continue
		}
		r.dels = make([][]memtable.DeleteRange, len(mems)+1)
		for i := range mems {
			r.dels[i] = rangesFor(mems, ty.ID, i)
		}
		r.devices = slices.Grow(r.devices[:0], len(names))
		clear(r.snaps)
		r.snaps, r.snapMem = r.snaps[:0], r.snapMem[:0]
		pos := make([]int, len(r.files))
		for k, d := range names {
			sd := scanDevice{name: d, lo: r.start, hi: r.end}
			if hitEnds != nil {
				if k > 0 {
					sd.hitLo = hitEnds[k-1]
				}
				sd.hitHi = hitEnds[k]
			}
			if w, ok := windows[d]; ok {
				sd.lo = max(sd.lo, w[0])
				if w[1] < sd.hi-1 {
					sd.hi = w[1] + 1
				}
				if sd.lo >= sd.hi {
					continue
				}
			}
			sd.snapLo = int32(len(r.snaps))
			for i, m := range mems {
				if c, ok := m.Lookup(ty.ID, d); ok {
					r.snaps = append(r.snaps, c.Snapshot())
					r.snapMem = append(r.snapMem, int32(i))
				}
			}
			sd.snapHi = int32(len(r.snaps))
			if sd.snapHi == sd.snapLo && (hitEnds != nil && !r.hitsSpan(&sd) || hitEnds == nil && !r.inFiles(pos, d, sd.lo, sd.hi)) {
				continue
			}
			r.devices = append(r.devices, sd)
		}
		if after, _ := deleteSeqs(mems); slices.Equal(after, seqs) {
			return r, nil
		}
	}
}

// deviceList is a sorted list of device names: names[i] is entry base+i
// of file file's directory, or a memtable's (file -1).
type deviceList struct {
	names      []string
	file, base int32
}

// fileHit is a device's entry in a file's directory.
type fileHit struct{ file, index int32 }

// mergeDevices merges sorted device lists into the sorted distinct names
// and, per name, the files that list it (hits[ends[k-1]:ends[k]] for
// name k): a heap of the lists, a few comparisons per entry, instead of a
// lookup of every device in every file.
func mergeDevices(lists []deviceList) (names []string, ends []int32, hits []fileHit) {
	total := 0
	h := make([]int, 0, len(lists)) // a min-heap of list indexes by current name
	pos := make([]int, len(lists))
	for i, l := range lists {
		total += len(l.names)
		if len(l.names) > 0 {
			h = append(h, i)
		}
	}
	less := func(a, b int) bool { return lists[h[a]].names[pos[h[a]]] < lists[h[b]].names[pos[h[b]]] }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(c+1, c) {
				c++
			}
			if !less(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	names = make([]string, 0, total)
	ends = make([]int32, 0, total)
	hits = make([]fileHit, 0, total)
	for len(h) > 0 {
		l := &lists[h[0]]
		name := l.names[pos[h[0]]]
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
			ends = append(ends, int32(len(hits)))
		}
		if l.file >= 0 {
			hits = append(hits, fileHit{file: l.file, index: l.base + int32(pos[h[0]])})
			ends[len(ends)-1] = int32(len(hits))
		}
		if pos[h[0]]++; pos[h[0]] == len(l.names) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return names, ends, hits
}

// hitsSpan reports whether one of sd's files holds rows of it in its
// time range.
func (r *Rows) hitsSpan(sd *scanDevice) bool {
	for _, h := range r.hits[sd.hitLo:sd.hitHi] {
		if r.files[h.file].spans(int(h.index), sd.lo, sd.hi-1) {
			return true
		}
	}
	return false
}

// deleteSeqs returns the memtables' delete sequences, and whether a delete
// is being applied to one.
func deleteSeqs(mems []*memtable.Memtable) ([]uint64, bool) {
	out := make([]uint64, len(mems))
	busy := false
	for i, m := range mems {
		out[i] = m.DeleteSeq()
		busy = busy || out[i]%2 == 1
	}
	return out, busy
}

// overlapsTime reports whether f may hold a time in [start, end).
func (f *dataFile) overlapsTime(start, end int64) bool {
	_, _, lo, hi := f.Bounds()
	return hi >= start && lo < end
}

// inFiles reports whether a file holds rows of device in [start, end);
// pos is the files' lookup positions (see hasNext).
func (r *Rows) inFiles(pos []int, device string, start, end int64) bool {
	for i, f := range r.files {
		if hasNext(f, &pos[i], device, start, end-1) {
			return true
		}
	}
	return false
}

// lookupDevices finds each of names (sorted, distinct) in the files'
// directories: hits holds the files and entries of each name in turn,
// hitEnds[k] the end of name k's (as mergeDevices returns them).
func lookupDevices(files []*dataFile, names []string) (hitEnds []int32, hits []fileHit) {
	hitEnds = make([]int32, 0, len(names))
	hits = make([]fileHit, 0, len(names)) // not nil: the scan reads through it
	pos := make([]int, len(files))
	// The first bit of each file's device filter, tested in every file
	// before the lookups: file after file, each lookup waited for its
	// file's filter line (a cache miss: twenty files' filters of a
	// million devices are more than a core's L2 cache); tested together,
	// without a branch between the loads, the misses overlap.
	passed := make([]bool, len(files))
	for _, d := range names {
		h := segment.DeviceHash(d)
		for i, f := range files {
			passed[i] = pos[i] != 0 || f.FirstProbe(h) // pos: found before, walked to by name
		}
		for i, f := range files {
			found := false
			if pos[i] == 0 { // not found in f yet: its index, the name hashed once
				if passed[i] {
					pos[i], found = f.IndexHash(d, h) // 0 when not found
				}
			} else { // past an earlier name: forward from there
				found = hasNext(f, &pos[i], d, math.MinInt64, math.MaxInt64)
			}
			if found {
				hits = append(hits, fileHit{file: int32(i), index: int32(pos[i])})
			}
		}
		hitEnds = append(hitEnds, int32(len(hits)))
	}
	return hitEnds, hits
}

// hasNext is f.has for lookups of devices in name order: *pos, where the
// previous lookup ended in f's sorted device list, only moves forward, by
// a galloping search, so a walk of every device of a type costs its
// devices, not a binary search each. A name before the previous one
// starts over.
func hasNext(f *dataFile, pos *int, device string, lo, hi int64) bool {
	devs := f.Devices()
	p := *pos
	if p > 0 && devs[p-1] >= device {
		p = 0
	}
	if p == 0 {
		// A lookup from the start: a point read, or a walk that has not
		// reached the file's first device. The file's own lookup (a Bloom
		// filter, then a hash table of its names) costs no search at all.
		i, ok := f.Index(device)
		if !ok {
			return false
		}
		*pos = i
		return f.spans(i, lo, hi)
	}
	end, step := p+1, 1
	for end < len(devs) && devs[end] < device {
		p, step = end, step*2
		end = p + step
	}
	end = min(end, len(devs))
	p += sort.SearchStrings(devs[p:end], device)
	*pos = p
	if p == len(devs) || devs[p] != device {
		return false
	}
	return f.spans(p, lo, hi)
}

// spans reports whether the file's device p has rows in [lo, hi].
func (f *dataFile) spans(p int, lo, hi int64) bool {
	_, first, last := f.DeviceAt(p)
	return last >= lo && first <= hi
}

// sparseDevices is the most devices a scan may name and still read each
// small device's pages rather than its row groups.
const sparseDevices = 256

// scanPlan is how a scan reads its rows (Rows.Plan).
type scanPlan struct {
	index               *indexPlan // nil: every device
	candidates, devices int        // through the index
	files, mems         int
}

// Plan says how the scan reads its rows: through which index, with how
// many candidate rows, or over every device.
func (r *Rows) Plan() string {
	p := r.plan
	if p.index == nil {
		return fmt.Sprintf("scan of %s: %d files, %d memtables", r.typ.Name, p.files, p.mems)
	}
	return fmt.Sprintf("index %s on %s (%s): %d candidate rows in %d devices, %d files, %d memtables",
		p.index.ix.Name, r.typ.Name, p.index.desc, p.candidates, p.devices, p.files, p.mems)
}

// Explain returns how a scan of req would read its rows (Rows.Plan),
// without reading them.
func (db *DB) Explain(ctx context.Context, req ScanRequest) (string, error) {
	r, err := db.Scan(ctx, req)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return r.Plan(), nil
}

// Waits reports, as the scan starts, whether reading it may wait for
// other goroutines many times (windows decoded by several, devices read
// ahead): it reads files of WaitRows rows or more in all, and does not
// read only the pages of a few named devices (point reads).
func (r *Rows) Waits() bool {
	return !r.sparse && rowsIn(r.files) >= WaitRows
}

// WaitRows is the fewest rows in a type's files from which a scan of many
// devices, or a query over them, may wait for other goroutines many times
// (Waits; FlushedRows is the count for a type).
const WaitRows = 1 << 16

// Type returns the scanned type as of the scan's start.
func (r *Rows) Type() *schema.Type { return r.typ }

// Properties returns the result columns after device and time.
func (r *Rows) Properties() []schema.Property { return r.props[:r.nOut] }

// Next returns the next batch, or false at the end or on error. It checks
// the scan's context before each batch.
func (r *Rows) Next() (Batch, bool) {
	for r.err == nil {
		if r.cur != nil {
			if err := r.ctx.Err(); err != nil {
				r.err = fmt.Errorf("scan of %q stopped: %w", r.typ.Name, errs.ErrCanceled)
				break
			}
			b, err := r.cur.Next()
			if err != nil {
				r.err = fmt.Errorf("scan of %q: %w", r.typ.Name, err)
				break
			}
			if b != nil && r.where != nil {
				if b = r.filtered(b); b.Rows() == 0 {
					continue
				}
			}
			if b != nil {
				return Batch{Device: r.devices[r.next-1].name, Rows: b, Stable: r.stable}, true
			}
			r.cur = nil
			done := &r.devices[r.next-1]
			clear(r.snaps[done.snapLo:done.snapHi])
			*done = scanDevice{}
		}
		if r.next >= len(r.devices) {
			r.finish()
			return Batch{}, false
		}
		d := r.devices[r.next]
		r.next++
		clear(r.srcs)
		srcs := r.srcs[:0]
		var rf *segment.RowFilter
		if len(r.aheads) > 0 {
			// The first device read ahead (always this one): its set
			// becomes the current one, and the last device's is free.
			a := r.aheads[0]
			<-a.done
			r.aheads = slices.Delete(r.aheads, 0, 1)
			r.free = append(r.free, scanSet{scanners: r.scanners, filter: r.rowFilter})
			r.scanners, r.rowFilter = a.set.scanners, a.set.filter
			rf = r.rowFilter
			srcs = append(srcs, &firstThen{first: a.first, err: a.err, rest: a.src})
		} else {
			found := r.found[:0] // the files holding the device's rows in range
			if r.hits != nil {
				found = r.filesOf(&d, found)
			} else {
				if len(r.filePos) != len(r.files) {
					r.filePos = make([]int, len(r.files))
				}
				for i, f := range r.files {
					if hasNext(f, &r.filePos[i], d.name, d.lo, d.hi-1) {
						found = append(found, fileHit{file: int32(i), index: int32(r.filePos[i])}) // hasNext left the file's position at the device
					}
				}
			}
			r.found = found
			// Files that hold the device's rows in time spans apart, with no
			// memtable row of it, may filter them as they read: no row of
			// another source can replace a row one of them drops.
			if d.snapLo == d.snapHi && r.apart(found) {
				rf = r.rowFilter
			}
			for _, h := range found {
				srcs = append(srcs, r.readFile(r.scanners, int(h.file), int(h.index), &d, rf))
			}
		}
		r.stable = !r.reuse || len(srcs) == 0 // no file's reused buffers among them
		for k := d.snapLo; k < d.snapHi; k++ {
			cur := r.snaps[k].Cursor(r.refs, d.lo, d.hi, r.batchRows)
			if r.reuse {
				cur.Views()
			}
			srcs = append(srcs, filterDeleted(runSource(memSource{cur}), d.name, r.dels[r.snapMem[k]+1]))
		}
		r.srcs = srcs
		r.merge.reset(srcs, r.batchRows)
		r.cur = &r.merge
		if rf != nil {
			r.readAhead()
		}
	}
	r.finish()
	return Batch{}, false
}

// filesOf returns, appended to found, the files holding d's rows in its
// time range, in the order of r.files, from r.hits.
func (r *Rows) filesOf(d *scanDevice, found []fileHit) []fileHit {
	hs := r.hits[d.hitLo:d.hitHi]
	slices.SortFunc(hs, func(a, b fileHit) int { return int(a.file - b.file) })
	for _, h := range hs {
		if r.files[h.file].spans(int(h.index), d.lo, d.hi-1) {
			found = append(found, h)
		}
	}
	return found
}

// apart reports whether the files found hold their device's rows in time
// spans that do not overlap (a device a compaction split between files,
// or written in later flushes at later times).
func (r *Rows) apart(found []fileHit) bool {
	if len(found) < 2 {
		return true
	}
	var buf [8][2]int64
	spans := buf[:0]
	for _, h := range found {
		_, first, last := r.files[h.file].DeviceAt(int(h.index))
		spans = append(spans, [2]int64{first, last})
	}
	return spansApart(spans)
}

// spansApart reports whether no two of the closed time spans share a
// time (spans that touch at one share it: two rows of one key). It sorts
// spans.
func spansApart(spans [][2]int64) bool {
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	for k := 1; k < len(spans); k++ {
		if spans[k][0] <= spans[k-1][1] {
			return false
		}
	}
	return true
}

// readAheadDevices is how many devices a filtered scan reads ahead: with
// one, the caller still waited for it a quarter of the time.
const readAheadDevices = 2

// scanSet is a scanner per file (made when first needed) and the filter
// its scanners use.
type scanSet struct {
	scanners []*segment.Scanner
	filter   *segment.RowFilter
}

// aheadRead is the first batch of a device, read on a goroutine.
type aheadRead struct {
	set   scanSet   // its scanners: no other device uses them until it is done
	src   runSource // the rest of the device's rows
	first *tablet.Tablet
	err   error
	done  chan struct{} // closed once first and err are set
}

// readAhead starts reading the first batch of each next device not read
// ahead yet, while a set of scanners is free, if it is one a filtered scan
// reads by ranges of rows from files that hold it in spans apart (the
// devices' lists came from the directories): their windows are read and
// filtered while the caller takes the current device's rows, which kept
// one core busy of two. A set is free once the caller has moved past its device, so a
// batch read ahead stays valid until it is returned.
func (r *Rows) readAhead() {
	// Not for a few named devices (sparse): their calls wait on their
	// own thread (Waits), where a goroutine's hand-off costs more.
	for r.hits != nil && !r.sparse && len(r.free) > 0 && r.next+len(r.aheads) < len(r.devices) {
		d := &r.devices[r.next+len(r.aheads)]
		if d.snapLo != d.snapHi {
			return
		}
		var few [4]fileHit
		found := r.filesOf(d, few[:0])
		if len(found) == 0 || !r.apart(found) {
			return
		}
		set := &r.free[len(r.free)-1]
		if set.scanners == nil {
			set.scanners = make([]*segment.Scanner, len(r.files))
		}
		// Only a device read by ranges of rows: a small one's rows come
		// from a row group decoded whole, shared with the devices next to
		// it, which another set of scanners would decode again.
		for _, h := range found {
			if !r.scanner(set.scanners, int(h.file)).Windowed(int(h.index), d.lo, d.hi) {
				return
			}
		}
		a := &aheadRead{set: *set, done: make(chan struct{})}
		r.free = r.free[:len(r.free)-1]
		if len(found) == 1 {
			a.src = r.readFile(a.set.scanners, int(found[0].file), int(found[0].index), d, a.set.filter)
		} else {
			srcs := make([]runSource, len(found))
			for k, h := range found {
				srcs[k] = r.readFile(a.set.scanners, int(h.file), int(h.index), d, a.set.filter)
			}
			a.src = newMerger(srcs, r.batchRows)
		}
		r.aheads = append(r.aheads, a)
		go func() {
			defer close(a.done)
			defer func() {
				if p := recover(); p != nil {
					a.err = fmt.Errorf("reading ahead: %v: %w", p, errs.ErrInternal)
				}
			}()
			a.first, a.err = a.src.Next()
		}()
	}
}

// waitAhead waits for the reads ahead in flight, before the scanners go;
// their sets are free again.
func (r *Rows) waitAhead() {
	for _, a := range r.aheads {
		<-a.done
		r.free = append(r.free, a.set)
	}
	r.aheads = nil
}

// firstThen is a source whose first batch was read already.
type firstThen struct {
	first *tablet.Tablet
	err   error
	rest  runSource
	taken bool
}

func (s *firstThen) Next() (*tablet.Tablet, error) {
	if !s.taken {
		s.taken = true
		if s.first != nil || s.err != nil {
			return s.first, s.err
		}
	}
	return s.rest.Next()
}

// readFile returns the rows of device d in file i, entry index of its
// directory; with rf, some of the rows rf rejects may be left out.
func (r *Rows) readFile(scanners []*segment.Scanner, i, index int, d *scanDevice, rf *segment.RowFilter) runSource {
	return filterDeleted(r.scanner(scanners, i).ReadIndexFiltered(index, d.lo, d.hi, r.batchRows, rf), d.name, r.dels[0])
}

// scanner returns file i's scanner of the set scanners, made when first
// needed.
func (r *Rows) scanner(scanners []*segment.Scanner, i int) *segment.Scanner {
	if scanners[i] == nil {
		scanners[i] = r.files[i].Scanner(r.cols)
		scanners[i].Reuse = r.reuse
		if r.reuse {
			scanners[i].Buffers = r.buffers
		}
		scanners[i].Sparse = r.sparse
	}
	return scanners[i]
}

// finish releases what the scan holds once it has no more rows: all of it,
// or, with ReuseBatches, only the files, since batches that are views of
// the memtables stay valid until Close.
func (r *Rows) finish() {
	r.waitAhead()
	if !r.reuse {
		r.Close()
		return
	}
	r.releaseScanners()
	for _, f := range r.files {
		f.unref()
	}
	r.files, r.scanners, r.free, r.devices, r.cur = nil, nil, nil, nil, nil
	r.merge, r.srcs, r.snaps, r.snapMem, r.hits, r.filePos, r.found = merger{}, nil, nil, nil, nil, nil, nil
}

// releaseScanners gives the scanners' decoded rows back to Buffers.
func (r *Rows) releaseScanners() {
	r.waitAhead()
	sets := append([]scanSet{{scanners: r.scanners}}, r.free...)
	for _, set := range sets {
		for _, s := range set.scanners {
			if s != nil {
				s.Release()
			}
		}
	}
}

// pruneFiles drops the files whose statistics rule out every row the
// scan's Where accepts, unless a memtable row could complete one of their
// rows (see memSpans.overlap), whose spans are worked out only if a file
// qualifies.
func (r *Rows) pruneFiles(ty *schema.Type, mems []*memtable.Memtable) {
	var spans memSpans
	kept := make([]*dataFile, 0, len(r.files))
	for _, f := range r.files {
		if st := f.statsOf(); st.ok && !r.where.mayMatch(st, fileColumnNames(f)) {
			if spans == nil {
				spans = memSpansOf(ty, mems)
			}
			if !spans.overlap(f) {
				f.unref()
				prunedFiles.Add(1)
				continue
			}
		}
		kept = append(kept, f)
	}
	r.files, r.scanners = kept, make([]*segment.Scanner, len(kept))
}

// filtered returns the rows of b that the scan's Where keeps, with the
// result's columns only.
func (r *Rows) filtered(b *tablet.Tablet) *tablet.Tablet {
	keep := r.where.rows(b)
	var rows []int32
	for i, ok := range keep {
		if ok {
			rows = append(rows, int32(i))
		}
	}
	if len(rows) < b.Rows() {
		b = b.Gather(rows)
	}
	return &tablet.Tablet{Times: b.Times, Columns: b.Columns[:r.nOut:r.nOut], TimeUnit: b.TimeUnit, TimeZone: b.TimeZone}
}

// Err returns the error that ended the iteration, if any.
func (r *Rows) Err() error { return r.err }

// Close releases the iterator and the files it holds. Safe to call twice.
func (r *Rows) Close() {
	r.releaseScanners()
	for _, f := range r.files {
		f.unref()
	}
	for _, m := range r.mems {
		m.Release()
	}
	r.files, r.mems, r.scanners, r.free, r.devices, r.cur = nil, nil, nil, nil, nil, nil
	r.merge, r.srcs, r.snaps, r.snapMem, r.hits, r.filePos, r.found = merger{}, nil, nil, nil, nil, nil, nil
}

// split cuts a scan that has not started into up to n scans of its own,
// r the first, each a run of its devices in order with about as many rows
// as the next, and each of at least minRows of them; r alone if that
// makes fewer than two. They read r's snapshot and may each be read on a
// goroutine of their own; each holds its files and memtables until
// closed. A scan with a Where is not split: its filter keeps scratch
// memory of one goroutine.
func (r *Rows) split(n int, minRows int64) []*Rows {
	if n < 2 || len(r.devices) < 2 || r.next > 0 || r.where != nil {
		return []*Rows{r}
	}
	// Each device's weight: its rows, estimated from the directories' hits
	// (of a scan of every device, a prefix, or a few named devices); 1 for
	// a device of a long list of names, whose files a lookup each would
	// cost more than this saves, with the rows of a file's directory entry
	// on average for each (and the memtable rows of the named devices).
	ends := make([]int64, len(r.devices)) // the weight up to each device's end
	var total int64
	for k := range r.devices {
		w := int64(1)
		if r.hits != nil {
			w = r.rowsOf(&r.devices[k])
		}
		total += w
		ends[k] = total
	}
	rows := func(w int64) int64 { return w }
	if r.hits == nil {
		var entries int
		for _, f := range r.files {
			entries += len(f.Devices())
		}
		var all float64
		if entries > 0 {
			all = float64(rowsIn(r.files)) / float64(entries) * float64(len(r.devices))
		}
		for _, sn := range r.snaps {
			all += float64(sn.Rows())
		}
		rows = func(w int64) int64 { return int64(all * float64(w) / float64(total)) }
	}
	minRows = max(minRows, 1)
	n = int(min(int64(n), rows(total)/minRows))
	// cuts[p] is the first device of part p: the device after the one at
	// which the parts before hold p/n of the weight. A part of fewer than
	// minRows rows (a few large devices) joins the one before.
	cuts := []int{0}
	for p := 1; p < n; p++ {
		at, _ := slices.BinarySearch(ends, total*int64(p)/int64(n))
		at = min(at+1, len(r.devices))
		last := cuts[len(cuts)-1]
		if at > last && at < len(r.devices) && rows(weightBetween(ends, last, at)) >= minRows {
			cuts = append(cuts, at)
		}
	}
	if k := len(cuts) - 1; k > 0 && rows(weightBetween(ends, cuts[k], len(r.devices))) < minRows {
		cuts = cuts[:k] // the last part joins the one before
	}
	if len(cuts) < 2 {
		return []*Rows{r}
	}
	cuts = append(cuts, len(r.devices))
	devices := r.devices
	parts := []*Rows{r}
	for p := 1; p < len(cuts)-1; p++ {
		part := &Rows{ctx: r.ctx, typ: r.typ, props: r.props, cols: r.cols, refs: r.refs, start: r.start, end: r.end,
			batchRows: r.batchRows, reuse: r.reuse, buffers: r.buffers, nOut: r.nOut, sparse: r.sparse, plan: r.plan,
			files: slices.Clone(r.files), mems: slices.Clone(r.mems), scanners: make([]*segment.Scanner, len(r.files)),
			hits: r.hits, snaps: r.snaps, snapMem: r.snapMem, dels: r.dels}
		for _, f := range part.files {
			f.refs.Add(1)
		}
		for _, m := range part.mems {
			m.Retain()
		}
		parts = append(parts, part)
	}
	// A part's devices, hits and snapshots are its own entries of arrays
	// the parts share: no part writes another's.
	for p, part := range parts {
		part.devices = devices[cuts[p]:cuts[p+1]:cuts[p+1]]
	}
	return parts
}

// weightBetween returns the weight of devices [a, b), of ends as split
// makes.
func weightBetween(ends []int64, a, b int) int64 {
	if a == 0 {
		return ends[b-1]
	}
	return ends[b-1] - ends[a-1]
}

// rowsOf estimates the rows of d in its time range, d one of the devices
// of a scan with directory hits: its rows in each file and memtable
// snapshot, in the share of their time span that the range covers.
func (r *Rows) rowsOf(d *scanDevice) int64 {
	var rows int64
	add := func(n, first, last int64) {
		lo, hi := max(first, d.lo), min(last, d.hi-1)
		if lo <= hi { // no int64 overflow at the extremes
			rows += int64(float64(n) * (float64(hi) - float64(lo) + 1) / (float64(last) - float64(first) + 1))
		}
	}
	for _, h := range r.hits[d.hitLo:d.hitHi] {
		add(r.files[h.file].DeviceAt(int(h.index)))
	}
	for k := d.snapLo; k < d.snapHi; k++ {
		if first, last, ok := r.snaps[k].TimeBounds(); ok {
			add(int64(r.snaps[k].Rows()), first, last)
		}
	}
	return rows
}
