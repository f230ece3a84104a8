// Package cdatatest describes Arrow C Data Interface columns as plain Go
// values (formats, buffers as bytes, offsets, null counts), and the
// batches of simple columns that a producer may hand over, for the tests
// that build them as structs in Go memory (internal/cdata) or C memory
// (tests/abi). It allocates no structs and must not be imported by the
// library itself.
package cdatatest

import (
	"encoding/binary"
	"math"
)

// flagNullable is ARROW_FLAG_NULLABLE.
const flagNullable = 2

// Col describes one column (or a dictionary, or a nested child). Bufs
// holds, per buffer, a []byte (to be copied; nil is a NULL pointer) or a
// uintptr (the pointer value itself, such as the dangling 0x1).
type Col struct {
	Name, Format  string
	Flags         int64
	Length, Nulls int64
	Offset        int64
	Bufs          []any
	Dict          *Col
	Children      []Col
}

// Fixed is the Go types of fixed-width values.
type Fixed interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// DirectCase is a batch of simple columns (those the direct path takes):
// Length rows from row Offset of the struct array.
type DirectCase struct {
	Name   string
	Length int64
	Offset int64
	Cols   []Col
}

// Validity returns the bitmap of valid (nil: no bitmap) and the null count.
func Validity(valid []bool) ([]byte, int64) {
	if valid == nil {
		return nil, 0
	}
	bits := make([]byte, (len(valid)+7)/8)
	var nulls int64
	for i, ok := range valid {
		if ok {
			bits[i/8] |= 1 << (i % 8)
		} else {
			nulls++
		}
	}
	return bits, nulls
}

// LE returns the little-endian bytes of v.
func LE[T Fixed](v ...T) []byte {
	out := []byte{}
	for _, x := range v {
		switch y := any(x).(type) {
		case float32:
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(y))
		case float64:
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(y))
		default:
			out, _ = binary.Append(out, binary.LittleEndian, y)
		}
	}
	return out
}

// FixedCol builds a nullable fixed-width column of format (a valid of nil:
// no bitmap).
func FixedCol[T Fixed](name, format string, v []T, valid []bool) Col {
	bits, nulls := Validity(valid)
	return Col{Name: name, Format: format, Flags: flagNullable, Length: int64(len(v)), Nulls: nulls, Bufs: []any{bits, LE(v...)}}
}

// Int64Col is FixedCol of int64 values.
func Int64Col(name string, v []int64, valid []bool) Col { return FixedCol(name, "l", v, valid) }

// BoolCol builds a nullable boolean column.
func BoolCol(name string, v []bool, valid []bool) Col {
	bits, nulls := Validity(valid)
	vals, _ := Validity(v)
	if vals == nil {
		vals = []byte{}
	}
	return Col{Name: name, Format: "b", Flags: flagNullable, Length: int64(len(v)), Nulls: nulls, Bufs: []any{bits, vals}}
}

// VarCol builds a column of int32 ("u", "z") or int64 ("U", "Z") offsets.
func VarCol(name, format string, v []string, valid []bool) Col {
	bits, nulls := Validity(valid)
	offsets := []int64{0}
	data := []byte{}
	for _, s := range v {
		data = append(data, s...)
		offsets = append(offsets, int64(len(data)))
	}
	var offs []byte
	if format == "U" || format == "Z" {
		offs = LE(offsets...)
	} else {
		for _, o := range offsets {
			offs = append(offs, LE(int32(o))...)
		}
	}
	return Col{Name: name, Format: format, Flags: flagNullable, Length: int64(len(v)), Nulls: nulls, Bufs: []any{bits, offs, data}}
}

// StringCol is VarCol of utf8 values.
func StringCol(name string, v []string, valid []bool) Col { return VarCol(name, "u", v, valid) }

// TimeCol is a plain int64 time column named "time".
func TimeCol(v ...int64) Col {
	c := Int64Col("time", v, nil)
	c.Flags = 0
	return c
}

// ViewCol builds a string_view ("vu") or binary_view ("vz") column: values
// up to 12 bytes inline, longer ones in one data buffer.
func ViewCol(name, format string, v []string, valid []bool) Col {
	bits, nulls := Validity(valid)
	views := make([]byte, 16*len(v))
	data := []byte{}
	for i, s := range v {
		w := views[16*i:]
		binary.LittleEndian.PutUint32(w, uint32(len(s)))
		if len(s) <= 12 {
			copy(w[4:], s)
			continue
		}
		copy(w[4:8], s)
		binary.LittleEndian.PutUint32(w[8:], 0) // buffer 0
		binary.LittleEndian.PutUint32(w[12:], uint32(len(data)))
		data = append(data, s...)
	}
	return Col{Name: name, Format: format, Flags: flagNullable, Length: int64(len(v)), Nulls: nulls,
		Bufs: []any{bits, views, data, LE(int64(len(data)))}}
}

// Sliced returns c with its rows from offset on, length of them.
func Sliced(c Col, offset, length int64) Col {
	c.Offset, c.Length = offset, length
	return c
}

// DirectCases are the batches of simple columns every import path must
// read alike: every type with nulls, offsets of the struct and of the
// columns, unknown and zero null counts, bitmaps without nulls, zero rows
// and dangling buffers, time columns of each kind.
func DirectCases() []DirectCase {
	valid := []bool{true, false, true, true}
	unknownNulls := func(c Col) Col {
		c.Nulls = -1
		return c
	}
	bits := func(c Col, b byte) Col { // a Validity bitmap, null count 0
		c.Bufs[0] = []byte{b}
		return c
	}
	return []DirectCase{
		{Name: "every type with nulls", Length: 4, Cols: []Col{
			TimeCol(1, 2, 3, 4),
			BoolCol("b", []bool{true, true, false, true}, valid),
			FixedCol("i", "i", []int32{-1, 0, 1 << 30, 5}, valid),
			Int64Col("l", []int64{-1 << 62, 0, 7, 8}, valid),
			FixedCol("f", "f", []float32{1.5, 0, -2.25, 3}, valid),
			FixedCol("d", "g", []float64{3.25, 0, -1e300, 4}, valid),
			StringCol("s", []string{"héllo", "x", "", "end"}, valid),
			VarCol("bin", "z", []string{"\x00\xff", "", "x", "yz"}, valid),
			FixedCol("ts", "tsn:UTC", []int64{1_700_000_000_000_000_000, 0, -5, 6}, valid),
			FixedCol("dt", "tdD", []int32{19000, 0, -3, 4}, valid),
		}},
		{Name: "Sliced columns at bit offsets", Length: 3, Cols: []Col{
			TimeCol(1, 2, 3),
			Sliced(BoolCol("b", []bool{false, true, false, true, true, false, true, false, true, true, false, true},
				[]bool{true, true, true, true, true, true, true, true, true, false, true, true}), 9, 3),
			Sliced(Int64Col("l", []int64{9, 9, 9, 9, 9, 1, 2, 3}, []bool{true, true, true, true, true, true, false, true}), 5, 3),
			Sliced(StringCol("s", []string{"a", "bc", "def", "", "gh"}, []bool{true, true, false, true, true}), 2, 3),
			Sliced(FixedCol("f", "f", []float32{1, 2, 3, 4}, nil), 1, 3),
		}},
		{Name: "offset of the struct array", Length: 2, Offset: 1, Cols: []Col{
			TimeCol(0, 10, 20),
			BoolCol("b", []bool{true, false, true}, []bool{true, true, false}),
			Int64Col("l", []int64{1, 2, 3, 4}, []bool{false, true, true, true}), // longer than the batch
			Sliced(StringCol("s", []string{"skip", "p", "q", "r"}, nil), 1, 3),
		}},
		{Name: "struct and column offsets at once", Length: 2, Offset: 2, Cols: []Col{
			Sliced(TimeCol(0, 1, 2, 3, 4, 5), 1, 5),
			Sliced(BoolCol("b", []bool{true, false, true, false, true, false, true, false, true, false}, nil), 3, 7),
			Sliced(StringCol("s", []string{"a", "b", "c", "d", "e", "f", "g"}, []bool{true, true, true, true, true, false, true}), 1, 6),
		}},
		{Name: "nulls outside the rows of the batch", Length: 2, Offset: 1, Cols: []Col{
			TimeCol(0, 10, 20),
			Int64Col("l", []int64{1, 2, 3}, []bool{false, true, true}),
			Int64Col("time2", []int64{1, 2, 3, 4}, []bool{true, true, true, false}),
		}},
		{Name: "unknown null counts", Length: 4, Cols: []Col{
			unknownNulls(TimeCol(1, 2, 3, 4)),
			unknownNulls(Int64Col("l", []int64{1, 2, 3, 4}, valid)),
			unknownNulls(Int64Col("full", []int64{1, 2, 3, 4}, []bool{true, true, true, true})),
			unknownNulls(StringCol("s", []string{"a", "b", "c", "d"}, valid)),
		}},
		{Name: "bitmap ignored when the null count is 0", Length: 4, Cols: []Col{
			bits(TimeCol(1, 2, 3, 4), 0),
			bits(Int64Col("l", []int64{1, 2, 3, 4}, nil), 0b0101),
			bits(StringCol("s", []string{"a", "b", "c", "d"}, nil), 0b0110),
		}},
		{Name: "time column with a null outside the batch", Length: 2, Cols: []Col{
			Int64Col("time", []int64{1, 2, 3}, []bool{true, true, false}),
			Int64Col("l", []int64{1, 2}, nil),
		}},
		{Name: "timestamp time column in seconds with a zone", Length: 2, Cols: []Col{
			FixedCol("time", "tss:Europe/Paris", []int64{1_700_000_000, 1_700_000_001}, nil),
			FixedCol("ts", "tsn:", []int64{1, 2}, nil),
		}},
		{Name: "zero rows with dangling buffers", Length: 0, Cols: []Col{
			{Name: "time", Format: "l", Bufs: []any{uintptr(1), uintptr(8)}},
			{Name: "l", Format: "l", Bufs: []any{uintptr(0x40), uintptr(1)}},
			{Name: "s", Format: "u", Bufs: []any{uintptr(1), uintptr(4), uintptr(1)}},
			{Name: "z", Format: "z", Bufs: []any{uintptr(0), uintptr(0), uintptr(0)}},
			{Name: "b", Format: "b", Bufs: []any{uintptr(0), uintptr(1)}},
		}},
		{Name: "zero rows of Sliced columns with dangling buffers", Length: 0, Cols: []Col{
			{Name: "time", Format: "l", Offset: 3, Bufs: []any{uintptr(1), uintptr(8)}},
			{Name: "s", Format: "u", Offset: 5, Bufs: []any{uintptr(1), uintptr(4), uintptr(1)}},
		}},
		{Name: "empty strings with a dangling data buffer", Length: 2, Cols: []Col{
			TimeCol(1, 2),
			func() Col {
				c := StringCol("s", []string{"", ""}, nil)
				c.Bufs[0], c.Bufs[2] = uintptr(1), uintptr(1)
				return c
			}(),
		}},
		{Name: "timestamp time column in microseconds", Length: 1, Cols: []Col{
			FixedCol("time", "tsu:", []int64{5}, nil),
			Int64Col("l", []int64{1}, nil),
		}},
		{Name: "only the time column", Length: 2, Cols: []Col{TimeCol(7, 8)}},
	}
}
