package cdata

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/arrowbridge"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/internal/cdata/cdatatest"
)

// typeCase is one Arrow type a column may have: its values as JSON list
// elements (for a dictionary, the indices, with the values in dict) and
// the tablet values it must give.
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

const long = "a value longer than twelve bytes"

var typeCases = []typeCase{
	{"bool", arrow.FixedWidthTypes.Boolean, `true, null, false, true`, "", schema.Boolean, []any{true, nil, false, true}},
	{"int8", arrow.PrimitiveTypes.Int8, `-128, null, 127, 0`, "", schema.Int32, []any{int32(-128), nil, int32(127), int32(0)}},
	{"int16", arrow.PrimitiveTypes.Int16, `-32768, 32767, null`, "", schema.Int32, []any{int32(-32768), int32(32767), nil}},
	{"int32", arrow.PrimitiveTypes.Int32, `-2147483648, null, 2147483647`, "", schema.Int32, []any{int32(math.MinInt32), nil, int32(math.MaxInt32)}},
	{"int64", arrow.PrimitiveTypes.Int64, `-5, null, 1099511627776`, "", schema.Int64, []any{int64(-5), nil, int64(1 << 40)}},
	{"uint8", arrow.PrimitiveTypes.Uint8, `0, 255, null`, "", schema.Int32, []any{int32(0), int32(255), nil}},
	{"uint16", arrow.PrimitiveTypes.Uint16, `65535, null, 1`, "", schema.Int32, []any{int32(65535), nil, int32(1)}},
	{"uint32", arrow.PrimitiveTypes.Uint32, `4294967295, null, 0`, "", schema.Int64, []any{int64(math.MaxUint32), nil, int64(0)}},
	{"uint64", arrow.PrimitiveTypes.Uint64, `0, null, 4294967296000`, "", schema.Int64, []any{int64(0), nil, int64(4294967296000)}},
	{"float32", arrow.PrimitiveTypes.Float32, `1.5, null, -2.25`, "", schema.Float, []any{float32(1.5), nil, float32(-2.25)}},
	{"float64", arrow.PrimitiveTypes.Float64, `1.5, null, -1e300`, "", schema.Double, []any{1.5, nil, -1e300}},
	{"utf8", arrow.BinaryTypes.String, `"a", null, "", "héllo"`, "", schema.String, []any{"a", nil, "", "héllo"}},
	{"large_utf8", arrow.BinaryTypes.LargeString, `"a", null, "", "héllo"`, "", schema.String, []any{"a", nil, "", "héllo"}},
	{"binary", arrow.BinaryTypes.Binary, `"YWJj", null, ""`, "", schema.Binary, []any{[]byte("abc"), nil, []byte{}}},
	{"large_binary", arrow.BinaryTypes.LargeBinary, `"YWJj", null, ""`, "", schema.Binary, []any{[]byte("abc"), nil, []byte{}}},
	{"string_view", arrow.BinaryTypes.StringView, `"a", null, "` + long + `", "twelve bytes"`, "", schema.String,
		[]any{"a", nil, long, "twelve bytes"}},
	{"binary_view", arrow.BinaryTypes.BinaryView, `"YWJj", null, "MDEyMzQ1Njc4OWFiY2RlZg=="`, "", schema.Binary,
		[]any{[]byte("abc"), nil, []byte("0123456789abcdef")}},
	{"fixed_size_binary", &arrow.FixedSizeBinaryType{ByteWidth: 3}, `"YWJj", null, "eHl6"`, "", schema.Binary,
		[]any{[]byte("abc"), nil, []byte("xyz")}},
	{"date32", arrow.FixedWidthTypes.Date32, `0, null, -1, 19000`, "", schema.Date, []any{int32(0), nil, int32(-1), int32(19000)}},
	{"date64", arrow.FixedWidthTypes.Date64, `86400000, null, -86400000, 172800000`, "", schema.Date,
		[]any{int32(1), nil, int32(-1), int32(2)}},
	{"timestamp_s", &arrow.TimestampType{Unit: arrow.Second}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1e9), nil, int64(-2e9)}},
	{"timestamp_ms_utc", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1e6), nil, int64(-2e6)}},
	{"timestamp_us", &arrow.TimestampType{Unit: arrow.Microsecond}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1e3), nil, int64(-2e3)}},
	{"timestamp_us_zone", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1e3), nil, int64(-2e3)}},
	{"timestamp_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1), nil, int64(-2)}},
	{"timestamp_ns_offset_zone", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "+01:00"}, `1, null, -2`, "", schema.Timestamp,
		[]any{int64(1), nil, int64(-2)}},
	{"dict_int8_utf8", dictOf(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String), `0, null, 2, 1, 0`, `"x", "y", "z"`, schema.String,
		[]any{"x", nil, "z", "y", "x"}},
	{"dict_int32_utf8", dictOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), `1, 1, null, 0`, `"p", "q"`, schema.String,
		[]any{"q", "q", nil, "p"}},
	{"dict_uint16_utf8_null_value", dictOf(arrow.PrimitiveTypes.Uint16, arrow.BinaryTypes.String), `1, 0, null`, `"a", null`, schema.String,
		[]any{nil, "a", nil}},
	{"dict_int64_int64", dictOf(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64), `2, null, 0`, `10, 20, 30`, schema.Int64,
		[]any{int64(30), nil, int64(10)}},
}

// build makes the case's array.
func (c typeCase) build(t testing.TB) arrow.Array {
	t.Helper()
	d, ok := c.dt.(*arrow.DictionaryType)
	if !ok {
		return fromJSON(t, c.dt, "["+c.vals+"]")
	}
	idx := fromJSON(t, d.IndexType, "["+c.vals+"]")
	defer idx.Release()
	dict := fromJSON(t, d.ValueType, "["+c.dict+"]")
	defer dict.Release()
	return array.NewDictionaryArray(d, idx, dict)
}

func fromJSON(t testing.TB, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(js))
	require.NoError(t, err, "building %s from %s", dt, js)
	return a
}

// int64s is an arrow int64 array of v.
func int64s(v ...int64) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

// reference converts arrays (named "time", then "v", …) with arrowbridge,
// the result the import must match.
func reference(t testing.TB, arrs ...arrow.Array) contents {
	t.Helper()
	names := []string{"time", "v", "w"}
	fields := make([]arrow.Field, len(arrs))
	for i, a := range arrs {
		fields[i] = arrow.Field{Name: names[i], Type: a.DataType(), Nullable: true}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), arrs, int64(arrs[0].Len()))
	defer rec.Release()
	tb, err := arrowbridge.ToTablet(rec, "")
	require.NoError(t, err)
	return contentsOf(tb)
}

// TestEveryTypeImports imports a column of each accepted type, whole,
// sliced (a column offset) and as rows 1.. of the batch (the struct's
// offset), and compares the tablet with the explicit values and with
// arrowbridge's conversion of the same arrow-go arrays.
func TestEveryTypeImports(t *testing.T) {
	for _, c := range typeCases {
		t.Run(c.name, func(t *testing.T) {
			arr := c.build(t)
			defer arr.Release()
			n := arr.Len()
			times := make([]int64, n)
			for i := range times {
				times[i] = int64(10 * i)
			}
			tarr := int64s(times...)
			defer tarr.Release()

			check := func(t *testing.T, b *batch, rows int, want contents) {
				got, _ := mustLoad(t, b, "")
				assert.Equal(t, want, got)
				require.Len(t, got.Columns, 1)
				assert.Equal(t, c.pt.String(), got.Columns[0].Type)
				assert.Equal(t, c.want[n-rows:], got.Columns[0].Values)
				// The arrow path itself gives the same, whichever path Batch took.
				tb, release, err := b.arrowPath("")
				require.NoError(t, err)
				defer release()
				assert.Equal(t, want, contentsOf(tb))
			}
			t.Run("whole", func(t *testing.T) {
				b := newBatch(t, int64(n), timeCol(times...), fromArrow("v", arr))
				check(t, b, n, reference(t, tarr, arr))
			})
			t.Run("column offset", func(t *testing.T) {
				s, st := array.NewSlice(arr, 1, int64(n)), array.NewSlice(tarr, 1, int64(n))
				defer s.Release()
				defer st.Release()
				b := newBatch(t, int64(n-1), timeCol(times[1:]...), fromArrow("v", s))
				require.Equal(t, int64(1), b.colArrays[1].Offset)
				check(t, b, n-1, reference(t, st, s))
			})
			t.Run("struct offset", func(t *testing.T) {
				s, st := array.NewSlice(arr, 1, int64(n)), array.NewSlice(tarr, 1, int64(n))
				defer s.Release()
				defer st.Release()
				b := newBatch(t, int64(n-1), timeCol(times...), fromArrow("v", arr))
				b.array.Offset = 1
				check(t, b, n-1, reference(t, st, s))
			})
		})
	}
}

// TestNullTypeIsRefused: the null type passes the checks (it has no
// buffers) but arrowbridge gives no property type to it.
func TestNullTypeIsRefused(t *testing.T) {
	for _, c := range []col{
		{name: "v", format: "n", length: 2, nulls: 2},
		{name: "v", format: "n", length: 2, bufs: []any{uintptr(1)}}, // buffers are not read
		{name: "v", format: "c", length: 2, bufs: []any{[]byte(nil), []byte{0, 0}},
			dict: &col{format: "n", length: 1, nulls: 1}},
	} {
		b := newBatch(t, 2, timeCol(1, 2), c)
		_, err := b.load("")
		require.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.Contains(t, err.Error(), `column "v"`)
	}
}

// TestTimeColumns imports int64 and timestamp time columns of each unit,
// on both paths.
func TestTimeColumns(t *testing.T) {
	for _, c := range []struct{ format, unit, zone string }{
		{"l", "", ""}, {"tss:", "s", ""}, {"tsm:UTC", "ms", "UTC"}, {"tsu:", "us", ""},
		{"tsn:Europe/Paris", "ns", "Europe/Paris"}, {"tsn:+01:00", "ns", "+01:00"},
	} {
		t.Run(c.format, func(t *testing.T) {
			tc := fixedCol("at", c.format, []int64{5, -6}, nil)
			for _, arrowPath := range []bool{false, true} {
				cols := []col{tc, stringCol("s", []string{"x", "y"}, nil)}
				if arrowPath {
					cols = append(cols, fixedCol("zz", "c", []int8{0, 0}, nil))
				}
				got, direct := mustLoad(t, newBatch(t, 2, cols...), "at")
				assert.Equal(t, !arrowPath, direct, "direct path")
				assert.Equal(t, c.unit, got.Unit)
				assert.Equal(t, c.zone, got.Zone)
				assert.Equal(t, []int64{5, -6}, got.Times, "times keep their unit")
				assert.Equal(t, []any{"x", "y"}, got.Columns[0].Values)
			}
		})
	}
}

// directCase is a batch of simple columns (those the direct path takes):
// length rows from row offset of the struct array.
type directCase struct {
	name   string
	length int64
	offset int64
	cols   []col
}

func directCases() []directCase {
	var out []directCase
	for _, c := range cdatatest.DirectCases() {
		dc := directCase{name: c.Name, length: c.Length, offset: c.Offset}
		for _, k := range c.Cols {
			dc.cols = append(dc.cols, specCol(k))
		}
		out = append(out, dc)
	}
	return out
}

// withArrowColumn returns cols and an int8 column, which the direct path
// does not take: the batch takes the arrow path.
func withArrowColumn(c directCase) []col {
	n := c.offset + c.length
	for _, cl := range c.cols {
		n = max(n, cl.offset+cl.length)
	}
	return append(append([]col{}, c.cols...), col{name: "zz", format: "c", length: n,
		bufs: []any{[]byte(nil), make([]byte, n)}})
}

// TestDirectPathMatchesArrowPath imports each batch of simple columns on
// the direct path, then with an int8 column (the arrow path), then through
// the arrow path as it is: the three tablets must hold the same.
func TestDirectPathMatchesArrowPath(t *testing.T) {
	for _, c := range directCases() {
		t.Run(c.name, func(t *testing.T) {
			b := newBatch(t, c.length, c.cols...)
			b.array.Offset = c.offset
			direct, isDirect := mustLoad(t, b, "")
			assert.True(t, isDirect, "direct path")
			assert.Equal(t, int(c.length), len(direct.Times))

			wide := newBatch(t, c.length, withArrowColumn(c)...)
			wide.array.Offset = c.offset
			viaArrow, isDirect := mustLoad(t, wide, "")
			assert.False(t, isDirect, "arrow path")
			viaArrow.Columns = viaArrow.Columns[:len(viaArrow.Columns)-1] // zz
			assert.Equal(t, viaArrow, direct)

			tb, release, err := b.arrowPath("")
			require.NoError(t, err)
			defer release()
			assert.Equal(t, contentsOf(tb), direct)
		})
	}
}

// TestDirectPathValues checks a few direct tablets against explicit values.
func TestDirectPathValues(t *testing.T) {
	cases := directCases()
	want := map[string]contents{
		"offset of the struct array": {Times: []int64{10, 20}, Columns: []columnContents{
			{"b", "BOOLEAN", []any{false, nil}},
			{"l", "INT64", []any{int64(2), int64(3)}},
			{"s", "STRING", []any{"q", "r"}},
		}},
		"struct and column offsets at once": {Times: []int64{3, 4}, Columns: []columnContents{
			{"b", "BOOLEAN", []any{false, true}},
			{"s", "STRING", []any{"d", "e"}},
		}},
		"sliced columns at bit offsets": {Times: []int64{1, 2, 3}, Columns: []columnContents{
			{"b", "BOOLEAN", []any{nil, false, true}},
			{"l", "INT64", []any{int64(1), nil, int64(3)}},
			{"s", "STRING", []any{nil, "", "gh"}},
			{"f", "FLOAT", []any{float32(2), float32(3), float32(4)}},
		}},
		"bitmap ignored when the null count is 0": {Times: []int64{1, 2, 3, 4}, Columns: []columnContents{
			{"l", "INT64", []any{int64(1), int64(2), int64(3), int64(4)}},
			{"s", "STRING", []any{"a", "b", "c", "d"}},
		}},
	}
	for _, c := range cases {
		w, ok := want[c.name]
		if !ok {
			continue
		}
		b := newBatch(t, c.length, c.cols...)
		b.array.Offset = c.offset
		got, _ := mustLoad(t, b, "")
		assert.Equal(t, w, got, c.name)
	}
}

// TestDirectPlanIsNotReusedForAnotherSchema imports batches whose schemas
// differ from the one before in one detail each: the plan kept for the
// last schema must not be reused.
func TestDirectPlanIsNotReusedForAnotherSchema(t *testing.T) {
	steps := []struct {
		name   string
		cols   []col
		time   string
		want   string // type of column 0
		unit   string
		direct bool
	}{
		{"k as int64", []col{timeCol(1), int64Col("k", []int64{1}, nil)}, "", "INT64", "", true},
		{"k as utf8", []col{timeCol(1), stringCol("k", []string{"x"}, nil)}, "", "STRING", "", true},
		{"another name", []col{timeCol(1), stringCol("j", []string{"x"}, nil)}, "", "STRING", "", true},
		{"j as int32", []col{timeCol(1), fixedCol("j", "i", []int32{1}, nil)}, "", "INT32", "", true},
		{"j as int32 indices of a dictionary", []col{timeCol(1), {name: "j", format: "i", length: 1,
			bufs: []any{[]byte(nil), cdatatest.LE(int32(1))}, dict: ptr(stringCol("", []string{"p", "q"}, nil))}}, "", "STRING", "", false},
		{"time column in milliseconds", []col{fixedCol("time", "tsm:", []int64{1}, nil), stringCol("j", []string{"x"}, nil)}, "", "STRING", "ms", true},
		{"time column in seconds", []col{fixedCol("time", "tss:", []int64{1}, nil), stringCol("j", []string{"x"}, nil)}, "", "STRING", "s", true},
		{"another time column option", []col{fixedCol("time", "tsn:", []int64{1}, nil), int64Col("j", []int64{1}, nil)}, "j", "TIMESTAMP", "", true},
	}
	for _, s := range steps {
		got, direct := mustLoad(t, newBatch(t, 1, s.cols...), s.time)
		assert.Equal(t, s.want, got.Columns[0].Type, s.name)
		assert.Equal(t, s.unit, got.Unit, s.name)
		assert.Equal(t, s.direct, direct, s.name)
	}
}

func ptr[T any](v T) *T { return &v }

// TestOtherLayouts covers large strings, views, fixed-size binary,
// unsigned and date64 built by hand, as producers other than arrow-go
// lay them out.
func TestOtherLayouts(t *testing.T) {
	b := newBatch(t, 2, timeCol(1, 2),
		varCol("large", "U", []string{"hi", "you"}, nil),
		viewCol("view", "vu", []string{"short", long}, nil),
		col{name: "fixed", format: "w:2", length: 2, bufs: []any{[]byte(nil), []byte("abcd")}},
		fixedCol("u64", "L", []uint64{1, 1 << 62}, nil),
		fixedCol("d64", "tdm", []int64{86_400_000, 0}, nil))
	got, _ := mustLoad(t, b, "")
	assert.Equal(t, []columnContents{
		{"large", "STRING", []any{"hi", "you"}},
		{"view", "STRING", []any{"short", long}},
		{"fixed", "BINARY", []any{[]byte("ab"), []byte("cd")}},
		{"u64", "INT64", []any{int64(1), int64(1 << 62)}},
		{"d64", "DATE", []any{int32(1), int32(0)}},
	}, got.Columns)

	t.Run("views in two data buffers, sliced, with nulls", func(t *testing.T) {
		views := make([]byte, 16*4)
		put := func(i int, length, buf, off int32, inline string) {
			w := views[16*i:]
			copy(w[4:], cdatatest.LE(length))
			copy(w[4:], inline)
			if length > 12 {
				copy(w[8:], cdatatest.LE(buf, off))
			}
			copy(w, cdatatest.LE(length))
		}
		put(0, 13, 1, 0, "zzzz") // not in the batch: row 0 is skipped
		put(1, 14, 1, 2, "0123")
		put(2, 0, 0, 0, "")
		put(3, 13, 0, 0, "abcd")
		c := col{name: "v", format: "vz", length: 3, offset: 1, nulls: 1, bufs: []any{
			[]byte{0b0011}, views, []byte("abcdefghijklm"), []byte("xx0123456789abcd"), cdatatest.LE(int64(13), int64(16))}}
		got, _ := mustLoad(t, newBatch(t, 3, timeCol(1, 2, 3), c), "")
		assert.Equal(t, []any{[]byte("0123456789abcd"), nil, nil}, got.Columns[0].Values)
	})
}

// TestNullRowsAreNotChecked: the value of a row the bitmap marks null is
// not checked (nor read) when the null count says there are nulls, or is
// unknown: a view pointing nowhere, a dictionary index out of range.
func TestNullRowsAreNotChecked(t *testing.T) {
	for _, nulls := range []int64{1, -1} {
		v := viewCol("v", "vu", []string{"short", long, "x"}, nil)
		v.bufs[0], v.nulls = []byte{0b101}, nulls
		d := col{name: "d", format: "c", length: 3, nulls: nulls, bufs: []any{[]byte{0b011}, cdatatest.LE(int8(1), int8(0), int8(9))},
			dict: ptr(stringCol("", []string{"p", "q"}, nil))}
		b := newBatch(t, 3, timeCol(1, 2, 3), v, d)
		copy(unsafe.Slice(at[byte](b.colBufs[1][1]), 48)[16+8:], cdatatest.LE(int32(7), int32(-5))) // row 1: buffer 7, offset -5
		got, _ := mustLoad(t, b, "")
		assert.Equal(t, []columnContents{
			{"v", "STRING", []any{"short", nil, "x"}},
			{"d", "STRING", []any{"q", "p", nil}},
		}, got.Columns, "null count %d", nulls)
	}
}

// TestZeroRowBatches: zero-length batches and columns with every buffer
// NULL or dangling are accepted on both paths.
func TestZeroRowBatches(t *testing.T) {
	cols := []col{
		{name: "time", format: "tsn:", bufs: []any{uintptr(1), uintptr(8)}},
		{name: "c", format: "c", bufs: []any{uintptr(1), uintptr(1)}},
		{name: "U", format: "U", bufs: []any{uintptr(0), uintptr(1), uintptr(1)}},
		{name: "vu", format: "vu", bufs: []any{uintptr(0), uintptr(1), uintptr(1)}},
		{name: "vz", format: "vz", bufs: []any{uintptr(0), uintptr(1), uintptr(16), uintptr(8)}},
		{name: "w", format: "w:4", bufs: []any{uintptr(0), uintptr(4)}},
		{name: "d", format: "c", bufs: []any{uintptr(1), uintptr(1)},
			dict: &col{format: "u", bufs: []any{uintptr(1), uintptr(4), uintptr(1)}}},
	}
	got, direct := mustLoad(t, newBatch(t, 0, cols...), "")
	assert.False(t, direct)
	assert.Empty(t, got.Times)
	for _, c := range got.Columns {
		assert.Empty(t, c.Values, c.Name)
	}
	assert.Len(t, got.Columns, len(cols)-1)
}

// ---- malformed input ----

// goodBatch has a time column, "k" (int64) and "s" (utf8 with a null):
// the simple layouts of the direct path.
func goodBatch(t testing.TB) *batch {
	return newBatch(t, 3, timeCol(1, 2, 3), int64Col("k", []int64{1, 2, 3}, nil),
		stringCol("s", []string{"a", "b", "c"}, []bool{true, false, true}))
}

// badCase is one malformed batch: mutate breaks a good batch (or build
// makes a bad one). The import must fail with ErrInvalidArgument and a
// message holding msg.
type badCase struct {
	name   string
	build  func(t testing.TB) *batch
	mutate func(b *batch)
	msg    string
}

// withCol builds a good batch of 3 rows with c as column 2.
func withCol(c col) func(t testing.TB) *batch {
	return func(t testing.TB) *batch {
		return newBatch(t, 3, timeCol(1, 2, 3), int64Col("k", []int64{1, 2, 3}, nil), c)
	}
}

// offsets returns the int32 offsets of column i of b (n of them), to change.
func (b *batch) offsets(i, n int) []int32 {
	return unsafe.Slice(at[int32](b.colBufs[i][1]), n)
}

func badCases() []badCase {
	dict := func(values col, index col) col {
		index.dict = &values
		return index
	}
	abc := stringCol("", []string{"x", "y"}, nil)
	view := viewCol("v", "vu", []string{"short", long, "x"}, nil)
	viewBytes := func(b *batch) []byte { return unsafe.Slice(at[byte](b.colBufs[2][1]), 48) }
	return []badCase{
		// The schema.
		{name: "schema already released", mutate: func(b *batch) { b.schema.Release = 0 }, msg: "already released"},
		{name: "all-zero schema", mutate: func(b *batch) { *b.schema = Schema{} }, msg: "already released"},
		{name: "NULL format", mutate: func(b *batch) { *b.schema = Schema{Release: dummyRelease} }, msg: "format is NULL"},
		{name: "dangling format", mutate: func(b *batch) { b.schema.Format = 1 }, msg: "format pointer 0x1"},
		{name: "dangling root name", mutate: func(b *batch) { b.schema.Name = 0x10 }, msg: "name pointer 0x10"},
		{name: "top level is not a struct", mutate: func(b *batch) { b.schema.Format = b.cstr("l") }, msg: `format "l" is not a struct`},
		{name: "top level is a list", mutate: func(b *batch) { b.schema.Format = b.cstr("+l") }, msg: "not a struct"},
		{name: "negative schema children", mutate: func(b *batch) { b.schema.NChildren = -1 }, msg: "n_children -1"},
		{name: "NULL schema children", mutate: func(b *batch) { b.schema.Children = 0 }, msg: "children pointer 0x0"},
		{name: "dangling schema children", mutate: func(b *batch) { b.schema.Children = 1 }, msg: "children pointer 0x1"},
		{name: "NULL column schema", mutate: func(b *batch) { b.schemaKids[1] = 0 }, msg: "column 1: schema pointer 0x0"},
		{name: "dangling column schema", mutate: func(b *batch) { b.schemaKids[1] = 8 }, msg: "column 1: schema pointer 0x8"},
		{name: "column with NULL format", mutate: func(b *batch) { b.colSchemas[1].Format = 0 }, msg: `column 1 "k": format is NULL`},
		{name: "column with a dangling name", mutate: func(b *batch) { b.colSchemas[1].Name = 1 }, msg: "column 1: name pointer 0x1"},
		{name: "column with a dangling dictionary", mutate: func(b *batch) { b.colSchemas[1].Dictionary = 1 }, msg: `column 1 "k": dictionary pointer 0x1`},
		{name: "column with dangling children", mutate: func(b *batch) {
			b.colSchemas[1].NChildren, b.colSchemas[1].Children = 1, 1
		}, msg: `column 1 "k": 1 children but children pointer 0x1`},
		{name: "schema cycle", mutate: func(b *batch) { // column 1's children are the root's
			b.colSchemas[1].NChildren, b.colSchemas[1].Children = b.schema.NChildren, b.schema.Children
		}, msg: `column 1 "k", child 1, child 1`},
		{name: "column is the root schema", mutate: func(b *batch) { b.schemaKids[1] = b.schemaAddr() },
			msg: "deeper than 64 levels"},
		{name: "dictionary cycle", mutate: func(b *batch) { b.colSchemas[1].Dictionary = b.schemaKids[1] },
			msg: "deeper than 64 levels"},
		{name: "children on a flat column schema", mutate: func(b *batch) {
			b.colSchemas[1].NChildren, b.colSchemas[1].Children = 1, b.schema.Children
		}, msg: `column 1 "k" (Arrow format "l"): format "l" has no children, the schema has 1`},
		{name: "children on a dictionary-encoded column schema", build: withCol(dict(abc, fixedCol("s", "i", []int32{0, 1, 1}, nil))),
			mutate: func(b *batch) { b.colSchemas[2].NChildren, b.colSchemas[2].Children = 1, b.schema.Children },
			msg:    `column 2 "s" (Arrow format "i"): format "i" has no children, the schema has 1`},
		{name: "fixed-size binary of overflowing size", build: func(t testing.TB) *batch {
			// 2^40 values of 2^31-1 bytes: the size overflows int64.
			return newBatch(t, 0, timeCol(), col{name: "s", format: "w:2147483647", length: 1 << 40, bufs: []any{[]byte(nil), []byte{1}}})
		}, msg: `column "s": 1099511627776 values of 2147483647 bytes are too large`},
		{name: "fixed-size binary whose size wraps to 0", build: func(t testing.TB) *batch {
			// 2^34 values of 2^30 bytes: 2^64 bytes, 0 in int64, would pass for a dangling pointer.
			return newBatch(t, 0, timeCol(), col{name: "s", format: "w:1073741824", length: 1 << 34, bufs: []any{[]byte(nil), uintptr(1)}})
		}, msg: "too large"},
		{name: "list column", build: withCol(col{name: "s", format: "+l", length: 3,
			bufs: []any{[]byte(nil), make([]byte, 16)}, children: []col{int64Col("item", []int64{}, nil)}}),
			msg: `column 2 "s" (Arrow format "+l"): nested types are not supported`},
		{name: "list format without a child", build: withCol(col{name: "s", format: "+l", length: 3,
			bufs: []any{[]byte(nil), make([]byte, 16)}}), msg: "nested types are not supported"},
		{name: "struct column", build: withCol(col{name: "s", format: "+s", length: 3, bufs: []any{[]byte(nil)},
			children: []col{int64Col("a", []int64{1, 2, 3}, nil)}}), msg: `column 2 "s" (Arrow format "+s"): nested types`},
		{name: "map column", build: withCol(col{name: "s", format: "+m", length: 0, bufs: []any{[]byte(nil), make([]byte, 4)}}),
			msg: "nested types are not supported"},
		{name: "dictionary of a struct", build: withCol(dict(col{format: "+s", bufs: []any{[]byte(nil)}},
			fixedCol("s", "i", []int32{0, 0, 0}, nil))), msg: `column 2 "s" (Arrow format "i"): dictionary: nested types`},
		{name: "dictionary of dictionaries", build: withCol(dict(dict(abc, fixedCol("", "c", []int8{0, 1}, nil)),
			fixedCol("s", "i", []int32{0, 1, 1}, nil))), msg: `column "s" has unsupported Arrow type`},
		{name: "decimal column", build: withCol(col{name: "s", format: "d:10,2", length: 3, bufs: []any{[]byte(nil), make([]byte, 48)}}),
			msg: "unsupported Arrow type decimal"},
		{name: "float16 column", build: withCol(col{name: "s", format: "e", length: 3, bufs: []any{[]byte(nil), make([]byte, 6)}}),
			msg: "unsupported Arrow type float16"},
		{name: "unknown format", build: withCol(col{name: "s", format: "xyz", length: 3, bufs: []any{[]byte(nil), make([]byte, 6)}}),
			msg: `column 2 "s" (Arrow format "xyz"): malformed or unknown format`},
		{name: "fixed-size binary of width 0", build: withCol(col{name: "s", format: "w:0", length: 3, bufs: []any{[]byte(nil), []byte{}}}),
			msg: `column 2 "s" (Arrow format "w:0")`},
		{name: "timestamp of an unknown unit", build: withCol(col{name: "s", format: "tsx:", length: 3, bufs: []any{[]byte(nil), make([]byte, 24)}}),
			msg: `column 2 "s" (Arrow format "tsx:")`},
		{name: "dictionary with a string index", build: withCol(dict(abc, stringCol("s", []string{"", "", ""}, nil))),
			msg: "not an integer"},

		// The struct array.
		{name: "array with fewer columns", mutate: func(b *batch) { b.array.NChildren = 2 }, msg: "2 columns but its schema has 3"},
		{name: "NULL array children", mutate: func(b *batch) { b.array.Children = 0 }, msg: "children pointer 0x0"},
		{name: "dangling array children", mutate: func(b *batch) { b.array.Children = 1 }, msg: "children pointer 0x1"},
		{name: "NULL column array", mutate: func(b *batch) { b.arrayKids[1] = 0 }, msg: `column "k": array pointer 0x0`},
		{name: "dangling column array", mutate: func(b *batch) { b.arrayKids[1] = 1 }, msg: `column "k": array pointer 0x1`},
		{name: "negative batch length", mutate: func(b *batch) { b.array.Length = -1 }, msg: "batch: negative length"},
		{name: "negative batch offset", mutate: func(b *batch) { b.array.Offset = -1 }, msg: "batch: negative offset"},
		{name: "huge batch length", mutate: func(b *batch) { b.array.Length = 1 << 50 }, msg: "too large"},
		{name: "batch null count above length", mutate: func(b *batch) { b.array.NullCount = 4 }, msg: "exceeds length"},
		{name: "null rows at the top level", mutate: func(b *batch) { b.array.NullCount = 1 }, msg: "null at the top level"},
		{name: "struct array without its buffer", mutate: func(b *batch) { b.array.NBuffers = 0 }, msg: "0 buffers, want 1"},
		{name: "struct array with a dictionary", mutate: func(b *batch) { b.array.Dictionary = b.arrayKids[1] }, msg: "has a dictionary"},
		{name: "column shorter than the batch", mutate: func(b *batch) { b.colArrays[1].Length = 2 },
			msg: `column "k" has 2 rows but the batch has 3`},
		{name: "column shorter than the batch's offset and length", mutate: func(b *batch) { b.array.Offset = 1 },
			msg: `column "time" has 3 rows but the batch has 4 (offset 1 + length 3)`},
		{name: "negative column length", mutate: func(b *batch) { b.colArrays[1].Length = -1 }, msg: `column "k" has -1 rows`},
		{name: "negative column offset", mutate: func(b *batch) { b.colArrays[1].Offset = -1 }, msg: `column "k": negative offset -1`},
		{name: "huge column offset", mutate: func(b *batch) { b.colArrays[1].Offset = 1 << 50 }, msg: `column "k": offset 1125899906842624 + length 3 is too large`},
		{name: "null count above length", mutate: func(b *batch) { b.colArrays[2].NullCount = 4 }, msg: `column "s": null_count 4 exceeds length 3`},
		{name: "null count below -1", mutate: func(b *batch) { b.colArrays[2].NullCount = -2 }, msg: `column "s": null_count -2 is negative`},
		{name: "nulls without a validity bitmap", mutate: func(b *batch) { b.colBufs[2][0] = 0 },
			msg: `column "s": 1 nulls but no validity bitmap (pointer 0x0)`},
		{name: "nulls with a dangling validity bitmap", mutate: func(b *batch) { b.colBufs[2][0] = 1 },
			msg: `column "s": 1 nulls but no validity bitmap (pointer 0x1)`},
		{name: "too few buffers", mutate: func(b *batch) { b.colArrays[2].NBuffers = 2 }, msg: `column "s": 2 buffers, Arrow type utf8 has 3`},
		{name: "too many buffers", mutate: func(b *batch) { b.colArrays[1].NBuffers = 3 }, msg: `column "k": 3 buffers, Arrow type int64 has 2`},
		{name: "negative buffer count", mutate: func(b *batch) { b.colArrays[1].NBuffers = -1 }, msg: `column "k": -1 buffers`},
		{name: "NULL buffers pointer", mutate: func(b *batch) { b.colArrays[1].Buffers = 0 }, msg: `column "k": buffers pointer 0x0`},
		{name: "dangling buffers pointer", mutate: func(b *batch) { b.colArrays[1].Buffers = 1 }, msg: `column "k": buffers pointer 0x1`},
		{name: "NULL values buffer with rows", mutate: func(b *batch) { b.colBufs[1][1] = 0 },
			msg: `column "k": buffer 1 is 0x0 but must hold 24 bytes`},
		{name: "dangling values buffer with rows", mutate: func(b *batch) { b.colBufs[1][1] = 1 },
			msg: `column "k": buffer 1 is 0x1 but must hold 24 bytes`},
		{name: "dangling offsets buffer with rows", mutate: func(b *batch) { b.colBufs[2][1] = 4 },
			msg: `column "s": buffer 1 is 0x4 but must hold 16 bytes`},
		{name: "dangling data buffer with bytes", mutate: func(b *batch) { b.colBufs[2][2] = 1 },
			msg: `column "s": buffer 2 is 0x1 but must hold 3 bytes`},
		{name: "decreasing offsets", mutate: func(b *batch) { b.offsets(2, 4)[3] = 1 },
			msg: `column "s": value offsets decrease at row 2 (1 after 2)`},
		{name: "decreasing offsets in a null row", mutate: func(b *batch) { b.offsets(2, 4)[2] = 0 },
			msg: `column "s": value offsets decrease`},
		{name: "negative first offset", mutate: func(b *batch) { b.offsets(2, 4)[0] = -1 },
			msg: `column "s": first value offset -1 is negative`},
		{name: "decreasing offsets after the column offset", mutate: func(b *batch) {
			b.offsets(2, 4)[2] = 0
			b.colArrays[2].Offset, b.colArrays[2].Length, b.colArrays[2].NullCount = 1, 2, -1
			b.array.Length = 2
		}, msg: `column "s": value offsets decrease at row 0`},
		{name: "decreasing large offsets", build: withCol(func() col {
			c := varCol("s", "U", []string{"a", "b", "c"}, nil)
			copy(c.bufs[1].([]byte)[16:], cdatatest.LE(int64(0)))
			return c
		}()), msg: `column "s": value offsets decrease`},
		{name: "children on a flat column", mutate: func(b *batch) { b.colArrays[1].NChildren = 1 },
			msg: `column "k": 1 children, Arrow type int64 has none`},
		{name: "dictionary on a plain column", mutate: func(b *batch) { b.colArrays[1].Dictionary = b.arrayKids[2] },
			msg: `column "k": dictionary set, but Arrow type int64 is not dictionary-encoded`},

		// Views.
		{name: "view past its data buffer", build: withCol(view),
			mutate: func(b *batch) { copy(viewBytes(b)[16+12:], cdatatest.LE(int32(30))) }, msg: `column "v": row 1 points outside the data buffers`},
		{name: "view of a missing buffer", build: withCol(view),
			mutate: func(b *batch) { copy(viewBytes(b)[16+8:], cdatatest.LE(int32(1))) }, msg: "(buffer 1, offset 0, length 32)"},
		{name: "view with a negative buffer index", build: withCol(view),
			mutate: func(b *batch) { copy(viewBytes(b)[16+8:], cdatatest.LE(int32(-1))) }, msg: "points outside the data buffers"},
		{name: "view with a negative offset", build: withCol(view),
			mutate: func(b *batch) { copy(viewBytes(b)[16+12:], cdatatest.LE(int32(-1))) }, msg: "points outside the data buffers"},
		{name: "negative view length", build: withCol(view),
			mutate: func(b *batch) { copy(viewBytes(b)[32:], cdatatest.LE(int32(-1))) }, msg: `column "v": row 2 has negative length -1`},
		{name: "view outside its buffers in a row the bitmap marks null, null count 0", build: withCol(func() col {
			c := view
			c.bufs = append([]any{[]byte{0b101}}, c.bufs[1:]...) // row 1 "null", but null_count 0: it is not
			return c
		}()), mutate: func(b *batch) { copy(viewBytes(b)[16+8:], cdatatest.LE(int32(7))) }, msg: `column "v": row 1 points outside the data buffers (buffer 7`},
		{name: "view array without its sizes", build: withCol(view),
			mutate: func(b *batch) { b.colArrays[2].NBuffers = 2 }, msg: `column "v": 2 buffers, Arrow type string_view has 3`},
		{name: "negative data buffer size", build: withCol(view),
			mutate: func(b *batch) { copy(unsafe.Slice(at[byte](b.colBufs[2][3]), 8), cdatatest.LE(int64(-1))) },
			msg:    `column "v": data buffer 0 has size -1`},
		{name: "dangling data buffer of views", build: withCol(view),
			mutate: func(b *batch) { b.colBufs[2][2] = 1 }, msg: `column "v": buffer 2 is 0x1 but must hold 32 bytes`},
		{name: "view data buffer smaller than a view needs", build: withCol(view),
			mutate: func(b *batch) { copy(unsafe.Slice(at[byte](b.colBufs[2][3]), 8), cdatatest.LE(int64(31))) },
			msg:    "points outside the data buffers"},

		// Dictionaries.
		{name: "dictionary index out of range", build: withCol(dict(abc, fixedCol("s", "i", []int32{0, 5, 1}, nil))),
			msg: `column "s": row 1 has dictionary index 5, dictionary has 2 values`},
		{name: "negative dictionary index", build: withCol(dict(abc, fixedCol("s", "c", []int8{0, 1, -1}, nil))),
			msg: `column "s": row 2 has dictionary index -1`},
		{name: "uint64 dictionary index past int64", build: withCol(dict(abc, fixedCol("s", "L", []uint64{math.MaxUint64, 0, 0}, nil))),
			msg: `column "s": row 0 has dictionary index -1`},
		{name: "dictionary index out of range, bitmap ignored", build: withCol(func() col {
			c := dict(abc, fixedCol("s", "i", []int32{0, 5, 1}, nil))
			c.bufs[0] = []byte{0b101} // but null count 0: row 1 is not null
			return c
		}()), msg: "dictionary index 5"},
		{name: "dictionary missing from the array", build: withCol(dict(abc, fixedCol("s", "i", []int32{0, 1, 1}, nil))),
			mutate: func(b *batch) { b.colArrays[2].Dictionary = 0 }, msg: `column "s": dictionary-encoded but dictionary pointer 0x0`},
		{name: "dangling dictionary array", build: withCol(dict(abc, fixedCol("s", "i", []int32{0, 1, 1}, nil))),
			mutate: func(b *batch) { b.colArrays[2].Dictionary = 1 }, msg: `column "s": dictionary-encoded but dictionary pointer 0x1`},
		{name: "dictionary values with decreasing offsets", build: func(t testing.TB) *batch {
			d := abc
			d.bufs = append([]any{}, d.bufs...)
			d.bufs[1] = cdatatest.LE(int32(0), int32(2), int32(1))
			return withCol(dict(d, fixedCol("s", "i", []int32{0, 1, 1}, nil)))(t)
		}, msg: `column "s" dictionary: value offsets decrease`},
		{name: "dictionary with children", build: withCol(dict(abc, fixedCol("s", "i", []int32{0, 1, 1}, nil))),
			mutate: func(b *batch) { at[Array](b.colArrays[2].Dictionary).NChildren = 1 }, msg: `column "s" dictionary: 1 children`},

		// Values arrowbridge refuses.
		{name: "duplicate column names", build: func(t testing.TB) *batch {
			return newBatch(t, 3, timeCol(1, 2, 3), int64Col("k", []int64{1, 2, 3}, nil), int64Col("k", []int64{1, 2, 3}, nil))
		}, msg: `fields named "k"`},
		{name: "missing time column", build: func(t testing.TB) *batch {
			return newBatch(t, 3, int64Col("k", []int64{1, 2, 3}, nil))
		}, msg: `no time column "time"`},
		{name: "time column with nulls", build: func(t testing.TB) *batch {
			return newBatch(t, 3, int64Col("time", []int64{1, 2, 3}, []bool{true, false, true}))
		}, msg: `time column "time" has 1 nulls`},
		{name: "time column with nulls of unknown count", build: func(t testing.TB) *batch {
			c := int64Col("time", []int64{1, 2, 3}, []bool{true, false, true})
			c.nulls = -1
			return newBatch(t, 3, c)
		}, msg: `time column "time" has 1 nulls`},
		{name: "time column of strings", build: func(t testing.TB) *batch {
			return newBatch(t, 1, stringCol("time", []string{"noon"}, nil))
		}, msg: "want int64 or timestamp"},
		{name: "uint64 value past int64", build: withCol(fixedCol("s", "L", []uint64{0, math.MaxUint64, 0}, nil)),
			msg: `column "s": uint64 value 18446744073709551615 at row 1 does not fit`},
	}
}

// snapshot copies every struct and pointer array of the batch, to check
// that the import writes none of them.
func (b *batch) snapshot() []any {
	out := []any{*b.schema, *b.array, append([]uintptr{}, b.schemaKids...), append([]uintptr{}, b.arrayKids...)}
	for i := range b.colArrays {
		out = append(out, *b.colSchemas[i], *b.colArrays[i], append([]uintptr{}, b.colBufs[i]...))
	}
	return out
}

// TestMalformedInputIsRefused: each bad case fails with its message and
// leaves the caller's structs as they were, right after a good batch of
// the same names and formats (whose plan an import reuses for a schema it
// finds the same: a bad pointer must not pass for the same schema).
func TestMalformedInputIsRefused(t *testing.T) {
	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			mustLoad(t, goodBatch(t), "")
			build := c.build
			if build == nil {
				build = goodBatch
			}
			b := build(t)
			if c.mutate != nil {
				c.mutate(b)
			}
			before := b.snapshot()
			bt, err := b.load("")
			if bt != nil {
				bt.Release()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.msg)
			assert.Equal(t, before, b.snapshot(), "the caller's structs are unchanged")
		})
	}
}

// TestSchemaDepthAndSize: a deep chain is refused at the depth limit, a
// wide DAG (each node's children all the same node, so 2^n paths) at the
// node limit, without walking every path.
func TestSchemaDepthAndSize(t *testing.T) {
	var m arena
	leaf := m.fillSchema(col{format: "l", name: "leaf"})
	node := leaf
	for range 70 {
		p := m.fillSchema(col{format: "+s"})
		p.NChildren = 1
		p.Children, _ = m.words([]uintptr{Addr(node)})
		node = p
	}
	root := m.fillSchema(col{format: "+s"})
	var kids []uintptr
	root.NChildren = 1
	root.Children, kids = m.words([]uintptr{Addr(node)})
	_, err := NewInput(Addr(root), "")
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "deeper than 64 levels")

	node = leaf
	for range 40 {
		p := m.fillSchema(col{format: "+s"})
		p.NChildren = 4
		p.Children, _ = m.words([]uintptr{Addr(node), Addr(node), Addr(node), Addr(node)})
		node = p
	}
	kids[0] = Addr(node)
	_, err = NewInput(Addr(root), "")
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nodes")
	runtime.KeepAlive(&m)
}

// TestNullAndDanglingAddresses: the entry points refuse NULL and dangling
// struct addresses.
func TestNullAndDanglingAddresses(t *testing.T) {
	_, err := NewInput(0, "")
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "ArrowSchema is NULL")
	_, err = NewInput(1, "")
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "ArrowSchema pointer 0x1")

	b := goodBatch(t)
	in, err := NewInput(b.schemaAddr(), "")
	require.NoError(t, err)
	for _, addr := range []uintptr{0, 1, 4095} {
		_, err = in.Batch(addr)
		require.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "ArrowArray pointer")
	}

	assert.False(t, ArrayReleased(b.arrayAddr()))
	b.array.Release = 0
	assert.True(t, ArrayReleased(b.arrayAddr()))
}

func TestCheckStream(t *testing.T) {
	good := Stream{GetSchema: 0x10000, GetNext: 0x10008, GetLastError: 0x10010, Release: dummyRelease}
	var keep arena // the stream must be on the heap: a stack may move
	s := new(Stream)
	keep.keep = append(keep.keep, s)
	defer runtime.KeepAlive(&keep)
	for _, c := range []struct {
		name   string
		mutate func(s *Stream)
		msg    string
	}{
		{"good", func(s *Stream) {}, ""},
		{"no get_last_error", func(s *Stream) { s.GetLastError = 0 }, ""},
		{"released", func(s *Stream) { s.Release = 0 }, "already released"},
		{"no get_schema", func(s *Stream) { s.GetSchema = 0 }, "missing"},
		{"dangling get_next", func(s *Stream) { s.GetNext = 1 }, "missing"},
		{"dangling get_last_error", func(s *Stream) { s.GetLastError = 1 }, "get_last_error callback pointer 0x1"},
	} {
		*s = good
		c.mutate(s)
		err := CheckStream(Addr(s))
		if c.msg == "" {
			assert.NoError(t, err, c.name)
			continue
		}
		assert.ErrorIs(t, err, errs.ErrInvalidArgument, c.name)
		assert.ErrorContains(t, err, c.msg, c.name)
	}
	for _, addr := range []uintptr{0, 1} {
		err := CheckStream(addr)
		assert.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.ErrorContains(t, err, "ArrowArrayStream pointer")
	}
}

// TestReleasedDirectBatchIsReusedClean: ImportBatch takes a direct batch
// released before (tablet and column slice in one object) and leaves
// nothing of the batch before in it; a batch the direct path refuses
// after filling some columns (here: a null time, which the arrow path
// then refuses too) puts the object back, cleared, for the next.
func TestReleasedDirectBatchIsReusedClean(t *testing.T) {
	wide := newBatch(t, 2, timeCol(1, 2), int64Col("a", []int64{1, 2}, nil), stringCol("b", []string{"x", "y"}, nil),
		int64Col("c", []int64{5, 6}, []bool{true, false}))
	first, err := ImportBatch(wide.schemaAddr(), wide.arrayAddr(), "")
	require.NoError(t, err)
	require.NotNil(t, first.home, "direct path")
	first.Release()
	assert.Nil(t, first.Tablet)

	nullTime := cdatatest.TimeCol(1, 0)
	nullTime.Bufs[0], nullTime.Nulls = cdatatest.Validity([]bool{true, false})
	refused := newBatch(t, 2, int64Col("a", []int64{1, 2}, nil), stringCol("b", []string{"x", "y"}, nil), specCol(nullTime))
	_, err = ImportBatch(refused.schemaAddr(), refused.arrayAddr(), "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "time")

	narrow := newBatch(t, 1, timeCol(7), fixedCol("f", "g", []float64{2.5}, nil))
	second, err := ImportBatch(narrow.schemaAddr(), narrow.arrayAddr(), "")
	require.NoError(t, err)
	defer second.Release()
	assert.Same(t, first, second, "the released batch, reused")
	assert.Equal(t, contents{Times: []int64{7}, Columns: []columnContents{{"f", "DOUBLE", []any{2.5}}}}, contentsOf(second.Tablet))
	assert.Equal(t, 1, len(second.Tablet.Columns))
	assert.Same(t, &first.home.cols[0], &second.Tablet.Columns[0], "the wide batch's slice, reused")
	for _, c := range second.Tablet.Columns[1:cap(second.Tablet.Columns)] {
		assert.Zero(t, c, "nothing of the batch before")
	}
}

// TestDirectTabletsShareCheckedNames: the direct path's tablets of one
// schema carry one checked list of their property names (not the time
// column's), which Validate relies on; another schema gets its own, and a
// reserved name is reported as Validate reports it without a list.
func TestDirectTabletsShareCheckedNames(t *testing.T) {
	load := func(b *batch) (*tablet.NameList, error) {
		bt, err := ImportBatch(b.schemaAddr(), b.arrayAddr(), "")
		require.NoError(t, err)
		defer bt.Release()
		require.NotNil(t, bt.home, "direct path")
		return bt.Tablet.CheckedNames(), bt.Tablet.Validate()
	}
	cols := func(second string) []col {
		return []col{int64Col("a", []int64{1}, nil), timeCol(1), stringCol(second, []string{"x"}, nil)}
	}
	first, err := load(newBatch(t, 1, cols("b")...))
	require.NoError(t, err)
	require.NotNil(t, first)
	again, err := load(newBatch(t, 1, cols("b")...))
	require.NoError(t, err)
	assert.Same(t, first, again, "one list for one schema")
	other, err := load(newBatch(t, 1, cols("c")...))
	require.NoError(t, err)
	assert.NotSame(t, first, other)

	reserved, err := load(newBatch(t, 1, cols(schema.DeviceColumn)...))
	require.NotNil(t, reserved)
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	plain := &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{tablet.Int64s("a", []int64{1}, nil), tablet.Strings(schema.DeviceColumn, []string{"x"}, nil)}}
	assert.EqualError(t, err, plain.Validate().Error())
}
