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

// model is the reference: per time, per column, the last non-null value.
type model map[int64]map[schema.PropertyID]any

func (m model) apply(t *tablet.Tablet, idv []schema.PropertyID, cells [][]any) {
	for r, tm := range t.Times {
		row := m[tm]
		if row == nil {
			row = map[schema.PropertyID]any{}
			m[tm] = row
		}
		for i, id := range idv {
			if v := cells[i][r]; v != nil {
				row[id] = v
			}
		}
	}
}

func (m model) read(refs []ColumnRef, start, end int64) (times []int64, cols [][]any) {
	for tm := range m {
		if tm >= start && tm < end {
			times = append(times, tm)
		}
	}
	slices.Sort(times)
	cols = make([][]any, len(refs))
	for i, r := range refs {
		cols[i] = make([]any, len(times))
		for k, tm := range times {
			cols[i][k] = m[tm][r.ID]
		}
	}
	return times, cols
}

func TestRandomWritesMatchModel(t *testing.T) {
	// Column pool: id i+1 has type allTypes[i%9]; ids 13 and 14 are never
	// written.
	const poolSize = 12
	refs := make([]ColumnRef, poolSize+2)
	for i := range refs {
		refs[i] = ref(schema.PropertyID(i+1), fmt.Sprint("p", i+1), allTypes[i%len(allTypes)])
	}
	for seed := range 16 {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			mt := New(Options{BlockRows: 8})
			c := mt.Chunk(1, "d")
			want := model{}
			check := func(c *Chunk, step int) {
				start, end := int64(math.MinInt64), int64(math.MaxInt64)
				if rng.IntN(2) == 0 {
					start = int64(rng.IntN(50)) - 5
					end = start + int64(rng.IntN(30))
				}
				got := c.Snapshot().Read(refs, start, end)
				times, cols := want.read(refs, start, end)
				require.Equal(t, len(times), got.Rows(), "step %d", step)
				if len(times) > 0 {
					assert.Equal(t, times, got.Times, "step %d", step)
				}
				for i := range refs {
					assert.Equal(t, cols[i], column(got, i), "step %d column %d", step, refs[i].ID)
				}
				// The same rows batch by batch.
				batch := 1 + rng.IntN(7)
				cur := c.Snapshot().Cursor(refs, start, end, batch)
				var ctimes []int64
				ccols := make([][]any, len(refs))
				for b := cur.Next(); b != nil; b = cur.Next() {
					require.LessOrEqual(t, b.Rows(), batch)
					require.Positive(t, b.Rows())
					ctimes = append(ctimes, b.Times...)
					for i := range refs {
						ccols[i] = append(ccols[i], column(b, i)...)
					}
				}
				assert.Equal(t, times, ctimes, "step %d: cursor times", step)
				for i := range refs {
					if len(times) > 0 {
						assert.Equal(t, cols[i], ccols[i], "step %d: cursor column %d", step, refs[i].ID)
					}
				}
				all, _ := want.read(nil, math.MinInt64, math.MaxInt64)
				lo, hi, ok := c.Snapshot().TimeBounds()
				require.Equal(t, len(all) > 0, ok)
				if ok {
					assert.Equal(t, all[0], lo, "step %d: TimeBounds lo", step)
					assert.Equal(t, all[len(all)-1], hi, "step %d: TimeBounds hi", step)
				}
			}
			for step := range 80 {
				rows := 1 + rng.IntN(12)
				times := make([]int64, rows)
				base := int64(step / 2)
				for r := range times {
					if rng.IntN(3) == 0 {
						times[r] = int64(rng.IntN(40)) // out of order, duplicates
					} else {
						times[r] = base + int64(r)
					}
				}
				perm := rng.Perm(poolSize)[:1+rng.IntN(poolSize)]
				cols := make([]tablet.Column, len(perm))
				idv := make([]schema.PropertyID, len(perm))
				cells := make([][]any, len(perm))
				for i, p := range perm {
					typ := refs[p].Type
					cells[i] = make([]any, rows)
					nullRate := rng.IntN(4) // 0: none … 3: mostly
					for r := range cells[i] {
						if rng.IntN(4) >= nullRate {
							cells[i][r] = sample(typ, rng.IntN(1000))
						}
					}
					cols[i] = mkCol(refs[p].Name, typ, rng.IntN(10), cells[i]...)
					idv[i] = refs[p].ID
				}
				tb := tab(times, cols...)
				switch rng.IntN(12) {
				case 0: // a duplicate id: rejected, nothing written
					idv[len(idv)-1] = idv[0]
					if len(idv) > 1 {
						require.Error(t, c.Write(tb, idv))
					}
				case 1: // a type mismatch on an existing column: rejected
					if w := c.Width(); w > 0 {
						p := c.Snapshot().st.cols[rng.IntN(w)]
						bad := mkCol("bad", allTypes[(int(p.typ))%len(allTypes)], 0, nulls(rows)...)
						require.Error(t, c.Write(tab(times, append(cols, bad)...), append(idv, p.id)))
					}
				default:
					require.NoError(t, c.Write(tb, idv))
					want.apply(tb, idv, cells)
				}
				if step%7 == 0 {
					check(c, step)
				}
			}
			check(c, -1)
			// A clone reads the same and stays so after the original moves on.
			cl := c.Clone()
			check(cl, -2)
			require.NoError(t, c.Write(tab([]int64{1000}, i64("p3", int64(1))), ids(3)))
			check(cl, -3)
		})
	}
}
