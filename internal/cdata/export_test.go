package cdata

import (
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/arrowbridge"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// goMemory is a Memory over Go memory: each block is a []uint64 kept in
// a map until its reference count drops to zero. Its bytes start as junk,
// as a reused C block's do: an export must write every byte it relies on.
type goMemory struct {
	Memory
	blocks map[uintptr][]uint64
	owned  map[uintptr]bool // blocks Owner reports (buffers to adopt)
	fail   bool             // Alloc returns 0
}

// Release callbacks are never called by the package: any distinct
// non-zero values do.
const (
	schemaRelease uintptr = 0x10000 + 8*iota
	schemaChildRelease
	arrayRelease
	arrayChildRelease
)

func newGoMemory() *goMemory {
	g := &goMemory{blocks: map[uintptr][]uint64{}, owned: map[uintptr]bool{}}
	g.Memory = Memory{
		Alloc: func(size uintptr) uintptr {
			if g.fail {
				return 0
			}
			b := make([]uint64, (size+7)/8)
			for i := range b {
				b[i] = 0xA5A5_A5A5_A5A5_A5A5
			}
			addr := uintptr(unsafe.Pointer(&b[0]))
			g.blocks[addr] = b
			return addr
		},
		Unref: func(addr uintptr) {
			b, ok := g.blocks[addr]
			if !ok {
				panic("Unref of a block that is not allocated")
			}
			if b[0]--; b[0] == 0 {
				delete(g.blocks, addr)
				held := words(addr+uintptr(b[3]), int64(b[2]))
				for _, h := range held {
					g.Unref(h)
				}
			}
		},
		Owner: func(addr uintptr) uintptr {
			for base := range g.owned {
				if b := g.blocks[base]; addr >= base && addr < base+8*uintptr(len(b)) {
					return base
				}
			}
			return 0
		},
		Ref:           func(addr uintptr) { g.blocks[addr][0]++ },
		SchemaRelease: schemaRelease, SchemaChildRelease: schemaChildRelease,
		ArrayRelease: arrayRelease, ArrayChildRelease: arrayChildRelease,
	}
	return g
}

// refs returns the reference count in the header of the block at addr.
func (g *goMemory) refs(t testing.TB, addr uintptr) int64 {
	t.Helper()
	b, ok := g.blocks[addr]
	require.True(t, ok, "block %#x is allocated", addr)
	return int64(b[0])
}

var allProps = []schema.Property{
	{ID: 1, Name: "b", Type: schema.Boolean},
	{ID: 2, Name: "i", Type: schema.Int32},
	{ID: 3, Name: "l", Type: schema.Int64},
	{ID: 4, Name: "f", Type: schema.Float},
	{ID: 5, Name: "d", Type: schema.Double},
	{ID: 6, Name: "s", Type: schema.String},
	{ID: 7, Name: "y", Type: schema.Binary},
	{ID: 8, Name: "ts", Type: schema.Timestamp},
	{ID: 9, Name: "dt", Type: schema.Date},
}

func TestExportSchema(t *testing.T) {
	for _, c := range []struct{ timeColumn, unit, zone, timeFormat string }{
		{"", "", "", "l"},
		{"at", "ms", "UTC", "tsm:UTC"},
		{"time", "ns", "", "tsn:"},
		{"t", "s", "Europe/Paris", "tss:Europe/Paris"},
	} {
		t.Run(c.timeFormat, func(t *testing.T) {
			var keep arena
			g := newGoMemory()
			r, err := NewResult(c.timeColumn, c.unit, c.zone, allProps, true)
			require.NoError(t, err)
			out := keep.schema()
			require.NoError(t, r.ExportSchema(&g.Memory, Addr(out)))

			require.Len(t, g.blocks, 1)
			block := out.PrivateData
			// The root, 11 columns and the device's dictionary.
			assert.Equal(t, int64(1+2+len(allProps)+1), g.refs(t, block))
			assert.Equal(t, "+s", cString(out.Format))
			assert.Equal(t, "", cString(out.Name))
			assert.Equal(t, schemaRelease, out.Release)

			timeColumn := c.timeColumn
			if timeColumn == "" {
				timeColumn = "time"
			}
			var names, formats []string
			for i, addr := range words(out.Children, out.NChildren) {
				assert.Zero(t, addr%8, "column %d's struct is aligned", i)
				s := at[Schema](addr)
				names = append(names, cString(s.Name))
				formats = append(formats, cString(s.Format))
				assert.Equal(t, schemaChildRelease, s.Release)
				assert.Equal(t, block, s.PrivateData)
				assert.Zero(t, s.NChildren)
				wantFlags := int64(FlagNullable)
				if i < 2 {
					wantFlags = 0 // device and time have no nulls
				}
				assert.Equal(t, wantFlags, s.Flags, names[i])
				if i != 0 {
					assert.Zero(t, s.Dictionary, names[i])
					continue
				}
				require.NotZero(t, s.Dictionary)
				assert.Zero(t, s.Dictionary%8, "the dictionary's struct is aligned")
				d := at[Schema](s.Dictionary)
				assert.Equal(t, "u", cString(d.Format))
				assert.Zero(t, d.Flags, "not ordered, no nulls")
				assert.Equal(t, schemaChildRelease, d.Release)
				assert.Equal(t, block, d.PrivateData)
			}
			assert.Equal(t, []string{"device", timeColumn, "b", "i", "l", "f", "d", "s", "y", "ts", "dt"}, names)
			assert.Equal(t, []string{"i", c.timeFormat, "b", "i", "l", "f", "g", "u", "z", "tsn:", "tdD"}, formats)

			// What the schema says is arrowbridge's result schema.
			sch, err := importSchema(Addr(out))
			require.NoError(t, err)
			want := arrowbridge.ResultSchema(c.timeColumn, c.unit, c.zone, allProps)
			assert.True(t, want.Equal(sch), "got %s\nwant %s", sch, want)

			// Releasing every struct frees the block.
			for range 1 + 2 + len(allProps) + 1 {
				g.Unref(block)
			}
			assert.Empty(t, g.blocks)
			runtime.KeepAlive(&keep)
		})
	}
}

// partRows builds a part of n rows of every property type. Its columns are
// sliced (Offset 2) and, when nulls, have a null every third row.
func partRows(n int, base int64, nulls bool) *tablet.Tablet {
	const off = 2
	m := n + off
	var valid []bool
	if nulls {
		valid = make([]bool, m)
		for i := range valid {
			valid[i] = (i-off)%3 != 1
		}
	}
	bools := make([]bool, m)
	i32 := make([]int32, m)
	i64 := make([]int64, m)
	f32 := make([]float32, m)
	f64 := make([]float64, m)
	strs := make([]string, m)
	bins := make([][]byte, m)
	for i := range m {
		v := base + int64(i-off)
		bools[i] = v%2 == 0
		i32[i] = int32(v)
		i64[i] = v << 33
		f32[i] = float32(v) / 2
		f64[i] = float64(v) / 4
		strs[i] = string(rune('a' + v%26))
		bins[i] = []byte{byte(v), byte(v >> 8)}
	}
	cols := []tablet.Column{
		tablet.Bools("b", bools, valid), tablet.Int32s("i", i32, valid), tablet.Int64s("l", i64, valid),
		tablet.Floats("f", f32, valid), tablet.Doubles("d", f64, valid), tablet.Strings("s", strs, valid),
		tablet.Binaries("y", bins, valid), tablet.Timestamps("ts", i64, valid), tablet.Dates("dt", i32, valid),
	}
	for i := range cols {
		cols[i].Offset = off
	}
	times := make([]int64, n)
	for i := range times {
		times[i] = base + int64(i)
	}
	return &tablet.Tablet{Times: times, Columns: cols}
}

// exportedBatch is a result batch written by ExportBatch and its schema.
type exportedBatch struct {
	keep   arena
	g      *goMemory
	schema *Schema
	array  *Array
}

func exportParts(t *testing.T, r *Result, parts []Part) *exportedBatch {
	t.Helper()
	e := &exportedBatch{g: newGoMemory()}
	e.schema, e.array = e.keep.schema(), e.keep.array()
	require.NoError(t, r.ExportSchema(&e.g.Memory, Addr(e.schema)))
	require.NoError(t, r.ExportBatch(&e.g.Memory, parts, Addr(e.array)))
	t.Cleanup(func() { runtime.KeepAlive(e) })
	return e
}

// want returns the contents that importing the export of parts must give:
// the device column as strings, then the parts' rows in order.
func want(parts []Part, unit string) contents {
	w := contents{Unit: unit, Times: []int64{}, Columns: []columnContents{{Name: "device", Type: "STRING", Values: []any{}}}}
	for _, p := range parts {
		pc := contentsOf(p.Rows)
		w.Times = append(w.Times, pc.Times...)
		for j := range p.Rows.Rows() {
			if p.Devices != nil {
				w.Columns[0].Values = append(w.Columns[0].Values, p.Devices[j])
				continue
			}
			w.Columns[0].Values = append(w.Columns[0].Values, p.Device)
		}
		for i, c := range pc.Columns {
			if len(w.Columns) <= i+1 {
				w.Columns = append(w.Columns, columnContents{Name: c.Name, Type: c.Type, Values: []any{}})
			}
			w.Columns[i+1].Values = append(w.Columns[i+1].Values, c.Values...)
		}
	}
	return w
}

func TestExportBatch(t *testing.T) {
	r, err := NewResult("", "ns", "", allProps, true)
	require.NoError(t, err)
	parts := []Part{
		{Device: "a", Rows: partRows(5, 0, true)},
		{Device: "a", Rows: partRows(3, 100, false)},
		{Device: "bee", Rows: partRows(0, 200, true)},
		{Device: "bee", Rows: partRows(9, 300, true)},
		{Device: "a", Rows: partRows(1, 400, false)},
	}
	e := exportParts(t, r, parts)

	// The structs: one block holding the root, 11 columns and the
	// device's dictionary, each with one reference.
	require.Len(t, e.g.blocks, 2) // the schema's and the batch's
	block := e.array.PrivateData
	k := 2 + len(allProps)
	assert.Equal(t, int64(1+k+1), e.g.refs(t, block))
	assert.Equal(t, int64(18), e.array.Length)
	assert.Equal(t, int64(1), e.array.NBuffers)
	assert.Zero(t, words(e.array.Buffers, 1)[0], "a struct array has no validity")
	assert.Equal(t, arrayRelease, e.array.Release)
	kids := words(e.array.Children, e.array.NChildren)
	require.Len(t, kids, k)
	for _, c := range kids {
		a := at[Array](c)
		assert.Equal(t, int64(18), a.Length)
		assert.Zero(t, a.Offset)
		assert.Equal(t, arrayChildRelease, a.Release)
		assert.Equal(t, block, a.PrivateData)
	}
	device := at[Array](kids[0])
	assert.Zero(t, device.NullCount)
	assert.Equal(t, []int32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2},
		unsafe.Slice(at[int32](words(device.Buffers, 2)[1]), 18), "device indices")
	dict := at[Array](device.Dictionary)
	assert.Equal(t, arrayChildRelease, dict.Release)
	assert.Equal(t, block, dict.PrivateData)
	require.Equal(t, int64(3), dict.Length, "a name repeated by consecutive parts once")
	db := words(dict.Buffers, 3)
	assert.Equal(t, []int32{0, 1, 4, 5}, unsafe.Slice(at[int32](db[1]), 4))
	assert.Equal(t, "abeea", string(bytesAt(db[2], 5)))
	// Nulls: rows 1 and 4 of part 0, 1, 4 and 7 of part 3.
	for i, c := range kids[2:] {
		assert.Equal(t, int64(5), at[Array](c).NullCount, allProps[i].Name)
	}
	assert.Equal(t, "tsn:", cString(at[Schema](words(e.schema.Children, 2)[1]).Format))

	// The export is a batch of the exported schema: import it back.
	got, _ := mustLoadExport(t, e, "")
	assert.Equal(t, want(parts, "ns"), got)

	for range 1 + k + 1 {
		e.g.Unref(block)
	}
	assert.Len(t, e.g.blocks, 1, "the batch's block is freed, the schema's is not")
}

// TestExportBatchWithoutDevice: a result without the device column has
// the time column first and no dictionary, and reads back as the same
// rows as the full export less the device.
func TestExportBatchWithoutDevice(t *testing.T) {
	r, err := NewResult("", "ns", "", allProps, false)
	require.NoError(t, err)
	parts := []Part{{Device: "a", Rows: partRows(5, 0, true)}, {Device: "a", Rows: partRows(3, 100, false)}}
	e := exportParts(t, r, parts)
	block := e.array.PrivateData
	k := 1 + len(allProps)
	assert.Equal(t, int64(1+k), e.g.refs(t, block), "the root and the columns: no dictionary")
	kids := words(e.array.Children, e.array.NChildren)
	require.Len(t, kids, k)
	names := []string{}
	for _, c := range words(e.schema.Children, e.schema.NChildren) {
		names = append(names, cString(at[Schema](c).Name))
		assert.Zero(t, at[Schema](c).Dictionary)
	}
	assert.Equal(t, []string{"time", "b", "i", "l", "f", "d", "s", "y", "ts", "dt"}, names)
	times := unsafe.Slice(at[int64](words(at[Array](kids[0]).Buffers, 2)[1]), 8)
	assert.Equal(t, append(slices.Clone(parts[0].Rows.Times), parts[1].Rows.Times...), times)
	for i, c := range kids[1:] {
		assert.Equal(t, int64(2), at[Array](c).NullCount, allProps[i].Name)
	}

	full, err := NewResult("", "ns", "", allProps, true)
	require.NoError(t, err)
	wantRows, _ := mustLoadExport(t, exportParts(t, full, parts), "")
	gotRows, _ := mustLoadExport(t, e, "")
	assert.Equal(t, wantRows.Columns[1:], gotRows.Columns)
	for range 1 + k {
		e.g.Unref(block)
	}
	assert.Len(t, e.g.blocks, 1, "the batch's block is freed, the schema's is not")
}

// TestExportBatchAdoptsDecodedBuffers: a one-part batch whose times and
// fixed-width columns lie in a block the caller owns (a scan decoded them
// there) points to them instead of copying, holds that block until the
// batch's own is freed, and reads back the same.
func TestExportBatchAdoptsDecodedBuffers(t *testing.T) {
	props := []schema.Property{{ID: 1, Name: "l", Type: schema.Int64}, {ID: 2, Name: "d", Type: schema.Double},
		{ID: 3, Name: "s", Type: schema.String}}
	r, err := NewResult("", "", "", props, true)
	require.NoError(t, err)
	g := newGoMemory()
	const n, off = 10, 3
	owned := g.Alloc(BlockHeader + 8*(n+off)*3 + 16)
	*at[int64](owned) = 1 // the scan's reference
	at[[4]int64](owned)[2] = 0
	g.owned[owned] = true
	carve := func(i int) []byte { return bytesAt(owned+BlockHeader+uintptr(i*8*(n+off)), int64(8*(n+off))) }
	timesAll := unsafe.Slice((*int64)(unsafe.Pointer(&carve(0)[0])), n+off)
	ls := unsafe.Slice((*int64)(unsafe.Pointer(&carve(1)[0])), n+off)
	ds := unsafe.Slice((*float64)(unsafe.Pointer(&carve(2)[0])), n+off)
	valid := bytesAt(owned+BlockHeader+uintptr(3*8*(n+off)), 2) // in the block too
	valid[0], valid[1] = 0, 0
	for i := range n + off {
		timesAll[i], ls[i], ds[i] = int64(100+i), int64(i*i), float64(i)/4
		if i%4 != 1 {
			valid[i/8] |= 1 << (i % 8)
		}
	}
	tb := &tablet.Tablet{Times: timesAll[off:], Columns: []tablet.Column{
		{Name: "l", Type: schema.Int64, Values: carve(1), Offset: off},
		{Name: "d", Type: schema.Double, Values: carve(2), Validity: valid, Offset: off},
		{Name: "s", Type: schema.String, Offsets: make([]int32, n+1), Data: []byte{}}, // Go memory: copied
	}}
	e := &exportedBatch{g: g}
	e.schema, e.array = e.keep.schema(), e.keep.array()
	require.NoError(t, r.ExportSchema(&g.Memory, Addr(e.schema)))
	require.NoError(t, r.ExportBatch(&g.Memory, []Part{{Device: "dev", Rows: tb}}, Addr(e.array)))
	defer runtime.KeepAlive(e)
	kids := words(e.array.Children, e.array.NChildren)
	bufs := func(k int) []uintptr { a := at[Array](kids[k]); return words(a.Buffers, a.NBuffers) }
	assert.Equal(t, addrOf(timesAll[off:]), bufs(1)[1], "the times are pointed to")
	assert.Equal(t, owned+BlockHeader+8*(n+off), bufs(2)[1], "so are l's values")
	assert.Equal(t, int64(off), at[Array](kids[2]).Offset)
	assert.Equal(t, addrOf(valid), bufs(3)[0], "d has nulls: its validity is pointed to")
	assert.Equal(t, int64(2), at[Array](kids[3]).NullCount, "rows 5 and 9 of the block")
	assert.Equal(t, int64(1+3), g.refs(t, owned), "the scan's and three holds: times, l, d")

	got, _ := mustLoadExport(t, e, "")
	assert.Equal(t, timesAll[off:], got.Times)
	require.Len(t, got.Columns, 4) // device, l, d, s
	wantL := []any{}
	wantD := []any{}
	for i := off; i < n+off; i++ {
		wantL = append(wantL, int64(i*i))
		if i%4 == 1 {
			wantD = append(wantD, nil)
		} else {
			wantD = append(wantD, float64(i)/4)
		}
	}
	assert.Equal(t, wantL, got.Columns[1].Values)
	assert.Equal(t, wantD, got.Columns[2].Values)

	block := e.array.PrivateData
	for range g.refs(t, block) {
		g.Unref(block)
	}
	assert.Equal(t, int64(1), g.refs(t, owned), "freeing the batch dropped its holds")
	g.Unref(owned)
	assert.Len(t, g.blocks, 1, "only the schema's block is left")
}

func mustLoadExport(t *testing.T, e *exportedBatch, timeColumn string) (contents, bool) {
	t.Helper()
	in, err := NewInput(Addr(e.schema), timeColumn)
	require.NoError(t, err)
	bt, err := in.Batch(Addr(e.array))
	require.NoError(t, err)
	defer bt.Release()
	return contentsOf(bt.Tablet), bt.rec == nil
}

// TestExportBatchShapes exports batches of a few shapes and imports them
// back.
func TestExportBatchShapes(t *testing.T) {
	one := []schema.Property{{ID: 1, Name: "s", Type: schema.String}, {ID: 2, Name: "l", Type: schema.Int64}}
	strs := func(n int, nulls bool) *tablet.Tablet {
		p := partRows(n, 7, nulls)
		p.Columns = []tablet.Column{p.Columns[5], p.Columns[2]}
		return p
	}
	for _, c := range []struct {
		name      string
		props     []schema.Property
		unit      string
		parts     []Part
		dictNames []string
	}{
		{"no parts", one, "", nil, nil},
		{"one empty part", one, "", []Part{{Device: "d", Rows: strs(0, true)}}, []string{"d"}},
		{"no properties", nil, "ms", []Part{{Device: "d", Rows: &tablet.Tablet{Times: []int64{1, 2}}},
			{Device: "e", Rows: &tablet.Tablet{Times: []int64{3}}}}, []string{"d", "e"}},
		{"empty device name", one, "us", []Part{{Device: "", Rows: strs(2, false)}}, []string{""}},
		{"validity without nulls in the rows", one, "", []Part{
			{Device: "d", Rows: func() *tablet.Tablet { p := strs(4, true); p.Times = p.Times[:1]; return p }()},
		}, []string{"d"}},
		{"alternating devices", one, "s", []Part{{Device: "x", Rows: strs(1, false)}, {Device: "y", Rows: strs(2, true)},
			{Device: "x", Rows: strs(3, false)}}, []string{"x", "y", "x"}},
		// A device per row, among parts of one device.
		{"a device per row", one, "", []Part{{Device: "w", Rows: strs(1, false)},
			{Devices: []string{"w", "x", "x", "y"}, Rows: strs(4, true)}, {Device: "y", Rows: strs(2, false)},
			{Devices: []string{"z"}, Rows: strs(1, false)}}, []string{"w", "x", "y", "z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewResult("time", c.unit, "", c.props, true)
			require.NoError(t, err)
			e := exportParts(t, r, c.parts)
			got, _ := mustLoadExport(t, e, "time")
			w := want(c.parts, c.unit)
			if len(c.parts) == 0 {
				for _, p := range c.props { // no part to name the columns
					w.Columns = append(w.Columns, columnContents{Name: p.Name, Type: p.Type.String(), Values: []any{}})
				}
			}
			assert.Equal(t, w, got)

			device := at[Array](words(e.array.Children, e.array.NChildren)[0])
			dict := at[Array](device.Dictionary)
			var names []string
			offs := unsafe.Slice(at[int32](words(dict.Buffers, 3)[1]), dict.Length+1)
			for i := range dict.Length {
				names = append(names, string(bytesAt(words(dict.Buffers, 3)[2], int64(offs[len(offs)-1]))[offs[i]:offs[i+1]]))
			}
			assert.Equal(t, c.dictNames, names)
			for _, col := range words(e.array.Children, e.array.NChildren)[2:] {
				a := at[Array](col)
				if a.NullCount == 0 {
					assert.Zero(t, words(a.Buffers, a.NBuffers)[0], "no bitmap without nulls")
				}
				for j, b := range words(a.Buffers, a.NBuffers)[1:] {
					assert.NotZero(t, b, "buffer %d is never NULL", j+1)
				}
			}
			assert.Equal(t, int64(1+2+len(c.props)+1), e.g.refs(t, e.array.PrivateData))
		})
	}
}

// TestExportLargeBatch exports enough bytes to copy them on several
// goroutines.
func TestExportLargeBatch(t *testing.T) {
	r, err := NewResult("", "", "", []schema.Property{{ID: 1, Name: "l", Type: schema.Int64}}, true)
	require.NoError(t, err)
	var parts []Part
	n := 0
	for p := range 4 {
		rows := 40_000 + p
		v := make([]int64, rows)
		times := make([]int64, rows)
		for i := range v {
			v[i], times[i] = int64(n+i)*3, int64(n+i)
		}
		n += rows
		parts = append(parts, Part{Device: "d", Rows: &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Int64s("l", v, nil)}}})
	}
	e := exportParts(t, r, parts)
	kids := words(e.array.Children, e.array.NChildren)
	times := unsafe.Slice(at[int64](words(at[Array](kids[1]).Buffers, 2)[1]), n)
	vals := unsafe.Slice(at[int64](words(at[Array](kids[2]).Buffers, 2)[1]), n)
	for i := range n {
		if times[i] != int64(i) || vals[i] != int64(i)*3 {
			t.Fatalf("row %d: time %d value %d", i, times[i], vals[i])
		}
	}
}

func TestExportErrors(t *testing.T) {
	_, err := NewResult("", "h", "", nil, true)
	assert.ErrorIs(t, err, errs.ErrInternal)
	_, err = NewResult("", "", "", []schema.Property{{Name: "x", Type: schema.PropertyType(99)}}, true)
	assert.ErrorIs(t, err, errs.ErrInternal)

	r, err := NewResult("", "", "", []schema.Property{{ID: 1, Name: "s", Type: schema.String}}, true)
	require.NoError(t, err)
	good := func() *tablet.Tablet {
		return &tablet.Tablet{Times: []int64{1, 2}, Columns: []tablet.Column{tablet.Strings("s", []string{"a", "b"}, nil)}}
	}
	for _, c := range []struct {
		name   string
		mutate func(p *tablet.Tablet)
		msg    string
	}{
		{"too many columns", func(p *tablet.Tablet) { p.Columns = append(p.Columns, p.Columns[0]) }, "has 2 columns, the stream 1"},
		{"another type", func(p *tablet.Tablet) { p.Columns[0] = tablet.Int64s("s", []int64{1, 2}, nil) }, "is INT64, the stream's STRING"},
		{"negative offset", func(p *tablet.Tablet) { p.Columns[0].Offset = -1 }, "offset -1"},
		{"short validity", func(p *tablet.Tablet) { p.Columns[0].Offset, p.Columns[0].Validity = 7, []byte{0xff} }, "validity bytes"},
		{"short offsets", func(p *tablet.Tablet) { p.Columns[0].Offsets = p.Columns[0].Offsets[:2] }, "2 offsets"},
		{"offsets past the data", func(p *tablet.Tablet) { p.Columns[0].Data = p.Columns[0].Data[:1] }, "outside 1 bytes"},
		{"offsets out of order inside", func(p *tablet.Tablet) {
			p.Columns[0].Offsets = []int32{0, 5, 2}
		}, "out of order at row 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var keep arena
			g := newGoMemory()
			p := good()
			c.mutate(p)
			out := keep.array()
			err := r.ExportBatch(&g.Memory, []Part{{Device: "d", Rows: p}}, Addr(out))
			require.ErrorIs(t, err, errs.ErrInternal)
			assert.Contains(t, err.Error(), c.msg)
			assert.Empty(t, g.blocks, "no block is left allocated")
			assert.Equal(t, Array{}, *out, "nothing is written")
			runtime.KeepAlive(&keep)
		})
	}

	t.Run("devices not one a row", func(t *testing.T) {
		var keep arena
		g := newGoMemory()
		out := keep.array()
		err := r.ExportBatch(&g.Memory, []Part{{Devices: []string{"d"}, Rows: good()}}, Addr(out))
		require.ErrorIs(t, err, errs.ErrInternal)
		assert.Contains(t, err.Error(), "names 1 devices for 2 rows")
		assert.Empty(t, g.blocks, "no block is left allocated")
		runtime.KeepAlive(&keep)
	})

	t.Run("out of memory", func(t *testing.T) {
		var keep arena
		g := newGoMemory()
		g.fail = true
		assert.ErrorIs(t, r.ExportSchema(&g.Memory, Addr(keep.schema())), errs.ErrInternal)
		assert.ErrorIs(t, r.ExportBatch(&g.Memory, []Part{{Device: "d", Rows: good()}}, Addr(keep.array())), errs.ErrInternal)
		runtime.KeepAlive(&keep)
	})
}

// The exported formats are those of the result schema's Arrow types.
func TestPropertyFormatsMatchResultSchema(t *testing.T) {
	sch := arrowbridge.ResultSchema("", "", "", allProps)
	for i, p := range allProps {
		dt := sch.Field(i + 2).Type
		assert.Equal(t, formatOf(dt), propertyFormat(p.Type), p.Name)
	}
	assert.Equal(t, formatOf(arrowbridge.DeviceType), deviceIndexFormat)
	assert.Equal(t, formatOf(arrowbridge.DeviceType.ValueType), deviceValueFormat)
}

// TestLayoutTellsSchemasApart: Layout is equal for results whose exported
// schemas are equal, and differs when a name, a format, the device column
// or how the names split differs.
func TestLayoutTellsSchemasApart(t *testing.T) {
	layout := func(timeColumn, unit string, withDevice bool, props ...schema.Property) string {
		r, err := NewResult(timeColumn, unit, "", props, withDevice)
		require.NoError(t, err)
		return r.Layout()
	}
	x := schema.Property{ID: 1, Name: "x", Type: schema.Int64}
	base := layout("time", "", true, x)
	assert.Equal(t, base, layout("time", "", true, schema.Property{ID: 9, Name: "x", Type: schema.Int64}), "ids are not in the schema")
	others := map[string]string{
		"another name":      layout("time", "", true, schema.Property{ID: 1, Name: "y", Type: schema.Int64}),
		"another type":      layout("time", "", true, schema.Property{ID: 1, Name: "x", Type: schema.Double}),
		"a time unit":       layout("time", "ms", true, x),
		"no device column":  layout("time", "", false, x),
		"another time name": layout("ts", "", true, x),
		"one more property": layout("time", "", true, x, schema.Property{ID: 2, Name: "z", Type: schema.Int64}),
		"names split apart": layout("tim", "", true, schema.Property{ID: 1, Name: "ex", Type: schema.Int64}),
	}
	seen := map[string]string{base: "base"}
	for what, l := range others {
		assert.NotContains(t, seen, l, "%s has the layout of %s", what, seen[l])
		seen[l] = what
	}
}
