package segment

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
)

// TestLastsMatchesTheRows: per device, the latest time and each column's
// last non-null value and its time, over row groups of 7 rows that
// devices span, with values rare enough that the last one lies groups
// back, and a column the file lacks.
func TestLastsMatchesTheRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	cols := append(append([]Column(nil), allTypes...), Column{ID: 99, Name: "absent", Type: schema.Double})
	for _, rare := range []int{1, 4, 40} {
		data := map[string][]row{}
		for d := range 12 {
			n := 1 + rng.IntN(30)
			rows := makeRows(allTypes, n, int64(d), 3, func(i, j, n int) bool { return rng.IntN(rare) != 0 })
			data[fmt.Sprintf("d%02d", d)] = rows
		}
		f, _ := writeFile(t, Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 7}, data, 5, 0)
		got, err := f.Lasts(cols)
		require.NoError(t, err)
		for i, dev := range f.Devices() {
			rows := data[dev]
			assert.Equal(t, rows[len(rows)-1].time, got.Latest[i], "%s latest", dev)
			for k := range cols {
				var want any
				var wantT int64
				for r := len(rows) - 1; r >= 0 && k < len(allTypes); r-- {
					if v := rows[r].vals[k]; v != nil {
						want, wantT = v, rows[r].time
						break
					}
				}
				assert.Equal(t, want, got.Values[k].Value(i), "rare %d, %s %s", rare, dev, cols[k].Name)
				if want != nil {
					assert.Equal(t, wantT, got.Times[k][i], "rare %d, %s %s time", rare, dev, cols[k].Name)
				}
			}
		}
	}
}
