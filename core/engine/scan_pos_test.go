package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHasNextMatchesHas: the forward lookups a scan makes device by
// device answer as a binary search does, for names in order (the scan's
// case), repeated, absent, or out of order.
func TestHasNextMatchesHas(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	for d := 0; d < 600; d += 2 { // odd numbers absent
		require.NoError(t, db.Insert("T", fmt.Sprintf("dev-%04d", d), int64Tablet([]int64{int64(d), int64(d) + 10}, map[string][]int64{"k": {1, 2}})))
	}
	require.NoError(t, db.Flush())
	ty, _ := db.Catalog().Type("T")
	f := db.view.Load().tables[ty.ID].files[0]
	rng := rand.New(rand.NewPCG(3, 4))
	var names []string
	for range 2000 {
		names = append(names, fmt.Sprintf("dev-%04d", rng.IntN(620)))
	}
	sorted := slices.Sorted(slices.Values(names))
	// The answer of a plain binary search of the directory: no filter.
	has := func(n string, lo, hi int64) bool {
		i, ok := slices.BinarySearch(f.Devices(), n)
		if !ok {
			return false
		}
		_, first, last := f.DeviceAt(i)
		return last >= lo && first <= hi
	}
	for _, order := range [][]string{sorted, names} {
		pos := 0
		for _, n := range order {
			lo := rng.Int64N(620)
			hi := lo + rng.Int64N(30)
			require.Equal(t, has(n, lo, hi), hasNext(f, &pos, n, lo, hi), "%s in [%d, %d]", n, lo, hi)
			require.Equal(t, has(n, lo, hi), f.has(n, lo, hi), "%s in [%d, %d]", n, lo, hi)
		}
	}
}
