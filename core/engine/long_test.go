package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// longTablet is a long-format tablet of rows (device, time, k=time*10).
func longTablet(devices []string, times []int64) *tablet.Tablet {
	k := make([]int64, len(times))
	for i, tm := range times {
		k[i] = tm * 10
	}
	return &tablet.Tablet{Times: times, Columns: []tablet.Column{
		tablet.Strings("dev", devices, nil), tablet.Int64s("k", k, nil)}}
}

// TestInsertLongSplitsByDevice: rows of many devices in one batch, grouped
// or interleaved, land per device as if inserted device by device, in one
// commit; the device column is not a property.
func TestInsertLongSplitsByDevice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, grouped := range []bool{true, false} {
		t.Run(fmt.Sprint("grouped=", grouped), func(t *testing.T) {
			db, _ := openDisk(t, Options{AutoCreate: true})
			var devices []string
			var times []int64
			want := map[string]map[int64]map[string]any{}
			for d := range 50 {
				name := fmt.Sprintf("dev-%02d", d)
				want[name] = map[int64]map[string]any{}
				for i := range 1 + d%7 {
					tm := int64(i*3 + d)
					devices, times = append(devices, name), append(times, tm)
					want[name][tm] = map[string]any{"k": tm * 10}
				}
			}
			if !grouped {
				rng.Shuffle(len(devices), func(i, j int) {
					devices[i], devices[j] = devices[j], devices[i]
					times[i], times[j] = times[j], times[i]
				})
			}
			appends := db.LogStats().Appends
			require.NoError(t, db.InsertLong("A", "dev", longTablet(devices, times)))
			assert.Equal(t, appends+1, db.LogStats().Appends, "one commit")
			assert.Equal(t, want, rowsOf(t, db, "A"))
			ty, _ := db.Catalog().Type("A")
			_, hasDev := ty.Property("dev")
			assert.False(t, hasDev, "the device column is not a property")

			// In a transaction, with the copy taken at the call.
			tx, err := db.Begin()
			require.NoError(t, err)
			tb := longTablet([]string{"x", "y", "x"}, []int64{100, 100, 101})
			require.NoError(t, tx.InsertLong("A", "dev", tb))
			tb.Columns[1].Values[0] = 0xff // the caller may reuse its buffers
			require.NoError(t, tx.Commit())
			rows := rowsOf(t, db, "A")
			assert.Equal(t, map[int64]map[string]any{100: {"k": int64(1000)}, 101: {"k": int64(1010)}}, rows["x"])
			assert.Equal(t, map[int64]map[string]any{100: {"k": int64(1000)}}, rows["y"])
		})
	}
}

// TestInsertLongAddsNothingOnError: a bad device, a missing or mistyped
// device column, a null device or a value the property refuses fails the
// whole batch, before or after other devices' rows were looked at.
func TestInsertLongAddsNothingOnError(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.InsertLong("A", "dev", longTablet([]string{"a"}, []int64{1})))
	cases := []struct {
		name    string
		t       *tablet.Tablet
		column  string
		kind    error
		mention string
	}{
		{"control character in a device", longTablet([]string{"a", "b\n"}, []int64{2, 2}), "dev", errs.ErrInvalidArgument, "row 1"},
		{"no such column", longTablet([]string{"a"}, []int64{2}), "device", errs.ErrInvalidArgument, `"device"`},
		{"not a string column", longTablet([]string{"a"}, []int64{2}), "k", errs.ErrInvalidArgument, "not STRING"},
		{"a null device", &tablet.Tablet{Times: []int64{2, 3}, Columns: []tablet.Column{
			tablet.Strings("dev", []string{"a", ""}, []bool{true, false}), tablet.Int64s("k", []int64{1, 2}, nil)}},
			"dev", errs.ErrInvalidArgument, "row 1"},
		{"a short column, devices interleaved", &tablet.Tablet{Times: []int64{2, 3, 4}, Columns: []tablet.Column{
			tablet.Strings("dev", []string{"a", "b", "a"}, nil), {Name: "k", Type: schema.Int64, Values: make([]byte, 16)}}},
			"dev", errs.ErrInvalidArgument, `"k"`},
		{"a value the property refuses", &tablet.Tablet{Times: []int64{2, 3}, Columns: []tablet.Column{
			tablet.Strings("dev", []string{"b", "a"}, nil), tablet.Doubles("k", []float64{1, 2}, nil)}},
			"dev", errs.ErrInvalidArgument, `column "k"`},
	}
	for _, c := range cases {
		appends, version := db.LogStats().Appends, db.Catalog().Version()
		err := db.InsertLong("A", c.column, c.t)
		require.ErrorIs(t, err, c.kind, c.name)
		assert.Contains(t, err.Error(), c.mention, c.name)
		assert.Equal(t, appends, db.LogStats().Appends, c.name)
		assert.Equal(t, version, db.Catalog().Version(), c.name)
	}
	assert.Equal(t, map[string]map[int64]map[string]any{"a": {1: {"k": int64(10)}}}, rowsOf(t, db, "A"))
}

// TestSortRunsSortsByName: the sort of many runs (by namesort) orders
// them as a plain sort does, duplicates included.
func TestSortRunsSortsByName(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for _, n := range []int{0, 1, 63, 100, 1 << 14, 1<<14 + 7, 70_000} {
		runs := make([]deviceRun, n)
		for i := range runs {
			runs[i] = deviceRun{device: fmt.Sprintf("plant-%02d/dev-%06d", rng.IntN(100), rng.IntN(n+1)), lo: i, hi: i + 1}
		}
		want := slices.Clone(runs)
		slices.SortStableFunc(want, compareRuns)
		got := slices.Clone(runs)
		sortRuns(got)
		require.True(t, slices.IsSortedFunc(got, compareRuns), "n=%d", n)
		names := func(rs []deviceRun) []string {
			out := make([]string, len(rs))
			for i, r := range rs {
				out[i] = r.device
			}
			return out
		}
		require.Equal(t, names(want), names(got), "n=%d", n)
		seen := map[int]bool{} // every run once
		for _, r := range got {
			require.False(t, seen[r.lo], "n=%d: run %d twice", n, r.lo)
			seen[r.lo] = true
		}
		require.Len(t, seen, n)
	}
}

// TestDeviceRunsFindsEveryRun: the runs of a device column, found in parts
// at once for a large batch, are those a row-by-row reading finds: runs
// across the parts' borders whole, names right, a null reported at its
// row, and byName nil exactly when a device has two runs.
func TestDeviceRunsFindsEveryRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 3))
	for trial := range 24 {
		n := []int{0, 1, 63, 64, 65, 1000, 1 << 16, 1<<16 + 1, 200_003}[trial%9]
		names := make([]string, n)
		for i := 0; i < n; {
			k := min(n-i, 1+rng.IntN([]int{1, 10, 5000}[trial%3]))
			dev := fmt.Sprintf("d%05d", i) // each run a name of its own...
			if trial%4 == 1 && i > 0 && rng.IntN(3) == 0 {
				dev = fmt.Sprintf("d%05d", rng.IntN(i)) // ...or one seen before
			}
			for j := range k {
				names[i+j] = dev
			}
			i += k
		}
		var valid []bool
		null := -1
		if trial%5 == 2 && n > 0 {
			null = rng.IntN(n)
			valid = make([]bool, n)
			for i := range valid {
				valid[i] = i != null
			}
		}
		runs, byName, err := deviceRuns(ptr(tablet.Strings("device", names, valid)), n)
		if null >= 0 {
			require.ErrorContains(t, err, fmt.Sprintf("row %d has no device", null), "trial %d", trial)
			continue
		}
		require.NoError(t, err)
		if n == 0 {
			require.Empty(t, runs)
			require.Empty(t, byName)
			continue
		}
		var want []deviceRun
		for i := range n {
			if i == 0 || names[i] != names[i-1] {
				want = append(want, deviceRun{device: names[i], lo: i})
			}
			want[len(want)-1].hi = i + 1
		}
		require.Equal(t, want, runs, "trial %d, %d rows", trial, n)
		seen, twice := map[string]bool{}, false
		for _, r := range want {
			twice = twice || seen[r.device]
			seen[r.device] = true
		}
		if twice {
			require.Nil(t, byName, "trial %d", trial)
		} else {
			sorted := slices.SortedFunc(slices.Values(want), compareRuns)
			require.Equal(t, sorted, byName, "trial %d", trial)
		}
	}
}
