package tablet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
)

func sample() *Tablet {
	return &Tablet{
		Times:    []int64{30, 10, 20, 40, 50},
		TimeUnit: "ms", TimeZone: "Europe/Paris",
		Columns: []Column{
			Int64s("i64", []int64{1, 2, 3, 4, 5}, []bool{true, false, true, true, true}),
			Int32s("i32", []int32{-1, -2, -3, -4, -5}, nil),
			Doubles("f64", []float64{1.5, 2.5, 3.5, 4.5, 5.5}, nil),
			Floats("f32", []float32{1, 2, 3, 4, 5}, []bool{false, true, true, true, false}),
			Bools("b", []bool{true, false, true, true, false}, []bool{true, true, false, true, true}),
			Strings("s", []string{"a", "", "ccc", "dé", "e"}, []bool{true, true, true, false, true}),
			Binaries("bin", [][]byte{{0}, {1, 2}, nil, {3}, {4, 5, 6}}, nil),
			Timestamps("ts", []int64{100, 200, 300, 400, 500}, nil),
			Dates("d", []int32{1, 2, 3, 4, 5}, nil),
		},
	}
}

func table(t *Tablet) [][]any {
	out := make([][]any, t.Rows())
	for i := range out {
		out[i] = []any{t.Times[i]}
		for j := range t.Columns {
			out[i] = append(out[i], t.Columns[j].Value(i))
		}
	}
	return out
}

func TestEncodeDecodeRoundTripsEveryType(t *testing.T) {
	src := sample()
	require.NoError(t, src.Validate())
	for _, prefix := range []int{0, 3, 8} { // encode after a prefix, as a log record does
		buf := Append(make([]byte, prefix), src)
		got, end, err := Decode(buf, prefix)
		require.NoError(t, err)
		assert.Equal(t, len(buf), end)
		assert.Equal(t, table(src), table(got))
		assert.Equal(t, "ms", got.TimeUnit)
		assert.Equal(t, "Europe/Paris", got.TimeZone)
	}
}

func TestSliceAndEncodeOfSliceRealignsBits(t *testing.T) {
	src := sample()
	for _, r := range [][2]int{{0, 5}, {1, 4}, {3, 5}, {2, 2}} {
		s := src.Slice(r[0], r[1])
		require.NoError(t, s.Validate())
		assert.Equal(t, table(src)[r[0]:r[1]], table(s))
		got, _, err := Decode(Append(nil, s), 0)
		require.NoError(t, err)
		assert.Equal(t, table(s), table(got), "rows %v", r)
	}
}

func TestSliceRunsSliceEachRun(t *testing.T) {
	src := sample()
	runs := [][2]int{{0, 5}, {1, 4}, {3, 5}, {2, 2}, {4, 5}}
	got := src.SliceRuns(len(runs), func(i int) (int, int) { return runs[i][0], runs[i][1] })
	require.Len(t, got, len(runs))
	for i, r := range runs {
		s := &got[i]
		require.NoError(t, s.Validate())
		assert.Equal(t, table(src.Slice(r[0], r[1])), table(s), "rows %v", r)
		assert.Equal(t, src.TimeUnit, s.TimeUnit)
		assert.Equal(t, src.TimeZone, s.TimeZone)
		assert.Len(t, s.Columns, len(src.Columns))
		assert.Equal(t, len(src.Columns), cap(s.Columns), "a run's columns end where the next run's begin")
	}
	assert.Empty(t, src.SliceRuns(0, nil))
}

func TestCloneOwnsItsRows(t *testing.T) {
	src := sample()
	for _, r := range [][2]int{{0, 5}, {1, 4}, {3, 5}, {2, 2}} {
		s := src.Slice(r[0], r[1])
		c := s.Clone()
		require.NoError(t, c.Validate())
		assert.Equal(t, table(s), table(c), "rows %v", r)
		assert.Equal(t, s.TimeUnit, c.TimeUnit)
		for j := range c.Columns {
			assert.Zero(t, c.Columns[j].Offset, "column %s realigned", c.Columns[j].Name)
		}
		// Overwriting the source leaves the clone as it was.
		want := table(c)
		for j := range src.Columns {
			col := &src.Columns[j]
			clear(col.Values)
			clear(col.Data)
			clear(col.Validity)
		}
		clear(src.Times)
		assert.Equal(t, want, table(c), "rows %v after the source changed", r)
		src = sample()
	}
}

func TestGatherCopiesRowsInOrder(t *testing.T) {
	src := sample()
	rows := []int32{4, 0, 0, 3}
	g := src.Gather(rows)
	require.NoError(t, g.Validate())
	all := table(src)
	var want [][]any
	for _, r := range rows {
		want = append(want, all[r])
	}
	assert.Equal(t, want, table(g))
	assert.Equal(t, src.TimeUnit, g.TimeUnit)
	assert.Empty(t, table(src.Gather(nil)))
}

func TestValidateNamesTheOffendingColumn(t *testing.T) {
	cases := []struct {
		name    string
		tab     Tablet
		mention string
	}{
		{"short values", Tablet{Times: []int64{1, 2}, Columns: []Column{Int64s("a", []int64{1}, nil)}}, `"a"`},
		{"short validity", Tablet{Times: make([]int64, 9), Columns: []Column{{Name: "v", Type: schema.Int32, Values: make([]byte, 36), Validity: []byte{0xff}}}}, `"v"`},
		{"offsets out of order", Tablet{Times: []int64{1, 2}, Columns: []Column{{Name: "s", Type: schema.String, Offsets: []int32{0, 2, 1}, Data: []byte("abc")}}}, `"s"`},
		{"bad utf-8", Tablet{Times: []int64{1}, Columns: []Column{{Name: "s", Type: schema.String, Offsets: []int32{0, 1}, Data: []byte{0xff}}}}, "UTF-8"},
		{"duplicate", Tablet{Times: []int64{1}, Columns: []Column{Int64s("a", []int64{1}, nil), Int64s("a", []int64{1}, nil)}}, `"a" appears twice`},
		{"duplicate among many", Tablet{Times: []int64{1}, Columns: manyColumns(40, 7, 33)}, `"c7" appears twice`},
		{"reserved", Tablet{Times: []int64{1}, Columns: []Column{Int64s("device", []int64{1}, nil)}}, "reserved"},
		{"empty name", Tablet{Times: []int64{1}, Columns: []Column{Int64s("", []int64{1}, nil)}}, "column 0"},
		{"unknown type", Tablet{Times: []int64{1}, Columns: []Column{{Name: "x", Type: 99}}}, `"x"`},
		{"negative offset", Tablet{Times: []int64{1}, Columns: []Column{{Name: "x", Type: schema.Int64, Offset: -2, Values: make([]byte, 8)}}}, "negative"},
		// Offset+rows times the value width must not wrap around and pass.
		{"huge offset", Tablet{Times: []int64{1}, Columns: []Column{{Name: "x", Type: schema.Int64, Offset: math.MaxInt, Values: make([]byte, 8)}}}, `"x"`},
		{"huge offset, width 4", Tablet{Times: []int64{1, 2}, Columns: []Column{{Name: "x", Type: schema.Int32, Offset: math.MaxInt/4 + 1, Values: make([]byte, 8)}}}, `"x"`},
		{"huge offset, bits", Tablet{Times: []int64{1}, Columns: []Column{{Name: "x", Type: schema.Boolean, Offset: math.MaxInt / 8 * 7, Values: make([]byte, 1)}}}, `"x"`},
		{"huge offset, strings", Tablet{Times: []int64{1}, Columns: []Column{{Name: "x", Type: schema.String, Offset: math.MaxInt, Offsets: []int32{0, 1}, Data: []byte("a")}}}, `"x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.tab.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.mention)
		})
	}
}

// manyColumns returns n INT64 columns c0, c1, ... of one row, except that
// column again is named as column dup.
func manyColumns(n, dup, again int) []Column {
	cols := make([]Column, n)
	for i := range cols {
		name := fmt.Sprintf("c%d", i)
		if i == again {
			name = fmt.Sprintf("c%d", dup)
		}
		cols[i] = Int64s(name, []int64{1}, nil)
	}
	return cols
}

func TestDecodeRejectsTruncatedInput(t *testing.T) {
	buf := Append(nil, sample())
	for cut := 0; cut < len(buf); cut += 7 {
		_, _, err := Decode(buf[:cut], 0)
		require.Error(t, err, "cut at %d", cut)
		assert.ErrorIs(t, err, errs.ErrCorrupt)
	}
}

// TestDecodeBoundsCountsByTheBytesLeft: a column count that the rest of
// the buffer cannot hold (a column takes at least 4 bytes) is refused
// before the column headers are allocated, so a corrupt count cannot turn
// a record into 32 times its size in memory.
func TestDecodeBoundsCountsByTheBytesLeft(t *testing.T) {
	buf := make([]byte, 64<<10)
	hdr := binary.AppendUvarint(binary.AppendUvarint(nil, 0), uint64(len(buf)-8))
	copy(buf, hdr)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := Decode(buf, 0)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.ErrorIs(t, err, errs.ErrCorrupt)
	assert.Contains(t, err.Error(), "column count")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(len(buf)), "bytes allocated to refuse the count")
}

// TestDecodeTrustedSkipsOnlyValidation: decodeTrusted still refuses bytes
// that do not frame a tablet, but takes what Validate would refuse;
// Decode refuses both.
func TestDecodeTrustedSkipsOnlyValidation(t *testing.T) {
	good := Append(nil, &Tablet{Times: []int64{1}, Columns: []Column{Int64s("ab", []int64{1}, nil)}})
	badName := bytes.Replace(good, []byte("ab"), []byte("a\x01"), 1)
	require.NotEqual(t, good, badName)
	cases := []struct {
		name            string
		buf             []byte
		decode, trusted bool // succeeds
	}{
		{"good", good, true, true},
		{"control character in a name", badName, false, true},
		{"truncated", good[:len(good)-1], false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Decode(c.buf, 0)
			assert.Equal(t, c.decode, err == nil, "Decode: %v", err)
			_, _, err = decodeTrusted(c.buf, 0)
			assert.Equal(t, c.trusted, err == nil, "decodeTrusted: %v", err)
			if err != nil {
				assert.ErrorIs(t, err, errs.ErrCorrupt)
			}
		})
	}
}

// TestAppendSizeBoundsAppend: AppendSize is at least what Append adds,
// wherever dst ends, and not much more (the padding it cannot know).
func TestAppendSizeBoundsAppend(t *testing.T) {
	wide := &Tablet{Times: make([]int64, 1000)}
	for i := range 40 {
		wide.Columns = append(wide.Columns, Bools(fmt.Sprint("b", i), make([]bool, 1000), make([]bool, 1000)))
	}
	cases := []struct {
		name string
		tab  *Tablet
	}{
		{"every type", sample()},
		{"slice", sample().Slice(1, 4)},
		{"no rows", sample().Slice(2, 2)},
		{"no columns", &Tablet{Times: []int64{1, 2}, TimeUnit: "ns"}},
		{"wide booleans", wide},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.tab.Validate())
			size := AppendSize(c.tab)
			for prefix := range 8 {
				added := len(Append(make([]byte, prefix), c.tab)) - prefix
				assert.LessOrEqual(t, added, size, "prefix %d", prefix)
				assert.LessOrEqual(t, size-added, 7+10*len(c.tab.Columns), "prefix %d: only padding to spare", prefix)
			}
		})
	}
}

// TestValidateFindsTheRowThatIsNotUTF8: string values are checked one by
// one unless every byte is ASCII; a character cut between two rows is two
// bad rows though the bytes together are valid, and a null's bytes are
// not checked. The error names the first bad row.
func TestValidateFindsTheRowThatIsNotUTF8(t *testing.T) {
	strs := func(vals []string, valid []bool, offset int) *Column {
		c := Strings("s", vals, valid)
		c.Offset = offset
		return &c
	}
	long := func(n int) []string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprintf("plant-%02d/device-%07d", i%100, i)
		}
		return v
	}
	for _, bad := range []int{0, 1, 31, 32, 33, 500, 999} {
		vals := long(1000)
		vals[bad] = vals[bad][:5] + "\xff" + vals[bad][6:]
		err := strs(vals, nil, 0).Validate(1000)
		require.ErrorIs(t, err, errs.ErrInvalidArgument)
		require.ErrorContains(t, err, fmt.Sprintf("row %d is not valid UTF-8", bad))
		// The same rows after an offset: rows count from the offset.
		if bad >= 10 {
			err = strs(vals, nil, 10).Validate(990)
			require.ErrorContains(t, err, fmt.Sprintf("row %d is not valid UTF-8", bad-10))
		}
		// A null's bytes are not looked at.
		valid := make([]bool, 1000)
		for i := range valid {
			valid[i] = i != bad
		}
		require.NoError(t, strs(vals, valid, 0).Validate(1000))
	}
	euro := "€" // three bytes, cut between rows 1 and 2
	cut := strs([]string{"a", euro[:1], euro[1:]}, nil, 0)
	require.ErrorContains(t, cut.Validate(3), "row 1 is not valid UTF-8")
	require.NoError(t, strs(append(long(100), "zürich", euro), nil, 0).Validate(102))
	require.True(t, ascii([]byte(strings.Repeat("x", 100))))
	for i := range 100 {
		b := []byte(strings.Repeat("x", 100))
		b[i] = 0x80
		require.False(t, ascii(b), "byte %d", i)
	}
}

// TestValidateZeroRowsOfStrings: a STRING column of no rows is valid
// whatever its one offset, as before the ASCII pass (which looks at the
// bytes of the rows only).
func TestValidateZeroRowsOfStrings(t *testing.T) {
	c := Column{Name: "s", Type: schema.String, Offsets: []int32{7}}
	require.NoError(t, c.Validate(0))
	c.Offset = 0
	c.Offsets = []int32{3, 3}
	c.Data = []byte("abc")
	require.NoError(t, c.Validate(1))
}

// TestDecodeViewReadsItsOwnEncoding: DecodeView reads back what Append
// wrote (slices too, whose bits and string offsets were realigned), with
// the columns given, every buffer and name lying in the encoding and
// nowhere else (the caller's may be overwritten), and allocates nothing.
func TestDecodeViewReadsItsOwnEncoding(t *testing.T) {
	for _, r := range [][2]int{{0, 5}, {1, 4}, {3, 5}, {2, 2}} {
		for _, prefix := range []int{0, 8, 16} {
			src := sample()
			s := src.Slice(r[0], r[1])
			want := table(s)
			enc := Append(make([]byte, prefix), s)
			n, err := EncodedWidth(enc, prefix)
			require.NoError(t, err)
			require.Equal(t, len(s.Columns), n)
			var view Tablet
			cols := make([]Column, n)
			end, err := DecodeView(enc, prefix, &view, cols)
			require.NoError(t, err)
			assert.Equal(t, len(enc), end, "rows %v after %d bytes: the position after the tablet", r, prefix)
			require.NoError(t, view.Validate())
			assert.Same(t, &cols[0], &view.Columns[0], "the columns given")
			assert.Equal(t, "ms", view.TimeUnit)
			assert.Equal(t, "Europe/Paris", view.TimeZone)
			inside := func(what string, b []byte) {
				if len(b) == 0 {
					return
				}
				lo, hi := &enc[prefix], &enc[len(enc)-1]
				first, last := &b[0], &b[len(b)-1]
				assert.True(t, uintptr(unsafe.Pointer(first)) >= uintptr(unsafe.Pointer(lo)) &&
					uintptr(unsafe.Pointer(last)) <= uintptr(unsafe.Pointer(hi)), "%s lies outside the encoding", what)
			}
			inside("times", bytesOf(view.Times))
			for _, c := range view.Columns {
				inside(c.Name+" name", unsafe.Slice(unsafe.StringData(c.Name), len(c.Name)))
				inside(c.Name+" values", c.Values)
				inside(c.Name+" validity", c.Validity)
				inside(c.Name+" offsets", bytesOf(c.Offsets))
				inside(c.Name+" data", c.Data)
			}
			// The caller's buffers are reused: the view does not change.
			for i := range src.Times {
				src.Times[i] = -1
			}
			for _, c := range src.Columns {
				clear(c.Values)
				clear(c.Validity)
				clear(c.Data)
			}
			assert.Equal(t, want, table(&view), "rows %v after %d bytes", r, prefix)
			allocs := testing.AllocsPerRun(10, func() {
				if _, err := DecodeView(enc, prefix, &view, cols); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "rows %v: allocations a view", r)
		}
	}
	enc := Append(nil, sample())
	var view Tablet
	_, err := DecodeView(enc, 0, &view, make([]Column, 2))
	assert.ErrorIs(t, err, errs.ErrCorrupt, "room for 2 of %d columns", len(sample().Columns))
	_, err = DecodeView(enc[:len(enc)-1], 0, &view, make([]Column, len(sample().Columns)))
	assert.ErrorIs(t, err, errs.ErrCorrupt, "a byte short")
	_, err = EncodedWidth(enc[:1], 0)
	assert.ErrorIs(t, err, errs.ErrCorrupt, "the column count cut off")
}

// TestDuplicateNameAmongFew: the pairwise check of up to 16 columns tells
// names apart that share a length and a last byte, and finds a repeat
// wherever it is.
func TestDuplicateNameAmongFew(t *testing.T) {
	named := func(names ...string) []Column {
		cols := make([]Column, len(names))
		for i, n := range names {
			cols[i].Name = n
		}
		return cols
	}
	assert.Equal(t, "", duplicateName(named("ab", "bb", "cb")))
	assert.Equal(t, "", duplicateName(named("a", "ab", "b", "ba")))
	assert.Equal(t, "ab", duplicateName(named("ab", "xb", "ab")))
	assert.Equal(t, "time", duplicateName(named("time", "x", "y", "time")))
	for again := 1; again < 16; again++ {
		assert.Equal(t, "c0", duplicateName(manyColumns(16, 0, again)), "again at %d", again)
	}
	assert.Equal(t, "", duplicateName(manyColumns(16, 0, -1)))
}

// BenchmarkDuplicateName: the check of a small write's 11 columns (time
// and c0 to c9).
func BenchmarkDuplicateName(b *testing.B) {
	cols := manyColumns(11, 0, -1)
	cols[0].Name = "time"
	for range b.N {
		if duplicateName(cols) != "" {
			b.Fatal("a duplicate")
		}
	}
}

// TestCheckedNames: a tablet's name list counts only while each column's
// name is the list's own string; Validate then reports the list's outcome
// and still checks the buffers, and otherwise checks the names itself.
func TestCheckedNames(t *testing.T) {
	names := []string{"a", "b"}
	tab := func(list *NameList, cols ...Column) *Tablet {
		return &Tablet{Times: []int64{1}, Columns: cols, Names: list}
	}
	ok := CheckNames(names)
	good := tab(ok, Int64s(names[0], []int64{1}, nil), Int64s(names[1], []int64{2}, nil))
	assert.Same(t, ok, good.CheckedNames())
	require.NoError(t, good.Validate())

	// Equal names in other strings, another count, no list: not covered.
	other := strings.Clone("b")
	assert.Nil(t, tab(ok, Int64s(names[0], []int64{1}, nil), Int64s(other, []int64{2}, nil)).CheckedNames())
	assert.Nil(t, tab(ok, Int64s(names[0], []int64{1}, nil)).CheckedNames())
	assert.Nil(t, tab(nil, Int64s(names[0], []int64{1}, nil)).CheckedNames())

	// The list's outcome is Validate's, whatever the columns' strings
	// would say; an uncovered tablet is checked as if it had no list.
	for _, bad := range [][]string{{"a", "a"}, {"a", "time"}, {"a", ""}, {"a", "\x01"}} {
		list := CheckNames(bad)
		err := tab(list, Int64s(bad[0], []int64{1}, nil), Int64s(bad[1], []int64{2}, nil)).Validate()
		require.ErrorIs(t, err, errs.ErrInvalidArgument, "%q", bad)
		want := (&Tablet{Times: []int64{1}, Columns: []Column{Int64s(bad[0], []int64{1}, nil), Int64s(bad[1], []int64{2}, nil)}}).Validate()
		assert.EqualError(t, err, want.Error())
		assert.ErrorIs(t, tab(ok, Int64s(names[0], []int64{1}, nil), Int64s(strings.Clone(bad[1]), []int64{2}, nil)).Validate(), errs.ErrInvalidArgument,
			"an uncovered tablet's own names are checked: %q", bad)
	}

	// A covered tablet's buffers are still checked.
	short := tab(ok, Int64s(names[0], []int64{1}, nil), Column{Name: names[1], Type: schema.Int64, Values: make([]byte, 4)})
	assert.ErrorIs(t, short.Validate(), errs.ErrInvalidArgument)
}
