package segment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
)

// TestSums: the footer holds the sum of each numeric column among the
// first statsColumns, nulls skipped, over every row group and device;
// none for other columns or for an INT sum that overflows.
func TestSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := map[string][]row{}
	want := make([]float64, len(allTypes)) // float columns
	wantI := make([]int64, len(allTypes))  // int columns
	for d := range 7 {
		for i := range 50 + rng.IntN(400) {
			r := row{time: int64(i), vals: make([]any, len(allTypes))}
			for j, c := range allTypes {
				if rng.IntN(4) == 0 {
					continue // null
				}
				r.vals[j] = sample(c.Type, rng.IntN(5000))
				switch v := r.vals[j].(type) {
				case int32:
					wantI[j] += int64(v)
				case int64:
					wantI[j] += v
				case float32:
					want[j] += float64(v)
				case float64:
					want[j] += v
				}
			}
			data[fmt.Sprint("dev-", d)] = append(data[fmt.Sprint("dev-", d)], r)
		}
	}
	f, _ := writeFile(t, Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 300}, data, 37, 1)
	for j, c := range allTypes {
		s := f.Sum(j)
		switch c.Type {
		case schema.Int32, schema.Int64:
			require.True(t, s.Valid, c.Name)
			assert.Equal(t, wantI[j], s.Int, c.Name)
		case schema.Float, schema.Double:
			require.True(t, s.Valid, c.Name)
			assert.InDelta(t, want[j], s.Float, 1e-6*math.Abs(want[j]), c.Name)
		default:
			assert.False(t, s.Valid, "%s has no sum", c.Name)
		}
	}
	assert.False(t, f.Sum(len(allTypes)).Valid)

	// An INT64 sum that overflows is not kept; a DOUBLE one with an
	// infinity is.
	cols := []Column{{ID: 1, Name: "i", Type: schema.Int64}, {ID: 2, Name: "x", Type: schema.Double}}
	big := map[string][]row{"d": {
		{time: 1, vals: []any{int64(math.MaxInt64), 1.0}},
		{time: 2, vals: []any{int64(1), math.Inf(1)}},
	}}
	f, _ = writeFile(t, Layout{Columns: cols}, WriterOptions{}, big, 10, 0)
	assert.False(t, f.Sum(0).Valid, "an overflowed sum")
	require.True(t, f.Sum(1).Valid)
	assert.True(t, math.IsInf(f.Sum(1).Float, 1))
}

// TestSumsOnlyForTheFirstColumns: a wide file keeps sums for its first
// statsColumns columns only, so its footer stays small.
func TestSumsOnlyForTheFirstColumns(t *testing.T) {
	l := doubleLayout(statsColumns + 5)
	path := t.TempDir() + "/w.parquet"
	w, err := Create(path, l, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Append("d", doubleTablet(len(l.Columns), 10, 0)))
	info, err := w.Close()
	require.NoError(t, err)
	f, err := Open(path, info.Size)
	require.NoError(t, err)
	defer f.Close()
	assert.True(t, f.Sum(statsColumns-1).Valid)
	assert.False(t, f.Sum(statsColumns).Valid)
}
