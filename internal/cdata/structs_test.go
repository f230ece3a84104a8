package cdata

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/arrowbridge"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/internal/cdata/cdatatest"
)

// Test helpers: Arrow C Data Interface structs built in Go memory.
//
// The structs hold addresses as integers, which the garbage collector does
// not trace, so every object whose address is taken is kept in an arena
// (and so on the heap, where Go never moves objects) until the test ends.

// dummyRelease stands for a release callback: the package only compares
// release pointers with 0 and never calls them.
const dummyRelease = 1 << 20

// arena keeps what the structs point to.
type arena struct {
	keep []any
}

// bytes returns the address of an 8-byte aligned copy of b (0 for a nil
// slice). An empty non-nil slice gets a real address too.
func (m *arena) bytes(b []byte) uintptr {
	if b == nil {
		return 0
	}
	w := make([]uint64, max(1, (len(b)+7)/8))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w)), b)
	m.keep = append(m.keep, w)
	return uintptr(unsafe.Pointer(&w[0]))
}

// cstr returns the address of s as a NUL-terminated C string.
func (m *arena) cstr(s string) uintptr { return m.bytes(append([]byte(s), 0)) }

// words returns the address of a copy of w (0 when w is empty) and the copy,
// which the test may change.
func (m *arena) words(w []uintptr) (uintptr, []uintptr) {
	if len(w) == 0 {
		return 0, nil
	}
	c := append([]uintptr(nil), w...)
	m.keep = append(m.keep, c)
	return uintptr(unsafe.Pointer(&c[0])), c
}

func (m *arena) schema() *Schema {
	s := new(Schema)
	m.keep = append(m.keep, s)
	return s
}

func (m *arena) array() *Array {
	a := new(Array)
	m.keep = append(m.keep, a)
	return a
}

// col describes one column (or a dictionary, or a nested child). bufs
// holds, per buffer, a []byte (copied; nil is a NULL pointer) or a uintptr
// (the pointer value itself, such as the dangling 0x1).
type col struct {
	name, format  string
	flags         int64
	length, nulls int64
	offset        int64
	bufs          []any
	dict          *col
	children      []col
}

// batch is a record batch (schema and array) in Go memory.
type batch struct {
	arena
	schema *Schema
	array  *Array
	// Per column: its structs and its array's buffer pointers (changing
	// the slice changes what the array points to).
	colSchemas []*Schema
	colArrays  []*Array
	colBufs    [][]uintptr
	schemaKids []uintptr // the root schema's children pointers
	arrayKids  []uintptr // the root array's children pointers
}

func (b *batch) schemaAddr() uintptr { return Addr(b.schema) }
func (b *batch) arrayAddr() uintptr  { return Addr(b.array) }

// newBatch builds cols as a record batch of length rows. The objects live
// until the test ends.
func newBatch(t testing.TB, length int64, cols ...col) *batch {
	b := &batch{}
	t.Cleanup(func() { runtime.KeepAlive(b) })
	b.schema = b.fillSchema(col{format: "+s", children: cols})
	b.array = b.fillArray(col{length: length, bufs: []any{[]byte(nil)}, children: cols})
	b.schemaKids = words(b.schema.Children, b.schema.NChildren)
	b.arrayKids = words(b.array.Children, b.array.NChildren)
	for i := range cols {
		b.colSchemas = append(b.colSchemas, at[Schema](b.schemaKids[i]))
		a := at[Array](b.arrayKids[i])
		b.colArrays = append(b.colArrays, a)
		b.colBufs = append(b.colBufs, words(a.Buffers, a.NBuffers))
	}
	return b
}

func (m *arena) fillSchema(c col) *Schema {
	s := m.schema()
	*s = Schema{Format: m.cstr(c.format), Name: m.cstr(c.name), Flags: c.flags,
		NChildren: int64(len(c.children)), Release: dummyRelease}
	var kids []uintptr
	for _, k := range c.children {
		kids = append(kids, Addr(m.fillSchema(k)))
	}
	s.Children, _ = m.words(kids)
	if c.dict != nil {
		s.Dictionary = Addr(m.fillSchema(*c.dict))
	}
	return s
}

// fillArray builds c's array. Its buffer pointer array has two more NULL
// slots than it says, so that a test may raise the buffer count.
func (m *arena) fillArray(c col) *Array {
	const pad = 2
	a := m.array()
	*a = Array{Length: c.length, NullCount: c.nulls, Offset: c.offset,
		NBuffers: int64(len(c.bufs)), NChildren: int64(len(c.children)), Release: dummyRelease}
	ptrs := make([]uintptr, len(c.bufs), len(c.bufs)+pad)
	for i, x := range c.bufs {
		switch v := x.(type) {
		case []byte:
			ptrs[i] = m.bytes(v)
		case uintptr:
			ptrs[i] = v
		default:
			panic(fmt.Sprintf("buffer %d is a %T, want []byte or uintptr", i, x))
		}
	}
	a.Buffers, _ = m.words(append(ptrs, make([]uintptr, pad)...))
	var kids []uintptr
	for _, k := range c.children {
		kids = append(kids, Addr(m.fillArray(k)))
	}
	a.Children, _ = m.words(kids)
	if c.dict != nil {
		a.Dictionary = Addr(m.fillArray(*c.dict))
	}
	return a
}

// ---- column builders ----

// The column builders are cdatatest's (shared with tests/abi), converted.

// specCol converts a shared column description to this package's col.
func specCol(s cdatatest.Col) col {
	c := col{name: s.Name, format: s.Format, flags: s.Flags, length: s.Length, nulls: s.Nulls, offset: s.Offset, bufs: s.Bufs}
	if s.Dict != nil {
		d := specCol(*s.Dict)
		c.dict = &d
	}
	for _, k := range s.Children {
		c.children = append(c.children, specCol(k))
	}
	return c
}

func fixedCol[T cdatatest.Fixed](name, format string, v []T, valid []bool) col {
	return specCol(cdatatest.FixedCol(name, format, v, valid))
}
func int64Col(name string, v []int64, valid []bool) col {
	return specCol(cdatatest.Int64Col(name, v, valid))
}
func boolCol(name string, v []bool, valid []bool) col {
	return specCol(cdatatest.BoolCol(name, v, valid))
}
func varCol(name, format string, v []string, valid []bool) col {
	return specCol(cdatatest.VarCol(name, format, v, valid))
}
func stringCol(name string, v []string, valid []bool) col {
	return specCol(cdatatest.StringCol(name, v, valid))
}
func timeCol(v ...int64) col { return specCol(cdatatest.TimeCol(v...)) }
func viewCol(name, format string, v []string, valid []bool) col {
	return specCol(cdatatest.ViewCol(name, format, v, valid))
}

// sliced returns c with its rows from offset on, length of them.
func sliced(c col, offset, length int64) col {
	c.offset, c.length = offset, length
	return c
}

// ---- from arrow-go arrays ----

// formatOf returns the C Data Interface format of a flat Arrow type.
func formatOf(dt arrow.DataType) string {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return formatOf(t.IndexType)
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("w:%d", t.ByteWidth)
	case *arrow.TimestampType:
		return "ts" + map[arrow.TimeUnit]string{arrow.Second: "s", arrow.Millisecond: "m",
			arrow.Microsecond: "u", arrow.Nanosecond: "n"}[t.Unit] + ":" + t.TimeZone
	}
	for f, t := range simpleTypes {
		if arrow.TypeEqual(t, dt) {
			return f
		}
	}
	panic("no format for " + dt.String())
}

// fromArrow describes the column name holding arr's data: the same
// buffers (copied), offset, length and null count.
func fromArrow(name string, arr arrow.Array) col {
	return fromData(name, arr.Data())
}

func fromData(name string, d arrow.ArrayData) col {
	c := col{name: name, format: formatOf(d.DataType()), flags: FlagNullable,
		length: int64(d.Len()), nulls: int64(d.NullN()), offset: int64(d.Offset())}
	for _, b := range d.Buffers() {
		if b == nil {
			c.bufs = append(c.bufs, []byte(nil))
		} else {
			c.bufs = append(c.bufs, append([]byte{}, b.Bytes()...))
		}
	}
	switch d.DataType().ID() {
	case arrow.NULL:
		c.bufs = nil // no buffers in the C Data Interface
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		var sizes []int64 // the C Data Interface adds the data buffers' sizes
		for _, b := range d.Buffers()[2:] {
			sizes = append(sizes, int64(b.Len()))
		}
		c.bufs = append(c.bufs, cdatatest.LE(sizes...))
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		dc := fromData("", dict)
		c.dict = &dc
	}
	return c
}

// ---- importing and comparing ----

// load imports the batch as the package's callers do.
func (b *batch) load(timeColumn string) (*Batch, error) {
	in, err := NewInput(b.schemaAddr(), timeColumn)
	if err != nil {
		return nil, err
	}
	return in.Batch(b.arrayAddr())
}

// arrowPath imports the batch through the arrow path whatever its schema:
// cdata's record, then arrowbridge.
func (b *batch) arrowPath(timeColumn string) (*tablet.Tablet, func(), error) {
	if err := checkSchema(b.schemaAddr()); err != nil {
		return nil, nil, err
	}
	sch, err := importSchema(b.schemaAddr())
	if err != nil {
		return nil, nil, err
	}
	rec, err := importRecord(sch, b.arrayAddr())
	if err != nil {
		return nil, nil, err
	}
	if timeColumn == "" {
		timeColumn = arrowbridge.DefaultTimeColumn
	}
	t, err := arrowbridge.ToTablet(rec, timeColumn)
	if err != nil {
		rec.Release()
		return nil, nil, err
	}
	return t, rec.Release, nil
}

// contents is what a tablet holds, for comparisons: buffers and offsets
// aside, its rows.
type contents struct {
	Unit, Zone string
	Times      []int64
	Columns    []columnContents
}

type columnContents struct {
	Name   string
	Type   string
	Values []any
}

// contentsOf reads every value of t (which also checks that its buffers
// hold its rows).
func contentsOf(t *tablet.Tablet) contents {
	c := contents{Unit: t.TimeUnit, Zone: t.TimeZone, Times: append([]int64{}, t.Times...), Columns: []columnContents{}}
	for i := range t.Columns {
		tc := &t.Columns[i]
		cc := columnContents{Name: tc.Name, Type: tc.Type.String(), Values: []any{}}
		for r := range t.Rows() {
			cc.Values = append(cc.Values, tc.Value(r))
		}
		c.Columns = append(c.Columns, cc)
	}
	return c
}

// mustLoad imports the batch and returns its contents and whether it took
// the direct path.
func mustLoad(t testing.TB, b *batch, timeColumn string) (contents, bool) {
	t.Helper()
	bt, err := b.load(timeColumn)
	require.NoError(t, err)
	defer bt.Release()
	return contentsOf(bt.Tablet), bt.rec == nil
}
