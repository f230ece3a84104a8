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
	var mem int64
	if len(c.cols) > 0 {
		nc.cols = slices.Clone(c.cols)
		nc.stamps = make([]uint32, len(nc.cols))
		tab := newIDTable(len(nc.cols))
		for p, cm := range nc.cols {
			i, _ := tab.find(cm.id)
			tab.slots[i] = makeEntry(cm.id, p)
		}
		nc.used = len(nc.cols)
		nc.index.Store(tab)
		mem += int64(len(nc.cols)) * colOverhead
	}
	nc.blocks = make([]*rowBlock, len(c.blocks))
	for bi, rb := range c.blocks {
		nrb := &rowBlock{}
		mem += rowBlockOverhead
		inBlock := min(c.blockRows, c.rows-bi*c.blockRows)
		if tp := rb.times.Load(); tp != nil {
			ts := slices.Clone((*tp)[:inBlock])
			nrb.times.Store(&ts)
			mem += 8 * int64(len(ts))
		}
		if sp := rb.slots.Load(); sp != nil {
			ns := make([]slot, len(*sp))
			for p := range *sp {
				s := &(*sp)[p]
				n := int(s.n.Load())
				if n == 0 {
					continue
				}
				b := copyBufs(s.buf.Load(), c.cols[p].typ, n)
				ns[p].lo = s.lo
				ns[p].buf.Store(b)
				ns[p].n.Store(int32(n))
				mem += blockOverhead + b.size()
			}
			nrb.slots.Store(&ns)
			mem += slotSize * int64(len(ns))
		}
		nc.blocks[bi] = nrb
	}
	nc.mem.Store(mem)
	nc.state.Store(&state{rows: nc.rows, sorted: nc.sorted, cols: nc.cols, blocks: nc.blocks})
	return nc
}

// copyBufs copies the first n rows of b.
func copyBufs(b *blockBufs, typ schema.PropertyType, n int) *blockBufs {
	nb := &blockBufs{}
	switch {
	case typ == schema.Boolean:
		nb.words = slices.Clone(b.words[:words(n)])
	case tablet.VarWidth(typ):
		nb.offs = slices.Clone(b.offs[:n+1])
		nb.vals = slices.Clone(b.vals[:b.offs[n]])
	default:
		nb.vals = slices.Clone(b.vals[:n*tablet.Width(typ)])
	}
	if b.valid != nil {
		nb.valid = slices.Clone(b.valid[:words(n)])
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
	c.cols, c.blocks, c.stamps, c.pos = nil, nil, nil, nil
	c.used, c.seq = 0, 0
}
