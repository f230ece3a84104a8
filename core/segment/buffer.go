package segment

import (
	"bytes"
	"slices"
	"unsafe"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// colBuf holds one property column of the row group being built, as its
// pages hold it: the non-null values packed densely and one definition
// level per row (1 = value, 0 = null).
type colBuf struct {
	typ  schema.PropertyType
	rows int
	// defs stays nil while every buffered row holds a value (the common
	// case), saving two bytes a row; the first null fills it in.
	defs []int16

	bools []bool
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	data  []byte // String, Binary: value k is data[ends[k-1]:ends[k]]
	ends  []int
}

// fixedBytes returns up to n bytes of the buffered values of a column of
// numbers (none for others), as they are in memory: little endian, as
// Parquet's PLAIN encoding has them.
func (b *colBuf) fixedBytes(n int) []byte {
	var v []byte
	switch {
	case b.f64 != nil:
		v = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f64))), 8*len(b.f64))
	case b.i64 != nil:
		v = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.i64))), 8*len(b.i64))
	case b.f32 != nil:
		v = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f32))), 4*len(b.f32))
	case b.i32 != nil:
		v = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.i32))), 4*len(b.i32))
	}
	return v[:min(n, len(v))]
}

// add appends rows [from, from+n) of c and updates st (nil: no stats kept).
// It returns the value bytes added.
func (b *colBuf) add(c *tablet.Column, from, n int, st *colStats) int64 {
	allValid := c.Validity == nil
	if !allValid && b.defs == nil {
		for i := from; i < from+n; i++ {
			if !c.Valid(i) {
				b.defs = make([]int16, b.rows, max(2*b.rows, 1024))
				for j := range b.defs {
					b.defs[j] = 1
				}
				break
			}
		}
	}
	valid := func(i int) bool { return allValid || c.Valid(i) }
	if b.defs != nil {
		for i := from; i < from+n; i++ {
			if valid(i) {
				b.defs = append(b.defs, 1)
			} else {
				b.defs = append(b.defs, 0)
			}
		}
	}
	b.rows += n
	var added int64
	switch b.typ {
	case schema.Boolean:
		k := len(b.bools)
		for i := from; i < from+n; i++ {
			if valid(i) {
				b.bools = append(b.bools, c.Bool(i))
			}
		}
		added = int64(n)
		if st != nil {
			st.nulls += int64(n - (len(b.bools) - k))
		}
	case schema.Int32, schema.Date:
		k := len(b.i32)
		for i := from; i < from+n; i++ {
			if valid(i) {
				b.i32 = append(b.i32, c.Int32(i))
			}
		}
		added = 4 * int64(n)
		if st != nil {
			st.nulls += int64(n - (len(b.i32) - k))
			for _, v := range b.i32[k:] {
				st.addInt(int64(v))
			}
		}
	case schema.Int64, schema.Timestamp:
		k := len(b.i64)
		for i := from; i < from+n; i++ {
			if valid(i) {
				b.i64 = append(b.i64, c.Int64(i))
			}
		}
		added = 8 * int64(n)
		if st != nil {
			st.nulls += int64(n - (len(b.i64) - k))
			for _, v := range b.i64[k:] {
				st.addInt(v)
			}
		}
	case schema.Float:
		k := len(b.f32)
		for i := from; i < from+n; i++ {
			if valid(i) {
				b.f32 = append(b.f32, c.Float(i))
			}
		}
		added = 4 * int64(n)
		if st != nil {
			st.nulls += int64(n - (len(b.f32) - k))
			for _, v := range b.f32[k:] {
				st.addFloat(float64(v))
			}
		}
	case schema.Double:
		k := len(b.f64)
		if allValid { // the hot path of wide numeric flushes
			vals := c.Values[8*(c.Offset+from) : 8*(c.Offset+from+n)]
			b.f64 = slices.Grow(b.f64, n)[:k+n]
			// The tablet's bytes are the values in memory order (little
			// endian, as everything here): one copy.
			if n > 0 {
				copy(unsafe.Slice((*byte)(unsafe.Pointer(&b.f64[k])), 8*n), vals)
			}
		} else {
			for i := from; i < from+n; i++ {
				if valid(i) {
					b.f64 = append(b.f64, c.Double(i))
				}
			}
		}
		added = 8 * int64(n)
		if st != nil {
			st.nulls += int64(n - (len(b.f64) - k))
			st.addFloats(b.f64[k:])
		}
	case schema.String, schema.Binary:
		k := len(b.ends)
		d := len(b.data)
		for i := from; i < from+n; i++ {
			if valid(i) {
				b.data = append(b.data, c.Bytes(i)...)
				b.ends = append(b.ends, len(b.data))
			}
		}
		added = int64(len(b.data)-d) + 4*int64(n)
		if st != nil {
			st.nulls += int64(n - (len(b.ends) - k))
			if b.typ == schema.String {
				prev := d
				var lo, hi []byte
				for j, e := range b.ends[k:] {
					v := b.data[prev:e]
					prev = e
					if j == 0 || bytes.Compare(v, lo) < 0 {
						lo = v
					}
					if j == 0 || bytes.Compare(v, hi) > 0 {
						hi = v
					}
				}
				if len(b.ends) > k {
					st.addString(lo, hi)
				}
			}
		}
	}
	return added
}

// addRuns is add for rows [Lo, Hi) of each of runs in turn, for a column
// of fixed-width numbers without nulls (c.Validity nil): one loop of
// copies, then the statistics once over all of them. Many devices of a
// few rows each spent more time in a call of add per run than in copying.
func (b *colBuf) addRuns(c *tablet.Column, runs []Run, st *colStats) int64 {
	width := tablet.Width(b.typ)
	n := 0
	for _, r := range runs {
		n += r.Hi - r.Lo
	}
	k, dst := b.growFixed(n)
	at := 0
	for _, r := range runs {
		at += copy(dst[at:], c.Values[width*(c.Offset+r.Lo):width*(c.Offset+r.Hi)])
	}
	if b.defs != nil {
		for range n {
			b.defs = append(b.defs, 1)
		}
	}
	b.rows += n
	if st != nil {
		switch b.typ {
		case schema.Double:
			st.addFloats(b.f64[k:])
		case schema.Float:
			for _, v := range b.f32[k:] {
				st.addFloat(float64(v))
			}
		case schema.Int64, schema.Timestamp:
			for _, v := range b.i64[k:] {
				st.addInt(v)
			}
		default: // Int32, Date
			for _, v := range b.i32[k:] {
				st.addInt(int64(v))
			}
		}
	}
	return int64(width * n)
}

// growFixed lengthens the values of a fixed-width column by n and returns
// how many there were before and the bytes of the n new ones, to be
// filled in memory order (little endian, as the tablet's bytes are).
func (b *colBuf) growFixed(n int) (int, []byte) {
	switch b.typ {
	case schema.Double:
		k := len(b.f64)
		b.f64 = slices.Grow(b.f64, n)[:k+n]
		return k, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f64[k:]))), 8*n)
	case schema.Float:
		k := len(b.f32)
		b.f32 = slices.Grow(b.f32, n)[:k+n]
		return k, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f32[k:]))), 4*n)
	case schema.Int64, schema.Timestamp:
		k := len(b.i64)
		b.i64 = slices.Grow(b.i64, n)[:k+n]
		return k, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.i64[k:]))), 8*n)
	default: // Int32, Date
		k := len(b.i32)
		b.i32 = slices.Grow(b.i32, n)[:k+n]
		return k, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.i32[k:]))), 4*n)
	}
}

// reset empties b, keeping its memory for the next row group.
func (b *colBuf) reset() {
	b.rows = 0
	b.defs = nil // most columns never need it again
	b.bools, b.i32, b.i64 = b.bools[:0], b.i32[:0], b.i64[:0]
	b.f32, b.f64 = b.f32[:0], b.f64[:0]
	b.data, b.ends = b.data[:0], b.ends[:0]
}
