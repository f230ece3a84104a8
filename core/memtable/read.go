package memtable

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"unsafe"

	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// ColumnRef names a column to read: its id, the name to give it in the
// result, and its type.
type ColumnRef struct {
	ID   schema.PropertyID
	Name string
	Type schema.PropertyType
}

// Snapshot is a consistent, read-only view of a chunk: the rows and
// columns published by the writes that completed before it was taken. It
// is safe to use from any goroutine while writers go on. It must not be
// used after the chunk (or its memtable) is cleared.
type Snapshot struct {
	st        *state
	ix        *idTable
	shift     uint
	blockRows int
}

// Snapshot returns a view of the rows written so far; it never blocks a
// writer.
func (c *Chunk) Snapshot() Snapshot {
	// The state first: an id table loaded after it knows every column of
	// the state.
	st := c.state.Load()
	return Snapshot{st: st, ix: c.index.Load(), shift: c.shift, blockRows: c.blockRows}
}

// pos returns the position of column id in the snapshot, or -1: by the id
// table, or in a small chunk, which has none, by the column list.
func (s Snapshot) pos(id schema.PropertyID) int {
	if s.ix != nil {
		return s.ix.lookup(id, len(s.st.cols))
	}
	return colPos(s.st.cols, id)
}

// blockTimes returns the times of the snapshot's rows in row block b.
func (s Snapshot) blockTimes(b int) []int64 {
	return s.st.blocks[b].timesOf(min(s.blockRows, s.st.rows-b*s.blockRows))
}

// Rows returns the number of rows written (before merging equal times).
func (s Snapshot) Rows() int {
	if s.st == nil {
		return 0
	}
	return s.st.rows
}

// Width returns the number of columns.
func (s Snapshot) Width() int {
	if s.st == nil {
		return 0
	}
	return len(s.st.cols)
}

// Read returns rows with start <= time < end, sorted by time, equal times
// merged (per column the last non-null value in arrival order wins), with
// the columns of cols in that order, named by ColumnRef.Name. A column the
// chunk lacks, or has with another type than ColumnRef.Type, reads as all
// null. A column's Validity is nil when it has no null in the result. The
// result owns its memory.
func (s Snapshot) Read(cols []ColumnRef, start, end int64) *tablet.Tablet {
	if t := s.Cursor(cols, start, end, math.MaxInt).Next(); t != nil {
		return t
	}
	out := &tablet.Tablet{Times: []int64{}, Columns: make([]tablet.Column, len(cols))}
	for i, ref := range cols {
		out.Columns[i] = s.readColumn(ref, rowSet{}, nil)
	}
	return out
}

// Cursor returns the rows Read would return, in batches of at most
// batchRows rows, so that a reader of a large chunk holds one batch of
// values at a time. A chunk whose rows arrived in time order (the usual
// case) is walked a batch at a time; another needs its row order sorted
// once, 16 bytes a row.
func (s Snapshot) Cursor(cols []ColumnRef, start, end int64, batchRows int) *Cursor {
	c := &Cursor{}
	s.CursorInto(c, cols, start, end, batchRows)
	return c
}

// CursorInto is Cursor into c, an earlier cursor (of any snapshot) that
// its caller is done with: its scratch is reused, and so is its
// batches' memory if it reuses batches (see ReuseBatches).
func (s Snapshot) CursorInto(c *Cursor, cols []ColumnRef, start, end int64, batchRows int) {
	*c = Cursor{s: s, cols: cols, batch: max(batchRows, 1), vs: c.vs[:0], tv: c.tv[:0],
		views: c.views, reuse: c.reuse, out: c.out}
	var blocks int
	if s.st != nil {
		blocks = (s.st.rows + s.blockRows - 1) >> s.shift
		c.vs = slices.Grow(c.vs, blocks)[:blocks] // filled by views before each use
	}
	if s.st != nil && s.st.sorted && len(s.st.tombstones()) == 0 && s.st.rows > 0 && start < end {
		c.sorted = true
		c.tv = slices.Grow(c.tv, blocks)[:blocks]
		for b := range c.tv {
			c.tv[b] = s.blockTimes(b)
		}
		c.pos = sort.Search(s.st.rows, func(i int) bool { return c.timeAt(i) >= start })
		c.hi = sort.Search(s.st.rows, func(i int) bool { return c.timeAt(i) >= end })
		return
	}
	c.rs = s.selectRows(start, end)
}

// Cursor reads a snapshot batch by batch; see Snapshot.Cursor. Not safe
// for concurrent use.
type Cursor struct {
	s     Snapshot
	cols  []ColumnRef
	vs    []view // scratch of one view per row block
	batch int

	// A chunk in time order: chunk rows [pos, hi) are left, and tv holds
	// the row blocks' times.
	sorted  bool
	tv      [][]int64
	pos, hi int

	// Otherwise: the sorted row order, and the output row of the next batch.
	rs   rowSet
	next int

	views bool           // see Views
	reuse bool           // see ReuseBatches
	out   *tablet.Tablet // the batch a reusing cursor returns each time
	one   [1]int32       // a strict run's order: its first row
}

// ReuseBatches lets a cursor that returns views (Views) return the same
// batch each time, its columns replaced: a batch is then valid until the
// next call of Next (or CursorInto) only. A flush that appends each batch
// to its file before it asks for the next allocates no batch a device.
func (c *Cursor) ReuseBatches() { c.reuse = true }

// Views lets the cursor return batches whose buffers are the chunk's own
// (no copy) where it can: for rows that arrived in time order without a
// repeated time, a batch then ends at a row block's end, and each column
// whose block holds all its rows without nulls is a view of that block.
// Such a batch is valid for as long as the snapshot's memtable is (see
// Memtable.Retain), and must not be written to.
func (c *Cursor) Views() { c.views = true }

func (c *Cursor) timeAt(r int) int64 { return c.tv[r>>c.s.shift][r&(c.s.blockRows-1)] }

// Next returns the next batch, which owns its memory, or nil at the end.
func (c *Cursor) Next() *tablet.Tablet {
	var sub rowSet
	if c.sorted {
		if c.pos >= c.hi {
			return nil
		}
		// Up to batch output rows from pos on; equal times (consecutive
		// here) merge into one.
		n := min(c.batch, c.hi-c.pos)
		if c.views {
			n = min(n, c.s.blockRows-c.pos&(c.s.blockRows-1)) // within one row block
		}
		if t, ok := c.strictRun(n); ok {
			c.one[0] = int32(c.pos)
			sub = rowSet{order: c.one[:], times: t, run: true}
			c.pos += n
			if c.views {
				return c.view(sub)
			}
			return c.read(sub)
		}
		sub = rowSet{order: make([]int32, 0, n), ends: make([]int32, 0, n), times: make([]int64, 0, n), run: true}
		k := c.pos
		for k < c.hi && len(sub.times) < c.batch {
			t, j := c.timeAt(k), k+1
			for j < c.hi && c.timeAt(j) == t {
				j++
			}
			for r := k; r < j; r++ {
				sub.order = append(sub.order, int32(r))
			}
			sub.run = sub.run && j == k+1
			sub.ends = append(sub.ends, int32(len(sub.order)))
			sub.times = append(sub.times, t)
			k = j
		}
		c.pos = k
	} else {
		n := len(c.rs.times)
		if c.next >= n {
			return nil
		}
		k0, k1 := c.next, min(c.next+c.batch, n)
		c.next = k1
		sub = c.rs
		if k0 > 0 || k1 < n {
			base := int32(0)
			if k0 > 0 {
				base = c.rs.ends[k0-1]
			}
			sub.order = c.rs.order[base:c.rs.ends[k1-1]]
			sub.times = slices.Clone(c.rs.times[k0:k1]) // the batch owns its memory
			sub.ends = make([]int32, k1-k0)
			for i, e := range c.rs.ends[k0:k1] {
				sub.ends[i] = e - base
			}
		}
	}
	return c.read(sub)
}

// view returns the rows of sub, which lie in one row block and are each
// an output row (strictRun), with the times and the columns that allow it
// as views of the chunk's blocks. A column whose block has a validity
// bitmap is copied: writers OR later rows' bits into its words, which a
// view's reader would read without atomics.
func (c *Cursor) view(sub rowSet) *tablet.Tablet {
	r0, n := int(sub.order[0]), len(sub.times)
	bi, i := r0>>c.s.shift, r0&(c.s.blockRows-1)
	var out *tablet.Tablet
	if c.reuse {
		if c.out == nil {
			c.out = &tablet.Tablet{}
		}
		out = c.out
		*out = tablet.Tablet{Times: sub.times, Columns: slices.Grow(out.Columns[:0], len(c.cols))[:len(c.cols)]}
	} else {
		out = &tablet.Tablet{Times: sub.times, Columns: make([]tablet.Column, len(c.cols))}
	}
	for k, ref := range c.cols {
		if col, ok := c.s.viewColumn(ref, bi, i, n); ok {
			out.Columns[k] = col
			continue
		}
		if ref.Type == schema.Boolean {
			sub = sub.perRow()
		}
		out.Columns[k] = c.s.readColumn(ref, sub, c.vs)
	}
	return out
}

// viewColumn returns column ref of block rows [i, i+n) of row block bi
// as a view of its block, if the block holds all of them and no null.
func (s Snapshot) viewColumn(ref ColumnRef, bi, i, n int) (tablet.Column, bool) {
	p := s.pos(ref.ID)
	if p < 0 || s.st.cols[p].typ != ref.Type || ref.Type == schema.Boolean {
		return tablet.Column{}, false
	}
	sa := s.st.blocks[bi].slotArray()
	if p >= len(sa) {
		return tablet.Column{}, false
	}
	sl := &sa[p]
	held := int(sl.meta.Load() & nMask) // before the rest: see slot
	if held == 0 {
		return tablet.Column{}, false // lo is not published yet
	}
	lo := int(sl.lo)
	if i < lo || i+n > lo+held {
		return tablet.Column{}, false
	}
	ext := sl.ext.Load()
	if ext.validity() != nil {
		return tablet.Column{}, false
	}
	col := tablet.Column{Name: ref.Name, Type: ref.Type, Offset: i - lo}
	if tablet.VarWidth(ref.Type) {
		end := i - lo + n
		col.Offsets, col.Data = ext.offs[:end+1:end+1], ext.data[:ext.offs[end]:ext.offs[end]]
	} else {
		wd := tablet.Width(ref.Type)
		col.Values = unsafe.Slice(sl.vals.Load(), (i-lo+n)*wd)
	}
	return col, true
}

// read returns the columns of the rows of sub.
func (c *Cursor) read(sub rowSet) *tablet.Tablet {
	out := &tablet.Tablet{Times: sub.times, Columns: make([]tablet.Column, len(c.cols))}
	for i, ref := range c.cols {
		if ref.Type == schema.Boolean {
			sub = sub.perRow()
		}
		out.Columns[i] = c.s.readColumn(ref, sub, c.vs)
	}
	return out
}

// perRow returns rs with its order and ends filled in, if it is a strict
// run that left them out: Boolean columns are read row by row.
func (rs rowSet) perRow() rowSet {
	if !rs.run || len(rs.ends) == len(rs.times) {
		return rs
	}
	n := len(rs.times)
	r0 := rs.order[0]
	rs.order, rs.ends = make([]int32, n), make([]int32, n)
	for k := range n {
		rs.order[k], rs.ends[k] = r0+int32(k), int32(k+1)
	}
	return rs
}

// strictRun returns the times of the n chunk rows from pos on, copied a
// row block at a time, when they strictly increase and the row after them
// has another time: then each is an output row of its own, and a batch
// needs no per-row order (the common case, and a tenth of a scan's cost
// when built row by row); see rowSet.perRow for the columns that do.
func (c *Cursor) strictRun(n int) ([]int64, bool) {
	if end := c.pos + n; end < c.hi && c.timeAt(end) == c.timeAt(end-1) {
		return nil, false
	}
	mask := c.s.blockRows - 1
	var times []int64
	if i := c.pos & mask; c.views && i+n <= c.s.blockRows {
		times = c.tv[c.pos>>c.s.shift][i : i+n : i+n] // the view's times: no copy
	} else {
		times = make([]int64, n)
		for k := 0; k < n; {
			r := c.pos + k
			blk := c.tv[r>>c.s.shift][r&mask:]
			k += copy(times[k:], blk[:min(len(blk), n-k)])
		}
	}
	for i := 1; i < n; i++ {
		if times[i] <= times[i-1] {
			return nil, false
		}
	}
	return times, true
}

// TimeBounds returns the smallest and largest time of the snapshot's
// rows; ok is false when it has none.
func (s Snapshot) TimeBounds() (lo, hi int64, ok bool) {
	if s.st == nil || s.st.rows == 0 {
		return 0, 0, false
	}
	rows := s.st.rows
	timeAt := func(r int) int64 { return s.blockTimes(r >> s.shift)[r&(s.blockRows-1)] }
	if s.st.sorted {
		return timeAt(0), timeAt(rows - 1), true
	}
	lo, hi = math.MaxInt64, math.MinInt64
	for b := 0; b*s.blockRows < rows; b++ {
		for _, t := range s.blockTimes(b) {
			lo, hi = min(lo, t), max(hi, t)
		}
	}
	return lo, hi, true
}

// Summary is a chunk's row count and time bounds, as its Snapshot's Rows
// and TimeBounds give them (First and Last are 0 when Rows is 0).
type Summary struct {
	Rows        int
	First, Last int64
}

// summarizeGroup is how many chunks Summarize takes a stage at a time.
const summarizeGroup = 32

// Summarize returns the summaries of chunks, in order. The chunks of a
// million small devices lie all over the heap, and a summary takes four
// loads that each wait on the one before (the chunk, its state, the row
// block, its times): chunk by chunk, a walk waits for memory four times a
// device. Taken in stages over a group of chunks, the loads of a stage do
// not depend on one another, and the processor has a group's misses in
// flight at once.
func Summarize(chunks []*Chunk) []Summary {
	out := make([]Summary, len(chunks))
	parts := (len(chunks) + summarizePart - 1) / summarizePart
	par.Do(parts, par.CPUs(parts), func(_, i int) error {
		lo := i * summarizePart
		hi := min(lo+summarizePart, len(chunks))
		summarize(chunks[lo:hi], out[lo:hi])
		return nil
	})
	return out
}

// summarizePart is the chunks Summarize hands a goroutine at a time.
const summarizePart = 1 << 14

func summarize(chunks []*Chunk, out []Summary) {
	var sts [summarizeGroup]*state
	var firstBlock, lastBlock [summarizeGroup]*rowBlock
	var firstTimes, lastTimes [summarizeGroup]*int64
	for lo := 0; lo < len(chunks); lo += summarizeGroup {
		group := chunks[lo:min(lo+summarizeGroup, len(chunks))]
		for j, c := range group {
			sts[j] = c.state.Load()
		}
		for j, c := range group {
			firstBlock[j], lastBlock[j] = nil, nil
			if st := sts[j]; st != nil && st.rows > 0 && st.sorted {
				firstBlock[j], lastBlock[j] = st.blocks[0], st.blocks[(st.rows-1)>>c.shift]
			}
		}
		for j := range group {
			if firstBlock[j] != nil {
				firstTimes[j], lastTimes[j] = firstBlock[j].times.Load(), lastBlock[j].times.Load()
			}
		}
		for j, c := range group {
			st := sts[j]
			switch {
			case st == nil || st.rows == 0:
			case firstBlock[j] != nil:
				k := (st.rows - 1) & (c.blockRows - 1) // the last row's place in its block
				last := unsafe.Slice(lastTimes[j], k+1)[k]
				out[lo+j] = Summary{Rows: st.rows, First: *firstTimes[j], Last: last}
			default: // times out of order: every time is read
				s := Snapshot{st: st, shift: c.shift, blockRows: c.blockRows}
				first, last, _ := s.TimeBounds()
				out[lo+j] = Summary{Rows: st.rows, First: first, Last: last}
			}
		}
	}
}

// deleted reports whether chunk row r, of time t, is deleted by a
// tombstone.
func deleted(dels []Tombstone, r int, t int64) bool {
	for _, d := range dels {
		if r < d.Below && t >= d.Start && t < d.End {
			return true
		}
	}
	return false
}

// HasDeletes reports whether rows of the snapshot are deleted: its Rows
// and TimeBounds then count them still.
func (s Snapshot) HasDeletes() bool { return s.st != nil && len(s.st.tombstones()) > 0 }

// rowSet is the result rows of a Read: output row k merges the chunk rows
// order[ends[k-1]:ends[k]] (in arrival order) and has time times[k].
type rowSet struct {
	order []int32
	ends  []int32
	times []int64
	// run: output row k is chunk row order[0]+k (times arrived in order
	// and none repeats), so columns can be copied a block run at a time.
	run bool
}

func (s Snapshot) selectRows(start, end int64) rowSet {
	if s.st == nil || s.st.rows == 0 || start >= end {
		return rowSet{times: []int64{}}
	}
	rows, mask := s.st.rows, s.blockRows-1
	tv := make([][]int64, (rows+mask)>>s.shift)
	for b := range tv {
		tv[b] = s.blockTimes(b)
	}
	timeAt := func(r int32) int64 { return tv[r>>s.shift][int(r)&mask] }

	var order []int32
	if s.st.sorted && len(s.st.tombstones()) == 0 {
		lo := sort.Search(rows, func(i int) bool { return timeAt(int32(i)) >= start })
		hi := sort.Search(rows, func(i int) bool { return timeAt(int32(i)) >= end })
		order = make([]int32, hi-lo)
		for i := range order {
			order[i] = int32(lo + i)
		}
	} else {
		for r := range int32(rows) {
			if t := timeAt(r); t >= start && t < end && !deleted(s.st.tombstones(), int(r), t) {
				order = append(order, r)
			}
		}
		// Stable: equal times keep arrival order, which the merge needs.
		slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(timeAt(a), timeAt(b)) })
	}
	rs := rowSet{order: order, ends: make([]int32, 0, len(order)), times: make([]int64, 0, len(order)), run: s.st.sorted && len(s.st.tombstones()) == 0}
	for i := 0; i < len(order); {
		t := timeAt(order[i])
		j := i + 1
		for j < len(order) && timeAt(order[j]) == t {
			j++
		}
		if j > i+1 {
			rs.run = false
		}
		rs.times = append(rs.times, t)
		rs.ends = append(rs.ends, int32(j))
		i = j
	}
	return rs
}

// view is what a reader sees of one column block: block-relative rows
// [lo, end) (clipped to the snapshot's rows), their fixed-width values
// and the rest of the block.
type view struct {
	lo, end int
	vals    []byte
	ext     *blockExt
}

// views fills vs, one element per row block, with the column blocks of
// position p, of type typ.
func (s Snapshot) views(vs []view, p int, typ schema.PropertyType) {
	rows, wd := s.st.rows, tablet.Width(typ)
	clear(vs)
	for bi := range vs {
		sa := s.st.blocks[bi].slotArray()
		if p >= len(sa) {
			continue
		}
		sl := &sa[p]
		n := int(sl.meta.Load() & nMask) // before the rest: see slot
		if n == 0 {
			continue
		}
		lo := int(sl.lo)
		end := min(lo+n, rows-bi*s.blockRows)
		if end <= lo { // a block begun after the snapshot
			continue
		}
		vs[bi] = view{lo: lo, end: end, ext: sl.ext.Load()}
		if wd > 0 {
			vs[bi].vals = unsafe.Slice(sl.vals.Load(), (end-lo)*wd)
		}
	}
}

// copyRun copies the values of chunk rows [r0, r0+n) into col (output
// row k = chunk row r0+k) block run by block run, sets their bits in
// valid, and returns how many are valid: the fast path of a read whose
// rows arrived in time order without repeats. wd is 0 for String and
// Binary, whose col.Offsets has n+1 entries.
func (s Snapshot) copyRun(col *tablet.Column, valid []byte, wd, r0, n int, vs []view) int {
	count := 0
	for k := 0; k < n; {
		r := r0 + k
		v := &vs[r>>s.shift]
		i := r & (s.blockRows - 1)
		span := min(n-k, s.blockRows-i) // rows of this block in the run
		a, z := max(i, v.lo), min(i+span, v.end)
		if a >= z { // no values in this run: nulls
			if wd == 0 {
				fillOffsets(col.Offsets, k, k+span)
			}
			k += span
			continue
		}
		at := k + a - i // output row of block row a
		if wd > 0 {
			copy(col.Values[at*wd:], v.vals[(a-v.lo)*wd:(z-v.lo)*wd])
		} else {
			fillOffsets(col.Offsets, k, at) // rows before the column's block
			offs := v.ext.offs[a-v.lo : z-v.lo+1]
			base := int32(len(col.Data)) - offs[0]
			col.Data = append(col.Data, v.ext.data[offs[0]:offs[len(offs)-1]]...)
			for j, o := range offs[1:] {
				col.Offsets[at+1+j] = base + o
			}
			fillOffsets(col.Offsets, at+z-a, k+span) // rows after it
		}
		if bits := v.ext.validity(); bits == nil {
			setByteBits(valid, at, at+z-a)
			count += z - a
		} else {
			for j := a; j < z; j++ {
				if loadBit(bits, j-v.lo) {
					valid[(at+j-a)>>3] |= 1 << ((at + j - a) & 7)
					count++
				}
			}
		}
		k += span
	}
	return count
}

// fillOffsets makes output rows [from, to) empty: offsets[k+1] = offsets[k].
func fillOffsets(offsets []int32, from, to int) {
	for k := from; k < to; k++ {
		offsets[k+1] = offsets[k]
	}
}

// setByteBits sets bits [from, to) of an LSB-first bitmap.
func setByteBits(b []byte, from, to int) {
	for ; from < to && from&7 != 0; from++ {
		b[from>>3] |= 1 << (from & 7)
	}
	for ; from+8 <= to; from += 8 {
		b[from>>3] = 0xff
	}
	for ; from < to; from++ {
		b[from>>3] |= 1 << (from & 7)
	}
}

// cell returns the view of chunk row r and the row's index in its
// buffers, or nil when the row is null.
func (s Snapshot) cell(vs []view, r int32) (*view, int) {
	v := &vs[r>>s.shift]
	i := int(r) & (s.blockRows - 1)
	if i < v.lo || i >= v.end { // also when there is no block: 0 <= i < 0
		return nil, 0
	}
	i -= v.lo
	if valid := v.ext.validity(); valid != nil && !loadBit(valid, i) {
		return nil, 0
	}
	return v, i
}

// readColumn reads one column for the rows of rs; vs is scratch of one
// view per row block.
func (s Snapshot) readColumn(ref ColumnRef, rs rowSet, vs []view) tablet.Column {
	nout := len(rs.times)
	col := tablet.Column{Name: ref.Name, Type: ref.Type}
	wd := tablet.Width(ref.Type)
	switch {
	case ref.Type == schema.Boolean:
		col.Values = make([]byte, (nout+7)/8)
	case tablet.VarWidth(ref.Type):
		col.Offsets = make([]int32, nout+1)
		col.Data = []byte{}
	default:
		col.Values = make([]byte, nout*wd)
	}
	valid := make([]byte, (nout+7)/8)
	p := -1
	if s.st != nil {
		p = s.pos(ref.ID)
		if p >= 0 && s.st.cols[p].typ != ref.Type {
			p = -1
		}
	}
	nulls := nout
	if p >= 0 && rs.run && ref.Type != schema.Boolean && nout > 0 {
		s.views(vs, p, ref.Type)
		nulls -= s.copyRun(&col, valid, wd, int(rs.order[0]), nout, vs)
	} else if p >= 0 {
		s.views(vs, p, ref.Type)
		begin := int32(0)
		for k, e := range rs.ends {
			var v *view
			var i int
			for j := e - 1; j >= begin && v == nil; j-- { // the last non-null wins
				v, i = s.cell(vs, rs.order[j])
			}
			begin = e
			if v == nil {
				if col.Offsets != nil {
					col.Offsets[k+1] = col.Offsets[k]
				}
				continue
			}
			nulls--
			valid[k>>3] |= 1 << (k & 7)
			switch {
			case ref.Type == schema.Boolean:
				if loadBit(v.ext.words, i) {
					col.Values[k>>3] |= 1 << (k & 7)
				}
			case col.Offsets != nil:
				offs := v.ext.offs
				col.Data = append(col.Data, v.ext.data[offs[i]:offs[i+1]]...)
				col.Offsets[k+1] = int32(len(col.Data))
			default:
				copy(col.Values[k*wd:(k+1)*wd], v.vals[i*wd:(i+1)*wd])
			}
		}
	}
	if nulls > 0 {
		col.Validity = valid
	}
	return col
}
