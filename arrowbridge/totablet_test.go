package arrowbridge

import (
	"errors"
	"fmt"
	"math"
	"strings"
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

// typeCase is one supported Arrow type: its values as JSON list elements
// (for a dictionary: the indices, with the values in dict) and what the
// tablet must hold, in the domain of tabletValue.
type typeCase struct {
	name string
	dt   arrow.DataType
	vals string
	dict string
	pt   schema.PropertyType
	want []any
}

func dictOf(index, value arrow.DataType) *arrow.DictionaryType {
	return &arrow.DictionaryType{IndexType: index, ValueType: value}
}

var typeCases = []typeCase{
	{"bool", arrow.FixedWidthTypes.Boolean, `true, null, false, true`, "", schema.Boolean, []any{true, nil, false, true}},
	{"int8", arrow.PrimitiveTypes.Int8, `-128, null, 127, 0`, "", schema.Int32, []any{int32(-128), nil, int32(127), int32(0)}},
	{"int16", arrow.PrimitiveTypes.Int16, `-32768, 32767, null`, "", schema.Int32, []any{int32(-32768), int32(32767), nil}},
	{"int32", arrow.PrimitiveTypes.Int32, `-2147483648, null, 2147483647`, "", schema.Int32, []any{int32(math.MinInt32), nil, int32(math.MaxInt32)}},
	{"uint8", arrow.PrimitiveTypes.Uint8, `0, 255, null`, "", schema.Int32, []any{int32(0), int32(255), nil}},
	{"uint16", arrow.PrimitiveTypes.Uint16, `65535, null, 1`, "", schema.Int32, []any{int32(65535), nil, int32(1)}},
	{"uint32", arrow.PrimitiveTypes.Uint32, `4294967295, null, 0`, "", schema.Int64, []any{int64(math.MaxUint32), nil, int64(0)}},
	{"int64", arrow.PrimitiveTypes.Int64, `-5, null, 1099511627776`, "", schema.Int64, []any{int64(-5), nil, int64(1 << 40)}},
	{"uint64", arrow.PrimitiveTypes.Uint64, `0, null, 4294967296000`, "", schema.Int64, []any{int64(0), nil, int64(4294967296000)}},
	{"float32", arrow.PrimitiveTypes.Float32, `1.5, null, -2.25`, "", schema.Float, []any{float32(1.5), nil, float32(-2.25)}},
	{"float64", arrow.PrimitiveTypes.Float64, `1.5, null, -1e300`, "", schema.Double, []any{1.5, nil, -1e300}},
	{"utf8", arrow.BinaryTypes.String, `"a", null, "", "héllo"`, "", schema.String, []any{"a", nil, "", "héllo"}},
	{"large_utf8", arrow.BinaryTypes.LargeString, `"a", null, "", "héllo"`, "", schema.String, []any{"a", nil, "", "héllo"}},
	{"string_view", arrow.BinaryTypes.StringView, `"a", null, "a value longer than twelve bytes"`, "", schema.String,
		[]any{"a", nil, "a value longer than twelve bytes"}},
	{"binary", arrow.BinaryTypes.Binary, `"YWJj", null, ""`, "", schema.Binary, []any{[]byte("abc"), nil, []byte{}}},
	{"large_binary", arrow.BinaryTypes.LargeBinary, `"YWJj", null, ""`, "", schema.Binary, []any{[]byte("abc"), nil, []byte{}}},
	{"binary_view", arrow.BinaryTypes.BinaryView, `"YWJj", null, "MDEyMzQ1Njc4OWFiY2RlZg=="`, "", schema.Binary,
		[]any{[]byte("abc"), nil, []byte("0123456789abcdef")}},
	{"fixed_size_binary", &arrow.FixedSizeBinaryType{ByteWidth: 3}, `"YWJj", null, "eHl6"`, "", schema.Binary,
		[]any{[]byte("abc"), nil, []byte("xyz")}},
	{"timestamp_s", &arrow.TimestampType{Unit: arrow.Second}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1e9), nil, int64(-2e9)}},
	{"timestamp_ms_utc", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1e6), nil, int64(-2e6)}},
	{"timestamp_us_zone", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1e3), nil, int64(-2e3)}},
	{"timestamp_ns", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "+01:00"}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1), nil, int64(-2)}},
	{"date32", arrow.FixedWidthTypes.Date32, `0, null, -1, 19000`, "", schema.Date, []any{int32(0), nil, int32(-1), int32(19000)}},
	{"date64", arrow.FixedWidthTypes.Date64, `86400000, null, -86400000, 172800000`, "", schema.Date,
		[]any{int32(1), nil, int32(-1), int32(2)}},
	{"dict_int8_utf8", dictOf(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String), `0, null, 2, 1, 0`, `"x", "y", "z"`, schema.String,
		[]any{"x", nil, "z", "y", "x"}},
	{"dict_int32_int64", dictOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64), `2, null, 0`, `10, 20, 30`, schema.Int64,
		[]any{int64(30), nil, int64(10)}},
	{"dict_int16_utf8_null_value", dictOf(arrow.PrimitiveTypes.Int16, arrow.BinaryTypes.String), `1, 0, null`, `"a", null`, schema.String,
		[]any{nil, "a", nil}},
	{"dict_int64_timestamp_ms", dictOf(arrow.PrimitiveTypes.Int64, &arrow.TimestampType{Unit: arrow.Millisecond}), `1, 0, 1`, `1, 2`, schema.Timestamp,
		[]any{int64(2e6), int64(1e6), int64(2e6)}},
	{"dict_uint8_float64", dictOf(arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Float64), `1, null, 0`, `0.5, 2.5`, schema.Double,
		[]any{2.5, nil, 0.5}},
	{"dict_uint16_date64", dictOf(arrow.PrimitiveTypes.Uint16, arrow.FixedWidthTypes.Date64), `0, 1, null`, `86400000, 0`, schema.Date,
		[]any{int32(1), int32(0), nil}},
	{"dict_uint32_bool", dictOf(arrow.PrimitiveTypes.Uint32, arrow.FixedWidthTypes.Boolean), `1, 0, null, 1`, `true, false`, schema.Boolean,
		[]any{false, true, nil, false}},
	{"dict_uint64_binary", dictOf(arrow.PrimitiveTypes.Uint64, arrow.BinaryTypes.Binary), `0, 1, 1`, `"YWJj", ""`, schema.Binary,
		[]any{[]byte("abc"), []byte{}, []byte{}}},
	{"dict_int8_large_utf8", dictOf(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.LargeString), `1, null, 0`, `"p", "q"`, schema.String,
		[]any{"q", nil, "p"}},
}

// build makes the case's array with its values repeated reps times.
func (c typeCase) build(t testing.TB, reps int) arrow.Array {
	t.Helper()
	elems := strings.TrimSuffix(strings.Repeat(c.vals+", ", reps), ", ")
	d, ok := c.dt.(*arrow.DictionaryType)
	if !ok {
		return fromJSON(t, c.dt, "["+elems+"]")
	}
	idx := fromJSON(t, d.IndexType, "["+elems+"]")
	defer idx.Release()
	dict := fromJSON(t, d.ValueType, "["+c.dict+"]")
	defer dict.Release()
	return array.NewDictionaryArray(d, idx, dict)
}

func repeat(v []any, reps int) []any {
	out := make([]any, 0, len(v)*reps)
	for range reps {
		out = append(out, v...)
	}
	return out
}

// checkRoundTrip checks tb's column 0 against want, then turns tb into a
// result record with a checked allocator and checks the record and that
// releasing it frees everything.
func checkRoundTrip(t *testing.T, tb *tablet.Tablet, wantTimes []int64, pt schema.PropertyType, want []any) {
	t.Helper()
	require.Len(t, tb.Columns, 1)
	c := &tb.Columns[0]
	assert.Equal(t, pt, c.Type)
	assert.Equal(t, wantTimes, tb.Times)
	assert.Equal(t, want, tabletValues(c, tb.Rows()), "tablet values")
	require.NoError(t, tb.Validate())

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sch := ResultSchema("time", tb.TimeUnit, tb.TimeZone, propsOf(tb))
	rec, err := ToRecord(mem, sch, "dev-1", tb)
	require.NoError(t, err)
	assert.Equal(t, int64(len(want)), rec.NumRows())
	dev := arrowValues(t, rec.Column(0))
	for i, d := range dev {
		assert.Equal(t, "dev-1", d, "device at row %d", i)
	}
	gotTimes := arrowValues(t, rec.Column(1))
	for i, tv := range gotTimes {
		assert.Equal(t, wantTimes[i], tv, "time at row %d", i)
	}
	assert.Equal(t, want, arrowValues(t, rec.Column(2)), "record values")
	rec.Release()
	mem.AssertSize(t, 0)
}

func TestToTabletTypes(t *testing.T) {
	for _, tc := range typeCases {
		t.Run(tc.name, func(t *testing.T) {
			arr := tc.build(t, 1)
			rec := newRecord(t, col{"time", times(arr.Len())}, col{"v", arr})
			defer rec.Release()
			tb, err := ToTablet(rec, "")
			require.NoError(t, err)
			assert.Equal(t, "v", tb.Columns[0].Name)
			assert.Equal(t, "", tb.TimeUnit)
			wantTimes := make([]int64, arr.Len())
			for i := range wantTimes {
				wantTimes[i] = int64(i)
			}
			checkRoundTrip(t, tb, wantTimes, tc.pt, tc.want)
		})
	}
}

// TestToTabletSliced slices records and arrays at offsets that are not
// byte aligned, so values, validity and booleans start mid-byte.
func TestToTabletSliced(t *testing.T) {
	const reps = 10
	for _, tc := range typeCases {
		for _, off := range []int{3, 5, 13} {
			for _, how := range []string{"record", "array"} {
				t.Run(fmt.Sprintf("%s/%s/offset=%d", tc.name, how, off), func(t *testing.T) {
					full := tc.build(t, reps)
					n := full.Len() - off - 2
					require.Positive(t, n)
					var rec arrow.Record
					if how == "record" {
						whole := newRecord(t, col{"time", times(full.Len())}, col{"v", full})
						defer whole.Release()
						rec = whole.NewSlice(int64(off), int64(off+n))
					} else {
						part := array.NewSlice(full, int64(off), int64(off+n))
						full.Release()
						rec = newRecord(t, col{"time", times(n)}, col{"v", part})
					}
					defer rec.Release()
					require.Equal(t, off, rec.Column(1).Data().Offset(), "slice keeps the array offset")

					tb, err := ToTablet(rec, "time")
					require.NoError(t, err)
					wantTimes := make([]int64, n)
					for i := range wantTimes {
						if how == "record" {
							wantTimes[i] = int64(off + i)
						} else {
							wantTimes[i] = int64(i)
						}
					}
					checkRoundTrip(t, tb, wantTimes, tc.pt, repeat(tc.want, reps)[off:off+n])
				})
			}
		}
	}
}

// TestToTabletZeroCopy checks that matching layouts borrow the record's
// buffers, sliced or not, and that converted columns still borrow the
// validity bitmap.
func TestToTabletZeroCopy(t *testing.T) {
	borrowed := map[string]bool{
		"bool": true, "int32": true, "int64": true, "uint64": true, "float32": true, "float64": true,
		"utf8": true, "binary": true, "timestamp_ns": true, "date32": true,
	}
	for _, tc := range typeCases {
		if _, ok := tc.dt.(*arrow.DictionaryType); ok {
			continue // decoded: nothing to borrow
		}
		for _, off := range []int{0, 13} {
			t.Run(fmt.Sprintf("%s/offset=%d", tc.name, off), func(t *testing.T) {
				full := tc.build(t, 10)
				n := full.Len() - off
				arr := array.NewSlice(full, int64(off), int64(off+n))
				full.Release()
				rec := newRecord(t, col{"time", times(n)}, col{"v", arr})
				defer rec.Release()
				tb, err := ToTablet(rec, "")
				require.NoError(t, err)
				c := &tb.Columns[0]
				bufs := arr.Data().Buffers()

				assert.True(t, sameMem(arrow.GetBytes(tb.Times), rec.Column(0).Data().Buffers()[1].Bytes()), "time column borrowed")
				require.NotNil(t, c.Validity, "every case has a null")
				if borrowed[tc.name] {
					assert.Equal(t, off, c.Offset)
					assert.True(t, sameMem(c.Validity, bufs[0].Bytes()), "validity borrowed")
					if tablet.VarWidth(c.Type) {
						assert.True(t, sameMem(arrow.GetBytes(c.Offsets), bufs[1].Bytes()), "offsets borrowed")
						assert.True(t, sameMem(c.Data, bufs[2].Bytes()), "data borrowed")
					} else {
						assert.True(t, sameMem(c.Values, bufs[1].Bytes()), "values borrowed")
					}
					return
				}
				// Converted: starts at the offset's bit within its byte and
				// borrows the bitmap from that byte on.
				assert.Equal(t, off&7, c.Offset)
				assert.True(t, sameMem(c.Validity, bufs[0].Bytes()[off>>3:]), "validity borrowed")
				switch tc.name {
				case "large_utf8", "large_binary":
					start := arrow.GetData[int64](bufs[1].Bytes())[off]
					assert.True(t, sameMem(c.Data, bufs[2].Bytes()[start:]), "data borrowed")
				case "fixed_size_binary":
					assert.True(t, sameMem(c.Data, bufs[1].Bytes()[off*3:]), "data borrowed")
				}
			})
		}
	}
}

func TestToTabletTimeColumn(t *testing.T) {
	tests := []struct {
		name     string
		dt       arrow.DataType
		unit     string
		zone     string
		column   string // the name asked for; the field is called "ts" unless column is ""
		wantNano []int64
	}{
		{"int64", arrow.PrimitiveTypes.Int64, "", "", "ts", nil},
		{"default_name", arrow.PrimitiveTypes.Int64, "", "", "", nil},
		{"timestamp_s", &arrow.TimestampType{Unit: arrow.Second}, "s", "", "ts", nil},
		{"timestamp_ms", &arrow.TimestampType{Unit: arrow.Millisecond}, "ms", "", "ts", nil},
		{"timestamp_us", &arrow.TimestampType{Unit: arrow.Microsecond}, "us", "", "ts", nil},
		{"timestamp_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, "ns", "", "ts", nil},
		{"timestamp_s_zone", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Paris"}, "s", "Europe/Paris", "ts", nil},
		{"timestamp_ms_utc", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, "ms", "UTC", "ts", nil},
		{"timestamp_us_offset", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+05:30"}, "us", "+05:30", "ts", nil},
		{"timestamp_ns_zone", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Asia/Tokyo"}, "ns", "Asia/Tokyo", "ts", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			field := "ts"
			if tc.column == "" {
				field = "time"
			}
			full := fromJSON(t, tc.dt, `[-7, 0, 1, 2, 3, 1700000000]`)
			ts := array.NewSlice(full, 1, 6) // keep the offset: still borrowed
			full.Release()
			rec := newRecord(t, col{"a", fromJSON(t, arrow.PrimitiveTypes.Int64, `[1, 2, 3, 4, 5]`)}, col{field, ts})
			defer rec.Release()
			tb, err := ToTablet(rec, tc.column)
			require.NoError(t, err)
			assert.Equal(t, []int64{0, 1, 2, 3, 1700000000}, tb.Times, "times are kept in the column's unit")
			assert.Equal(t, tc.unit, tb.TimeUnit)
			assert.Equal(t, tc.zone, tb.TimeZone)
			require.Len(t, tb.Columns, 1)
			assert.Equal(t, "a", tb.Columns[0].Name)
			assert.True(t, sameMem(arrow.GetBytes(tb.Times), ts.Data().Buffers()[1].Bytes()[8:]), "times borrowed")
		})
	}
}

func TestToTabletErrors(t *testing.T) {
	i64 := func(js string) arrow.Array { return fromJSON(t, arrow.PrimitiveTypes.Int64, js) }
	manyFields := []col{}
	for i := 0; i < 12; i++ {
		manyFields = append(manyFields, col{fmt.Sprintf("f%d", i), i64(`[1]`)})
	}
	tests := []struct {
		name     string
		cols     []col
		column   string
		contains []string
	}{
		{"no_time_column", []col{{"a", i64(`[1]`)}, {"b", i64(`[2]`)}}, "",
			[]string{`no time column "time"`, `"a", "b"`}},
		{"no_named_time_column", []col{{"time", i64(`[1]`)}}, "ts",
			[]string{`no time column "ts"`, `"time"`}},
		{"no_time_column_many_fields", manyFields, "",
			[]string{`no time column "time"`, `"f0"`, `"f7"`, "and 4 more"}},
		{"no_fields", nil, "", []string{`no time column "time"`, "(none)"}},
		{"time_with_nulls", []col{{"time", i64(`[1, null, 3, null]`)}}, "",
			[]string{`time column "time"`, "2 nulls in 4 rows"}},
		{"timestamp_time_with_nulls", []col{{"time", fromJSON(t, &arrow.TimestampType{Unit: arrow.Millisecond}, `[null]`)}}, "",
			[]string{"1 nulls"}},
		{"time_float", []col{{"time", fromJSON(t, arrow.PrimitiveTypes.Float64, `[1.5]`)}}, "",
			[]string{`time column "time"`, "float64", "want int64 or timestamp"}},
		{"time_int32", []col{{"time", fromJSON(t, arrow.PrimitiveTypes.Int32, `[1]`)}}, "",
			[]string{`time column "time"`, "int32"}},
		{"time_string", []col{{"time", fromJSON(t, arrow.BinaryTypes.String, `["2024-01-01"]`)}}, "",
			[]string{`time column "time"`, "utf8"}},
		{"duplicate_field", []col{{"time", i64(`[1]`)}, {"a", i64(`[1]`)}, {"a", i64(`[2]`)}}, "",
			[]string{`2 fields named "a"`}},
		{"duplicate_time", []col{{"time", i64(`[1]`)}, {"time", i64(`[2]`)}}, "",
			[]string{`2 fields named "time"`}},
		{"uint64_overflow", []col{{"time", i64(`[1, 2]`)}, {"big", uint64Array(t, []uint64{1, math.MaxInt64 + 1}, nil)}}, "",
			[]string{`column "big"`, "9223372036854775808", "row 1", "INT64"}},
		{"timestamp_s_overflow", []col{{"time", i64(`[1]`)}, {"t", timestampArray(t, arrow.Second, math.MaxInt64/1_000_000_000+1)}}, "",
			[]string{`column "t"`, "overflows"}},
		{"timestamp_ms_underflow", []col{{"time", i64(`[1]`)}, {"t", timestampArray(t, arrow.Millisecond, math.MinInt64/1_000_000-1)}}, "",
			[]string{`column "t"`, "overflows"}},
		{"date64_out_of_range", []col{{"time", i64(`[1]`)}, {"d", date64Array(t, (math.MaxInt32+1)*86_400_000)}}, "",
			[]string{`column "d"`, "out of the DATE range"}},
		{"date64_not_a_whole_day", []col{{"time", i64(`[1]`)}, {"d", date64Array(t, 172800005)}}, "",
			[]string{`column "d"`, "172800005", "row 0", "not a whole day"}},
		{"date64_before_1970_not_a_whole_day", []col{{"time", i64(`[1]`)}, {"d", date64Array(t, -1)}}, "",
			[]string{`column "d"`, "not a whole day"}},
		{"dictionary_index_out_of_range", []col{{"time", i64(`[1, 2]`)}, {"d", array.NewDictionaryArray(
			dictOf(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String),
			fromJSON(t, arrow.PrimitiveTypes.Int8, `[0, 2]`), fromJSON(t, arrow.BinaryTypes.String, `["x", "y"]`))}}, "",
			[]string{`column "d"`, "dictionary index 2 at row 1", "[0, 2)"}},
		{"dictionary_negative_index", []col{{"time", i64(`[1]`)}, {"d", array.NewDictionaryArray(
			dictOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String),
			fromJSON(t, arrow.PrimitiveTypes.Int32, `[-1]`), fromJSON(t, arrow.BinaryTypes.String, `["x"]`))}}, "",
			[]string{`column "d"`, "dictionary index -1 at row 0"}},
		// Arrow checks only a utf8 array's first and last offsets; the
		// values the indices pick must be checked before they are sliced.
		{"dictionary_offsets_out_of_order", []col{{"time", i64(`[1]`)}, {"d", array.NewDictionaryArray(
			dictOf(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String),
			fromJSON(t, arrow.PrimitiveTypes.Int8, `[1]`), stringsWithOffsets([]int32{0, 5, 1, 2}, "abcde"))}}, "",
			[]string{`column "d"`, "dictionary", "value 1", "offsets 5..1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecord(t, tc.cols...)
			defer rec.Release()
			tb, err := ToTablet(rec, tc.column)
			require.Error(t, err)
			assert.Nil(t, tb)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

// stringsWithOffsets builds a utf8 array over data with the given offsets,
// which Arrow checks only at the ends.
func stringsWithOffsets(offsets []int32, data string) arrow.Array {
	bufs := []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes([]byte(data))}
	d := array.NewData(arrow.BinaryTypes.String, len(offsets)-1, bufs, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func uint64Array(t testing.TB, v []uint64, valid []bool) arrow.Array {
	b := array.NewUint64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(v, valid)
	return b.NewArray()
}

func timestampArray(t testing.TB, unit arrow.TimeUnit, v int64) arrow.Array {
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: unit})
	defer b.Release()
	b.Append(arrow.Timestamp(v))
	return b.NewArray()
}

func date64Array(t testing.TB, v int64) arrow.Array {
	b := array.NewDate64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(arrow.Date64(v))
	return b.NewArray()
}

// TestToTabletUint64Bounds checks the edges of the uint64 → INT64 check:
// MaxInt64 fits, and a null slot may hold any bits.
func TestToTabletUint64Bounds(t *testing.T) {
	arr := uint64Array(t, []uint64{math.MaxInt64, math.MaxUint64, 7}, []bool{true, false, true})
	rec := newRecord(t, col{"time", times(3)}, col{"u", arr})
	defer rec.Release()
	tb, err := ToTablet(rec, "")
	require.NoError(t, err)
	assert.Equal(t, []any{int64(math.MaxInt64), nil, int64(7)}, tabletValues(&tb.Columns[0], 3))
}

func TestToTabletUnsupported(t *testing.T) {
	tests := []struct {
		name     string
		arr      func(t testing.TB) arrow.Array
		contains string
	}{
		{"null", func(t testing.TB) arrow.Array { return array.NewNull(3) }, `column "c" has Arrow type null; give it a type`},
		{"float16", func(t testing.TB) arrow.Array { return fromJSON(t, arrow.FixedWidthTypes.Float16, `[1.5, null, 2]`) }, "float16"},
		{"list", func(t testing.TB) arrow.Array {
			return fromJSON(t, arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1], null, []]`)
		}, "list<item: int64"},
		{"large_list", func(t testing.TB) arrow.Array {
			return fromJSON(t, arrow.LargeListOf(arrow.PrimitiveTypes.Int64), `[[1], null, []]`)
		}, "large_list"},
		{"struct", func(t testing.TB) arrow.Array {
			return fromJSON(t, arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64}), `[{"x": 1}, null, {"x": 2}]`)
		}, "struct<x: int64>"},
		{"map", func(t testing.TB) arrow.Array {
			return fromJSON(t, arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
				`[[{"key": "a", "value": 1}], null, []]`)
		}, "map<utf8, int64"},
		{"decimal128", func(t testing.TB) arrow.Array {
			return fromJSON(t, &arrow.Decimal128Type{Precision: 10, Scale: 2}, `["1.25", null, "2.50"]`)
		}, "decimal(10, 2)"},
		{"duration", func(t testing.TB) arrow.Array {
			return fromJSON(t, &arrow.DurationType{Unit: arrow.Second}, `[1, null, 2]`)
		}, "duration"},
		{"month_interval", func(t testing.TB) arrow.Array {
			return fromJSON(t, arrow.FixedWidthTypes.MonthInterval, `[{"months": 1}, null, {"months": 2}]`)
		}, "month_interval"},
		{"time32", func(t testing.TB) arrow.Array { return fromJSON(t, arrow.FixedWidthTypes.Time32s, `[1, null, 2]`) }, "time32"},
		{"dictionary_of_list", func(t testing.TB) arrow.Array {
			return array.NewDictionaryArray(dictOf(arrow.PrimitiveTypes.Int8, arrow.ListOf(arrow.PrimitiveTypes.Int64)),
				fromJSON(t, arrow.PrimitiveTypes.Int8, `[0, 0, 0]`), fromJSON(t, arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1]]`))
		}, "dictionary<values=list<item: int64"},
		{"dictionary_of_null", func(t testing.TB) arrow.Array {
			return array.NewDictionaryArray(dictOf(arrow.PrimitiveTypes.Int8, arrow.Null),
				fromJSON(t, arrow.PrimitiveTypes.Int8, `[null, null, null]`), array.NewNull(0))
		}, "dictionary<values=null"},
	}
	for _, tc := range tests {
		for _, rows := range []int{3, 0} {
			t.Run(fmt.Sprintf("%s/rows=%d", tc.name, rows), func(t *testing.T) {
				arr := tc.arr(t)
				if rows == 0 {
					empty := array.NewSlice(arr, 0, 0)
					arr.Release()
					arr = empty
				}
				rec := newRecord(t, col{"time", times(rows)}, col{"c", arr})
				defer rec.Release()
				_, err := ToTablet(rec, "")
				require.Error(t, err)
				assert.ErrorIs(t, err, errs.ErrInvalidArgument)
				assert.Contains(t, err.Error(), `column "c"`)
				assert.Contains(t, err.Error(), tc.contains)
			})
		}
	}
}

// TestToTabletZeroRows checks every supported type in a record without rows.
func TestToTabletZeroRows(t *testing.T) {
	cols := []col{{"time", times(0)}}
	for _, tc := range typeCases {
		full := tc.build(t, 1)
		cols = append(cols, col{tc.name, array.NewSlice(full, 0, 0)})
		full.Release()
	}
	rec := newRecord(t, cols...)
	defer rec.Release()
	tb, err := ToTablet(rec, "")
	require.NoError(t, err)
	assert.Equal(t, 0, tb.Rows())
	require.Len(t, tb.Columns, len(typeCases))
	for i, tc := range typeCases {
		assert.Equal(t, tc.name, tb.Columns[i].Name)
		assert.Equal(t, tc.pt, tb.Columns[i].Type, tc.name)
	}
	require.NoError(t, tb.Validate())

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	out, err := ToRecord(mem, ResultSchema("time", "", "", propsOf(tb)), "d", tb)
	require.NoError(t, err)
	assert.Equal(t, int64(0), out.NumRows())
	assert.Equal(t, 2+len(typeCases), int(out.NumCols()))
	out.Release()
	mem.AssertSize(t, 0)
}

// TestToTabletValidate checks that tablets from ToTablet pass the
// tablet's own validation, and that names ToTablet lets through are still
// checked there.
func TestToTabletValidate(t *testing.T) {
	tests := []struct {
		name    string
		field   string
		wantErr string
	}{
		{"plain", "temperature", ""},
		{"unicode", "température °C", ""},
		{"reserved_device", "device", "reserved"},
		{"empty", "", "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecord(t, col{"time", times(2)}, col{tc.field, fromJSON(t, arrow.BinaryTypes.String, `["a", null]`)})
			defer rec.Release()
			tb, err := ToTablet(rec, "")
			require.NoError(t, err)
			err = tb.Validate()
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// TestToTabletInvalidUTF8 checks that a utf8 column with bad bytes, which
// ToTablet borrows unchecked, is caught by the tablet's validation.
func TestToTabletInvalidUTF8(t *testing.T) {
	bad := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	bad.Append([]byte{0xff, 0xfe})
	bin := bad.NewArray()
	bad.Release()
	str := array.MakeFromData(array.NewData(arrow.BinaryTypes.String, 1, bin.Data().Buffers(), nil, 0, 0))
	bin.Release()
	rec := newRecord(t, col{"time", times(1)}, col{"s", str})
	defer rec.Release()
	tb, err := ToTablet(rec, "")
	require.NoError(t, err)
	err = tb.Validate()
	assert.True(t, errors.Is(err, errs.ErrInvalidArgument))
	assert.Contains(t, fmt.Sprint(err), "UTF-8")
}
