package engine

import (
	"context"
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

// TestNamedDevicesAreLookedUpOnce: a scan naming a few devices finds them
// in the files once, at its start (Rows.hits); it reads what a scan of
// every device reads of them, a device named twice once, with rows in
// two files and the memtable, absent devices, and a prefix that rules
// some out.
func TestNamedDevicesAreLookedUpOnce(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	rng := rand.New(rand.NewPCG(5, 6))
	for d := range 20 {
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), xkRows(rng, 5+d, 0)))
	}
	require.NoError(t, db.Flush())
	for _, d := range []int{3, 7, 11} { // a second file
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), xkRows(rng, 4, 1000)))
	}
	require.NoError(t, db.Flush())
	for _, d := range []int{3, 12} { // and the memtable
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), xkRows(rng, 2, 2000)))
	}
	all, err := scanAll(t, db, ScanRequest{Type: "A"})
	require.NoError(t, err)
	of := func(names ...string) []scannedRow {
		var out []scannedRow
		for _, r := range all {
			if slices.Contains(names, r.device) {
				out = append(out, r)
			}
		}
		return out
	}
	for _, c := range []struct {
		devices []string
		prefix  string
		want    []scannedRow
	}{
		{[]string{"d03"}, "", of("d03")},
		{[]string{"d03", "d03"}, "", of("d03")},
		{[]string{"d12", "d03", "zz", "d12", "d07"}, "", of("d03", "d07", "d12")},
		{[]string{"d11", "d03", "e1"}, "d1", of("d11")},
		{[]string{"nope"}, "", nil},
	} {
		got, err := scanAll(t, db, ScanRequest{Type: "A", Devices: c.devices, DevicePrefix: c.prefix, ReuseBatches: true})
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%v prefix %q", c.devices, c.prefix)
		rows, err := db.Scan(context.Background(), ScanRequest{Type: "A", Devices: c.devices, DevicePrefix: c.prefix})
		require.NoError(t, err)
		require.NotNil(t, rows.hits, "a few named devices are looked up at the start")
		rows.Close()
	}
}
