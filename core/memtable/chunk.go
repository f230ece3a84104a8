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
//     yet published), except through atomics (slot.n, slot.buf,
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
	rows   int
	sorted bool  // times of rows [0, rows) are non-decreasing
	last   int64 // time of the last row
	cols   []colMeta
	blocks []*rowBlock
	used   int      // non-empty slots of the id table (entries and tombstones)
	stamps []uint32 // per position: seq of the last Write that mapped it
	seq    uint32
	pos    []int32 // scratch: chunk position of each incoming column
}

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
}

// rowBlock holds blockRows rows: their times and one slot per column
// position. Both buffers are replaced (copied, then published) when they
// grow, and always have len == cap. A position at or beyond len(slots) has
// no block here: all null.
type rowBlock struct {
	times atomic.Pointer[[]int64]
	slots atomic.Pointer[[]slot]
}

// slot is one column's block within a row block. It holds block-relative
// rows [lo, lo+n); every other row of the row block is null for the column.
// n == 0 means no block (buf is nil). lo is set once, before the first
// store of n, so a reader reads lo only after loading a non-zero n.
// Readers load n before buf: the buffers published before n was stored
// hold at least n rows.
type slot struct {
	lo  int32
	n   atomic.Int32
	buf atomic.Pointer[blockBufs]
}

// blockBufs are the buffers of a column block; index i is block-relative
// row lo+i. A blockBufs is never modified after publication except by
// filling rows at or beyond the slot's n and OR-ing bitmap words; growth
// publishes a copy. Capacity in rows is len(vals)/width for fixed-width
// types, len(words)*64 for Boolean and len(offs)-1 for String and Binary.
type blockBufs struct {
	vals  []byte   // fixed-width values; String and Binary data bytes
	offs  []int32  // String and Binary: value i is vals[offs[i]:offs[i+1]]
	words []uint64 // Boolean values
	valid []uint64 // validity; nil when every held row is valid
}

func (b *blockBufs) size() int64 {
	return int64(len(b.vals) + 4*len(b.offs) + 8*len(b.words) + 8*len(b.valid))
}

func (b *blockBufs) capRows(typ schema.PropertyType) int {
	switch {
	case typ == schema.Boolean:
		return len(b.words) * 64
	case tablet.VarWidth(typ):
		return len(b.offs) - 1
	}
	return len(b.vals) / tablet.Width(typ)
}

// Memory estimates. Buffers count their full capacity; the constants
// cover the structures around them.
const (
	// colOverhead: the colMeta, the stamp and about two id table slots.
	colOverhead = int64(unsafe.Sizeof(colMeta{})) + 4 + 16
	// rowBlockOverhead: the row block, its entry in the block list and
	// the two published slice headers.
	rowBlockOverhead = int64(unsafe.Sizeof(rowBlock{})) + 8 + 2*24
	slotSize         = int64(unsafe.Sizeof(slot{}))
	blockOverhead    = int64(unsafe.Sizeof(blockBufs{}))
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
	c.mu.Lock()
	defer c.mu.Unlock()
	width := len(c.cols)
	added, maxPos, err := c.mapColumns(t, ids, width)
	if err != nil {
		return err
	}
	c.commit(t, ids, width, added, maxPos)
	return nil
}

// mapColumns is the one pass over the incoming columns: it checks each,
// looks it up once, and gives missing columns the positions width,
// width+1, … in incoming order, inserting them into the id table (readers
// ignore positions beyond their width). It fills c.pos and returns the
// number of new columns and the largest position. On failure it turns the
// entries it inserted into tombstones.
func (c *Chunk) mapColumns(t *tablet.Tablet, ids []schema.PropertyID, width int) (added, maxPos int, err error) {
	n := len(t.Times)
	if c.seq++; c.seq == 0 {
		clear(c.stamps)
		c.seq = 1
	}
	if cap(c.pos) < len(ids) {
		c.pos = make([]int32, len(ids))
	}
	pos := c.pos[:len(ids)]
	tab := c.index.Load()
	maxPos = -1
	for i := range t.Columns {
		col, id := &t.Columns[i], ids[i]
		if err := checkColumn(col, n); err != nil {
			c.undo(ids[:i], pos[:i], width)
			return 0, 0, fmt.Errorf("column %q (id %d): %w", col.Name, id, err)
		}
		slot, e := 0, uint64(0)
		if tab != nil {
			slot, e = tab.find(id)
		}
		p := entryPos(e)
		switch {
		case p >= width: // a missing column this Write already added
			c.undo(ids[:i], pos[:i], width)
			return 0, 0, fmt.Errorf("column %q (id %d) appears twice: %w", col.Name, id, errs.ErrInvalidArgument)
		case p >= 0:
			if have := c.cols[p].typ; have != col.Type {
				c.undo(ids[:i], pos[:i], width)
				return 0, 0, fmt.Errorf("column %q (id %d) is %s, the chunk has it as %s: %w",
					col.Name, id, typeName(col.Type), typeName(have), errs.ErrInvalidArgument)
			}
			if c.stamps[p] == c.seq {
				c.undo(ids[:i], pos[:i], width)
				return 0, 0, fmt.Errorf("column %q (id %d) appears twice: %w", col.Name, id, errs.ErrInvalidArgument)
			}
			c.stamps[p] = c.seq
		default: // absent (or a tombstone, whose slot is reused)
			p = width + added
			if p > entryPosMax {
				c.undo(ids[:i], pos[:i], width)
				return 0, 0, fmt.Errorf("column %q (id %d): chunk has too many columns: %w", col.Name, id, errs.ErrInvalidArgument)
			}
			added++
			if e == 0 {
				if tab == nil || c.used+1 > tab.limit() {
					// Size for every column this Write may still add, so
					// a Write rebuilds the table at most once.
					tab = c.rebuild(width+added+len(ids)-i-1, ids[:i], pos[:i], width)
					slot, _ = tab.find(id)
				}
				c.used++
			}
			tab.set(slot, makeEntry(id, p))
		}
		pos[i] = int32(p)
		maxPos = max(maxPos, p)
	}
	return added, maxPos, nil
}

// rebuild publishes a new id table with room for n entries holding the
// committed columns and the entries this Write added so far.
func (c *Chunk) rebuild(n int, ids []schema.PropertyID, pos []int32, width int) *idTable {
	tab := newIDTable(n)
	for p := range width {
		i, _ := tab.find(c.cols[p].id)
		tab.slots[i] = makeEntry(c.cols[p].id, p)
	}
	for j, id := range ids {
		if int(pos[j]) >= width {
			i, _ := tab.find(id)
			tab.slots[i] = makeEntry(id, int(pos[j]))
		}
	}
	c.used = width
	for j := range ids {
		if int(pos[j]) >= width {
			c.used++
		}
	}
	c.index.Store(tab)
	return tab
}

// undo turns the entries a failing Write added into tombstones.
func (c *Chunk) undo(ids []schema.PropertyID, pos []int32, width int) {
	tab := c.index.Load()
	for j, id := range ids {
		if int(pos[j]) >= width {
			i, _ := tab.find(id)
			tab.set(i, tombstone(id))
		}
	}
}

// commit applies a mapped Write: it grows the column list once, appends
// the rows, publishes the new state and updates the memory totals once.
func (c *Chunk) commit(t *tablet.Tablet, ids []schema.PropertyID, width, added, maxPos int) {
	pos := c.pos[:len(ids)]
	w := writer{c: c}
	if added > 0 {
		c.cols = slices.Grow(c.cols, added)
		for i := range t.Columns {
			if int(pos[i]) >= width {
				c.cols = append(c.cols, colMeta{id: ids[i], typ: t.Columns[i].Type})
			}
		}
		old := len(c.stamps)
		c.stamps = slices.Grow(c.stamps, added)[:old+added]
		clear(c.stamps[old:])
		w.delta += int64(added) * colOverhead
	}
	n := len(t.Times)
	for off := 0; off < n; {
		row := c.rows + off
		b, r := row>>c.shift, row&(c.blockRows-1)
		cnt := min(n-off, c.blockRows-r)
		if b == len(c.blocks) {
			c.blocks = append(c.blocks, &rowBlock{})
			w.delta += rowBlockOverhead
		}
		sg := segment{rb: c.blocks[b], r: r, off: off, n: cnt, maxPos: maxPos}
		w.writeTimes(&sg, t.Times[off:off+cnt])
		for i := range t.Columns {
			w.writeColumn(&sg, int(pos[i]), &t.Columns[i])
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
	c.state.Store(&state{rows: c.rows, sorted: c.sorted, cols: c.cols, blocks: c.blocks})
	c.mem.Add(w.delta)
	if c.total != nil {
		c.total.Add(w.delta)
	}
}

// segment is the part of a Write that falls into one row block.
type segment struct {
	rb     *rowBlock
	slots  []slot // nil until a column with values needs them
	r      int    // block-relative row of the segment's first row
	off    int    // tablet row of the segment's first row
	n      int    // rows
	maxPos int    // largest chunk position the Write touches
}

// writer carries one Write's allocations and memory delta. Buffers come
// from slabs that double with what the Write has used so far: a write that
// creates 10,000 column blocks makes a few dozen allocations, not 30,000,
// and wastes at most about as much as it used.
type writer struct {
	c     *Chunk
	delta int64
	bufs  slab[blockBufs]
	bytes slab[byte]
	offs  slab[int32]
	words slab[uint64]
}

// slabBytes caps one slab, so a slab kept alive by one long-lived block
// wastes little.
const slabBytes = 256 << 10

type slab[T any] struct {
	free  []T
	taken int
}

// take returns n zeroed elements with cap n.
func (s *slab[T]) take(n int) []T {
	if n > len(s.free) {
		var zero T
		size := max(n, min(s.taken, slabBytes/int(unsafe.Sizeof(zero))))
		s.free = make([]T, size)
	}
	v := s.free[:n:n]
	s.free = s.free[n:]
	s.taken += n
	return v
}

func (w *writer) writeTimes(sg *segment, ts []int64) {
	var cur []int64
	if p := sg.rb.times.Load(); p != nil {
		cur = *p
	}
	if need := sg.r + len(ts); need > len(cur) {
		nt := make([]int64, min(max(nextPow2(need), 2*len(cur), minTimeRows), w.c.blockRows))
		copy(nt, cur[:sg.r])
		w.delta += 8 * int64(len(nt)-len(cur))
		sg.rb.times.Store(&nt)
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
	var cur []slot
	if p := sg.rb.slots.Load(); p != nil {
		cur = *p
	}
	if len(cur) <= sg.maxPos {
		ns := make([]slot, max(sg.maxPos+1, 2*len(cur)))
		for i := range cur {
			ns[i].lo = cur[i].lo
			ns[i].n.Store(cur[i].n.Load())
			ns[i].buf.Store(cur[i].buf.Load())
		}
		w.delta += slotSize * int64(len(ns)-len(cur))
		sg.rb.slots.Store(&ns)
		cur = ns
	}
	sg.slots = cur
	return cur
}

// writeColumn writes the segment's rows of col into position p. Leading
// and trailing nulls are not stored (rows outside [lo, lo+n) are null); a
// null between values, or a gap since the block's last value, gives the
// block a validity bitmap.
func (w *writer) writeColumn(sg *segment, p int, col *tablet.Column) {
	first, last, nulls, ok := validRange(col, sg.off, sg.n)
	if !ok {
		return
	}
	s := &w.slotsOf(sg)[p]
	typ := col.Type
	src := col.Offset + sg.off + first // buffer index of the first value written
	cnt := last - first + 1
	vs := sg.r + first // block-relative row of the first value written
	var dataLo, dataHi int
	if tablet.VarWidth(typ) {
		dataLo, dataHi = int(col.Offsets[src]), int(col.Offsets[src+cnt])
	}

	var b, old *blockBufs
	lo, held := vs, int(s.n.Load())
	if held == 0 {
		b = w.newBufs(typ, min(nextPow2(cnt), w.c.blockRows-lo), nextPow2(dataHi-dataLo), nulls)
		s.lo = int32(lo)
	} else {
		lo = int(s.lo)
		old = s.buf.Load()
		used := 0
		if tablet.VarWidth(typ) {
			used = int(old.offs[held])
		}
		b = w.grow(old, typ, held, vs-lo+cnt, used+dataHi-dataLo, w.c.blockRows-lo, nulls || vs-lo > held)
	}
	at := vs - lo // buffer index of the first value written

	switch {
	case typ == schema.Boolean:
		orBits(b.words, at, col.Values, src, cnt)
	case tablet.VarWidth(typ):
		used := b.offs[held]
		for i := held; i < at; i++ { // the gap since the last value
			b.offs[i+1] = used
		}
		base := used - int32(dataLo)
		for k := range cnt {
			b.offs[at+k+1] = base + col.Offsets[src+k+1]
		}
		copy(b.vals[used:], col.Data[dataLo:dataHi])
	default:
		wd := tablet.Width(typ)
		copy(b.vals[at*wd:], col.Values[src*wd:(src+cnt)*wd])
	}
	if b.valid != nil {
		if col.Validity != nil {
			orBits(b.valid, at, col.Validity, src, cnt)
		} else {
			setBits(b.valid, at, at+cnt)
		}
	}
	if b != old {
		s.buf.Store(b)
	}
	s.n.Store(int32(at + cnt))
}

// newBufs returns the buffers of a new column block of rows rows and data
// data bytes (String and Binary).
func (w *writer) newBufs(typ schema.PropertyType, rows, data int, withValid bool) *blockBufs {
	b := &w.bufs.take(1)[0]
	switch {
	case typ == schema.Boolean:
		b.words = w.words.take(words(rows))
	case tablet.VarWidth(typ):
		b.offs = w.offs.take(rows + 1)
		b.vals = w.bytes.take(data)
	default:
		b.vals = w.bytes.take(rows * tablet.Width(typ))
	}
	if withValid {
		b.valid = w.words.take(words(b.capRows(typ)))
	}
	w.delta += blockOverhead + b.size()
	return b
}

// grow returns b, or a copy of b with room for rows rows (at most maxRows,
// doubling) and data data bytes, and with a validity bitmap if withValid.
// held is the number of rows b holds; a new bitmap marks them valid.
func (w *writer) grow(b *blockBufs, typ schema.PropertyType, held, rows, data, maxRows int, withValid bool) *blockBufs {
	capRows := b.capRows(typ)
	growRows := rows > capRows
	growData := tablet.VarWidth(typ) && data > len(b.vals)
	addValid := withValid && b.valid == nil
	if !growRows && !growData && !addValid {
		return b
	}
	nb := &w.bufs.take(1)[0]
	*nb = *b
	if growRows {
		capRows = min(max(nextPow2(rows), 2*capRows), maxRows)
		switch {
		case typ == schema.Boolean:
			nb.words = w.words.take(words(capRows))
			copy(nb.words, b.words[:words(held)])
		case tablet.VarWidth(typ):
			nb.offs = w.offs.take(capRows + 1)
			copy(nb.offs, b.offs[:held+1])
		default:
			wd := tablet.Width(typ)
			nb.vals = w.bytes.take(capRows * wd)
			copy(nb.vals, b.vals[:held*wd])
		}
		if b.valid != nil {
			nb.valid = w.words.take(words(capRows))
			copy(nb.valid, b.valid[:words(held)])
		}
	}
	if growData {
		nb.vals = w.bytes.take(max(nextPow2(data), 2*len(b.vals)))
		copy(nb.vals, b.vals[:b.offs[held]])
	}
	if addValid {
		nb.valid = w.words.take(words(capRows))
		setBits(nb.valid, 0, held)
	}
	w.delta += nb.size() - b.size()
	return nb
}

// validRange returns the first and last rows of [off, off+n) of col that
// hold a value, whether a null lies between them, and false when every
// row is null.
func validRange(col *tablet.Column, off, n int) (first, last int, nulls, ok bool) {
	if col.Validity == nil {
		return 0, n - 1, false, n > 0
	}
	first, count := -1, 0
	base := col.Offset + off
	for j := range n {
		if bitAt(col.Validity, base+j) {
			if first < 0 {
				first = j
			}
			last = j
			count++
		}
	}
	if first < 0 {
		return 0, 0, false, false
	}
	return first, last, count != last-first+1, true
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
