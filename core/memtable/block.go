package memtable

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// slot is one column's block within a row block. It holds block-relative
// rows [lo, lo+n); every other row of the row block is null for the
// column. n == 0 means no block. Index i of its buffers is row lo+i.
//
// Fixed-width values live at vals, a bare pointer to capacity rows, where
// capacity is min(1<<capLog, blockRows-lo); everything else (Boolean
// values, String and Binary offsets and data, validity) lives in ext,
// which is nil for the usual block of fixed-width values without nulls
// between them. A bare pointer, because a slice cannot be published
// atomically without a header object, and allocating a header per block
// was a third of the cost of adding 10,000 columns.
//
// Publication: lo is written once, before the first store of meta. The
// writer stores vals and ext before meta; a reader loads meta first, then
// lo, vals and ext, so whatever buffers it sees hold at least the n rows
// it loaded. Published buffers are never changed except by filling rows
// at or beyond n and by OR-ing bitmap words; growth publishes a copy.
type slot struct {
	lo   int32
	meta atomic.Uint32 // n | capLog<<nBits
	vals atomic.Pointer[byte]
	ext  atomic.Pointer[blockExt]
}

const (
	nBits        = 24
	nMask        = 1<<nBits - 1
	maxBlockRows = 1 << 20 // n must fit nBits
	// exactCap, as capLog, says that fixed-width values have room for
	// exactly the rows held: a column's first block is sized to its first
	// write (a small device's 10 rows take 10, not 16), and grows by
	// doubling from there.
	exactCap = 0xFF
)

// blockExt holds the buffers of a column block besides fixed-width
// values. Capacity in rows is len(words)*64 for Boolean and len(offs)-1
// for String and Binary; valid, when present, covers the block's capacity.
type blockExt struct {
	data  []byte   // String and Binary: value i is data[offs[i]:offs[i+1]]
	offs  []int32  // String and Binary
	words []uint64 // Boolean values
	valid []uint64 // validity; nil when every held row is valid
}

func (e *blockExt) size() int64 {
	if e == nil {
		return 0
	}
	return extOverhead + int64(len(e.data)+4*len(e.offs)+8*len(e.words)+8*len(e.valid))
}

func (e *blockExt) validity() []uint64 {
	if e == nil {
		return nil
	}
	return e.valid
}

// blk is a column block as the writer handles it: vals at full capacity.
type blk struct {
	vals   []byte
	capLog uint32
	ext    *blockExt
}

func (b blk) size() int64 { return int64(len(b.vals)) + b.ext.size() }

func (b blk) capRows(typ schema.PropertyType) int {
	switch {
	case typ == schema.Boolean:
		return len(b.ext.words) * 64
	case tablet.VarWidth(typ):
		return len(b.ext.offs) - 1
	}
	return len(b.vals) / tablet.Width(typ)
}

// fixedRows is the capacity of fixed-width values: the power of two of
// capLog, at most the rows left in the row block (capLog is not exactCap).
func fixedRows(capLog uint32, maxRows int) int { return min(1<<capLog, maxRows) }

func log2Ceil(n int) uint32 { return uint32(bits.Len(uint(n - 1))) }

// loadBlock returns the block of s, whose meta the caller loaded, as the
// writer sees it; maxRows is the rows left in the row block after lo.
func loadBlock(s *slot, typ schema.PropertyType, maxRows int, meta uint32) blk {
	b := blk{capLog: meta >> nBits, ext: s.ext.Load()}
	if wd := tablet.Width(typ); wd > 0 {
		rows := int(meta & nMask)
		if b.capLog != exactCap {
			rows = fixedRows(b.capLog, maxRows)
		}
		b.vals = unsafe.Slice(s.vals.Load(), rows*wd)
	}
	return b
}

// publish stores b into s (old is what s held) with n rows held.
func publish(s *slot, old, b blk, n int) {
	if len(b.vals) > 0 && (len(old.vals) == 0 || &b.vals[0] != &old.vals[0]) {
		s.vals.Store(&b.vals[0])
	}
	if b.ext != old.ext {
		s.ext.Store(b.ext)
	}
	s.meta.Store(uint32(n) | b.capLog<<nBits)
}

// writeColumn writes the segment's rows of col into position p. Leading
// and trailing nulls are not stored (rows outside [lo, lo+n) are null); a
// null between values, or a gap since the block's last value, gives the
// block a validity bitmap.
func (w *writer) writeColumn(sg *segment, p int, col *tablet.Column) {
	first, last, nulls, ok := 0, sg.n-1, false, sg.n > 0
	if col.Validity != nil {
		first, last, nulls, ok = validRange(col, sg.off, sg.n)
	}
	if !ok {
		return
	}
	slots := sg.slots
	if slots == nil {
		slots = w.slotsOf(sg)
	}
	s := &slots[p]
	typ := col.Type
	wd := tablet.Width(typ)
	src := col.Offset + sg.off + first // buffer index of the first value written
	cnt := last - first + 1
	vs := sg.r + first // block-relative row of the first value written
	var dataLo, dataHi int
	if tablet.VarWidth(typ) {
		dataLo, dataHi = int(col.Offsets[src]), int(col.Offsets[src+cnt])
	}

	var cur, b blk
	meta := s.meta.Load()
	lo, held := vs, int(meta&nMask)
	if held == 0 {
		rows, data := cnt, dataHi-dataLo // sized to this write: see exactCap
		if full, used := filled(sg.prev, p, w.c.blockRows); full {
			// The column filled the previous row block: it is likely
			// to fill this one too, so skip the doublings.
			rows, data = w.c.blockRows, max(data, used)
		}
		b = w.newBlock(typ, min(rows, w.c.blockRows-lo), data, w.c.blockRows-lo, nulls)
		s.lo = int32(lo)
	} else {
		lo = int(s.lo)
		cur = loadBlock(s, typ, w.c.blockRows-lo, meta)
		b = cur
		gap := vs-lo > held
		if cur.ext != nil || nulls || gap || (vs-lo+cnt)*wd > len(cur.vals) {
			used := 0
			if tablet.VarWidth(typ) {
				used = int(cur.ext.offs[held])
			}
			b = w.grow(cur, typ, held, vs-lo+cnt, used+dataHi-dataLo, w.c.blockRows-lo, nulls || gap)
		} // else: the usual case, fixed-width values that fit
	}
	at := vs - lo // buffer index of the first value written

	switch {
	case typ == schema.Boolean:
		orBits(b.ext.words, at, col.Values, src, cnt)
	case tablet.VarWidth(typ):
		offs := b.ext.offs
		used := offs[held]
		for i := held; i < at; i++ { // the gap since the last value
			offs[i+1] = used
		}
		base := used - int32(dataLo)
		for k := range cnt {
			offs[at+k+1] = base + col.Offsets[src+k+1]
		}
		copy(b.ext.data[used:], col.Data[dataLo:dataHi])
	default:
		copy(b.vals[at*wd:], col.Values[src*wd:(src+cnt)*wd])
	}
	if valid := b.ext.validity(); valid != nil {
		if col.Validity != nil {
			orBits(valid, at, col.Validity, src, cnt)
		} else {
			setBits(valid, at, at+cnt)
		}
	}
	publish(s, cur, b, at+cnt)
}

// filled reports whether position p of row block rb holds values up to
// the block's last row, and how many data bytes it uses (String, Binary).
func filled(rb *rowBlock, p, blockRows int) (bool, int) {
	if rb == nil {
		return false, 0
	}
	sa := rb.slotArray()
	if p >= len(sa) {
		return false, 0
	}
	s := &sa[p]
	n := int(s.meta.Load() & nMask)
	if n == 0 || int(s.lo)+n < blockRows {
		return false, 0
	}
	if e := s.ext.Load(); e != nil && e.offs != nil {
		return true, int(e.offs[n])
	}
	return true, 0
}

// newBlock returns the buffers of a new column block for rows rows
// (rows <= maxRows, the rows left in the row block) and data data bytes
// (String and Binary).
func (w *writer) newBlock(typ schema.PropertyType, rows, data, maxRows int, withValid bool) blk {
	if wd := tablet.Width(typ); wd > 0 && !withValid { // the usual block, first
		capLog := log2Ceil(rows)
		if rows < fixedRows(capLog, maxRows) {
			capLog = exactCap
		} else {
			rows = fixedRows(capLog, maxRows)
		}
		vals := w.bytes.takeFrom(w.c.src, rows*wd, w.left)
		w.delta += int64(len(vals))
		return blk{vals: vals, capLog: capLog}
	}
	var b blk
	var e blockExt
	switch {
	case typ == schema.Boolean:
		e.words = w.words.take(wordsFor(rows), w.left)
	case tablet.VarWidth(typ):
		e.offs = w.offs.take(rows+1, w.left)
		e.data = w.bytes.takeFrom(w.c.src, data, w.left)
	default:
		b.capLog = log2Ceil(rows)
		rows = fixedRows(b.capLog, maxRows)
		b.vals = w.bytes.takeFrom(w.c.src, rows*tablet.Width(typ), w.left)
	}
	if withValid {
		e.valid = w.words.take(wordsFor(rows), w.left)
	}
	if e.data != nil || e.offs != nil || e.words != nil || e.valid != nil {
		b.ext = &w.exts.take(1, w.left)[0]
		*b.ext = e
	}
	w.delta += b.size()
	return b
}

// grow returns b, or a copy of b with room for rows rows (at most maxRows,
// doubling) and data data bytes, and with a validity bitmap if withValid.
// held is the number of rows b holds; a new bitmap marks them valid.
// Buffers that need no change are shared with b: the writer only fills
// them beyond what b's readers read.
func (w *writer) grow(b blk, typ schema.PropertyType, held, rows, data, maxRows int, withValid bool) blk {
	var e blockExt
	if b.ext != nil {
		e = *b.ext
	}
	capr := b.capRows(typ)
	growRows := rows > capr
	growData := tablet.VarWidth(typ) && data > len(e.data)
	addValid := withValid && e.valid == nil
	if !growRows && !growData && !addValid {
		return b
	}
	nb := b
	newExt := growData || addValid
	if growRows {
		// A write at least as long as what the block holds fills a block
		// of exactly its rows (see exactCap: a device's second write of
		// as many rows as its first takes no room it does not use);
		// otherwise the next power of two, even after an exact block.
		exact := rows >= 2*capr && rows < maxRows && e.valid == nil && !withValid
		capr = min(nextPow2(max(rows, 2*capr)), maxRows)
		if exact {
			capr = rows
		}
		switch {
		case typ == schema.Boolean:
			words := w.words.take(wordsFor(capr), w.left)
			copy(words, e.words[:wordsFor(held)])
			e.words, newExt = words, true
		case tablet.VarWidth(typ):
			offs := w.offs.take(capr+1, w.left)
			copy(offs, e.offs[:held+1])
			e.offs, newExt = offs, true
		default:
			wd := tablet.Width(typ)
			nb.capLog = log2Ceil(capr)
			if exact {
				nb.capLog = exactCap
			}
			nb.vals = w.bytes.takeFrom(w.c.src, capr*wd, w.left)
			copy(nb.vals, b.vals[:held*wd])
		}
		if e.valid != nil {
			valid := w.words.take(wordsFor(capr), w.left)
			copy(valid, e.valid[:wordsFor(held)])
			e.valid, newExt = valid, true
		}
	}
	if growData {
		d := w.bytes.takeFrom(w.c.src, max(nextPow2(data), 2*len(e.data)), w.left)
		copy(d, e.data[:e.offs[held]])
		e.data = d
	}
	if addValid {
		e.valid = w.words.take(wordsFor(capr), w.left)
		setBits(e.valid, 0, held)
	}
	if newExt {
		nb.ext = &w.exts.take(1, w.left)[0]
		*nb.ext = e
	}
	w.delta += nb.size() - b.size()
	return nb
}

// validRange returns the first and last rows of [off, off+n) of col that
// hold a value, whether a null lies between them, and false when every
// row is null. col.Validity is not nil.
func validRange(col *tablet.Column, off, n int) (first, last int, nulls, ok bool) {
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
