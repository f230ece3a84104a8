package engine

import (
	"fmt"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// txMemory hands out the memory of a transaction's small inserts in
// blocks: the copy of each tablet (its log encoding) and its property
// ids. A transaction of a thousand one-row tablets made four to six
// allocations for each of them (and decoded every column name into a new
// string); it now makes a few per block. Blocks start small and double,
// so a transaction of one insert holds little more than it did. Nothing
// in a block is freed before the transaction ends (discard drops them).
type txMemory struct {
	bytes block[byte]
	ids   block[schema.PropertyID]
}

// block is the rest of a block of Ts and the size of the last one.
type block[T any] struct {
	free []T
	size int
}

// Block sizes, in elements: the first and the largest (bytes: 1 KiB to
// 64 KiB; ids: 16 to 1,024 of them). A request over a quarter of the
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
// device: the transaction's own copy, so that the caller's buffers are
// free. The encoding starts 8-aligned, so that readCopy reads its times
// and values in place.
func (m *txMemory) copyOf(typ, device string, t *tablet.Tablet) []byte {
	size := entrySize(typ, device, t)
	// Whole words, so that every request starts 8-aligned.
	buf := m.bytes.take((size+7)&^7, firstBlockBytes, mostBlockBytes)[:0:size]
	return tablet.Append(appendEntryHead(buf, typ, device), t)
}

// readCopy reads a copied tablet back from enc, its encoding (an entry's
// after its head), into view with cols as its columns when they are
// enough (else new ones, which it returns for the next call). A
// transaction keeps only the encodings of its copies: column headers (128
// bytes each, five of their words pointers the collector scans) cost a
// one-row insert of ten columns more than its encoding, so the usual
// commit reads each copy into the same headers as it applies it
// (DB.apply).
func readCopy(enc []byte, view *tablet.Tablet, cols []tablet.Column) ([]tablet.Column, error) {
	n, err := tablet.EncodedWidth(enc, 0)
	if err == nil {
		if cap(cols) < n {
			cols = make([]tablet.Column, n)
		}
		_, err = tablet.DecodeView(enc, 0, view, cols[:n])
	}
	if err != nil {
		return cols, fmt.Errorf("the transaction's copy of a tablet: %v: %w", err, errs.ErrInternal)
	}
	return cols, nil
}

// tablet returns e's tablet, reading a copy back from its encoding the
// first time, into memory of its own: for the commit's less usual ways.
func (e *entry) tablet() (*tablet.Tablet, error) {
	if e.t == nil {
		t, err := readCopyApart(e.tabletEnc())
		if err != nil {
			return nil, fmt.Errorf("insert into %q: %w", e.typ, err)
		}
		e.t = t
	}
	return e.t, nil
}

// tabletEnc returns the encoding of a copied entry's tablet: enc past
// the entry's head, 8-aligned as enc is.
func (e *entry) tabletEnc() []byte {
	if e.enc == nil {
		return nil
	}
	return e.enc[entryHeadLen(e.typ, e.device):]
}

// tablet returns w's tablet, reading a copy back as entry.tablet does.
func (w *write) tablet() (*tablet.Tablet, error) {
	if w.t == nil {
		t, err := readCopyApart(w.enc)
		if err != nil {
			return nil, err
		}
		w.t = t
	}
	return w.t, nil
}

// readCopyApart is readCopy into memory of the tablet's own.
func readCopyApart(enc []byte) (*tablet.Tablet, error) {
	t := new(tablet.Tablet)
	if _, err := readCopy(enc, t, nil); err != nil {
		return nil, err
	}
	return t, nil
}
