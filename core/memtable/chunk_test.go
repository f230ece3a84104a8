package memtable

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/internal/racebuild"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

func TestWriteMixesExistingAndNewColumns(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	// id 9 is a property dropped later: it stays a column no one reads.
	require.NoError(t, c.Write(tab(seq(0, 2), i64("a", int64(1), int64(2)), i64("gone", int64(90), int64(91))), ids(1, 9)))
	require.NoError(t, c.Write(tab(seq(2, 2),
		i64("c", int64(30), int64(31)),         // new
		i64("a", int64(3), nil),                // existing
		mkCol("d", schema.String, 0, "x", "y"), // new
	), ids(3, 1, 4)))

	assert.Equal(t, 4, c.Width())
	got := readAll(c, ref(1, "a", schema.Int64), ref(3, "c", schema.Int64), ref(4, "d", schema.String), ref(5, "never", schema.Int64))
	require.Equal(t, []int64{0, 1, 2, 3}, got.Times)
	assert.Equal(t, []any{int64(1), int64(2), int64(3), nil}, column(got, 0))
	assert.Equal(t, []any{nil, nil, int64(30), int64(31)}, column(got, 1))
	assert.Equal(t, []any{nil, nil, "x", "y"}, column(got, 2))
	assert.Equal(t, nulls(4), column(got, 3))
	assert.Equal(t, []string{"a", "c", "d", "never"}, []string{got.Columns[0].Name, got.Columns[1].Name, got.Columns[2].Name, got.Columns[3].Name})
}

func TestWriteRejectsBadInputAndLeavesNoTrace(t *testing.T) {
	short := i64("a", int64(1))
	short.Values = short.Values[:4]
	badOffsets := mkCol("s", schema.String, 0, "ab", "c")
	badOffsets.Offsets = []int32{0, 2, 1}
	cases := []struct {
		name string
		tab  *tablet.Tablet
		ids  []schema.PropertyID
		want string
	}{
		{"duplicate existing id", tab(seq(10, 1), i64("a", int64(1)), i64("a2", int64(2))), ids(1, 1), `"a2"`},
		{"duplicate new id", tab(seq(10, 1), i64("n", int64(1)), i64("a", int64(1)), i64("n2", int64(2))), ids(7, 1, 7), `"n2"`},
		{"type mismatch", tab(seq(10, 1), i64("n", int64(1)), i64("b", int64(1))), ids(7, 2), `"b"`},
		{"mismatch after new", tab(seq(10, 1), i64("n", int64(1)), i64("m", int64(1)), mkCol("a", schema.Int32, 0, int32(1))), ids(7, 8, 1), `"a"`},
		{"ids short", tab(seq(10, 1), i64("a", int64(1))), ids(), "1 columns with 0 ids"},
		{"values short", tab(seq(10, 1), i64("n", int64(1)), short), ids(7, 1), `"a"`},
		{"offsets out of order", tab(seq(10, 2), i64("n", int64(1), int64(2)), badOffsets), ids(7, 20), `"s"`},
		{"unknown type", tab(seq(10, 1), i64("n", int64(1)), tablet.Column{Name: "z", Type: 42, Values: make([]byte, 8)}), ids(7, 21), `"z"`},
		// (Offset+rows)*width must not wrap around and pass the size check.
		{"huge offset", tab(seq(10, 1), i64("n", int64(1)), tablet.Column{Name: "h", Type: schema.Int64, Offset: math.MaxInt, Values: make([]byte, 8)}), ids(7, 22), `"h"`},
		{"huge offset, strings", tab(seq(10, 1), i64("n", int64(1)), tablet.Column{Name: "h", Type: schema.String, Offset: math.MaxInt, Offsets: []int32{0, 1}, Data: []byte("a")}), ids(7, 22), `"h"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{BlockRows: 8})
			c := m.Chunk(1, "d")
			require.NoError(t, c.Write(tab(seq(0, 3), i64("a", int64(1), nil, int64(3)), mkCol("b", schema.Double, 0, 0.5, 1.5, nil)), ids(1, 2)))
			refs := []ColumnRef{ref(1, "a", schema.Int64), ref(2, "b", schema.Double), ref(7, "n", schema.Int64), ref(8, "m", schema.Int64)}
			before := readAll(c, refs...)
			mem, total := c.MemoryUsage(), m.MemoryUsage()

			err := c.Write(tc.tab, tc.ids)
			require.Error(t, err)
			assert.True(t, errors.Is(err, errs.ErrInvalidArgument), err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 3, c.Snapshot().Rows())
			assert.Equal(t, 2, c.Width())
			assert.Equal(t, mem, c.MemoryUsage())
			assert.Equal(t, total, m.MemoryUsage())
			assert.Equal(t, before, readAll(c, refs...))

			// The ids a failed write tried to add are free for the next.
			require.NoError(t, c.Write(tab(seq(3, 1), i64("m", int64(80)), i64("n", int64(70))), ids(8, 7)))
			got := readAll(c, refs...)
			assert.Equal(t, []any{nil, nil, nil, int64(70)}, column(got, 2))
			assert.Equal(t, []any{nil, nil, nil, int64(80)}, column(got, 3))
			assert.Equal(t, 4, c.Width())
		})
	}
}

func TestDuplicateNewIDsAcrossIndexRebuild(t *testing.T) {
	for _, existing := range []int{0, 2} {
		t.Run(fmt.Sprint("existing=", existing), func(t *testing.T) {
			m := New(Options{})
			c := m.Chunk(1, "d")
			if existing > 0 {
				// A small id table: the failing write inserts into it, then
				// rebuilds a private one.
				require.NoError(t, c.Write(tab(seq(0, 1), i64("x", int64(1)), i64("y", int64(2))), ids(1, 2)))
			}
			mem := c.MemoryUsage()
			cols := make([]tablet.Column, 0, 101)
			idv := make([]schema.PropertyID, 0, 101)
			for i := range 100 {
				cols = append(cols, i64(fmt.Sprint("c", i), int64(i)))
				idv = append(idv, schema.PropertyID(1000+i))
			}
			cols = append(cols, i64("again", int64(0)))
			idv = append(idv, 1003)
			err := c.Write(tab(seq(1, 1), cols...), idv)
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), `"again"`)
			assert.Equal(t, existing, c.Width())
			assert.Equal(t, mem, c.MemoryUsage())
			assert.Equal(t, -1, c.Snapshot().ix.lookup(1000, 1<<30), "no trace in the published id table")

			require.NoError(t, c.Write(tab(seq(1, 1), cols[:100]...), idv[:100]))
			require.NoError(t, c.Write(tab(seq(2, 1), i64("z", int64(5))), ids(3)))
			got := readAll(c, ref(1003, "c3", schema.Int64), ref(1099, "c99", schema.Int64), ref(3, "z", schema.Int64), ref(2, "y", schema.Int64))
			want := [][]any{{int64(3), nil}, {int64(99), nil}, {nil, int64(5)}, {nil, nil}}
			if existing > 0 {
				want = [][]any{{nil, int64(3), nil}, {nil, int64(99), nil}, {nil, nil, int64(5)}, {int64(2), nil, nil}}
			}
			for i := range want {
				assert.Equal(t, want[i], column(got, i), i)
			}
			assert.Equal(t, existing+101, c.Width())
			assert.Equal(t, c.Width(), c.used(), "no tombstone is left once the table is rebuilt")
		})
	}
}

func TestExistingValuesAndBitmapsSurviveExpansion(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	// Rows 0..4: a with a null inside (a bitmap), b without nulls, s with a null.
	require.NoError(t, c.Write(tab(seq(0, 5),
		i64("a", int64(1), nil, int64(3), nil, int64(5)),
		mkCol("b", schema.Boolean, 0, true, false, true, true, false),
		mkCol("s", schema.String, 0, "x", nil, "zz", "", "w"),
	), ids(1, 2, 3)))
	// Row 5..9 (across the block boundary): new columns first, then old ones.
	require.NoError(t, c.Write(tab(seq(5, 5),
		i64("n1", int64(10), int64(11), int64(12), int64(13), int64(14)),
		mkCol("s", schema.String, 0, "p", nil, nil, "q", nil),
		i64("n2", nil, nil, int64(22), nil, int64(24)),
		i64("a", int64(6), int64(7), nil, int64(9), int64(10)),
	), ids(4, 3, 5, 1)))

	got := readAll(c, ref(1, "a", schema.Int64), ref(2, "b", schema.Boolean), ref(3, "s", schema.String), ref(4, "n1", schema.Int64), ref(5, "n2", schema.Int64))
	assert.Equal(t, []any{int64(1), nil, int64(3), nil, int64(5), int64(6), int64(7), nil, int64(9), int64(10)}, column(got, 0))
	assert.Equal(t, []any{true, false, true, true, false, nil, nil, nil, nil, nil}, column(got, 1))
	assert.Equal(t, []any{"x", nil, "zz", "", "w", "p", nil, nil, "q", nil}, column(got, 2))
	assert.Equal(t, append(nulls(5), int64(10), int64(11), int64(12), int64(13), int64(14)), column(got, 3))
	assert.Equal(t, append(nulls(7), int64(22), nil, int64(24)), column(got, 4))
}

func TestNoExpansionReordering(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	names := []string{"a", "b", "c", "d", "e"}
	first := make([]tablet.Column, len(names))
	idv := make([]schema.PropertyID, len(names))
	for i, n := range names {
		first[i] = i64(n, int64(i), int64(i), int64(i))
		idv[i] = schema.PropertyID(i + 1)
	}
	require.NoError(t, c.Write(tab(seq(0, 3), first...), idv))
	mem := c.MemoryUsage()

	rev := make([]tablet.Column, len(names))
	rids := make([]schema.PropertyID, len(names))
	for i := range names {
		j := len(names) - 1 - i
		rev[i] = i64(names[j], int64(100+j))
		rids[i] = schema.PropertyID(j + 1)
	}
	require.NoError(t, c.Write(tab(seq(3, 1), rev...), rids))
	assert.Equal(t, 5, c.Width())
	assert.Equal(t, mem+5*8+5*5*8, c.MemoryUsage(), "the times and each column grow once, 3 to 8 rows: no column is added")
	for i, n := range names {
		got := readAll(c, ref(schema.PropertyID(i+1), n, schema.Int64))
		assert.Equal(t, int64s(int64(i), int64(i), int64(i), int64(100+i)), column(got, 0), n)
	}
}

func TestBitmapAlignmentWithTabletOffset(t *testing.T) {
	for _, off := range []int{3, 13} {
		for _, typ := range allTypes {
			t.Run(fmt.Sprintf("offset=%d/%s", off, typeName(typ)), func(t *testing.T) {
				m := New(Options{BlockRows: 8})
				c := m.Chunk(1, "d")
				// Two writes so that the second appends to a block that
				// already has a bitmap, in the middle of a word.
				w1 := []any{sample(typ, 1), nil, sample(typ, 3), sample(typ, 4), nil, sample(typ, 6)}
				w2 := []any{nil, sample(typ, 8), sample(typ, 9), nil, sample(typ, 11), sample(typ, 12), sample(typ, 13)}
				require.NoError(t, c.Write(tab(seq(0, len(w1)), mkCol("v", typ, off, w1...)), ids(1)))
				require.NoError(t, c.Write(tab(seq(len(w1), len(w2)), mkCol("v", typ, off+1, w2...)), ids(1)))
				got := readAll(c, ref(1, "v", typ))
				assert.Equal(t, append(w1, w2...), column(got, 0))
				assert.NotNil(t, got.Columns[0].Validity)
			})
		}
	}
}

func TestHistoricalNullsAcrossBlocks(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	for r := range 20 { // one row per write, as a stream would
		require.NoError(t, c.Write(tab(seq(r, 1), i64("a", int64(r))), ids(1)))
	}
	mem := c.MemoryUsage()
	// b first appears at row 20, in the third block, with a leading null.
	require.NoError(t, c.Write(tab(seq(20, 6), i64("b", nil, int64(21), int64(22), nil, int64(24), int64(25))), ids(2)))
	// b absent from rows 26..33, then back at 34 (a gap inside block 4).
	require.NoError(t, c.Write(tab(seq(26, 8), i64("a", int64(26), int64(27), int64(28), int64(29), int64(30), int64(31), int64(32), int64(33))), ids(1)))
	require.NoError(t, c.Write(tab(seq(34, 1), i64("b", int64(34))), ids(2)))

	got := readAll(c, ref(1, "a", schema.Int64), ref(2, "b", schema.Int64))
	require.Len(t, got.Times, 35)
	wantB := append(nulls(21), int64(21), int64(22), nil, int64(24), int64(25))
	wantB = append(append(wantB, nulls(8)...), int64(34))
	assert.Equal(t, wantB, column(got, 1))
	wantA := make([]any, 35)
	for r := range 34 {
		if r < 20 || r >= 26 {
			wantA[r] = int64(r)
		}
	}
	assert.Equal(t, wantA, column(got, 0))

	// The new column allocated nothing for the first 20 rows: blocks 0 and
	// 1 have no slot for it, and its block 2 starts at its first value.
	st := c.state.Load()
	for b := range 2 {
		assert.Len(t, st.blocks[b].slotArray(), 1, "block %d", b)
	}
	s := &st.blocks[2].slotArray()[1]
	assert.Equal(t, int32(5), s.lo)
	assert.Nil(t, s.ext.Load(), "a null inside block 2 but before its first value needs no bitmap")
	assert.Greater(t, c.MemoryUsage(), mem)
}

func TestMemoryAccounting(t *testing.T) {
	// The estimates of the structures around the buffers.
	require.Equal(t, int64(28), colOverhead)
	require.Equal(t, int64(32), rowBlockOverhead) // the struct and its entry in the block list
	require.Equal(t, int64(24), slotSize)
	require.Equal(t, int64(96), extOverhead)

	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	other := m.Chunk(2, "d")
	steps := []struct {
		name  string
		tab   *tablet.Tablet
		ids   []schema.PropertyID
		delta int64
	}{
		{
			"first write", tab(seq(0, 3), i64("i", int64(1), int64(2), int64(3)), mkCol("s", schema.String, 0, "a", "bb", "ccc")), ids(1, 2),
			2*colOverhead + rowBlockOverhead +
				3*8 + // times: 3 rows, as written
				2*slotSize +
				3*8 + // int64: 3 rows, no extension
				extOverhead + 4*4 + 6, // string: 3 rows of offsets, 6 bytes of data
		},
		{"times and int64 grow 3 to 8 rows", tab(seq(3, 1), i64("i", int64(4))), ids(1), 5*8 + 5*8},
		{"fits", tab(seq(4, 1), i64("i", int64(5))), ids(1), 0},
		{
			"string after a gap", tab(seq(5, 1), mkCol("s", schema.String, 0, "dddd")), ids(2),
			5*4 + // offsets 4 to 9
				10 + // data 6 to 16 bytes
				8, // a validity word for the null rows 3 and 4
		},
		{
			"next row block", tab(seq(6, 4), i64("i", int64(7), int64(8), int64(9), int64(10))), ids(1),
			extOverhead + 8 + // a validity word in block 0 for the null at row 5
				rowBlockOverhead + 8*8 + 1*slotSize +
				8*8, // i filled block 0, so block 1 gets room for all 8 rows at once
		},
		{"boolean and binary", tab(seq(10, 3), mkCol("b", schema.Boolean, 0, true, nil, false), mkCol("y", schema.Binary, 0, "\x00", nil, "\x01\x02")), ids(3, 4),
			2*colOverhead + 3*slotSize + // slots grow from 1 to 4
				extOverhead + 8 + 8 + // one value word, one validity word
				extOverhead + 4*4 + 10 + 8, // offsets, data "\x00garbage\x01\x02" (10 bytes), validity
		},
	}
	for _, s := range steps {
		before, total := c.MemoryUsage(), m.MemoryUsage()
		require.NoError(t, c.Write(s.tab, s.ids), s.name)
		assert.Equal(t, s.delta, c.MemoryUsage()-before, s.name)
		assert.Equal(t, s.delta, m.MemoryUsage()-total, s.name)
	}
	require.NoError(t, other.Write(tab(seq(0, 2), i64("x", int64(1), int64(2))), ids(1)))
	assert.Equal(t, c.MemoryUsage()+other.MemoryUsage(), m.MemoryUsage())
	c.Clear()
	assert.Zero(t, c.MemoryUsage())
	assert.Equal(t, other.MemoryUsage(), m.MemoryUsage())
	m.Clear()
	assert.Zero(t, m.MemoryUsage())
}

func TestCloneClearReuse(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	require.NoError(t, c.Write(tab(seq(0, 10),
		i64("a", int64(0), nil, int64(2), int64(3), int64(4), int64(5), nil, int64(7), int64(8), int64(9)),
		mkCol("s", schema.String, 0, "a", "b", nil, "d", "e", "f", "g", "h", "i", "j"),
		mkCol("f", schema.Boolean, 0, true, true, false, nil, true, false, true, true, false, true),
	), ids(1, 2, 3)))
	refs := []ColumnRef{ref(1, "a", schema.Int64), ref(2, "s", schema.String), ref(3, "f", schema.Boolean), ref(4, "n", schema.Int64)}
	want := readAll(c, refs...)

	mc := m.Clone()
	cc, ok := mc.Lookup(1, "d")
	require.True(t, ok)
	assert.Equal(t, want, readAll(cc, refs...))
	assert.Equal(t, cc.MemoryUsage(), mc.MemoryUsage())

	// Writes to either side do not show in the other.
	require.NoError(t, c.Write(tab(seq(10, 1), i64("a", int64(10)), i64("n", int64(1))), ids(1, 4)))
	require.NoError(t, cc.Write(tab(seq(10, 2), mkCol("s", schema.String, 0, "k", "l"), i64("a", int64(-1), int64(-2))), ids(2, 1)))
	orig, clone := readAll(c, refs...), readAll(cc, refs...)
	assert.Equal(t, append(column(want, 0), int64(10)), column(orig, 0))
	assert.Equal(t, append(column(want, 1), nil), column(orig, 1))
	assert.Equal(t, append(nulls(10), int64(1)), column(orig, 3))
	assert.Equal(t, append(column(want, 0), int64(-1), int64(-2)), column(clone, 0))
	assert.Equal(t, append(column(want, 1), "k", "l"), column(clone, 1))
	assert.Equal(t, nulls(12), column(clone, 3))
	assert.Equal(t, 3, cc.Width())
	assert.Equal(t, cc.MemoryUsage(), mc.MemoryUsage())

	// Clear, then reuse: ids and types start afresh.
	c.Clear()
	assert.Zero(t, c.Snapshot().Rows())
	assert.Zero(t, c.Width())
	assert.Zero(t, m.MemoryUsage())
	require.NoError(t, c.Write(tab(seq(5, 2), mkCol("a", schema.Double, 0, 1.5, nil)), ids(1)))
	got := readAll(c, ref(1, "a", schema.Double), ref(2, "s", schema.String))
	assert.Equal(t, []int64{5, 6}, got.Times)
	assert.Equal(t, []any{1.5, nil}, column(got, 0))
	assert.Equal(t, nulls(2), column(got, 1))
	assert.Equal(t, c.MemoryUsage(), m.MemoryUsage())
	assert.Equal(t, append(column(want, 0), int64(-1), int64(-2)), column(readAll(cc, refs...), 0), "clone unaffected by clear")

	m.Clear()
	_, ok = m.Lookup(1, "d")
	assert.False(t, ok)
	assert.Empty(t, m.Devices(1))
	c2 := m.Chunk(1, "d")
	require.NoError(t, c2.Write(tab(seq(0, 1), i64("a", int64(1))), ids(1)))
	assert.Equal(t, c2.MemoryUsage(), m.MemoryUsage())
}

func TestEqualTimesAndOutOfOrder(t *testing.T) {
	type write struct {
		times []int64
		a, b  []any
	}
	cases := []struct {
		name       string
		writes     []write
		start, end int64
		times      []int64
		a, b       []any
	}{
		{
			name:   "in order, no duplicates",
			writes: []write{{[]int64{1, 2, 3}, int64s(10, 20, 30), []any{nil, int64(2), nil}}},
			start:  math.MinInt64, end: math.MaxInt64,
			times: []int64{1, 2, 3}, a: int64s(10, 20, 30), b: []any{nil, int64(2), nil},
		},
		{
			name: "equal times merge, last non-null wins, null never overwrites",
			writes: []write{
				{[]int64{1, 2}, int64s(10, 20), []any{int64(1), nil}},
				{[]int64{2, 2}, []any{nil, int64(22)}, []any{int64(5), nil}},
				{[]int64{1}, []any{int64(11)}, []any{nil}},
			},
			start: math.MinInt64, end: math.MaxInt64,
			times: []int64{1, 2}, a: int64s(11, 22), b: []any{int64(1), int64(5)},
		},
		{
			name: "out of order sorts stably",
			writes: []write{
				{[]int64{5, 3, 9}, int64s(50, 30, 90), []any{nil, nil, nil}},
				{[]int64{3, 1}, []any{nil, int64(10)}, []any{int64(3), nil}},
				{[]int64{3}, []any{int64(33)}, []any{nil}},
			},
			start: math.MinInt64, end: math.MaxInt64,
			times: []int64{1, 3, 5, 9}, a: int64s(10, 33, 50, 90), b: []any{nil, int64(3), nil, nil},
		},
		{
			name:   "time range is half open",
			writes: []write{{[]int64{4, 1, 3, 2, 5}, int64s(4, 1, 3, 2, 5), nulls(5)}},
			start:  2, end: 5,
			times: []int64{2, 3, 4}, a: int64s(2, 3, 4), b: nulls(3),
		},
		{
			name:   "sorted range search",
			writes: []write{{seq(0, 20), nulls(20), nulls(20)}, {seq(20, 5), int64s(1, 2, 3, 4, 5), nulls(5)}},
			start:  19, end: 22,
			times: []int64{19, 20, 21}, a: []any{nil, int64(1), int64(2)}, b: nulls(3),
		},
		{
			name:   "empty range",
			writes: []write{{[]int64{1, 2}, int64s(1, 2), nulls(2)}},
			start:  3, end: 3,
			times: []int64{}, a: []any{}, b: []any{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{BlockRows: 8})
			c := m.Chunk(1, "d")
			for _, w := range tc.writes {
				require.NoError(t, c.Write(tab(w.times, i64("a", w.a...), i64("b", w.b...)), ids(1, 2)))
			}
			got := c.Snapshot().Read([]ColumnRef{ref(1, "a", schema.Int64), ref(2, "b", schema.Int64)}, tc.start, tc.end)
			assert.Equal(t, tc.times, got.Times)
			assert.Equal(t, tc.a, column(got, 0))
			assert.Equal(t, tc.b, column(got, 1))
		})
	}
}

func TestReadColumnOfOtherTypeIsNull(t *testing.T) {
	m := New(Options{})
	c := m.Chunk(1, "d")
	require.NoError(t, c.Write(tab(seq(0, 2), i64("a", int64(1), int64(2))), ids(1)))
	got := readAll(c, ref(1, "a", schema.Double), ref(1, "again", schema.Int64), ref(1, "s", schema.String))
	assert.Equal(t, nulls(2), column(got, 0))
	assert.Equal(t, int64s(1, 2), column(got, 1))
	assert.Nil(t, got.Columns[1].Validity, "no nulls, no bitmap")
	assert.Equal(t, nulls(2), column(got, 2))
	assert.Equal(t, []int32{0, 0, 0}, got.Columns[2].Offsets)

	empty := m.Chunk(1, "empty").Snapshot().Read([]ColumnRef{ref(1, "a", schema.String)}, 0, 10)
	assert.Empty(t, empty.Times)
	assert.Equal(t, []int32{0}, empty.Columns[0].Offsets)
}

func TestReadOwnsItsMemory(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	require.NoError(t, c.Write(tab(seq(0, 2), i64("a", int64(1), int64(2)), mkCol("s", schema.String, 0, "xy", "z")), ids(1, 2)))
	refs := []ColumnRef{ref(1, "a", schema.Int64), ref(2, "s", schema.String)}
	got := readAll(c, refs...)
	for i := range got.Columns[0].Values {
		got.Columns[0].Values[i] = 0xAA
	}
	for i := range got.Columns[1].Data {
		got.Columns[1].Data[i] = 'Q'
	}
	got.Times[0] = 99
	again := readAll(c, refs...)
	assert.Equal(t, []int64{0, 1}, again.Times)
	assert.Equal(t, int64s(1, 2), column(again, 0))
	assert.Equal(t, []any{"xy", "z"}, column(again, 1))
}

func TestWideTabletThenAnotherWrite(t *testing.T) {
	const width = 10_000
	m := New(Options{})
	c := m.Chunk(1, "d")
	require.NoError(t, c.Write(tab(seq(0, 1), i64("s0", int64(-1))), ids(0)))
	cols := make([]tablet.Column, width)
	idv := make([]schema.PropertyID, width)
	for i := range cols {
		cols[i] = i64(fmt.Sprint("c", i), int64(i))
		idv[i] = schema.PropertyID(i + 1)
	}
	require.NoError(t, c.Write(tab(seq(1, 1), cols...), idv))
	require.Equal(t, width+1, c.Width())
	// A second write: some old columns (reversed), one new, on the next row.
	require.NoError(t, c.Write(tab(seq(2, 1), i64("new", int64(7)), i64("c9999", int64(-9999)), i64("c0", int64(-100)), i64("s0", int64(-2))), ids(width+1, width, 1, 0)))
	require.Equal(t, width+2, c.Width())

	refs := make([]ColumnRef, 0, width+2)
	refs = append(refs, ref(0, "s0", schema.Int64))
	for i := range width {
		refs = append(refs, ref(schema.PropertyID(i+1), fmt.Sprint("c", i), schema.Int64))
	}
	refs = append(refs, ref(width+1, "new", schema.Int64))
	got := readAll(c, refs...)
	require.Len(t, got.Columns, width+2)
	assert.Equal(t, []any{int64(-1), nil, int64(-2)}, column(got, 0))
	assert.Equal(t, []any{nil, int64(0), int64(-100)}, column(got, 1))
	assert.Equal(t, []any{nil, int64(5000), nil}, column(got, 5001))
	assert.Equal(t, []any{nil, int64(width - 1), int64(-9999)}, column(got, width))
	assert.Equal(t, []any{nil, nil, int64(7)}, column(got, width+1))
	for i := 1; i <= width; i++ {
		require.Equal(t, int64(i-1), got.Columns[i].Int64(1), "column %d", i)
	}
}

func TestMemtableChunks(t *testing.T) {
	m := New(Options{})
	for _, d := range []string{"z", "", "b", "a"} {
		m.Chunk(1, d)
	}
	m.Chunk(2, "other")
	c1 := m.Chunk(1, "b")
	c2, ok := m.Lookup(1, "b")
	require.True(t, ok)
	assert.Same(t, c1, c2)
	_, ok = m.Lookup(2, "b")
	assert.False(t, ok)
	assert.Equal(t, []string{"", "a", "b", "z"}, m.Devices(1))
	assert.Equal(t, []string{"other"}, m.Devices(2))
	assert.Empty(t, m.Devices(3))

	require.NoError(t, c1.Write(tab(seq(0, 1), i64("a", int64(1))), ids(1)))
	require.NoError(t, m.Chunk(2, "other").Write(tab(seq(0, 3), mkCol("s", schema.String, 0, "x", "y", "z")), ids(1)))
	var sum int64
	for _, typ := range []schema.TypeID{1, 2} {
		for _, d := range m.Devices(typ) {
			c, _ := m.Lookup(typ, d)
			sum += c.MemoryUsage()
		}
	}
	assert.Equal(t, sum, m.MemoryUsage())
	assert.Positive(t, sum)
}

// TestDirectoryPairsNamesWithTheirChunks: the sorted directory's chunks
// are the map's, in the names' order, for whole lists and prefix ranges;
// a device added after a listing is in the next one.
func TestDirectoryPairsNamesWithTheirChunks(t *testing.T) {
	m := New(Options{})
	for _, d := range []string{"p/2", "q/1", "p/1", "", "p", "r"} {
		m.Chunk(1, d)
	}
	check := func(prefix string, want []string) {
		t.Helper()
		names, chunks := m.DirectoryWithPrefix(1, prefix)
		assert.Equal(t, want, names, "prefix %q", prefix)
		require.Len(t, chunks, len(names))
		for i, d := range names {
			c, ok := m.Lookup(1, d)
			require.True(t, ok)
			assert.Same(t, c, chunks[i], d)
		}
		assert.Equal(t, want, m.DevicesWithPrefix(1, prefix))
	}
	check("", []string{"", "p", "p/1", "p/2", "q/1", "r"})
	check("p/", []string{"p/1", "p/2"})
	check("p", []string{"p", "p/1", "p/2"})
	check("zz", []string{})
	m.Chunk(1, "p/0")
	check("p/", []string{"p/0", "p/1", "p/2"})
	names, chunks := m.Directory(2)
	assert.Empty(t, names)
	assert.Empty(t, chunks)
}

func TestOptionsBlockRows(t *testing.T) {
	cases := []struct{ in, want int }{{0, 1024}, {-5, 1024}, {1, 8}, {8, 8}, {100, 128}, {4096, 4096}, {1 << 30, 1 << 20}}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.in), func(t *testing.T) {
			m := New(Options{BlockRows: tc.in})
			c := m.Chunk(1, "d")
			assert.Equal(t, tc.want, c.blockRows)
			assert.Equal(t, tc.want, 1<<c.shift)
		})
	}
}

func TestSnapshotIsStableWhileWritesGoOn(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	refs := []ColumnRef{ref(1, "i", schema.Int64), ref(2, "s", schema.String), ref(3, "b", schema.Boolean), ref(4, "later", schema.Double)}
	require.NoError(t, c.Write(tab(seq(0, 3),
		i64("i", int64(1), int64(2), int64(3)),
		mkCol("s", schema.String, 0, "a", "bb", "ccc"),
		mkCol("b", schema.Boolean, 0, true, false, true),
	), ids(1, 2, 3)))
	snap := c.Snapshot()
	want := snap.Read(refs, math.MinInt64, math.MaxInt64)

	// Growth of every buffer, a gap that adds bitmaps, a new column, new
	// row blocks and equal times: none of it shows in the old snapshot.
	require.NoError(t, c.Write(tab(seq(3, 1), i64("i", nil)), ids(1)))
	require.NoError(t, c.Write(tab([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		i64("i", int64(9), nil, int64(9), int64(9), int64(9), int64(9), int64(9), int64(9), int64(9), int64(9)),
		mkCol("s", schema.String, 0, "x", "y", nil, "long string here", "z", "z", "z", "z", "z", "z"),
		mkCol("b", schema.Boolean, 0, false, nil, true, true, true, true, true, true, true, true),
		mkCol("later", schema.Double, 0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0),
	), ids(1, 2, 3, 4)))
	assert.Equal(t, 3, snap.Rows())
	assert.Equal(t, 3, snap.Width())
	assert.Equal(t, want, snap.Read(refs, math.MinInt64, math.MaxInt64))
	assert.Equal(t, 14, c.Snapshot().Rows())
	assert.Equal(t, 4, c.Snapshot().Width())
}

func TestZeroRowWrite(t *testing.T) {
	m := New(Options{})
	c := m.Chunk(1, "d")
	require.NoError(t, c.Write(tab(seq(0, 1), i64("a", int64(1))), ids(1)))
	require.NoError(t, c.Write(tab([]int64{}, tablet.Column{Name: "s", Type: schema.String}, i64("a")), ids(2, 1)))
	assert.Equal(t, 2, c.Width(), "a zero-row write still adds its columns")
	assert.Equal(t, 1, c.Snapshot().Rows())
	got := readAll(c, ref(1, "a", schema.Int64), ref(2, "s", schema.String))
	assert.Equal(t, []any{int64(1)}, column(got, 0))
	assert.Equal(t, []any{nil}, column(got, 1))
}

// TestSmallMappingStopsWhereTheChunkOutgrowsIt: the id-table-less mapping
// of a narrow chunk looks at no column past the one that makes the chunk
// outgrow smallChunkCols; a wide Write is then mapped once, with a table.
// It checked every column for duplicates against all before it, so adding
// 10,000 columns to a narrow chunk took 31-41 ms instead of 1-2
// (BenchmarkExpansion/history=1/new=10000). A broken column far past the
// limit shows whether it was looked at.
func TestSmallMappingStopsWhereTheChunkOutgrowsIt(t *testing.T) {
	c := New(Options{}).Chunk(1, "d")
	one := idRange(0, 1)
	require.NoError(t, c.Write(int64Tablet(seq(0, 1), one, nil), one))
	ids := idRange(1, 10_000)
	tb := int64Tablet(seq(1, 1), ids, nil)
	tb.Columns[5_000].Type = schema.PropertyType(200) // unknown: an error if mapped here
	ms := make([]mapped, len(ids))
	mp, err := c.mapSmall(tb, ids, ms, mapping{width: c.Width(), maxPos: -1})
	require.NoError(t, err)
	assert.Equal(t, smallChunkCols, mp.width+mp.added-1, "stops at the first column past the limit")
	err = c.Write(tb, ids)
	require.ErrorContains(t, err, "unknown property type 200", "the Write itself checks every column")
	require.Equal(t, 1, c.Width(), "and a failed Write adds none")
}

// TestClearedChunkStartsWithAFreshRowBlock: a chunk's first row block
// lives in the chunk; after Clear the next write must not find the old
// rows' slots and times there (a null column read back the old values,
// and a write at row 0 of a column whose old block started later went
// out of bounds).
func TestClearedChunkStartsWithAFreshRowBlock(t *testing.T) {
	m := New(Options{BlockRows: 8})
	c := m.Chunk(1, "d")
	require.NoError(t, c.Write(tab(seq(0, 2), i64("a", int64(1), int64(2)), i64("b", int64(10), int64(20))), ids(1, 2)))
	old := c.Snapshot()
	c.Clear()
	require.NoError(t, c.Write(tab(seq(0, 2), i64("c", int64(7), int64(8)), i64("e", nil, nil)), ids(3, 4)))
	got := readAll(c, ref(3, "c", schema.Int64), ref(4, "e", schema.Int64))
	assert.Equal(t, []any{int64(7), int64(8)}, column(got, 0))
	assert.Equal(t, []any{nil, nil}, column(got, 1), "b's old values must not show as e")
	kept := old.Read([]ColumnRef{ref(2, "b", schema.Int64)}, math.MinInt64, math.MaxInt64)
	assert.Equal(t, []any{int64(10), int64(20)}, column(kept, 0), "a snapshot from before Clear reads what it saw")

	c = m.Chunk(1, "e")
	require.NoError(t, c.Write(tab(seq(0, 4), i64("a", nil, nil, nil, int64(3))), ids(1)))
	c.Clear()
	require.NoError(t, c.Write(tab(seq(0, 1), i64("a", int64(5))), ids(1)))
	assert.Equal(t, []any{int64(5)}, column(readAll(c, ref(1, "a", schema.Int64)), 0))
}

// TestSmallWritesAllocateLittle: a device's first row of 10 columns
// takes one allocation for its values (not one per column), and a row
// appended where the blocks have room takes only its published state:
// with a million small devices, every object is one more for the
// collector to trace.
func TestSmallWritesAllocateLittle(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("allocation counts vary under the race detector")
	}
	const cols = 10
	idv := idRange(0, cols)
	m := New(Options{})
	row := int64Tablet([]int64{0}, idv, nil)
	chunks := make([]*Chunk, 201) // AllocsPerRun runs once more to warm up
	for i := range chunks {
		chunks[i] = m.Chunk(1, fmt.Sprintf("dev-%06d", i))
	}
	d := 0
	first := testing.AllocsPerRun(200, func() {
		require.NoError(t, chunks[d].Write(row, idv))
		d++
	})
	c := m.Chunk(1, "dev-appended")
	require.NoError(t, c.Write(int64Tablet([]int64{0}, idv, nil), idv))
	next := int64Tablet([]int64{1}, idv, nil)
	require.NoError(t, c.Write(next, idv)) // its blocks grow to their usual size here
	appended := testing.AllocsPerRun(100, func() {
		next.Times[0]++
		require.NoError(t, c.Write(next, idv))
	})
	t.Logf("allocations: %.1f for a new device's first row, %.1f for a row appended", first, appended)
	// A row with a value in one column of ten takes room for one value:
	// the columns all null take no share of the write's first slab.
	sparse := int64Tablet([]int64{0}, idv, func(i int) bool { return i == 0 })
	dense := int64Tablet([]int64{0}, idv, nil)
	bytesPerWrite := func(row *tablet.Tablet) float64 {
		const n = 1000
		fresh := make([]*Chunk, n)
		for i := range fresh {
			fresh[i] = m.Chunk(2, fmt.Sprintf("%p-%06d", row, i))
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, c := range fresh {
			require.NoError(t, c.Write(row, idv))
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / n
	}
	sparseBytes, denseBytes := bytesPerWrite(sparse), bytesPerWrite(dense)
	t.Logf("bytes allocated by a first row: %.0f with one value of ten, %.0f with ten", sparseBytes, denseBytes)
	assert.Less(t, sparseBytes, denseBytes-60, "nine null columns take 72 bytes less room")
	assert.LessOrEqual(t, appended, 1.0)
	assert.LessOrEqual(t, first, 5.0) // columns, slots, values, times, state
}
