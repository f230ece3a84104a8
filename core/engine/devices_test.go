package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestManyDevicesAgainstAModel: random per-device row counts, overwrites
// and out-of-order times over 2,000 devices, written per device and in
// long format into two databases, with flushes in between: both hold the
// model's rows; devices() and prefix scans agree with the model.
func TestManyDevicesAgainstAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	perDevice, _ := openDisk(t, Options{AutoCreate: true, MemtableBudget: 256 << 10})
	long, _ := openDisk(t, Options{AutoCreate: true, MemtableBudget: 256 << 10})
	model := map[string]map[int64]map[string]any{}
	for round := range 6 {
		var devs []string
		var times, ks []int64
		for range 3000 {
			d := fmt.Sprintf("plant-%d/dev-%04d", rng.IntN(4), rng.IntN(2000))
			tm := int64(rng.IntN(50))
			k := int64(rng.IntN(1000))
			devs, times, ks = append(devs, d), append(times, tm), append(ks, k)
		}
		// Per device: each device's rows in order of appearance, as one
		// tablet (later equal times win within it, as in the long batch).
		byDev := map[string][]int{}
		var order []string
		for i, d := range devs {
			if byDev[d] == nil {
				order = append(order, d)
			}
			byDev[d] = append(byDev[d], i)
		}
		tx, err := perDevice.Begin()
		require.NoError(t, err)
		for _, d := range order {
			var tt, kk []int64
			for _, i := range byDev[d] {
				tt, kk = append(tt, times[i]), append(kk, ks[i])
				if model[d] == nil {
					model[d] = map[int64]map[string]any{}
				}
				model[d][times[i]] = map[string]any{"k": ks[i]}
			}
			require.NoError(t, tx.Insert("A", d, int64Tablet(tt, map[string][]int64{"k": kk})))
		}
		require.NoError(t, tx.Commit())
		lt := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("dev", devs, nil), tablet.Int64s("k", ks, nil)}}
		require.NoError(t, long.InsertLong("A", "dev", lt))
		if round%2 == 1 {
			require.NoError(t, perDevice.Flush())
			require.NoError(t, long.Flush())
		}
		for _, db := range []*DB{perDevice, long} {
			require.Equal(t, model, rowsOf(t, db, "A"), "round %d", round)
			checkDevices(t, db, model, "")
			checkDevices(t, db, model, "plant-2/")
			checkDevices(t, db, model, "plant-1/dev-01")
			checkDevices(t, db, model, "nope")
			checkPointReads(t, db, model, rng)
		}
	}
	_, err := long.Devices("Nope", "")
	assert.ErrorIs(t, err, errs.ErrNotFound)
}

// checkDevices compares devices(prefix) and a prefix scan with the model.
func checkDevices(t *testing.T, db *DB, model map[string]map[int64]map[string]any, prefix string) {
	t.Helper()
	var want []string
	for d := range model {
		if strings.HasPrefix(d, prefix) {
			want = append(want, d)
		}
	}
	sort.Strings(want)
	got, err := db.Devices("A", prefix)
	require.NoError(t, err)
	var names []string
	for _, d := range got {
		names = append(names, d.Name)
		first, last := int64(1<<62), int64(-1)
		for tm := range model[d.Name] {
			first, last = min(first, tm), max(last, tm)
		}
		assert.Equal(t, first, d.First, d.Name)
		assert.Equal(t, last, d.Last, d.Name)
		assert.GreaterOrEqual(t, d.Rows, int64(len(model[d.Name])), d.Name)
	}
	assert.Equal(t, want, names, "devices(%q)", prefix)

	rows, err := db.Scan(context.Background(), ScanRequest{Type: "A", DevicePrefix: prefix})
	require.NoError(t, err)
	seen := map[string]int{}
	for b, ok := rows.Next(); ok; b, ok = rows.Next() {
		seen[b.Device] += b.Rows.Rows()
	}
	require.NoError(t, rows.Err())
	assert.Len(t, seen, len(want), "prefix scan %q", prefix)
	for _, d := range want {
		assert.Equal(t, len(model[d]), seen[d], "prefix scan %q: %s", prefix, d)
	}
}

// checkPointReads reads a few devices by name (the scans' sparse path,
// which reads a small device's pages instead of its row groups) and
// compares them with the model.
func checkPointReads(t *testing.T, db *DB, model map[string]map[int64]map[string]any, rng *rand.Rand) {
	t.Helper()
	names := make([]string, 0, len(model))
	for d := range model {
		names = append(names, d)
	}
	sort.Strings(names)
	for range 20 {
		d := names[rng.IntN(len(names))]
		rows, err := db.Scan(context.Background(), ScanRequest{Type: "A", Devices: []string{d}, ReuseBatches: rng.IntN(2) == 0})
		require.NoError(t, err)
		got := map[int64]map[string]any{}
		for b, ok := rows.Next(); ok; b, ok = rows.Next() {
			require.Equal(t, d, b.Device)
			for i, tm := range b.Rows.Times {
				got[tm] = map[string]any{"k": b.Rows.Columns[0].Int64(i)}
			}
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, model[d], got, d)
	}
}

// TestDevicesOfGivesTheTypeItListed: the listing's times are in the time
// unit of the type DevicesOf returns with it.
func TestDevicesOfGivesTheTypeItListed(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("M", "d", &tablet.Tablet{Times: []int64{1000, 3000}, TimeUnit: "ms", TimeZone: "UTC"}))
	list, ty, err := db.DevicesOf("M", "")
	require.NoError(t, err)
	require.NotNil(t, ty)
	assert.Equal(t, "M", ty.Name)
	assert.Equal(t, "ms", ty.TimeUnit)
	assert.Equal(t, "UTC", ty.TimeZone)
	assert.Equal(t, []DeviceInfo{{Name: "d", Rows: 2, First: 1000, Last: 3000}}, list)
	_, ty, err = db.DevicesOf("Nope", "")
	require.ErrorIs(t, err, errs.ErrNotFound)
	assert.Nil(t, ty)
}

// TestLookupDevicesAgreesWithBinarySearch: lookupDevices, which tests the
// first bit of every file's device filter before it looks a name up, finds
// in each file exactly the names a binary search of the file's directory
// finds, for lists of several names (a name found in a file earlier in the
// list walks that file forward instead), names in some files, in all or
// in none, and files without an index (an empty directory).
func TestLookupDevicesAgreesWithBinarySearch(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	rng := rand.New(rand.NewPCG(7, 8))
	const devices = 3000
	for k := range 6 {
		for d := range devices {
			if d%500 == 0 || rng.IntN(3) == 0 { // a third of them, and a few in every file
				require.NoError(t, db.Insert("T", fmt.Sprintf("dev-%05d", d), int64Tablet([]int64{int64(10*k + 1)}, map[string][]int64{"k": {1}})))
			}
		}
		require.NoError(t, db.Flush())
	}
	ty, _ := db.Catalog().Type("T")
	files := db.view.Load().tables[ty.ID].files
	require.Len(t, files, 6, "one file a flush, none merged")
	withEmpty := append([]*dataFile{{File: &segment.File{}}}, append(slices.Clone(files), &dataFile{File: &segment.File{}})...)
	search := func(files []*dataFile, names []string) (ends []int32, hits []fileHit) {
		hits = []fileHit{}
		for _, d := range names {
			for i, f := range files {
				if p, ok := slices.BinarySearch(f.Devices(), d); ok {
					hits = append(hits, fileHit{file: int32(i), index: int32(p)})
				}
			}
			ends = append(ends, int32(len(hits)))
		}
		return ends, hits
	}
	for trial := range 1000 {
		var names []string
		for range 1 + rng.IntN(40) {
			names = append(names, fmt.Sprintf("dev-%05d", rng.IntN(devices+200))) // some absent everywhere
		}
		if trial%5 == 0 {
			names = append(names, "dev-00000", "a", "zzz") // in every file at position 0; before and after all
		}
		slices.Sort(names)
		names = slices.Compact(names)
		for _, fs := range [][]*dataFile{files, withEmpty} {
			wantEnds, wantHits := search(fs, names)
			gotEnds, gotHits := lookupDevices(fs, names)
			require.Equal(t, wantEnds, gotEnds, "%d files, names %v", len(fs), names)
			require.Equal(t, wantHits, gotHits, "%d files, names %v", len(fs), names)
		}
	}
}
