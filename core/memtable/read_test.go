package memtable

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
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
