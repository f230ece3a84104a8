package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/tablet"
)

// sliceSource returns its batches one by one.
type sliceSource struct{ batches []*tablet.Tablet }

func (s *sliceSource) Next() (*tablet.Tablet, error) {
	if len(s.batches) == 0 {
		return nil, nil
	}
	b := s.batches[0]
	s.batches = s.batches[1:]
	return b, nil
}

// TestMergerMatchesNewestNonNullWins merges random sources (sorted unique
// times, nulls, batches of random sizes) and compares with a model.
func TestMergerMatchesNewestNonNullWins(t *testing.T) {
	for seed := range 40 {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 3))
			nsrc := 1 + rng.IntN(4)
			want := map[int64]map[string]any{}
			srcs := make([]runSource, nsrc)
			for s := range srcs {
				var times []int64
				for tm := int64(0); tm < 60; tm++ {
					if rng.IntN(3) == 0 {
						times = append(times, tm)
					}
				}
				k := make([]int64, len(times))
				kv := make([]bool, len(times))
				str := make([]string, len(times))
				sv := make([]bool, len(times))
				for i, tm := range times {
					k[i], kv[i] = int64(s*100+i), rng.IntN(3) != 0
					str[i], sv[i] = fmt.Sprint("s", s, "-", i), rng.IntN(3) != 0
					row := want[tm]
					if row == nil {
						row = map[string]any{"k": nil, "s": nil}
						want[tm] = row
					}
					if kv[i] { // later sources are newer
						row["k"] = k[i]
					}
					if sv[i] {
						row["s"] = str[i]
					}
				}
				whole := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Int64s("k", k, kv), tablet.Strings("s", str, sv)}}
				src := &sliceSource{}
				for from := 0; from < len(times); {
					to := min(len(times), from+1+rng.IntN(9))
					src.batches = append(src.batches, whole.Slice(from, to))
					from = to
				}
				srcs[s] = src
			}
			batch := 1 + rng.IntN(10)
			m := newMerger(srcs, batch)
			got := map[int64]map[string]any{}
			last := int64(-1)
			for {
				b, err := m.Next()
				require.NoError(t, err)
				if b == nil {
					break
				}
				require.LessOrEqual(t, b.Rows(), batch)
				for i, tm := range b.Times {
					require.Greater(t, tm, last, "times increase across batches")
					last = tm
					row := map[string]any{"k": nil, "s": nil}
					if c := &b.Columns[0]; c.Valid(i) {
						row["k"] = c.Int64(i)
					}
					if c := &b.Columns[1]; c.Valid(i) {
						row["s"] = string(c.Bytes(i))
					}
					got[tm] = row
				}
			}
			assert.Equal(t, want, got)
		})
	}
}
