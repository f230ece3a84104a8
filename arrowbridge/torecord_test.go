package arrowbridge

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

var allProps = []schema.Property{
	{ID: 1, Name: "b", Type: schema.Boolean},
	{ID: 2, Name: "i32", Type: schema.Int32},
	{ID: 3, Name: "i64", Type: schema.Int64},
	{ID: 4, Name: "f32", Type: schema.Float},
	{ID: 5, Name: "f64", Type: schema.Double},
	{ID: 6, Name: "s", Type: schema.String},
	{ID: 7, Name: "bin", Type: schema.Binary},
	{ID: 8, Name: "ts", Type: schema.Timestamp},
	{ID: 9, Name: "d", Type: schema.Date},
}

func TestResultSchema(t *testing.T) {
	tests := []struct {
		name       string
		timeColumn string
		unit, zone string
		wantTime   arrow.Field
	}{
		{"int64_time", "time", "", "", arrow.Field{Name: "time", Type: arrow.PrimitiveTypes.Int64}},
		{"default_name", "", "", "", arrow.Field{Name: "time", Type: arrow.PrimitiveTypes.Int64}},
		{"seconds", "ts", "s", "", arrow.Field{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Second}}},
		{"millis_zone", "t", "ms", "Europe/Paris", arrow.Field{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}}},
		{"micros", "t", "us", "", arrow.Field{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}},
		{"nanos_utc", "t", "ns", "UTC", arrow.Field{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sch := ResultSchema(tc.timeColumn, tc.unit, tc.zone, allProps)
			require.Equal(t, 2+len(allProps), sch.NumFields())
			dev := sch.Field(0)
			assert.True(t, dev.Equal(arrow.Field{Name: "device", Type: &arrow.DictionaryType{
				IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}), "device field: %v", dev)
			assert.False(t, dev.Nullable, "device nullable")
			assert.False(t, dev.Type.(*arrow.DictionaryType).Ordered, "device dictionary ordered")
			assert.True(t, sch.Field(1).Equal(tc.wantTime), "time field: %v", sch.Field(1))
			want := []arrow.DataType{
				arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
				arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String,
				arrow.BinaryTypes.Binary, &arrow.TimestampType{Unit: arrow.Nanosecond}, arrow.FixedWidthTypes.Date32,
			}
			for i, p := range allProps {
				f := sch.Field(2 + i)
				assert.Equal(t, p.Name, f.Name)
				assert.True(t, f.Nullable, "%s nullable", p.Name)
				assert.True(t, arrow.TypeEqual(want[i], f.Type), "%s: got %s, want %s", p.Name, f.Type, want[i])
			}
		})
	}
}

func TestResultSchemaPanicsOnBadInput(t *testing.T) {
	assert.Panics(t, func() { ResultSchema("time", "minutes", "", nil) })
	assert.Panics(t, func() { ResultSchema("time", "", "", []schema.Property{{Name: "x", Type: 0}}) })
}

// allColumns builds one column per allProps entry, each with a null at row 1.
func allColumns() []tablet.Column {
	valid := []bool{true, false, true}
	return []tablet.Column{
		tablet.Bools("b", []bool{true, true, false}, valid),
		tablet.Int32s("i32", []int32{-1, 9, 7}, valid),
		tablet.Int64s("i64", []int64{-1 << 40, 9, 1 << 62}, valid),
		tablet.Floats("f32", []float32{0.5, 9, -3}, valid),
		tablet.Doubles("f64", []float64{0.25, 9, 1e300}, valid),
		tablet.Strings("s", []string{"x", "ignored", "héllo"}, valid),
		tablet.Binaries("bin", [][]byte{{0, 1}, {9}, {}}, valid),
		tablet.Timestamps("ts", []int64{1, 9, -1}, valid),
		tablet.Dates("d", []int32{19000, 9, -1}, valid),
	}
}

var allWant = [][]any{
	{true, nil, false},
	{int32(-1), nil, int32(7)},
	{int64(-1 << 40), nil, int64(1 << 62)},
	{float32(0.5), nil, float32(-3)},
	{0.25, nil, 1e300},
	{"x", nil, "héllo"},
	{[]byte{0, 1}, nil, []byte{}},
	{int64(1), nil, int64(-1)},
	{int32(19000), nil, int32(-1)},
}

func TestToRecord(t *testing.T) {
	tests := []struct {
		name   string
		device string
		unit   string
		tab    func() *tablet.Tablet
		want   [][]any
	}{
		{"all_types", "dev-1", "", func() *tablet.Tablet {
			return &tablet.Tablet{Times: []int64{10, 20, 30}, Columns: allColumns()}
		}, allWant},
		{"empty_device", "", "ms", func() *tablet.Tablet {
			return &tablet.Tablet{Times: []int64{10, 20, 30}, Columns: allColumns(), TimeUnit: "ms"}
		}, allWant},
		{"no_nulls", "d", "", func() *tablet.Tablet {
			cols := allColumns()
			for i := range cols {
				cols[i].Validity = nil
			}
			return &tablet.Tablet{Times: []int64{10, 20, 30}, Columns: cols}
		}, [][]any{
			{true, true, false},
			{int32(-1), int32(9), int32(7)},
			{int64(-1 << 40), int64(9), int64(1 << 62)},
			{float32(0.5), float32(9), float32(-3)},
			{0.25, 9.0, 1e300},
			{"x", "ignored", "héllo"},
			{[]byte{0, 1}, []byte{9}, []byte{}},
			{int64(1), int64(9), int64(-1)},
			{int32(19000), int32(9), int32(-1)},
		}},
		{"validity_all_set", "d", "", func() *tablet.Tablet {
			cols := allColumns()
			for i := range cols {
				cols[i].Validity = []byte{0xff}
			}
			return &tablet.Tablet{Times: []int64{10, 20, 30}, Columns: cols}
		}, [][]any{
			{true, true, false},
			{int32(-1), int32(9), int32(7)},
			{int64(-1 << 40), int64(9), int64(1 << 62)},
			{float32(0.5), float32(9), float32(-3)},
			{0.25, 9.0, 1e300},
			{"x", "ignored", "héllo"},
			{[]byte{0, 1}, []byte{9}, []byte{}},
			{int64(1), int64(9), int64(-1)},
			{int32(19000), int32(9), int32(-1)},
		}},
		{"offset_rows", "d", "", func() *tablet.Tablet {
			// Columns whose row 0 is element 1 of their buffers.
			cols := allColumns()
			for i := range cols {
				cols[i].Offset = 1
			}
			return &tablet.Tablet{Times: []int64{10, 20}, Columns: cols}
		}, [][]any{
			{nil, false},
			{nil, int32(7)},
			{nil, int64(1 << 62)},
			{nil, float32(-3)},
			{nil, 1e300},
			{nil, "héllo"},
			{nil, []byte{}},
			{nil, int64(-1)},
			{nil, int32(-1)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := tc.tab()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			sch := ResultSchema("time", tc.unit, "", allProps)
			rec, err := ToRecord(mem, sch, tc.device, tb)
			require.NoError(t, err)
			require.True(t, rec.Schema().Equal(sch))
			n := tb.Rows()
			require.Equal(t, int64(n), rec.NumRows())
			for i, d := range arrowValues(t, rec.Column(0)) {
				assert.Equal(t, tc.device, d, "device at row %d", i)
			}
			for i, tv := range arrowValues(t, rec.Column(1)) {
				assert.Equal(t, tb.Times[i], tv, "time at row %d", i)
			}
			for i, p := range allProps {
				got := rec.Column(2 + i)
				assert.Equal(t, tc.want[i], arrowValues(t, got), p.Name)
				if tb.Columns[i].Validity == nil || tc.name == "validity_all_set" {
					assert.Zero(t, got.NullN(), p.Name)
					assert.Nil(t, got.Data().Buffers()[0], "%s: no bitmap without nulls", p.Name)
				}
			}
			assert.Positive(t, mem.CurrentAlloc())
			rec.Release()
			mem.AssertSize(t, 0)
		})
	}
}

// TestToRecordDeviceIsOneDictionaryEntry checks that the device column of
// a large record costs 4 bytes a row and the name once, not a copy of the
// name per row.
func TestToRecordDeviceIsOneDictionaryEntry(t *testing.T) {
	const n = 100_000
	device := "a-device-name-of-32-bytes-......"
	times := make([]int64, n)
	tb := &tablet.Tablet{Times: times}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rec, err := ToRecord(mem, ResultSchema("time", "", "", nil), device, tb)
	require.NoError(t, err)
	defer func() { rec.Release(); mem.AssertSize(t, 0) }()

	d, ok := rec.Column(0).(*array.Dictionary)
	require.True(t, ok, "device column is %T", rec.Column(0))
	require.Equal(t, n, d.Len())
	assert.Zero(t, d.NullN())
	bufs := d.Data().Buffers()
	require.Len(t, bufs, 2)
	assert.Nil(t, bufs[0], "no validity bitmap")
	assert.Equal(t, 4*n, bufs[1].Len(), "indices: 4 bytes a row")
	for i := 0; i < n; i++ {
		require.Zero(t, d.GetValueIndex(i), "index of row %d", i)
	}
	dict := d.Dictionary().(*array.String)
	require.Equal(t, 1, dict.Len())
	assert.Equal(t, device, dict.Value(0))
	assert.Len(t, dict.ValueBytes(), len(device), "the name once")
	// Everything but the time column: the indices and the name, little more.
	assert.Less(t, mem.CurrentAlloc()-8*n, 4*n+1024)
}

func TestToRecordErrors(t *testing.T) {
	threeRows := func(cols ...tablet.Column) *tablet.Tablet {
		return &tablet.Tablet{Times: []int64{1, 2, 3}, Columns: cols}
	}
	i64 := tablet.Int64s("x", []int64{1, 2, 3}, nil)
	props := []schema.Property{{ID: 1, Name: "x", Type: schema.Int64}}
	tests := []struct {
		name     string
		sch      *arrow.Schema
		tab      *tablet.Tablet
		contains string
	}{
		{"too_few_columns", ResultSchema("time", "", "", props), threeRows(), "schema has 3 fields"},
		{"too_many_columns", ResultSchema("time", "", "", props), threeRows(i64, i64), "schema has 3 fields"},
		{"type_mismatch", ResultSchema("time", "", "", props), threeRows(tablet.Int32s("x", []int32{1, 2, 3}, nil)),
			`column "x" of type INT32 does not fit field "x" of Arrow type int64`},
		{"bad_device_field", arrow.NewSchema([]arrow.Field{
			{Name: "device", Type: arrow.PrimitiveTypes.Int64}, {Name: "time", Type: arrow.PrimitiveTypes.Int64},
			{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), threeRows(i64), "want dictionary<values=utf8, indices=int32"},
		{"utf8_device_field", arrow.NewSchema([]arrow.Field{
			{Name: "device", Type: arrow.BinaryTypes.String}, {Name: "time", Type: arrow.PrimitiveTypes.Int64},
			{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), threeRows(i64), "want dictionary<values=utf8, indices=int32"},
		{"bad_time_field", arrow.NewSchema([]arrow.Field{
			{Name: "device", Type: DeviceType}, {Name: "time", Type: arrow.PrimitiveTypes.Float64},
			{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), threeRows(i64), "want int64 or timestamp"},
		{"short_values", ResultSchema("time", "", "", props), threeRows(tablet.Int64s("x", []int64{1, 2}, nil)),
			"need 24"},
		{"short_validity", ResultSchema("time", "", "", props), threeRows(tablet.Column{Name: "x", Type: schema.Int64,
			Values: make([]byte, 8*20), Offset: 6, Validity: []byte{0}}), "8 validity bits, need 9"},
		{"short_offsets", ResultSchema("time", "", "", []schema.Property{{Name: "s", Type: schema.String}}),
			threeRows(tablet.Column{Name: "s", Type: schema.String, Offsets: []int32{0, 1, 2}, Data: []byte("ab")}), "3 offsets, need 4"},
		{"offsets_past_data", ResultSchema("time", "", "", []schema.Property{{Name: "s", Type: schema.String}}),
			threeRows(tablet.Column{Name: "s", Type: schema.String, Offsets: []int32{0, 1, 2, 5}, Data: []byte("ab")}), "outside 2 data bytes"},
		{"short_bools", ResultSchema("time", "", "", []schema.Property{{Name: "b", Type: schema.Boolean}}),
			threeRows(tablet.Column{Name: "b", Type: schema.Boolean, Offset: 6, Values: []byte{0xff}}), "8 values, need 9"},
		{"second_column_short", ResultSchema("time", "", "", append(props, schema.Property{ID: 2, Name: "y", Type: schema.Int64})),
			threeRows(i64, tablet.Int64s("y", []int64{1}, nil)), `column "y": buffer has 8 value bytes, need 24`},
		{"negative_offset", ResultSchema("time", "", "", props),
			threeRows(tablet.Column{Name: "x", Type: schema.Int64, Offset: -1, Values: make([]byte, 32)}), "negative offset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			rec, err := ToRecord(mem, tc.sch, "d", tc.tab)
			require.Error(t, err)
			assert.Nil(t, rec)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.contains)
			mem.AssertSize(t, 0)
		})
	}
}
