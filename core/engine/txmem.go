package engine

import (
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// txMemory hands out the memory of a transaction's small inserts in
// blocks: the copy of each tablet (its log encoding), the tablet read
// back over it, its columns and its property ids. A transaction of a
// thousand one-row tablets made four to six allocations for each of them
// (and decoded every column name into a new string); it now makes a few
// per block. Blocks start small and double, so a transaction of one
// insert holds little more than it did. Nothing in a block is freed
// before the transaction ends (discard drops them).
type txMemory struct {
	bytes   block[byte]
	tablets block[tablet.Tablet]
	columns block[tablet.Column]
	ids     block[schema.PropertyID]
}

// block is the rest of a block of Ts and the size of the last one.
type block[T any] struct {
	free []T
	size int
}

// Block sizes, in elements: the first and the largest (bytes: 1 KiB to
// 64 KiB; tablets, columns and ids: 16 to 1,024 of them, 80 KiB of
// tablets or 128 KiB of columns at most). A request over a quarter of the
// largest is allocated by itself.
const (
	firstBlockBytes = 1 << 10
	mostBlockBytes  = 64 << 10
	firstBlockElems = 16
	mostBlockElems  = 1024
)

// take returns n zeroed elements from the block (a new one when too few
// are left), capped so that an append cannot reach the next request's.
func (b *block[T]) take(n, first, most int) []T {
	if n > most/4 {
		return make([]T, n)
	}
	if n > len(b.free) {
		b.size = min(max(2*b.size, first, n), most)
		b.free = make([]T, b.size)
	}
	s := b.free[:n:n]
	b.free = b.free[n:]
	return s
}

// copyOf encodes t, prepared, as the log entry of an insert into typ for
// device, and returns the encoding with the tablet over it: the
// transaction's own copy, so that the caller's buffers are free. The
// encoding starts 8-aligned, so the times and values are read in place.
func (m *txMemory) copyOf(typ, device string, t *tablet.Tablet) ([]byte, *tablet.Tablet) {
	size := entrySize(typ, device, t)
	// Whole words, so that every request starts 8-aligned.
	buf := m.bytes.take((size+7)&^7, firstBlockBytes, mostBlockBytes)[:0:size]
	view := &m.tablets.take(1, firstBlockElems, mostBlockElems)[0]
	cols := m.columns.take(len(t.Columns), firstBlockElems, mostBlockElems)
	buf = appendEntryHead(buf, typ, device)
	return tablet.AppendCopy(buf, t, view, cols), view
}
