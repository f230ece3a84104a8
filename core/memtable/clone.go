package memtable

import (
	"slices"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Clone returns a deep copy of c, detached from any memtable. It holds c's
// writer lock while copying (writers of c wait; readers do not). Buffers
// are copied at the size they use, so the copy may be smaller than c.
func (c *Chunk) Clone() *Chunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	nc := newChunk(c.blockRows, nil)
	nc.rows, nc.sorted, nc.last = c.rows, c.sorted, c.last
	if c.dels != nil {
		dels := slices.Clone(*c.dels)
		nc.dels = &dels
	}
	var mem int64
	if len(c.cols) > 0 {
		nc.cols = slices.Clone(c.cols)
		tab := newIDTable(len(nc.cols))
		for p, cm := range nc.cols {
			i, _ := tab.find(cm.id)
			tab.slots[i] = makeEntry(cm.id, p)
		}
		nc.setUsed(len(nc.cols))
		nc.index.Store(tab)
		mem += int64(len(nc.cols)) * colOverhead
	}
	nc.blocks = make([]*rowBlock, len(c.blocks))
	for bi, rb := range c.blocks {
		nrb := &rowBlock{}
		mem += rowBlockOverhead
		inBlock := min(c.blockRows, c.rows-bi*c.blockRows)
		if tp := rb.timesOf(inBlock); tp != nil {
			ts := slices.Clone(tp)
			nrb.setTimes(ts)
			mem += 8 * int64(len(ts))
		}
		if sa := rb.slotArray(); sa != nil {
			ns := make([]slot, len(sa))
			for p := range sa {
				s := &sa[p]
				meta := s.meta.Load()
				n := int(meta & nMask)
				if n == 0 {
					continue
				}
				lo := int(s.lo)
				typ := c.cols[p].typ
				b := copyBlock(loadBlock(s, typ, c.blockRows-lo, meta), typ, n, c.blockRows-lo)
				ns[p].lo = s.lo
				publish(&ns[p], blk{}, b, n)
				mem += b.size()
			}
			nrb.setSlots(ns)
			mem += slotSize * int64(len(ns))
		}
		nc.blocks[bi] = nrb
	}
	nc.mem.Store(mem)
	nc.state.Store(&state{rows: nc.rows, sorted: nc.sorted, cols: nc.cols, blocks: nc.blocks, dels: nc.dels})
	return nc
}

// copyBlock copies the first n rows of b into buffers just large enough
// (for fixed-width values, the capacity fixedRows gives).
func copyBlock(b blk, typ schema.PropertyType, n, maxRows int) blk {
	var nb blk
	var e blockExt
	capr := n
	switch {
	case typ == schema.Boolean:
		e.words = slices.Clone(b.ext.words[:wordsFor(n)])
		capr = len(e.words) * 64
	case tablet.VarWidth(typ):
		e.offs = slices.Clone(b.ext.offs[:n+1])
		e.data = slices.Clone(b.ext.data[:e.offs[n]])
	default:
		wd := tablet.Width(typ)
		nb.capLog = log2Ceil(n)
		capr = fixedRows(nb.capLog, maxRows)
		nb.vals = make([]byte, capr*wd)
		copy(nb.vals, b.vals[:n*wd])
	}
	if v := b.ext.validity(); v != nil {
		e.valid = make([]uint64, wordsFor(capr))
		copy(e.valid, v[:wordsFor(n)])
	}
	if e.data != nil || e.offs != nil || e.words != nil || e.valid != nil {
		nb.ext = &e
	}
	return nb
}

// Clear drops every row and column, keeping the chunk usable (and, while
// it belongs to a memtable, counted in it). The caller must own c
// exclusively: no concurrent readers, snapshots or writers.
func (c *Chunk) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total != nil {
		c.total.Add(-c.mem.Load())
	}
	c.mem.Store(0)
	c.state.Store(nil)
	c.index.Store(nil)
	c.rows, c.sorted, c.last = 0, true, minTime
	c.cols, c.blocks, c.book, c.dels = nil, nil, nil, nil
	c.seq = 0
}
