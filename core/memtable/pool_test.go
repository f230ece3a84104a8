package memtable

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// wideTablet returns rows rows from time t0 with cols Int64 columns whose
// values are base+row*cols+col.
func wideTablet(t0 int64, rows, cols int, base int64) (*tablet.Tablet, []schema.PropertyID) {
	ids := idRange(0, cols)
	tb := int64Tablet(seq(int(t0), rows), ids, nil)
	for c := range cols {
		vals := make([]any, rows)
		for r := range rows {
			vals[r] = base + int64(r*cols+c)
		}
		tb.Columns[c] = i64(tb.Columns[c].Name, vals...)
	}
	return tb, ids
}

func TestPoolRecyclesOnlyReleasedMemtables(t *testing.T) {
	pool := NewPool(64 << 20)
	const rows, cols = 1024, 200 // 1.6 MB of values: most of it in full slabs
	m1 := New(Options{Pool: pool})
	tb, ids := wideTablet(0, rows, cols, 0)
	require.NoError(t, m1.Chunk(1, "d").Write(tb, ids))
	snap := m1.Chunk(1, "d").Snapshot()
	want := snap.Read([]ColumnRef{ref(ids[0], "c0", schema.Int64), ref(ids[cols-1], "last", schema.Int64)}, 0, rows)

	m1.Retain() // a reader
	m1.Release()
	require.Zero(t, pool.Bytes(), "a reader still holds the memtable: nothing may be recycled")

	m2 := New(Options{Pool: pool})
	tb2, _ := wideTablet(0, rows, cols, 1<<40)
	require.NoError(t, m2.Chunk(1, "d").Write(tb2, ids))
	got := snap.Read([]ColumnRef{ref(ids[0], "c0", schema.Int64), ref(ids[cols-1], "last", schema.Int64)}, 0, rows)
	require.Equal(t, column(want, 0), column(got, 0))
	require.Equal(t, column(want, 1), column(got, 1))

	m1.Release() // the reader is done
	pool.Settle()
	kept := pool.Bytes()
	require.Greater(t, kept, int64(rows*cols*8/2), "most of the values' slabs come back")
	require.Zero(t, kept%slabBytes)

	// The next memtable writes into them; columns with nulls between
	// values, strings and Booleans read back as written.
	m3 := New(Options{Pool: pool})
	require.NoError(t, m3.Chunk(1, "d").Write(tb2, ids))
	require.Less(t, pool.Bytes(), kept, "the next memtable takes the kept slabs")
	var colsMixed []tablet.Column
	var cells [][]any
	for i, typ := range allTypes {
		vals := make([]any, 64)
		for r := range vals {
			if r%5 != 2 {
				vals[r] = sample(typ, r+i)
			}
		}
		colsMixed = append(colsMixed, mkCol("m", typ, 0, vals...))
		cells = append(cells, vals)
	}
	mixedIDs := idRange(1000, len(allTypes))
	require.NoError(t, m3.Chunk(1, "e").Write(tab(seq(0, 64), colsMixed...), mixedIDs))
	for i, typ := range allTypes {
		out := m3.Chunk(1, "e").Snapshot().Read([]ColumnRef{ref(mixedIDs[i], "m", typ)}, 0, 64)
		require.Equal(t, cells[i], column(out, 0), "type %v", typ)
	}
	out := m3.Chunk(1, "d").Snapshot().Read([]ColumnRef{ref(ids[7], "c7", schema.Int64)}, 0, rows)
	require.Equal(t, column(tb2, 7), column(out, 0))
}

func TestPoolKeepsZeroedSlabsUpToItsLimit(t *testing.T) {
	pool := NewPool(2 * slabBytes)
	slabs := [][]byte{pool.get(), pool.get(), pool.get()}
	for _, s := range slabs {
		require.Len(t, s, slabBytes)
		for i := range s {
			s[i] = 0xAB
		}
	}
	pool.put(slabs)
	require.Equal(t, int64(2*slabBytes), pool.Bytes(), "the third slab is over the limit")
	for range 2 {
		s := pool.get()
		require.Len(t, s, slabBytes)
		for i, b := range s {
			if b != 0 {
				t.Fatalf("byte %d of a recycled slab is %#x, not zero", i, b)
			}
		}
	}
	require.Zero(t, pool.Bytes())
	pool.put([][]byte{pool.get()})
	pool.Drain()
	require.Zero(t, pool.Bytes())
	pool.put([][]byte{pool.get()})
	require.Zero(t, pool.Bytes(), "a drained pool keeps nothing more")
	var none *Pool
	none.Drain() // a database without a pool
}

func TestClearGivesSlabsBack(t *testing.T) {
	pool := NewPool(64 << 20)
	m := New(Options{Pool: pool})
	tb, ids := wideTablet(0, 1024, 100, 0)
	require.NoError(t, m.Chunk(1, "d").Write(tb, ids))
	m.Clear()
	pool.Settle()
	require.Positive(t, pool.Bytes())
	require.Zero(t, m.MemoryUsage())
}

// TestSmallChunkKeepsNoIDTable: a device of up to smallChunkCols columns
// written again and again, in its columns' order or not, has no id table;
// one that outgrows smallChunkCols gets one, and reads the same.
func TestSmallChunkKeepsNoIDTable(t *testing.T) {
	c := New(Options{}).Chunk(1, "d")
	ten := idRange(0, 10)
	for w := range 3 {
		ids := slices.Clone(ten)
		if w == 2 {
			slices.Reverse(ids) // not at their own index: found by the scan
		}
		require.NoError(t, c.Write(int64Tablet(seq(w*10, 10), ids, nil), ids))
		require.Nil(t, c.index.Load(), "write %d: no id table for 10 columns", w)
		require.Nil(t, c.book, "write %d: nor its bookkeeping", w)
	}
	for _, twice := range [][]schema.PropertyID{{1, 1}, {3, 2, 3}, {20, 21, 20}} {
		err := c.Write(int64Tablet(seq(30, 1), twice, nil), twice)
		require.ErrorContains(t, err, "appears twice", "%v", twice)
	}
	more := idRange(3, 14) // 3..9 existing, 10..16 new: 17 columns
	require.NoError(t, c.Write(int64Tablet(seq(30, 2), more, nil), more))
	require.NotNil(t, c.index.Load(), "17 columns: an id table")
	require.Equal(t, 17, c.Width())
	for _, twice := range [][]schema.PropertyID{{4, 5, 4}, {16, 30, 16}, {30, 31, 30}} {
		err := c.Write(int64Tablet(seq(40, 1), twice, nil), twice)
		require.ErrorContains(t, err, "appears twice", "%v, through the id table", twice)
	}
	require.Equal(t, 17, c.Width(), "a refused write adds no column")
	require.Equal(t, 32, c.Snapshot().Rows(), "nor rows")
	got := readAll(c, ref(4, "c4", schema.Int64), ref(16, "c16", schema.Int64))
	require.Equal(t, 32, got.Rows())
	assert.Equal(t, int64(1), got.Columns[0].Int64(0))
	assert.Equal(t, int64(2), got.Columns[1].Int64(31))
	assert.False(t, got.Columns[1].Valid(0), "c16 is new at row 30")
}
