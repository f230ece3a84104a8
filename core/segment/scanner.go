package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"unsafe"

	"github.com/apache/arrow/go/v17/parquet/file"

	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/tablet"
)

// Scanner reads one file for a scan that visits devices in increasing
// order, as a merged scan and a flush do. It decodes a row group's
// projected columns at most once, as a whole, and serves each device's
// rows as slices of it: a file of many small devices is decoded once, not
// once per device (a Cursor per device re-decodes the row group up to the
// device's rows each time). Memory: one decoded row group. Not safe for
// concurrent use. Batches it returned stay valid after it moves on,
// unless Reuse is set.
type Scanner struct {
	// Reuse lets the scanner decode into the memory of the batches it
	// returned before: a batch is then valid only until the next Next of
	// any of the scanner's cursors. For callers that copy each batch
	// away at once (an export): it saves a fresh allocation, and the
	// page faults of fresh memory, per column per row group.
	Reuse bool

	// Buffers, if set, supplies the memory that rows are decoded into (a
	// block of the caller's per row group decoded or time range read),
	// instead of the Go heap or, with Reuse, the memory of earlier
	// batches. A batch is valid until the scanner decodes the next row
	// group or range (as with Reuse), and Release gives back the last.
	Buffers Buffers

	// Sparse says the scan reads few devices of the file (it names them):
	// a small device is then read a page range at a time instead of
	// decoding its whole row group, which a scan of every device shares.
	Sparse bool
	pread  bool // the window being read is a point read's (see setPread)

	f       *File
	cols    []Column
	src     []int
	pr      *file.Reader
	rg      int            // the decoded row group, -1 when none
	group   *tablet.Tablet // its rows: times and cols
	reader  chunkReader    // buffers of window reads
	readers []*chunkReader // per worker, for reads in parallel
	spare   [2]decoded     // with Reuse: memory of decode (0) and window (1)
	held    [2][][]byte    // with Buffers: the memory of decode (0) and window (1)
	win     windowCols     // the window being read (window)
}

// Buffers supplies the memory of a Scanner's decoded rows. Get returns n
// bytes, 8-byte aligned, not necessarily zeroed. Put takes back memory of
// Get that the scanner no longer reads; whoever else still points to it
// (an export of the rows) is the supplier's business. Scanners of one
// scan may share a Buffers from several goroutines.
type Buffers interface {
	Get(n int) []byte
	Put(b []byte)
}

// Release gives the memory of the last decode back to Buffers, and the
// read buffers to the next scanner.
func (s *Scanner) Release() {
	s.drop(0)
	s.drop(1)
	s.rg, s.group = -1, nil
	s.reader.free()
	for _, r := range s.readers {
		r.free()
	}
}

// drop gives the memory of decode (0) or window (1) back to Buffers.
func (s *Scanner) drop(slot int) {
	for _, b := range s.held[slot] {
		s.Buffers.Put(b)
	}
	s.held[slot] = s.held[slot][:0]
}

// get returns n bytes of Buffers for decode or window slot.
func (s *Scanner) get(slot, n int) []byte {
	b := s.Buffers.Get(n)
	s.held[slot] = append(s.held[slot], b)
	return b
}

// decoded is the memory of the fixed-width columns of one decode, kept for
// the next when the Scanner may reuse it.
type decoded struct {
	times     []int64
	timeValid []byte
	vals      [][]byte
	valid     [][]byte
}

// takeTimes returns a buffer of n times and a zeroed n-bit bitmap: d's
// when Reuse allows (d keeps them for the next call), else fresh ones.
func (s *Scanner) takeTimes(slot, n int) ([]int64, []byte) {
	if s.Buffers != nil {
		b := s.get(slot, 8*n+(n+7)/8)
		valid := b[8*n:]
		clear(valid)
		return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), n), valid
	}
	d := &s.spare[slot]
	if !s.Reuse {
		return make([]int64, n), make([]byte, (n+7)/8)
	}
	d.times = grow64(d.times, n)
	d.timeValid = grow(d.timeValid, (n+7)/8)
	clear(d.timeValid)
	return d.times, d.timeValid
}

// takeCols returns, per projected column the fast path may read (others
// get nil), a buffer of n values and a zeroed n-bit validity bitmap: d's
// when Reuse allows, else fresh ones.
func (s *Scanner) takeCols(slot, n int) (vals, valid [][]byte) {
	return s.takeSome(slot, n, nil)
}

// takeSome is takeCols of the columns j with want[j] only (nil: all);
// vals and valid hold their buffers at their indexes (and, with Reuse,
// the others' kept ones).
func (s *Scanner) takeSome(slot, n int, want []bool) (vals, valid [][]byte) {
	if s.Buffers != nil {
		return s.takeColsFrom(slot, n, want)
	}
	d := &s.spare[slot]
	if !s.Reuse {
		vals, valid = make([][]byte, len(s.cols)), make([][]byte, len(s.cols))
	} else {
		if len(d.vals) < len(s.cols) { // one allocation each, not one per doubling
			d.vals = append(make([][]byte, 0, len(s.cols)), d.vals...)[:len(s.cols)]
			d.valid = append(make([][]byte, 0, len(s.cols)), d.valid...)[:len(s.cols)]
		}
		vals, valid = d.vals[:len(s.cols)], d.valid[:len(s.cols)]
	}
	for j, col := range s.cols {
		w := tablet.Width(col.Type)
		if s.src[j] < 0 || w == 0 || want != nil && !want[j] {
			continue
		}
		if !s.Reuse {
			vals[j], valid[j] = make([]byte, n*w), make([]byte, (n+7)/8)
			continue
		}
		vals[j] = grow(vals[j], n*w)
		valid[j] = grow(valid[j], (n+7)/8)
		clear(valid[j])
	}
	return vals, valid
}

// takeColsFrom is takeCols with the memory of Buffers: one block for all
// the columns, each column's values then its bitmap, 8-byte aligned.
func (s *Scanner) takeColsFrom(slot, n int, want []bool) (vals, valid [][]byte) {
	vals, valid = make([][]byte, len(s.cols)), make([][]byte, len(s.cols))
	bits := (n + 7) / 8
	total := 0
	for j, col := range s.cols {
		if w := tablet.Width(col.Type); s.src[j] >= 0 && w > 0 && (want == nil || want[j]) {
			total += align8(n*w) + align8(bits)
		}
	}
	if total == 0 {
		return vals, valid
	}
	b := s.get(slot, total)
	for j, col := range s.cols {
		w := tablet.Width(col.Type)
		if s.src[j] < 0 || w == 0 || want != nil && !want[j] {
			continue
		}
		vals[j], b = b[:n*w:n*w], b[align8(n*w):]
		valid[j], b = b[:bits:bits], b[align8(bits):]
		clear(valid[j])
	}
	return vals, valid
}

func align8(n int) int { return (n + 7) &^ 7 }

func grow64(b []int64, n int) []int64 {
	if cap(b) < n {
		return make([]int64, n)
	}
	return b[:n]
}

// Scanner returns a scanner of cols (matched to the file's columns by ID
// and type as Read does).
func (f *File) Scanner(cols []Column) *Scanner {
	s := &Scanner{f: f, cols: cols, src: make([]int, len(cols)), rg: -1}
	for i, col := range cols {
		s.src[i] = -1
		if j, ok := f.byID[col.ID]; ok && f.layout.Columns[j].Type == col.Type {
			s.src[i] = j
		}
	}
	return s
}

// Read returns device's rows with start <= time < end in batches of at
// most batchRows rows (<= 0: 65536), as File.Read, but through the
// scanner's decoded row groups. Reads of one scanner must come in
// increasing device order and be consumed before the next Read starts.
func (s *Scanner) Read(device string, start, end int64, batchRows int) *GroupCursor {
	i, ok := s.f.Index(device)
	if !ok {
		i = -1
	}
	return s.ReadIndex(i, start, end, batchRows)
}

// ReadIndex is Read of the file's device i (an index into Devices, as a
// walk of the directory found it; -1 for a device the file lacks).
func (s *Scanner) ReadIndex(i int, start, end int64, batchRows int) *GroupCursor {
	return s.ReadIndexFiltered(i, start, end, batchRows, nil)
}

// RowFilter picks the rows of a scan before all their columns are read.
type RowFilter struct {
	Cols []int // the scanner's columns (indexes into its cols) that Keep reads
	// Keep says which rows of t to keep: t holds a range of a device's
	// rows, with their times and the Cols columns (the other columns are
	// empty). It may return a slice of its own, valid until its next call.
	Keep func(t *tablet.Tablet) []bool
}

// filterMinRows is the fewest rows of a device in a file for which
// ReadIndexFiltered reads a range at a time to filter it: fewer are read
// with their row group, decoded once for every device it holds. (A
// variable for tests.)
var filterMinRows int64 = 4096

// ReadIndexFiltered is ReadIndex that may leave out rows f does not keep:
// where a device has filterMinRows rows or more in the file and every
// column has fixed-width values, each range of its rows is read by f's
// columns first, and the other columns are read only at the rows f keeps
// (a page holding none of them is not even decompressed). The caller
// still filters what comes, as other rows come unfiltered. f nil: ReadIndex.
func (s *Scanner) ReadIndexFiltered(i int, start, end int64, batchRows int, f *RowFilter) *GroupCursor {
	if batchRows <= 0 {
		batchRows = defaultBatchRows
	}
	g := &GroupCursor{s: s, start: start, end: end, batch: batchRows}
	// A time range reads only the pages it needs, when every column
	// allows it (fixed width); so does a point read (Sparse) of a device
	// that is a small part of its row group. A whole device of a scan of
	// many, or strings, read whole row groups, decoded once for all the
	// devices they hold.
	g.window = start != math.MinInt64 || end != math.MaxInt64
	if i < 0 || i >= len(s.f.devices) || start >= end || s.f.spans[i][1] < start || s.f.spans[i][0] >= end {
		g.done = true
		return g
	}
	g.lo, g.hi = s.f.starts[i], s.f.starts[i+1]
	if s.Sparse && g.hi-g.lo <= defaultBatchRows/8 {
		g.window = true
	}
	fixed := true
	for j, col := range s.cols {
		if s.src[j] >= 0 && tablet.Width(col.Type) == 0 {
			g.window, fixed = false, false
		}
	}
	if f != nil && fixed && g.hi-g.lo >= filterMinRows {
		g.window, g.filter = true, f
	}
	g.pos = g.lo
	groups := s.f.groups
	g.rg = sort.Search(len(groups), func(i int) bool { return groups[i].first+groups[i].rows > g.lo })
	return g
}

// Windowed reports whether ReadIndexFiltered of device i in [start, end)
// with a filter reads the device a range of rows at a time, rather than
// from row groups decoded whole and shared by the devices they hold.
func (s *Scanner) Windowed(i int, start, end int64) bool {
	if i < 0 || i >= len(s.f.devices) {
		return false
	}
	for j, col := range s.cols {
		if s.src[j] >= 0 && tablet.Width(col.Type) == 0 {
			return false
		}
	}
	return start != math.MinInt64 || end != math.MaxInt64 || s.f.starts[i+1]-s.f.starts[i] >= filterMinRows
}

// GroupCursor iterates the batches of one Scanner.Read.
type GroupCursor struct {
	s          *Scanner
	start, end int64
	batch      int
	lo, hi     int64 // the device's file rows
	pos        int64 // next file row
	rg         int
	done       bool
	window     bool           // decode only the rows of the time range (see Read)
	filter     *RowFilter     // with window: see ReadIndexFiltered
	pend       *tablet.Tablet // rows read by a window not yet returned
	pendPast   bool           // the window's rows reached end: nothing follows pend
}

// Next returns the next batch (sharing the decoded row group's memory,
// which is never changed), or nil, nil at the end.
func (g *GroupCursor) Next() (*tablet.Tablet, error) {
	groups := g.s.f.groups
	for !g.done {
		if g.pend != nil {
			t := g.pend
			if t.Rows() > g.batch {
				g.pend = t.Slice(g.batch, t.Rows())
				return t.Slice(0, g.batch), nil
			}
			g.pend, g.done = nil, g.pendPast
			return t, nil
		}
		if g.rg >= len(groups) || groups[g.rg].first >= g.hi {
			g.done = true
			break
		}
		grp := &groups[g.rg]
		gend := grp.first + grp.rows
		if grp.minTime >= g.end {
			g.done = true // later row groups of the device are later still
			break
		}
		if g.pos >= min(g.hi, gend) || grp.maxTime < g.start {
			g.rg++
			g.pos = max(g.pos, gend)
			continue
		}
		from, to := int(g.pos-grp.first), int(min(g.hi, gend)-grp.first)
		if g.window {
			t, past, err := g.s.window(g.rg, from, to, g.start, g.end, g.filter)
			if err == nil {
				g.pos = grp.first + int64(to)
				if t.Rows() > 0 {
					g.pend, g.pendPast = t, past
				} else if past {
					g.done = true
				}
				continue
			}
			if !errors.Is(err, errNotFast) {
				g.done = true
				return nil, err
			}
			g.window = false // a column the fast path cannot read
		}
		t, err := g.s.decode(g.rg)
		if err != nil {
			g.done = true
			return nil, err
		}
		// The device's rows here, then the time range by binary search.
		times := t.Times[from:to]
		lo := from + sort.Search(len(times), func(i int) bool { return times[i] >= g.start })
		hi := from + sort.Search(len(times), func(i int) bool { return times[i] >= g.end })
		past := hi < to // the device's later rows are at or past end
		if lo == hi {
			if past {
				g.done = true
				break
			}
			g.pos = grp.first + int64(to)
			continue
		}
		stop := min(hi, lo+g.batch)
		g.pos = grp.first + int64(stop)
		g.done = stop == hi && past
		return t.Slice(lo, stop), nil
	}
	return nil, nil
}

// window reads the rows [from, to) of row group rg (relative to it) whose
// time is in [start, end), decoding only the pages that hold them: first
// those of the time column, then, once the range is found, those of each
// column. past says that rows at or after end follow. errNotFast: a
// column needs the Parquet library's reader. With filter, the rows it
// does not keep are left out (see ReadIndexFiltered).
func (s *Scanner) window(rg, from, to int, start, end int64, filter *RowFilter) (t *tablet.Tablet, past bool, err error) {
	defer func() {
		if r := recover(); r != nil { // bounds checks on garbage
			t, err = nil, s.f.corrupt("decoding a row group", fmt.Errorf("%v", r))
		}
	}()
	grp := &s.f.groups[rg]
	n := int(grp.rows)
	// Narrow [from, to) by the time column's page index: a page that
	// starts inside the device's rows at a time <= start has only later
	// rows worth reading, one at a time >= end only rows past the range.
	// A range that holds the row group's times narrows nothing (a page
	// starting inside a device's rows is later than its first time), and
	// the walk of the page list, cold in a point read, is skipped (in a
	// profile of C point reads, about 2.5% of the call).
	cut := to
	if start > grp.minTime || end <= grp.maxTime {
		row := 0
		for _, pg := range grp.chunks[1].pages {
			if row > from && row < to {
				if pg.first <= start {
					from = row
				}
				if pg.first >= end && row < cut {
					cut = row
				}
			}
			row += int(pg.values)
		}
	}
	if s.Buffers != nil {
		s.drop(1) // the previous window's rows are all returned
	}
	// A point read's few pages are read, not faulted in (see
	// chunkReader.pread).
	s.setPread(s.Sparse && cut-from <= preadRows)
	times, timeValid := s.takeTimes(1, cut-from)
	tvals := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(times))), 8*len(times))
	var vals, valids [][]byte
	var done []bool // with a filter: the columns read already, the filter's
	var early []tablet.Column
	if filter != nil {
		done = make([]bool, len(s.cols))
		for _, j := range filter.Cols {
			done[j] = true
		}
	}
	if filter != nil && start == math.MinInt64 && end == math.MaxInt64 && cut-from >= splitRows {
		// Every row of the window is in the scan: the filter's columns
		// are read with the times, in halves, at once.
		vals, valids = s.takeSome(1, cut-from, done)
		var err error
		if early, err = s.readWhole(grp, from, cut, filter.Cols, tvals, timeValid, vals, valids); err != nil {
			return nil, false, s.wrapFast(err)
		}
	} else if _, err := s.f.fastChunk(&s.reader, grp, 1, 8, false, n, from, cut, tvals, timeValid); err != nil {
		return nil, false, s.wrapFast(err)
	}
	lo := sort.Search(len(times), func(i int) bool { return times[i] >= start })
	hi := sort.Search(len(times), func(i int) bool { return times[i] >= end })
	past = hi < len(times) || cut < to
	if early != nil && (lo != 0 || hi != len(times)) {
		// A row at the largest time is past the range (end excludes it):
		// the filter's columns are read again below, at the range's rows.
		early = nil
		for _, j := range filter.Cols {
			clear(valids[j])
		}
	}
	w := &s.win
	*w = windowCols{grp: grp, n: n, from: from, lo: lo, hi: hi, vals: vals, valids: valids,
		t: &tablet.Tablet{Times: times[lo:hi:hi], Columns: make([]tablet.Column, len(s.cols)), TimeUnit: s.f.layout.TimeUnit}}
	defer func() { *w = windowCols{} }() // the scanner keeps no rows
	k := hi - lo
	w.rows = k
	if filter != nil && k > 0 {
		if w.vals == nil {
			w.vals, w.valids = s.takeSome(1, k, done)
		}
		for _, j := range filter.Cols {
			if early != nil {
				w.t.Columns[j] = early[j]
			} else if err := s.windowColumn(&s.reader, j); err != nil {
				return nil, false, s.wrapFast(err)
			}
		}
		w.sel = keptRows(filter.Keep(w.t))
		if len(w.sel) < k {
			// The filter's columns and the times at the kept rows; the
			// other columns are read at those rows only.
			picked := &tablet.Tablet{Times: w.t.Times, Columns: make([]tablet.Column, 0, len(filter.Cols))}
			for _, j := range filter.Cols {
				picked.Columns = append(picked.Columns, w.t.Columns[j])
			}
			picked = picked.Gather(w.sel)
			w.t.Times = picked.Times
			for i, j := range filter.Cols {
				w.t.Columns[j] = picked.Columns[i]
			}
			w.rows = len(w.sel)
		} else {
			w.sel = nil // every row: read as without a filter
		}
		// The other columns' buffers, for the rows read only.
		others := make([]bool, len(s.cols))
		for j := range others {
			others[j] = !done[j]
		}
		more, moreValid := s.takeSome(1, w.rows, others)
		for j := range others {
			if others[j] {
				w.vals[j], w.valids[j] = more[j], moreValid[j]
			}
		}
		w.done = done
	} else {
		w.vals, w.valids = s.takeCols(1, k) // no row: every column is read (as empty)
	}
	if k*len(s.cols) >= windowParallel { // k: pages are decompressed whole
		err = s.each(len(s.cols), true, s.windowRest)
	} else {
		for j := range s.cols {
			err = keepErr(err, s.windowRest(&s.reader, j))
		}
	}
	if err != nil {
		return nil, false, s.wrapFast(err)
	}
	t = w.t
	return t, past, nil
}

// setPread says whether the scanner's readers read pages with ReadAt
// (see chunkReader.pread): for the window being read, all of them.
func (s *Scanner) setPread(on bool) {
	s.pread, s.reader.pread = on, on
	for _, r := range s.readers {
		r.pread = on
	}
}

// growReaders makes readers for n workers, reading as setPread said.
func (s *Scanner) growReaders(n int) {
	for len(s.readers) < n {
		s.readers = append(s.readers, &chunkReader{pread: s.pread})
	}
}

// preadRows is the most rows of a point read's window that are read with
// ReadAt rather than from the mapping: a few pages per column.
const preadRows = 4096

// splitRows is the fewest rows of a window whose filter columns readWhole
// reads in halves at once, with the times. (A variable for tests.)
var splitRows = 1 << 15

// readWhole reads the times of rows [from, cut) of row group grp into tvals
// and timeValid, and the columns cols into vals and valids (sized for those
// rows), at once: the times, and each column in two halves. It returns
// the columns read, at their indexes.
func (s *Scanner) readWhole(grp *rowGroup, from, cut int, cols []int, tvals, timeValid []byte, vals, valids [][]byte) ([]tablet.Column, error) {
	n, k := int(grp.rows), cut-from
	mid := k / 2 &^ 7 // the halves' validity bits do not share a byte
	out := make([]tablet.Column, len(s.cols))
	// Each column once: two reads of one column would write the same
	// bytes at once.
	var once []int
	for _, j := range cols {
		if !slices.Contains(once, j) {
			once = append(once, j)
		}
	}
	cols = once
	nulls := make([]int, 2*len(cols))
	err := s.each(1+2*len(cols), true, func(r *chunkReader, i int) error {
		if i == 0 {
			_, err := s.f.fastChunk(r, grp, 1, 8, false, n, from, cut, tvals, timeValid)
			return err
		}
		j, a, b := cols[(i-1)/2], 0, mid
		if i%2 == 0 {
			a, b = mid, k
		}
		if s.src[j] < 0 {
			return nil
		}
		w := tablet.Width(s.cols[j].Type)
		var err error
		nulls[i-1], err = s.f.fastChunkRows(r, grp, 2+s.src[j], w, true, n, from+a, from+b, nil, vals[j][a*w:b*w], valids[j][a/8:])
		return err
	})
	if err != nil {
		return nil, err
	}
	for c, j := range cols {
		col := tablet.Column{Name: s.cols[j].Name, Type: s.cols[j].Type}
		if s.src[j] < 0 {
			out[j] = nullColumn(col, k)
			continue
		}
		col.Values = vals[j][:k*tablet.Width(col.Type)]
		if nulls[2*c]+nulls[2*c+1] > 0 {
			col.Validity = valids[j][:(k+7)/8]
		}
		out[j] = col
	}
	return out, nil
}

// keptRows returns the indexes of keep's true values. Eight at a time
// where none is: a selective filter keeps few rows.
func keptRows(keep []bool) []int32 {
	var sel []int32
	if len(keep) == 0 {
		return sel
	}
	bytes := unsafe.Slice((*byte)(unsafe.Pointer(&keep[0])), len(keep))
	i := 0
	for ; i+8 <= len(keep); i += 8 {
		if binary.LittleEndian.Uint64(bytes[i:]) == 0 {
			continue
		}
		for j, ok := range keep[i : i+8] {
			if ok {
				sel = append(sel, int32(i+j))
			}
		}
	}
	for ; i < len(keep); i++ {
		if keep[i] {
			sel = append(sel, int32(i))
		}
	}
	return sel
}

// windowParallel is the number of values from which a window's columns
// are read by several goroutines. Below it, waking the workers (a futex
// and a thread switch each) costs more than they save: at 4,096, a 1%
// range of 100 devices spent a quarter of its time switching threads.
const windowParallel = 1 << 16

// each runs fn for 0 … n-1, on up to GOMAXPROCS goroutines when parallel,
// each with its own buffers, and returns the first error.
func (s *Scanner) each(n int, parallel bool, fn func(r *chunkReader, i int) error) (err error) {
	workers := 1
	if parallel {
		workers = par.CPUs(n)
	}
	s.growReaders(workers)
	for _, e := range par.Do(n, workers, func(w, i int) error {
		if workers == 1 {
			return fn(&s.reader, i)
		}
		return fn(s.readers[w], i)
	}) {
		err = keepErr(err, e)
	}
	return err
}

// keepErr is the error of reads of several columns, err so far and then
// e: corruption wins over a column the fast path cannot read.
func keepErr(err, e error) error {
	if e != nil && (err == nil || errors.Is(err, errNotFast)) {
		return e
	}
	return err
}

// windowCols is what the column reads of a window share: kept in the
// Scanner rather than captured by closures, whose captured variables
// went to the heap (a point read's window made nine allocations, five of
// them these).
type windowCols struct {
	t            *tablet.Tablet
	grp          *rowGroup
	n            int      // rows of the row group
	from, lo, hi int      // the window's first row, and its rows [lo, hi) in range
	rows         int      // rows read of each column: hi-lo, or those a filter kept
	sel          []int32  // with a filter: the rows (of lo..hi) it keeps; nil: all
	vals, valids [][]byte // each column's buffers
	done         []bool   // with a filter: the columns read already
}

// windowColumn reads column j of the window into s.win.t.
func (s *Scanner) windowColumn(r *chunkReader, j int) error {
	w := &s.win
	col := s.cols[j]
	out := tablet.Column{Name: col.Name, Type: col.Type}
	if s.src[j] < 0 || w.rows == 0 {
		w.t.Columns[j] = nullColumn(out, w.rows)
		return nil
	}
	width := tablet.Width(col.Type)
	out.Values = w.vals[j][:w.rows*width]
	valid := w.valids[j][:(w.rows+7)/8]
	nulls, err := s.f.fastChunkRows(r, w.grp, 2+s.src[j], width, true, w.n, w.from+w.lo, w.from+w.hi, w.sel, out.Values, valid)
	if err != nil {
		return err
	}
	if nulls > 0 {
		out.Validity = valid
	}
	w.t.Columns[j] = out
	return nil
}

// windowRest reads column j of the window unless a filter read it.
func (s *Scanner) windowRest(r *chunkReader, j int) error {
	if s.win.done != nil && s.win.done[j] {
		return nil
	}
	return s.windowColumn(r, j)
}

// wrapFast passes errNotFast on and makes any other error corruption.
func (s *Scanner) wrapFast(err error) error {
	if errors.Is(err, errNotFast) {
		return err
	}
	return s.f.corrupt("decoding a row group", err)
}

// decode returns row group rg's times and projected columns, decoding them
// unless they are the last decoded. Fixed-width columns take the fast path
// (fastChunk), in parallel; the others go through the Parquet library.
func (s *Scanner) decode(rg int) (t *tablet.Tablet, err error) {
	if s.rg == rg {
		return s.group, nil
	}
	defer func() {
		if r := recover(); r != nil { // bounds checks on garbage
			err = s.f.corrupt("decoding a row group", fmt.Errorf("%v", r))
		}
	}()
	grp := &s.f.groups[rg]
	n := int(grp.rows)
	s.setPread(false) // whole chunks: from the mapping
	t = &tablet.Tablet{Columns: make([]tablet.Column, len(s.cols)), TimeUnit: s.f.layout.TimeUnit}
	// Tasks: -1 is the time column, j >= 0 is s.cols[j].
	var fast, slow []int
	fast = append(fast, -1)
	for j, col := range s.cols {
		t.Columns[j] = tablet.Column{Name: col.Name, Type: col.Type}
		switch {
		case s.src[j] < 0:
			t.Columns[j] = nullColumn(t.Columns[j], n)
		case tablet.Width(col.Type) > 0:
			fast = append(fast, j)
		default:
			slow = append(slow, j)
		}
	}
	s.rg, s.group = -1, nil // its buffers may be reused below: forget it until done
	if s.Buffers != nil {
		s.drop(0)
	}
	times, timeValid := s.takeTimes(0, n)
	vals, valids := s.takeCols(0, n)
	one := func(r *chunkReader, task int) error {
		if task < 0 {
			tvals := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(times))), 8*n)
			_, err := s.f.fastChunk(r, grp, 1, 8, false, n, 0, n, tvals, timeValid)
			return err
		}
		col := &t.Columns[task]
		col.Values = vals[task]
		valid := valids[task]
		nulls, err := s.f.fastChunk(r, grp, 2+s.src[task], tablet.Width(col.Type), true, n, 0, n, col.Values, valid)
		if nulls > 0 {
			col.Validity = valid
		}
		return err
	}
	workers := par.CPUs(len(fast))
	s.growReaders(workers)
	errs := par.Do(len(fast), workers, func(w, i int) error { return one(s.readers[w], fast[i]) })
	for i := range fast {
		var err error
		if errs != nil {
			err = errs[i]
		}
		switch {
		case err == nil:
		case errors.Is(err, errNotFast) && i == 0:
			slow = append(slow, -1)
		case errors.Is(err, errNotFast):
			slow = append(slow, fast[i])
		default:
			return nil, s.f.corrupt("decoding a row group", err)
		}
	}
	t.Times = times
	if len(slow) > 0 {
		if err := s.decodeSlow(rg, t, slow); err != nil {
			return nil, err
		}
	}
	s.rg, s.group = rg, t
	return t, nil
}

// decodeSlow reads the columns of tasks (-1: the time column) of row group
// rg into t through the Parquet library's reader.
func (s *Scanner) decodeSlow(rg int, t *tablet.Tablet, tasks []int) error {
	grp := &s.f.groups[rg]
	var cols []Column
	var src, at []int
	for _, j := range tasks {
		if j >= 0 {
			cols, src, at = append(cols, s.cols[j]), append(src, s.src[j]), append(at, j)
		}
	}
	c := &Cursor{f: s.f, cols: cols, src: src, start: math.MinInt64, end: math.MaxInt64,
		batch: int(grp.rows), lo: grp.first, hi: grp.first + grp.rows, pos: grp.first, rg: rg, pr: s.pr}
	if c.pr != nil {
		c.colR = make([]file.ColumnChunkReader, len(c.cols))
		c.skip = make([]int64, len(c.cols))
		c.scratch = make([]scratch, len(c.cols))
	}
	got, err := c.Next()
	if err != nil {
		return err
	}
	if got == nil || int64(got.Rows()) != grp.rows {
		return s.f.corrupt("decoding a row group", errShortGroup)
	}
	s.pr = c.pr
	if slices.Contains(tasks, -1) {
		t.Times = got.Times
	}
	for k, j := range at {
		t.Columns[j] = got.Columns[k]
	}
	return nil
}

var errShortGroup = errors.New("the row group decoded to fewer rows than the footer says")
