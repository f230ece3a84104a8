package cdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

// FuzzImport builds a small record batch from the fuzzer's bytes, with
// some counts, offsets, values and pointers broken, and imports it: the
// import must refuse it with ErrInvalidArgument or return a tablet of the
// batch's rows whose every value can be read, and never panic. A batch the
// direct path takes must give the same tablet on the arrow path.
//
// The package reads whatever a valid-looking pointer (>= 4096) says is
// there, as it must: so the batches only ever hold addresses of Go memory
// large enough for their counts, NULL, or dangling values below 4096.
// Counts are broken only in ways the package checks before it reads
// (negative, shorter than the batch, too large).
func FuzzImport(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 4, 0, 1, 0, 3, 1, 0, 0, 2, 5, 9, 1, 1, 7, 0, 3, 3, 3})
	f.Add([]byte{3, 7, 1, 2, 1, 14, 2, 1, 1, 1, 0xff, 0x10, 15, 1, 0, 2, 0, 0, 0, 13, 3})
	f.Add([]byte{1, 8, 2, 0, 2, 0, 9, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf5})
	f.Add([]byte("some longer input that makes several columns of views and dictionaries"))
	for i := range fuzzFormats { // 2 columns, 3 rows: column 0 of each format, then the time column
		f.Add([]byte{1, 3, 0, 1, byte(i), 1, 1, 1, 2, 0xfe, 0x7f, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		b, timeColumn := g.batch(t)
		checkImport(t, b, timeColumn)
	})
}

// checkImport imports b and checks the outcome.
func checkImport(t *testing.T, b *batch, timeColumn string) {
	before := b.snapshot()
	defer func() { require.Equal(t, before, b.snapshot(), "the caller's structs are unchanged") }()
	in, err := NewInput(b.schemaAddr(), timeColumn)
	if err != nil {
		requireInvalid(t, err)
		return
	}
	bt, err := in.Batch(b.arrayAddr())
	if err != nil {
		requireInvalid(t, err)
		return
	}
	defer bt.Release()
	require.Equal(t, int(b.array.Length), bt.Tablet.Rows())
	got := contentsOf(bt.Tablet) // reads every value
	if bt.rec != nil {
		return
	}
	// The direct path took it: the arrow path must give the same.
	tb, release, err := b.arrowPath(timeColumn)
	require.NoError(t, err, "the direct path accepted what the arrow path refuses")
	defer release()
	require.Equal(t, floatBits(contentsOf(tb)), floatBits(got), "direct and arrow paths differ")
}

// floatBits replaces the floats of c by their bits, so that NaNs compare
// equal.
func floatBits(c contents) contents {
	for _, col := range c.Columns {
		for i, v := range col.Values {
			switch f := v.(type) {
			case float32:
				col.Values[i] = math.Float32bits(f)
			case float64:
				col.Values[i] = math.Float64bits(f)
			}
		}
	}
	return c
}

func requireInvalid(t *testing.T, err error) {
	t.Helper()
	require.True(t, errors.Is(err, errs.ErrInvalidArgument), "error %q is not ErrInvalidArgument", err)
}

// gen derives a batch from bytes; past their end every byte is 0, which
// makes well-formed choices.
type gen struct {
	data []byte
	pos  int
}

func (g *gen) byte() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return g.data[g.pos-1]
}

// n returns a number in [0, k).
func (g *gen) n(k int) int { return int(g.byte()) % k }

// bad reports, 1 time in 16, that something is to be broken (never once
// the bytes run out).
func (g *gen) bad() bool { return g.byte() >= 0xf0 }

// dangling returns a NULL or dangling pointer.
func (g *gen) dangling() uintptr { return []uintptr{0, 1, 8, 0x40, 0xff8}[g.n(5)] }

// fuzzFormats are the column formats the fuzzer uses; "D" is a
// dictionary (int8 or int32 indices of utf8 or int64 values) and "+l" a
// list column.
var fuzzFormats = []string{
	"b", "c", "C", "s", "S", "i", "I", "l", "L", "f", "g", "tdD", "tdm", "tsn:", "tsu:UTC",
	"u", "U", "z", "Z", "vu", "vz", "w:3", "D", "n", "+l", "e", "d:5,2", "xyz",
}

var fuzzTimeFormats = []string{"l", "tsn:", "tsm:UTC", "tss:", "tsu:+01:00", "u"}

// batch makes a batch of up to 4 columns, one of them a time column.
func (g *gen) batch(t testing.TB) (*batch, string) {
	ncols := 1 + g.n(4)
	length := int64(g.n(9))
	offset := int64(g.n(3))
	need := offset + length
	timeIdx := g.n(ncols)
	cols := make([]col, ncols)
	for i := range cols {
		name := fmt.Sprintf("c%d", i)
		if i == timeIdx {
			name = "time"
		}
		format := fuzzTimeFormats[0]
		if i == timeIdx {
			if g.bad() {
				format = fuzzTimeFormats[g.n(len(fuzzTimeFormats))]
			}
		} else {
			format = fuzzFormats[g.n(len(fuzzFormats))]
		}
		cols[i] = g.column(name, format, need)
	}
	if g.bad() && ncols > 1 {
		cols[1].name = cols[0].name // duplicate names
	}
	b := newBatch(t, length, cols...) // buffer pointer arrays have room for 2 more

	b.array.Offset = offset
	g.breakColumns(b, cols, need)
	g.breakStructs(b)
	timeColumn := ""
	if g.bad() {
		timeColumn = cols[g.n(ncols)].name
	}
	return b, timeColumn
}

// column makes a well-formed column of the given format with at least
// need rows (offset+length of the batch), from a random offset.
func (g *gen) column(name, format string, need int64) col {
	off := int64(g.n(4))
	length := need + int64(g.n(3))
	end := off + length
	c := col{name: name, format: format, flags: FlagNullable, length: length, offset: off}

	// Validity: none, or random bits with the true null count, -1 or 0.
	var bits []byte
	switch g.n(4) {
	case 1, 2, 3:
		bits = make([]byte, (end+7)/8)
		for i := range bits {
			bits[i] = g.byte() | g.byte() // mostly valid
		}
		switch g.n(3) {
		case 0:
			for i := off; i < end; i++ {
				if bits[i/8]&(1<<(i%8)) == 0 {
					c.nulls++
				}
			}
		case 1:
			c.nulls = -1
		}
	}
	values := func(width int64) []byte {
		v := make([]byte, width*end)
		for i := range v {
			v[i] = g.byte()
		}
		return v
	}

	switch format {
	case "n":
		c.nulls, bits = length, nil
	case "+l":
		c.bufs = []any{bits, make([]byte, 4*(end+1))}
		child := int64Col("item", []int64{}, nil)
		c.children = []col{child}
		return c
	case "b":
		c.bufs = []any{bits, values(1)[:(end+7)/8]}
	case "u", "z", "U", "Z":
		large := format == "U" || format == "Z"
		offs := make([]int64, end+1)
		offs[0] = int64(g.n(3))
		for i := int64(1); i <= end; i++ {
			offs[i] = offs[i-1] + int64(g.n(6))
		}
		if g.bad() { // decreasing or negative offsets
			offs[g.n(int(end+1))] = int64(g.n(4)) - 2
		}
		size := int64(0)
		for _, o := range offs {
			size = max(size, o)
		}
		var ob []byte
		for _, o := range offs {
			if large {
				ob = binary.LittleEndian.AppendUint64(ob, uint64(o))
			} else {
				ob = binary.LittleEndian.AppendUint32(ob, uint32(o))
			}
		}
		data := make([]byte, size)
		for i := range data {
			data[i] = 'a' + g.byte()%26
		}
		c.bufs = []any{bits, ob, data}
	case "vu", "vz":
		c.bufs = g.views(bits, end)
	case "D":
		c = g.dictionary(c, bits, end)
	case "w:3":
		c.bufs = []any{bits, values(3)}
	case "c", "C":
		c.bufs = []any{bits, values(1)}
	case "s", "S", "e":
		c.bufs = []any{bits, values(2)}
	case "i", "I", "f", "tdD":
		c.bufs = []any{bits, values(4)}
	case "d:5,2":
		c.bufs = []any{bits, values(16)}
	default: // 8-byte values, unknown formats
		c.bufs = []any{bits, values(8)}
	}
	return c
}

// views makes the buffers of a view array: 1 or 2 data buffers, views
// inline or in them, some pointing outside.
func (g *gen) views(bits []byte, end int64) []any {
	k := 1 + g.n(2)
	data := make([][]byte, k)
	for j := range data {
		data[j] = make([]byte, g.n(40))
		for i := range data[j] {
			data[j][i] = 'a' + g.byte()%26
		}
	}
	views := make([]byte, 16*end)
	for i := range end {
		v := views[16*i:]
		n := int32(g.n(24))
		buf := int32(g.n(k))
		off := int32(0)
		if n > 12 {
			if room := int32(len(data[buf])) - n; room >= 0 {
				off = int32(g.n(int(room) + 1))
			} else {
				n = 12
			}
		}
		if g.bad() { // outside the buffers
			buf, off = int32(g.n(4))-1, int32(g.n(50))-1
			n = int32(g.n(30)) - 1
		}
		binary.LittleEndian.PutUint32(v, uint32(n))
		copy(v[4:16], "0123456789ab")
		if n > 12 {
			binary.LittleEndian.PutUint32(v[8:], uint32(buf))
			binary.LittleEndian.PutUint32(v[12:], uint32(off))
		}
	}
	bufs := []any{bits, views}
	var sizes []byte
	for _, d := range data {
		bufs = append(bufs, d)
		size := int64(len(d))
		if g.bad() { // smaller than the buffer, or negative
			size = int64(g.n(int(size)+2)) - 1
		}
		sizes = binary.LittleEndian.AppendUint64(sizes, uint64(size))
	}
	return append(bufs, sizes)
}

// dictionary makes c dictionary-encoded: int8 or int32 indices, some out
// of range, into a dictionary of a few values of a flat type (made as a
// column is: sliced, with nulls, sometimes broken).
func (g *gen) dictionary(c col, bits []byte, end int64) col {
	n := int64(g.n(4))
	d := g.column("", []string{"u", "l", "b", "vu", "z"}[g.n(5)], n)
	if g.bad() { // counts the package checks before it reads
		switch g.n(3) {
		case 0:
			d.length = -1
		case 1:
			d.nulls = d.length + 1
		case 2:
			d.offset = -1
		}
	}
	idx := make([]int64, end)
	for i := range idx {
		idx[i] = int64(g.n(int(d.length) + 2)) // d.length and past are out of range
		if g.bad() {
			idx[i] = -1
		}
	}
	if g.n(2) == 0 {
		c.format = "c"
		var b []byte
		for _, x := range idx {
			b = append(b, byte(int8(x)))
		}
		c.bufs = []any{bits, b}
	} else {
		c.format = "i"
		var b []byte
		for _, x := range idx {
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(x)))
		}
		c.bufs = []any{bits, b}
	}
	c.dict = &d
	return c
}

// breakColumns breaks, now and then, a count or pointer of each column.
func (g *gen) breakColumns(b *batch, cols []col, need int64) {
	for i, a := range b.colArrays {
		s := b.colSchemas[i]
		if !g.bad() {
			continue
		}
		switch g.n(16) {
		case 0:
			a.Length = -1
		case 1:
			a.Length = need - 1 // shorter than the batch
		case 2:
			a.Offset = -1
		case 3:
			a.Offset = 1 << 50
		case 4:
			a.NullCount = a.Length + 1
		case 5:
			a.NullCount = -2
		case 6:
			if len(b.colBufs[i]) > 0 {
				b.colBufs[i][g.n(len(b.colBufs[i]))] = g.dangling()
			}
		case 7:
			a.NBuffers += int64(g.n(5)) - 2 // -2..+2: the pointer array has room
		case 8:
			a.Buffers = g.dangling()
		case 9:
			a.NChildren = 1
		case 10:
			if a.Dictionary != 0 {
				a.Dictionary = g.dangling()
			} else {
				a.Dictionary = b.arrayKids[0] // a real array, on a plain column
			}
		case 11:
			s.Format = g.dangling()
		case 12:
			s.Name = g.dangling() | 1 // never NULL: a NULL name is valid
		case 13:
			if s.Dictionary != 0 {
				s.Dictionary = g.dangling() | 1
			} else {
				s.NChildren, s.Children = 1, g.dangling()
			}
		case 14: // a cycle: the column's children are the root's
			s.NChildren, s.Children = b.schema.NChildren, b.schema.Children
		case 15:
			if s.Dictionary != 0 {
				s.Dictionary = b.schemaKids[i] // a dictionary cycle
			} else {
				s.Format = b.cstr("+s")
			}
		}
	}
}

// breakStructs breaks, now and then, the root structs.
func (g *gen) breakStructs(b *batch) {
	for range 2 {
		if !g.bad() {
			return
		}
		switch g.n(14) {
		case 0:
			b.schema.Release = 0
		case 1:
			b.schema.Format = b.cstr("+l")
		case 2:
			b.schema.NChildren = -1
		case 3:
			b.schema.Children = g.dangling()
		case 4:
			b.schemaKids[g.n(len(b.schemaKids))] = g.dangling()
		case 5:
			b.arrayKids[g.n(len(b.arrayKids))] = g.dangling()
		case 6:
			b.array.Children = g.dangling()
		case 7:
			b.array.NChildren += int64(g.n(3)) - 1 // only compared with the schema's
		case 8:
			b.array.NullCount = int64(g.n(3))
		case 9:
			b.array.NBuffers = int64(g.n(3))
		case 10:
			b.array.Length = int64(g.n(12)) - 1
		case 11:
			b.array.Offset = int64(g.n(5)) - 1
		case 12:
			b.array.Dictionary = b.arrayKids[0]
		case 13:
			b.schema.Format = g.dangling()
		}
	}
}
