package memtable

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Chunk is the aligned chunk of one (type, device). Chunks come from
// Memtable.Chunk; the zero Chunk is not usable.
//
// Invariants:
//   - Rows are appended in arrival order and never change once published;
//     row r is in blocks[r>>shift] at block-relative row r&(blockRows-1).
//   - A column's position never changes; cols[p].typ is the type every value
//     of that column has.
//   - Fields below mu belong to the writer holding mu. Fields above it are
//     published to lock-free readers through atomics: state is replaced
//     after every write, index when it is rebuilt.
//   - The writer writes only memory no published state lets a reader read
//     (rows >= state.rows, positions >= len(state.cols), fresh buffers not
//     yet published), except through atomics (slot fields but lo,
//     rowBlock.times, rowBlock.slots, bitmap words, id table slots).
//   - mem equals the sum of the estimates of everything the chunk holds (see
//     the size constants); it changes once per Write.
type Chunk struct {
	blockRows int  // rows per row block, a power of two
	shift     uint // log2(blockRows)

	mem   atomic.Int64
	state atomic.Pointer[state]   // nil until the first write
	index atomic.Pointer[idTable] // nil until the first write with columns

	mu     sync.Mutex
	total  *atomic.Int64 // the memtable's total, nil once detached
	src    *slabSource   // where value slabs come from; nil: the Go heap
	rows   int
	sorted bool   // times of rows [0, rows) are non-decreasing
	seq    uint32 // next to sorted: a chunk per device, so every word counts
	last   int64  // time of the last row
	cols   []colMeta
	blocks []*rowBlock
	// The first row block and the block list's first backing array live
	// in the chunk: most devices of a large fleet have one row block, and
	// they cost two allocations less a device.
	block0  rowBlock
	blocks0 [1]*rowBlock
	book    *idBook      // nil until a Write maps through an id table (most chunks never do)
	dels    *[]Tombstone // as published in state (nil: none); replaced, never changed in place
}

// idBook is the writer's bookkeeping of a chunk's id table: apart from
// the chunk, which a million small devices have each.
type idBook struct {
	used   int      // non-empty slots of the id table (entries and tombstones)
	stamps []uint32 // per position: seq of the last Write that mapped it; grown lazily
}

// used returns the non-empty slots of the chunk's id table.
func (c *Chunk) used() int {
	if c.book == nil {
		return 0
	}
	return c.book.used
}

// setUsed sets them.
func (c *Chunk) setUsed(n int) {
	if c.book == nil {
		if n == 0 {
			return
		}
		c.book = &idBook{}
	}
	c.book.used = n
}

// Delete deletes the rows written so far with start <= time < end; rows
// written later stay. Readers see it from their next Snapshot.
func (c *Chunk) Delete(start, end int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == 0 || start >= end {
		return
	}
	var dels []Tombstone
	if c.dels != nil {
		dels = *c.dels
	}
	dels = append(slices.Clip(dels), Tombstone{Start: start, End: end, Below: c.rows})
	c.dels = &dels
	c.state.Store(&state{rows: c.rows, sorted: c.sorted, cols: c.cols, blocks: c.blocks, dels: c.dels})
}

// mapped is what the mapping pass learns about one incoming column, so
// that the write pass need not look at a column that is all null (with
// 10,000 columns, the tablet's column headers alone outgrow the L2 cache).
type mapped struct {
	pos   int32 // chunk position
	typ   schema.PropertyType
	empty bool // every row is null
}

// scratchPool holds the scratch of a Write (one mapped per incoming
// column), shared by all chunks so that no chunk keeps the scratch of its
// widest write.
var scratchPool = sync.Pool{New: func() any { return new([]mapped) }}

// colMeta describes one chunk column.
type colMeta struct {
	id  schema.PropertyID
	typ schema.PropertyType
}

// state is what a writer publishes; it is immutable. cols and blocks share
// backing arrays with the writer's slices, which only ever write beyond
// these lengths.
type state struct {
	rows   int
	sorted bool
	cols   []colMeta
	blocks []*rowBlock
	dels   *[]Tombstone // deletes of rows before them, in order; nil when none (most chunks: 8 bytes, not 24)
}

// tombstones returns the state's deletes.
func (st *state) tombstones() []Tombstone {
	if st.dels == nil {
		return nil
	}
	return *st.dels
}

// Tombstone deletes the rows of a chunk that arrived before it (row index
// below Below) with Start <= time < End; rows written after it stay.
type Tombstone struct {
	Start, End int64
	Below      int
}

// rowBlock holds blockRows rows: their times and one slot per column
// position. Both buffers are replaced (copied, then published) when they
// grow, and always have len == cap. A position at or beyond len(slots) has
// no block here: all null. The slot array reaches the highest position
// written in the row block, 24 bytes a position: a row block where only
// columns 0 and 9,999 hold values costs 240 KB of slots. A two-level
// array would avoid that, at the price of an indirection on every access
// and a minimum page per row block for narrow chunks; it is not done.
//
// Both are published as bare pointers, with the slots' count beside them,
// rather than as pointers to slice headers, which would cost two more
// allocations per row block: with a million small devices, a million
// row blocks.
type rowBlock struct {
	times    atomic.Pointer[int64] // timesCap times
	slots    atomic.Pointer[slot]  // nslots slots
	nslots   atomic.Int32          // stored after slots, loaded before
	timesCap int32                 // the writer's alone
}

// slotArray returns the published slots (nil when none).
func (rb *rowBlock) slotArray() []slot {
	n := rb.nslots.Load() // before the pointer: see setSlots
	if n == 0 {
		return nil
	}
	return unsafe.Slice(rb.slots.Load(), n)
}

// setSlots publishes s, a copy of the slots so far grown by at least one:
// a reader that loads the new count loads the new pointer too.
func (rb *rowBlock) setSlots(s []slot) {
	rb.slots.Store(&s[0])
	rb.nslots.Store(int32(len(s)))
}

// timesOf returns the first n times of the row block (n at most the rows
// it holds as of the caller's snapshot).
func (rb *rowBlock) timesOf(n int) []int64 {
	p := rb.times.Load()
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, n)
}

// setTimes publishes t as the row block's times buffer.
func (rb *rowBlock) setTimes(t []int64) {
	rb.times.Store(&t[0])
	rb.timesCap = int32(len(t))
}

// Memory estimates. Buffers count their full capacity; the constants
// cover the structures around them.
const (
	// colOverhead: the colMeta, the stamp and about two id table slots.
	colOverhead = int64(unsafe.Sizeof(colMeta{})) + 4 + 16
	// rowBlockOverhead: the row block, its entry in the block list and
	// the two published slice headers.
	rowBlockOverhead = int64(unsafe.Sizeof(rowBlock{})) + 8
	slotSize         = int64(unsafe.Sizeof(slot{}))
	extOverhead      = int64(unsafe.Sizeof(blockExt{}))
	minTimeRows      = 8
)

func newChunk(blockRows int, total *atomic.Int64) *Chunk {
	c := &Chunk{blockRows: blockRows, total: total, sorted: true, last: minTime}
	for 1<<c.shift < blockRows {
		c.shift++
	}
	return c
}

const minTime = -1 << 63

// Write appends the rows of t. ids[i] is the column id of t.Columns[i];
// the caller has validated t and checked each column's type against the
// schema. Columns the chunk lacks are added in one step.
//
// Write checks that ids and columns agree in number, that no id appears
// twice, that a column keeps the type the chunk has for it, and that each
// column's buffers cover the tablet's rows; on any failure it returns an
// error of kind errs.ErrInvalidArgument naming the column and changes
// nothing.
func (c *Chunk) Write(t *tablet.Tablet, ids []schema.PropertyID) error {
	if len(ids) != len(t.Columns) {
		return fmt.Errorf("write %d columns with %d ids: %w", len(t.Columns), len(ids), errs.ErrInvalidArgument)
	}
	sp := scratchPool.Get().(*[]mapped)
	defer scratchPool.Put(sp)
	if cap(*sp) < len(ids) {
		*sp = make([]mapped, len(ids))
	}
	ms := (*sp)[:len(ids)]
	c.mu.Lock()
	defer c.mu.Unlock()
	mp, err := c.mapColumns(t, ids, ms)
	if err != nil {
		return err
	}
	c.commit(t, ids, ms, mp)
	return nil
}

// mapping is the outcome of mapColumns.
type mapping struct {
	width   int      // columns before the Write
	added   int      // new columns, at positions width, width+1, …
	maxPos  int      // largest position the Write touches
	tab     *idTable // the id table holding every mapped column
	private bool     // tab is a rebuilt table that commit must publish
	used    int      // non-empty slots of tab
}

// mapColumns is the one pass over the incoming columns: it checks each,
// looks it up once, and gives missing columns the positions width,
// width+1, … in incoming order, inserting them into the id table (readers
// ignore positions beyond their width). It fills ms. If the table must
// grow, it is rebuilt once, sized for every column the Write may add, and
// stays private until commit. On failure, entries inserted into the
// published table become tombstones.
func (c *Chunk) mapColumns(t *tablet.Tablet, ids []schema.PropertyID, ms []mapped) (mapping, error) {
	n := len(t.Times)
	if c.seq++; c.seq == 0 {
		if c.book != nil {
			clear(c.book.stamps)
		}
		c.seq = 1
	}
	mp := mapping{width: len(c.cols), maxPos: -1, tab: c.index.Load(), used: c.used()}
	width, tab := mp.width, mp.tab
	if tab == nil {
		// Without an id table while the chunk stays small: mapSmall
		// changes nothing, so a Write that would outgrow it maps again
		// below, with a table.
		small, err := c.mapSmall(t, ids, ms, mp)
		if err != nil || width+small.added <= smallChunkCols {
			return small, err
		}
	}
	if tab == nil && width > 0 { // a small chunk outgrows its list: index it, privately until commit
		tab = c.rebuild(width+len(ids), nil, nil, width)
		mp.tab, mp.private, mp.used = tab, true, width
	}
	if c.book == nil {
		c.book = &idBook{}
	}
	book := c.book
	pubUsed := book.used // slots used in the published table
	fail := func(i int, err error) (mapping, error) {
		if pub := c.index.Load(); pub != nil {
			for j, id := range ids[:i] {
				if int(ms[j].pos) < width {
					continue
				}
				if k, e := pub.find(id); e != 0 && entryPos(e) >= width {
					pub.set(k, tombstone(id))
				}
			}
		}
		if mp.private {
			book.used = pubUsed
		} else {
			book.used = mp.used
		}
		return mapping{}, err
	}
	for i := range t.Columns {
		col, id := &t.Columns[i], ids[i]
		if err := checkColumn(col, n); err != nil {
			return fail(i, fmt.Errorf("column %q (id %d): %w", col.Name, id, err))
		}
		slot, e := 0, uint64(0)
		if tab != nil {
			slot, e = tab.find(id)
		}
		p := entryPos(e)
		switch {
		case p >= width: // a missing column this Write already added
			return fail(i, fmt.Errorf("column %q (id %d) appears twice: %w", col.Name, id, errs.ErrInvalidArgument))
		case p >= 0:
			if have := c.cols[p].typ; have != col.Type {
				return fail(i, fmt.Errorf("column %q (id %d) is %s, the chunk has it as %s: %w",
					col.Name, id, typeName(col.Type), typeName(have), errs.ErrInvalidArgument))
			}
			if p >= len(book.stamps) { // grown here, not by expansion: new columns stay cheap
				old := len(book.stamps)
				book.stamps = slices.Grow(book.stamps, width-old)[:width]
				clear(book.stamps[old:])
			}
			if book.stamps[p] == c.seq {
				return fail(i, fmt.Errorf("column %q (id %d) appears twice: %w", col.Name, id, errs.ErrInvalidArgument))
			}
			book.stamps[p] = c.seq
		default: // absent (or a tombstone, whose slot is reused)
			p = width + mp.added
			if p > entryPosMax {
				return fail(i, fmt.Errorf("column %q (id %d): chunk has too many columns: %w", col.Name, id, errs.ErrInvalidArgument))
			}
			mp.added++
			if e == 0 {
				if tab == nil || mp.used+1 > tab.limit() {
					if !mp.private {
						pubUsed = mp.used
					}
					// Size for every column this Write may still add, so
					// a Write rebuilds the table at most once.
					tab = c.rebuild(width+mp.added+len(ids)-i-1, ids[:i], ms[:i], width)
					mp.tab, mp.private = tab, true
					mp.used = width + mp.added - 1
					slot, _ = tab.find(id)
				}
				mp.used++
			}
			if mp.private {
				tab.slots[slot] = makeEntry(id, p)
			} else {
				tab.set(slot, makeEntry(id, p))
			}
		}
		empty := n == 0 || col.Validity != nil && !anyBit(col.Validity, col.Offset, n)
		ms[i] = mapped{pos: int32(p), typ: col.Type, empty: empty}
		mp.maxPos = max(mp.maxPos, p)
	}
	return mp, nil
}

// smallChunkCols is the most columns a chunk has without an id table:
// within it a lookup scans the column list (two cache lines, and a Write
// in the chunk's column order finds each column at its own index, first),
// and a device of 9 to 16 columns saves the table's 160 to 288 bytes and
// two allocations (of a 10-column device's 890 bytes, 160 were its table).
const smallChunkCols = 16

// mapSmall is mapColumns for a chunk without an id table that stays
// within smallChunkCols columns: lookups scan the column list, and the
// columns this Write adds; nothing is inserted anywhere until commit. It
// stops at the first column past smallChunkCols, so a wide Write costs
// no more here than a narrow one.
func (c *Chunk) mapSmall(t *tablet.Tablet, ids []schema.PropertyID, ms []mapped, mp mapping) (mapping, error) {
	n, width := len(t.Times), mp.width
	var seen uint32 // existing positions this Write has (width <= smallChunkCols)
	for i := range t.Columns {
		if width+mp.added > smallChunkCols {
			return mp, nil // outgrown: the caller maps again, with a table
		}
		col, id := &t.Columns[i], ids[i]
		if err := checkColumn(col, n); err != nil {
			return mapping{}, fmt.Errorf("column %q (id %d): %w", col.Name, id, err)
		}
		p := -1
		if i < width && c.cols[i].id == id {
			p = i
		} else {
			p = colPos(c.cols, id)
		}
		twice := false
		if p >= 0 {
			twice = seen&(1<<p) != 0
			seen |= 1 << p
		} else {
			twice = slices.Contains(ids[:i], id) // among the columns this Write adds
		}
		if twice {
			return mapping{}, fmt.Errorf("column %q (id %d) appears twice: %w", col.Name, id, errs.ErrInvalidArgument)
		}
		if p >= 0 {
			if have := c.cols[p].typ; have != col.Type {
				return mapping{}, fmt.Errorf("column %q (id %d) is %s, the chunk has it as %s: %w",
					col.Name, id, typeName(col.Type), typeName(have), errs.ErrInvalidArgument)
			}
		} else {
			p = width + mp.added
			mp.added++
		}
		empty := n == 0 || col.Validity != nil && !anyBit(col.Validity, col.Offset, n)
		ms[i] = mapped{pos: int32(p), typ: col.Type, empty: empty}
		mp.maxPos = max(mp.maxPos, p)
	}
	return mp, nil
}

// colPos returns the position of id in cols, or -1.
func colPos(cols []colMeta, id schema.PropertyID) int {
	for p, cm := range cols {
		if cm.id == id {
			return p
		}
	}
	return -1
}

// rebuild returns a new id table with room for n entries holding the
// committed columns and the entries this Write added so far.
func (c *Chunk) rebuild(n int, ids []schema.PropertyID, ms []mapped, width int) *idTable {
	tab := newIDTable(n)
	for p := range width {
		i, _ := tab.find(c.cols[p].id)
		tab.slots[i] = makeEntry(c.cols[p].id, p)
	}
	for j, id := range ids {
		if int(ms[j].pos) >= width {
			i, _ := tab.find(id)
			tab.slots[i] = makeEntry(id, int(ms[j].pos))
		}
	}
	return tab
}

// commit applies a mapped Write: it grows the column list once, appends
// the rows, publishes the new state and updates the memory totals once.
func (c *Chunk) commit(t *tablet.Tablet, ids []schema.PropertyID, ms []mapped, mp mapping) {
	width, added, maxPos := mp.width, mp.added, mp.maxPos
	c.setUsed(mp.used)
	if mp.private {
		c.index.Store(mp.tab) // before the state: see Snapshot
	}
	w := writer{c: c}
	n := len(t.Times)
	if added > 0 {
		c.cols = slices.Grow(c.cols, added)
		w.delta += int64(added) * colOverhead
		if n == 0 {
			for i, m := range ms {
				if int(m.pos) >= width {
					c.cols = append(c.cols, colMeta{id: ids[i], typ: m.typ})
				}
			}
		}
	}
	valued := 0 // columns with a value: the most blocks a segment takes
	for _, m := range ms {
		if !m.empty {
			valued++
		}
	}
	for off := 0; off < n; {
		row := c.rows + off
		b, r := row>>c.shift, row&(c.blockRows-1)
		cnt := min(n-off, c.blockRows-r)
		if b == len(c.blocks) {
			if b == 0 && c.blocks0[0] == nil {
				// Once: after Clear, block0 may still be read by an old
				// snapshot, and holds the old rows' buffers.
				c.blocks0[0] = &c.block0
				c.blocks = c.blocks0[:1:1]
			} else {
				c.blocks = append(c.blocks, &rowBlock{})
			}
			w.delta += rowBlockOverhead
		}
		sg := segment{rb: c.blocks[b], r: r, off: off, n: cnt, maxPos: maxPos}
		if b > 0 {
			sg.prev = c.blocks[b-1]
		}
		w.writeTimes(&sg, t.Times[off:off+cnt])
		w.left = valued
		for i, m := range ms {
			if off == 0 && int(m.pos) >= width { // in this pass: one walk less over a wide tablet
				c.cols = append(c.cols, colMeta{id: ids[i], typ: m.typ})
			}
			if !m.empty {
				w.writeColumn(&sg, int(m.pos), &t.Columns[i])
				w.left--
			}
		}
		off += cnt
	}
	for _, tm := range t.Times {
		if tm < c.last {
			c.sorted = false
		}
		c.last = tm
	}
	c.rows += n
	c.state.Store(&state{rows: c.rows, sorted: c.sorted, cols: c.cols, blocks: c.blocks, dels: c.dels})
	c.mem.Add(w.delta)
	if c.total != nil {
		c.total.Add(w.delta)
	}
}

// segment is the part of a Write that falls into one row block.
type segment struct {
	rb     *rowBlock
	prev   *rowBlock // the row block before rb, if any
	slots  []slot    // nil until a column with values needs them
	r      int       // block-relative row of the segment's first row
	off    int       // tablet row of the segment's first row
	n      int       // rows
	maxPos int       // largest chunk position the Write touches
}

// writer carries one Write's allocations and memory delta. Buffers come
// from slabs that double with what the Write has used so far, bounded by
// what the columns left may need: a write that creates 10,000 column
// blocks makes a few dozen allocations, not 20,000, and wastes at most
// about as much as it used (the first slab: at most three requests', or
// firstSlabBytes, worth). The first slab has room for slabFirstTakes
// requests like the first, or for as many as fit in firstSlabBytes: a new
// device of 10 columns of one row takes one allocation for its values,
// not three (and not ten).
type writer struct {
	c     *Chunk
	delta int64
	left  int // incoming columns with values not yet written in this segment, the current one included
	exts  slab[blockExt]
	bytes slab[byte]
	offs  slab[int32]
	words slab[uint64]
}

// slabBytes caps one slab, so a slab kept alive by one long-lived block
// wastes little.
const slabBytes = 256 << 10

// slabFirstTakes is how many requests of its size a Write's first slab
// of a kind holds (fewer if fewer columns are left): at most 3 requests'
// worth is wasted when the other columns need no new block. Later slabs
// double with what the Write used.
const slabFirstTakes = 4

// firstSlabBytes is the least a Write's first slab of a kind holds when
// that many bytes of requests are left: small devices' blocks come in one
// allocation, one object less for the collector to trace per block.
const firstSlabBytes = 256

type slab[T any] struct {
	free  []T
	taken int
}

// take returns n zeroed elements with cap n; left is the number of
// requests of about this size the Write may still make, this one included.
func (s *slab[T]) take(n, left int) []T { return s.takeFrom(nil, n, left) }

// takeFrom is take, with full-size slabs from src when src is not nil.
func (s *slab[T]) takeFrom(src *slabSource, n, left int) []T {
	if n > len(s.free) {
		var zero T
		elems := slabBytes / int(unsafe.Sizeof(zero))
		want := s.taken // doubling what the Write used
		if want == 0 {
			want = max(n*slabFirstTakes, firstSlabBytes/int(unsafe.Sizeof(zero)))
		}
		size := max(n, min(want, n*left, elems))
		if src != nil && size == elems {
			b := src.get()
			s.free = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), elems)
		} else {
			s.free = make([]T, size)
		}
	}
	v := s.free[:n:n]
	s.free = s.free[n:]
	s.taken += n
	return v
}

func (w *writer) writeTimes(sg *segment, ts []int64) {
	cur := sg.rb.timesOf(int(sg.rb.timesCap))
	if need := sg.r + len(ts); need > len(cur) {
		size := min(max(nextPow2(need), 2*len(cur), minTimeRows), w.c.blockRows)
		switch {
		case sg.prev != nil: // the chunk has filled a row block: it streams
			size = w.c.blockRows
		case need >= 2*len(cur): // sized to the write, as value blocks (exactCap)
			size = need
		}
		nt := make([]int64, size)
		copy(nt, cur[:sg.r])
		w.delta += 8 * int64(len(nt)-len(cur))
		sg.rb.setTimes(nt)
		cur = nt
	}
	copy(cur[sg.r:], ts)
}

// slotsOf returns the segment's slot array, grown to hold every position
// the Write touches.
func (w *writer) slotsOf(sg *segment) []slot {
	if sg.slots != nil {
		return sg.slots
	}
	cur := sg.rb.slotArray()
	if len(cur) <= sg.maxPos {
		ns := make([]slot, max(sg.maxPos+1, 2*len(cur)))
		for i := range cur {
			ns[i].lo = cur[i].lo
			ns[i].vals.Store(cur[i].vals.Load())
			ns[i].ext.Store(cur[i].ext.Load())
			ns[i].meta.Store(cur[i].meta.Load())
		}
		w.delta += slotSize * int64(len(ns)-len(cur))
		sg.rb.setSlots(ns)
		cur = ns
	}
	sg.slots = cur
	return cur
}

// checkColumn checks that col has a known type and buffers covering n rows
// (offsets in order and inside the data), so that a Write cannot fail half
// way.
func checkColumn(col *tablet.Column, n int) error {
	typ := col.Type
	if typ < schema.Boolean || typ > schema.Date {
		return fmt.Errorf("unknown property type %d: %w", typ, errs.ErrInvalidArgument)
	}
	if col.Offset < 0 {
		return fmt.Errorf("negative offset %d: %w", col.Offset, errs.ErrInvalidArgument)
	}
	if col.Offset > tablet.MaxOffset-n {
		return fmt.Errorf("offset %d is past any buffer: %w", col.Offset, errs.ErrInvalidArgument)
	}
	if n == 0 {
		return nil
	}
	end := col.Offset + n
	if col.Validity != nil && len(col.Validity)*8 < end {
		return fmt.Errorf("validity has %d bits, need %d: %w", len(col.Validity)*8, end, errs.ErrInvalidArgument)
	}
	switch {
	case typ == schema.Boolean:
		if len(col.Values)*8 < end {
			return fmt.Errorf("values have %d bits, need %d: %w", len(col.Values)*8, end, errs.ErrInvalidArgument)
		}
	case tablet.VarWidth(typ):
		if len(col.Offsets) < end+1 {
			return fmt.Errorf("%d offsets, need %d: %w", len(col.Offsets), end+1, errs.ErrInvalidArgument)
		}
		prev := col.Offsets[col.Offset]
		if prev < 0 {
			return fmt.Errorf("negative value offset %d: %w", prev, errs.ErrInvalidArgument)
		}
		for _, o := range col.Offsets[col.Offset+1 : end+1] {
			if o < prev || int(o) > len(col.Data) {
				return fmt.Errorf("value offset %d is out of order or past %d data bytes: %w", o, len(col.Data), errs.ErrInvalidArgument)
			}
			prev = o
		}
	default:
		if w := tablet.Width(typ); len(col.Values) < end*w {
			return fmt.Errorf("values have %d bytes, need %d: %w", len(col.Values), end*w, errs.ErrInvalidArgument)
		}
	}
	return nil
}

// typeName names a property type for error messages (without calling into
// the schema package).
func typeName(t schema.PropertyType) string {
	names := [...]string{"", "BOOLEAN", "INT32", "INT64", "FLOAT", "DOUBLE", "STRING", "BINARY", "TIMESTAMP", "DATE"}
	if int(t) < len(names) && t != 0 {
		return names[t]
	}
	return fmt.Sprintf("type %d", t)
}

// Width returns the number of columns.
func (c *Chunk) Width() int {
	if st := c.state.Load(); st != nil {
		return len(st.cols)
	}
	return 0
}

// MemoryUsage returns the estimated bytes held by the chunk: value,
// offset, data, bitmap and time buffers at their capacity, plus the
// per-column, per-block and per-row-block structures.
func (c *Chunk) MemoryUsage() int64 { return c.mem.Load() }
