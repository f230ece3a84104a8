package memtable

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// The block-run fast path of Read (rows in time order, no repeats) must
// return what the row-by-row merge returns, whatever the blocks look like:
// columns that start mid-block, nulls, gaps, absent blocks, ranges that
// start and end inside blocks.
func TestReadRunMatchesRowByRowMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	types := []schema.PropertyType{schema.Int64, schema.String, schema.Double, schema.Binary, schema.Int32, schema.Float}
	for trial := range 40 {
		c := New(Options{BlockRows: 8}).Chunk(1, "d")
		next := 0
		for range 1 + rng.IntN(8) {
			n := 1 + rng.IntN(13)
			var colIDs []schema.PropertyID
			w := tab(seq(next, n))
			for id := range schema.PropertyID(len(types)) {
				if rng.IntN(3) == 0 {
					continue // the column is absent from this write: a gap
				}
				cells := make([]any, n)
				for i := range cells {
					if rng.IntN(4) != 0 {
						cells[i] = sample(types[id], next+i)
					}
				}
				w.Columns = append(w.Columns, mkCol(fmt.Sprint("c", id), types[id], rng.IntN(3), cells...))
				colIDs = append(colIDs, id)
			}
			require.NoError(t, c.Write(w, colIDs))
			next += n
		}
		refs := make([]ColumnRef, len(types))
		for id := range refs {
			refs[id] = ref(schema.PropertyID(id), fmt.Sprint("c", id), types[id])
		}
		s := c.Snapshot()
		start, end := int64(rng.IntN(next+1)), int64(rng.IntN(next+2))
		rs := s.selectRows(start, end)
		require.True(t, rs.run || len(rs.times) == 0, "trial %d: in-order unique times take the fast path", trial)
		slow := rs
		slow.run = false
		vs := make([]view, (next+7)/8)
		for _, r := range refs {
			fast := s.readColumn(r, rs, vs)
			want := s.readColumn(r, slow, vs)
			assert.Equal(t, cellsOf(want, len(rs.times)), cellsOf(fast, len(rs.times)), "trial %d column %s [%d,%d)", trial, r.Name, start, end)
			assert.Equal(t, want.Validity == nil, fast.Validity == nil, "trial %d column %s: validity only when nulls", trial, r.Name)
		}
	}
}

func TestReadRepeatedTimesLeaveTheFastPath(t *testing.T) {
	c := New(Options{BlockRows: 8}).Chunk(1, "d")
	require.NoError(t, c.Write(tab([]int64{1, 2, 2, 3}, i64("a", int64(1), int64(2), nil, int64(4))), ids(0)))
	rs := c.Snapshot().selectRows(0, 10)
	assert.False(t, rs.run)
	got := readAll(c, ref(0, "a", schema.Int64))
	assert.Equal(t, int64s(1, 2, 4), column(got, 0), "the repeated time keeps its last non-null value")
}

// TestCursorOfAChunkInTimeOrder: a chunk whose rows arrived in time order
// is read a batch at a time, equal times merged even across the writes
// that brought them, and a group of equal times never split.
func TestCursorOfAChunkInTimeOrder(t *testing.T) {
	mt := New(Options{BlockRows: 8})
	c := mt.Chunk(1, "d")
	require.NoError(t, c.Write(tab([]int64{1, 1, 2, 3}, i64("k", int64(10), nil, int64(20), int64(30))), ids(1)))
	require.NoError(t, c.Write(tab([]int64{3, 3, 4, 5, 6, 7, 8, 9, 10}, i64("k", nil, int64(31), int64(40), int64(50), int64(60), int64(70), int64(80), int64(90), int64(100))), ids(1)))
	s := c.Snapshot()
	refs := []ColumnRef{ref(1, "k", schema.Int64)}
	for _, batch := range []int{1, 2, 3, 100} {
		cur := s.Cursor(refs, 1, 10, batch)
		require.True(t, cur.sorted, "the chunk is in time order")
		var times []int64
		var vals []any
		for b := cur.Next(); b != nil; b = cur.Next() {
			require.LessOrEqual(t, b.Rows(), batch)
			times = append(times, b.Times...)
			vals = append(vals, column(b, 0)...)
		}
		assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, times, "batch %d", batch)
		assert.Equal(t, []any{int64(10), int64(20), int64(31), int64(40), int64(50), int64(60), int64(70), int64(80), int64(90)}, vals, "batch %d", batch)
	}
	assert.Nil(t, s.Cursor(refs, 11, 20, 4).Next())
	assert.Nil(t, s.Cursor(refs, 5, 5, 4).Next())
}

// TestCursorViews: a cursor that returns views reads the same rows as one
// that copies, for every type, with nulls, gaps, strings, repeated and
// out-of-order times; its dense columns are the chunk's own memory.
func TestCursorViews(t *testing.T) {
	for _, sorted := range []bool{true, false} {
		m := New(Options{BlockRows: 8})
		c := m.Chunk(1, "d")
		ids := idRange(0, len(allTypes))
		next := 0
		for w := range 9 {
			n := 1 + w*3%7
			times := seq(next, n)
			next += n
			if !sorted && w == 4 {
				times[0] = 2 // back in time, onto an existing time
			}
			var cols []tablet.Column
			for k, typ := range allTypes {
				cells := make([]any, n)
				for r := range cells {
					if (r+k+w)%5 != 0 || typ == schema.Int64 { // Int64 stays dense
						cells[r] = sample(typ, w*100+r+k)
					}
				}
				cols = append(cols, mkCol(fmt.Sprint("c", k), typ, w%2, cells...))
			}
			require.NoError(t, c.Write(tab(times, cols...), ids))
		}
		refs := make([]ColumnRef, len(allTypes))
		for k, typ := range allTypes {
			refs[k] = ref(ids[k], fmt.Sprint("c", k), typ)
		}
		snap := c.Snapshot()
		for _, rng := range [][2]int64{{math.MinInt64, math.MaxInt64}, {3, 17}, {9, 10}} {
			want := snap.Read(refs, rng[0], rng[1])
			cur := snap.Cursor(refs, rng[0], rng[1], 5)
			cur.Views()
			var times []int64
			got := make([][]any, len(refs))
			for b := cur.Next(); b != nil; b = cur.Next() {
				if sorted && len(times) == 0 && rng[0] == math.MinInt64 {
					// Int64 is dense: the first batch's column is row block 0's own block.
					p := snap.pos(ids[2])
					block := snap.st.blocks[0].slotArray()[p].vals.Load()
					require.Same(t, block, &b.Columns[2].Values[0], "a view, not a copy")
					require.LessOrEqual(t, b.Rows(), 8, "a view batch ends with its row block")
				}
				times = append(times, b.Times...)
				for k := range refs {
					got[k] = append(got[k], column(b, k)...)
				}
			}
			require.Equal(t, want.Times, times, "sorted %v range %v", sorted, rng)
			for k := range refs {
				require.Equal(t, column(want, k), got[k], "sorted %v range %v column %v", sorted, rng, allTypes[k])
			}
		}
	}
}

// TestCursorIntoReusesOneBatch: one cursor, reset with CursorInto over
// chunks of other widths, lengths and time orders, and returning views in
// one reused batch, reads what Read reads; the batch is the same each time.
func TestCursorIntoReusesOneBatch(t *testing.T) {
	m := New(Options{BlockRows: 8})
	ids := idRange(0, 3)
	refs := []ColumnRef{ref(ids[0], "a", schema.Int64), ref(ids[1], "b", schema.Int64), ref(ids[2], "c", schema.Int64)}
	var snaps []Snapshot
	for d, rows := range []int{20, 1, 0, 9} {
		c := m.Chunk(1, fmt.Sprint("d", d))
		times := seq(100*d, rows)
		if d == 3 {
			slices.Reverse(times) // out of order: the copying way
		}
		cells := func(k int) []any {
			out := make([]any, rows)
			for r := range out {
				out[r] = int64(1000*d + 10*r + k)
			}
			return out
		}
		cols := []tablet.Column{i64("a", cells(0)...), i64("b", cells(1)...)}
		if d != 1 {
			cols = append(cols, i64("c", cells(2)...)) // d1 lacks c: read as nulls
		}
		require.NoError(t, c.Write(tab(times, cols...), ids[:len(cols)]))
		snaps = append(snaps, c.Snapshot())
	}
	var cur Cursor
	cur.Views()
	cur.ReuseBatches()
	var batch *tablet.Tablet
	for round := range 2 {
		for i, snap := range snaps {
			want := snap.Read(refs, math.MinInt64, math.MaxInt64)
			snap.CursorInto(&cur, refs, math.MinInt64, math.MaxInt64, 5)
			var times []int64
			got := make([][]any, len(refs))
			for b := cur.Next(); b != nil; b = cur.Next() {
				if i == 0 { // in time order, no repeated time: views in the one batch
					if batch == nil {
						batch = b
					}
					require.Same(t, batch, b, "round %d: the batch is reused", round)
				}
				times = append(times, b.Times...)
				for k := range refs {
					got[k] = append(got[k], column(b, k)...)
				}
			}
			if want.Rows() == 0 {
				require.Empty(t, times, "chunk %d", i)
				continue
			}
			require.Equal(t, want.Times, times, "chunk %d", i)
			for k := range refs {
				require.Equal(t, column(want, k), got[k], "chunk %d column %d", i, k)
			}
		}
	}
}

// TestSummarizeMatchesSnapshots: Summarize gives each chunk the row count
// and time bounds its snapshot gives, for chunks with no rows, one row,
// rows in order across row blocks, rows out of order, deleted rows and no
// columns, over more chunks than one goroutine takes.
func TestSummarizeMatchesSnapshots(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m := New(Options{BlockRows: 8})
	n := 2*summarizePart + 77
	chunks := make([]*Chunk, n)
	for i := range chunks {
		c := m.Chunk(1, fmt.Sprintf("dev-%06d", i))
		chunks[i] = c
		var times []int64
		switch i % 6 {
		case 0: // no write
		case 1:
			times = []int64{int64(i)}
		case 2: // in order, over several row blocks
			for k := range 1 + rng.IntN(40) {
				times = append(times, int64(10*k+rng.IntN(10)))
			}
		case 3: // out of order
			for range 1 + rng.IntN(40) {
				times = append(times, rng.Int64N(1000)-500)
			}
		case 4: // times only: a tablet without columns
			times = []int64{-7, -7, 3}
		case 5: // in order, two writes, then a delete of some
			times = []int64{1, 5, 9}
		}
		for len(times) > 0 {
			k := min(len(times), 1+rng.IntN(9)) // several writes: times grow between them
			cols := []tablet.Column{}
			if i%6 != 4 {
				cells := make([]any, k)
				for j := range cells {
					cells[j] = int64(j)
				}
				cols = append(cols, i64("a", cells...))
			}
			require.NoError(t, c.Write(tab(times[:k], cols...), ids(0)[:len(cols)]))
			times = times[k:]
		}
		if i%6 == 5 {
			c.Delete(4, 6)
		}
	}
	sums := Summarize(chunks)
	require.Len(t, sums, n)
	for i, c := range chunks {
		s := c.Snapshot()
		first, last, ok := s.TimeBounds()
		if !ok {
			first, last = 0, 0
		}
		require.Equal(t, Summary{Rows: s.Rows(), First: first, Last: last}, sums[i], "chunk %d", i)
	}
	assert.Empty(t, Summarize(nil))
}
