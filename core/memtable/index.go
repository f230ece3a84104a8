package memtable

import (
	"sync/atomic"

	"github.com/arcadego/arcadego/core/schema"
)

// idTable maps a PropertyID to a chunk column position. It is an
// open-addressing hash table with linear probing whose slots are single
// uint64 words, so that one writer can insert while readers look up without
// locks (a Go map cannot be read during a write) and an insert allocates
// nothing (a table of 10,000 columns is one slice).
//
// Invariants: only the chunk's writer (holding Chunk.mu) stores slots, with
// atomic stores; anyone loads them atomically. A slot is 0 (empty) or an
// entry: bit 63 set, the id in bits 31..62 and the position plus one in
// bits 0..30, where position plus one 0 is a tombstone (an id that a failed
// Write inserted and took back). Entries are never removed, so a probe
// sequence never breaks. Committed entries have positions below the
// chunk's width; an entry at or beyond a reader's snapshot width belongs to
// a later (or failing) write and means "absent" to that reader. The load
// factor stays at most 3/4, so a probe always reaches an empty slot.
type idTable struct {
	slots []uint64
	bits  uint // log2(len(slots))
}

const (
	entryUsed   = uint64(1) << 63
	entryPosMax = 1<<31 - 2 // largest position an entry can hold
	minTable    = 8
)

func makeEntry(id schema.PropertyID, pos int) uint64 {
	return entryUsed | uint64(id)<<31 | uint64(pos+1)
}

func tombstone(id schema.PropertyID) uint64 { return entryUsed | uint64(id)<<31 }

func entryID(e uint64) schema.PropertyID { return schema.PropertyID(e >> 31) }

// entryPos returns the position of an entry, or -1 for an empty slot or a
// tombstone.
func entryPos(e uint64) int { return int(e&(1<<31-1)) - 1 }

// newIDTable returns a table with room for n entries.
func newIDTable(n int) *idTable {
	size, bits := minTable, uint(3)
	for size*3/4 < n {
		size *= 2
		bits++
	}
	return &idTable{slots: make([]uint64, size), bits: bits}
}

// limit is the number of non-empty slots the table may hold.
func (t *idTable) limit() int { return len(t.slots) * 3 / 4 }

// find returns the slot of id, or of the empty slot where id would go, and
// that slot's content.
func (t *idTable) find(id schema.PropertyID) (int, uint64) {
	mask := len(t.slots) - 1
	// Ids are mostly consecutive counters. Keeping them in order (the low
	// bits, with the higher bits folded in so that ids differing only above
	// the table size spread) keeps a wide tablet's lookups close together
	// in memory; a multiplicative hash would make each one a cache miss.
	i := int(id^id>>t.bits) & mask
	for {
		e := atomic.LoadUint64(&t.slots[i])
		if e == 0 || entryID(e) == id {
			return i, e
		}
		i = (i + 1) & mask
	}
}

// lookup returns the position of id if it is below width, else -1.
func (t *idTable) lookup(id schema.PropertyID, width int) int {
	if t == nil {
		return -1
	}
	_, e := t.find(id)
	p := entryPos(e)
	if p >= width {
		return -1
	}
	return p
}

// set stores e in slot i.
func (t *idTable) set(i int, e uint64) { atomic.StoreUint64(&t.slots[i], e) }
