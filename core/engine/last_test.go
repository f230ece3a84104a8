package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestLastMatchesScan: per device and property, the last non-null value
// and its time, with sparse columns (a value far back in time), flushed
// and in-memory rows, overwrites and deletes, equal those of a full scan.
func TestLastMatchesScan(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(4, 2))
	for step := range 5 {
		for d := range 6 {
			n := 1 + rng.IntN(200)
			times := make([]int64, n)
			ks, xs := make([]int64, n), make([]float64, n)
			ss, bs := make([]string, n), make([]bool, n)
			kv, xv, sv, bv := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
			for i := range n {
				times[i] = int64(rng.IntN(5000))
				ks[i], kv[i] = rng.Int64N(100), rng.IntN(3) == 0
				xs[i], xv[i] = rng.Float64(), d != 5 && rng.IntN(60) == 0 // x is rare; never on d5
				ss[i], sv[i] = fmt.Sprintf("s%d", rng.IntN(1000)), rng.IntN(4) == 0
				bs[i], bv[i] = rng.IntN(2) == 0, rng.IntN(8) == 0
			}
			require.NoError(t, db.Insert("L", fmt.Sprintf("d%d", d), &tablet.Tablet{Times: times,
				Columns: []tablet.Column{tablet.Int64s("k", ks, kv), tablet.Doubles("x", xs, xv),
					tablet.Strings("s", ss, sv), tablet.Bools("b", bs, bv)}}))
		}
		if step == 2 {
			require.NoError(t, db.Flush())
		}
		if step == 3 {
			from := int64(4000)
			require.NoError(t, db.Delete(DeleteRequest{Type: "L", Devices: []string{"d0"}, Start: &from}))
		}
	}
	// A device whose name starts with another's.
	require.NoError(t, db.Insert("L", "d2-more", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
	defer func(v int64) { lastScanRows = v }(lastScanRows)
	defer func(v int) { lastBatchDevices = v }(lastBatchDevices)
	lastBatchDevices = 3 // the scan's 7 devices in three batches
	for _, path := range []struct {
		name string
		rows int64
	}{{"a read per device", 0}, {"one scan", 1 << 40}} {
		t.Run(path.name, func(t *testing.T) {
			lastScanRows = path.rows
			checkLast(t, db)
		})
	}
	// Everything flushed: the choice of a scan needs no device listing.
	require.NoError(t, db.Flush())
	ty, _ := db.catalog.Load().Type("L")
	lastScanRows = 0
	require.False(t, db.manyDevices(ty.ID, ""))
	lastScanRows = 1 << 40
	require.True(t, db.manyDevices(ty.ID, ""))
	require.True(t, db.manyDevices(ty.ID, "d2"))
	require.False(t, db.manyDevices(ty.ID, "nope"), "no device: no rows to scan either")
	checkLast(t, db)
}

// lastRows returns Last's batches as a batch per device, in order: a
// batch of many devices (Batch.Devices) split into its rows.
func lastRows(t *testing.T, batches []Batch) []Batch {
	var out []Batch
	for _, b := range batches {
		if b.Devices == nil {
			require.Equal(t, 1, b.Rows.Rows(), b.Device)
			out = append(out, b)
			continue
		}
		require.Empty(t, b.Device)
		require.Len(t, b.Devices, b.Rows.Rows())
		for i, d := range b.Devices {
			out = append(out, Batch{Device: d, Rows: b.Rows.Slice(i, i+1), Stable: b.Stable})
		}
	}
	for i := 1; i < len(out); i++ {
		require.Less(t, out[i-1].Device, out[i].Device, "devices in name order")
	}
	return out
}

func checkLast(t *testing.T, db *DB) {
	all := rowsOf(t, db, "L")
	batches, _, props, err := db.Last(context.Background(), LastRequest{Type: "L"})
	require.NoError(t, err)
	require.Len(t, props, 4)
	batches = lastRows(t, batches)
	require.Len(t, batches, len(all))
	for _, b := range batches {
		rows := all[b.Device]
		require.Equal(t, 1, b.Rows.Rows())
		require.Len(t, b.Rows.Columns, 8)
		latest := int64(-1)
		for tm := range rows {
			latest = max(latest, tm)
		}
		assert.Equal(t, latest, b.Rows.Times[0], b.Device)
		for k, p := range []string{"k", "x", "s", "b"} {
			var want any
			wantT := int64(-1)
			for tm, row := range rows {
				if row[p] != nil && tm > wantT {
					want, wantT = row[p], tm
				}
			}
			v, vt := &b.Rows.Columns[2*k], &b.Rows.Columns[2*k+1]
			assert.Equal(t, p, v.Name)
			assert.Equal(t, p+LastTimeSuffix, vt.Name)
			if want == nil {
				assert.False(t, v.Valid(0), "%s %s", b.Device, p)
				assert.False(t, vt.Valid(0), "%s %s", b.Device, p)
				continue
			}
			assert.Equal(t, want, v.Value(0), "%s %s", b.Device, p)
			assert.Equal(t, wantT, vt.Int64(0), "%s %s", b.Device, p)
		}
	}
	// A subset of devices and properties.
	batches, _, props, err = db.Last(context.Background(), LastRequest{Type: "L", Properties: []string{"x"}, Devices: []string{"d5", "d2", "nope"}})
	require.NoError(t, err)
	require.Len(t, props, 1)
	batches = lastRows(t, batches)
	require.Len(t, batches, 2)
	assert.Equal(t, "d2", batches[0].Device)
	assert.False(t, batches[1].Rows.Columns[0].Valid(0), "d5 never had an x")

	_, _, _, err = db.Last(context.Background(), LastRequest{Type: "L", Properties: []string{"nope"}})
	require.ErrorIs(t, err, errs.ErrNotFound)
	_, _, _, err = db.Last(context.Background(), LastRequest{Type: "L", Properties: []string{"k", "x", "k"}})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	require.ErrorContains(t, err, `"k" requested twice`)
	_, _, _, err = db.Last(context.Background(), LastRequest{Type: "Nope"})
	require.ErrorIs(t, err, errs.ErrNotFound)
}

// TestLastFromFilesEqualsTheScan: with rows spread over several files
// (each flush a file of later times), a property's last value often in
// an older file than the device's latest row, the files' summaries give
// what a scan of every row gives, for every device and for a prefix.
func TestLastFromFilesEqualsTheScan(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(6, 1))
	for round := range 4 {
		for d := range 9 {
			if rng.IntN(4) == 0 {
				continue // not in this file
			}
			n := 1 + rng.IntN(20)
			times := make([]int64, n)
			ks, xs, ss := make([]int64, n), make([]float64, n), make([]string, n)
			kv, xv, sv := make([]bool, n), make([]bool, n), make([]bool, n)
			for i := range n {
				times[i] = int64(round*1000 + i*7 + d)
				ks[i], kv[i] = rng.Int64N(100), rng.IntN(2) == 0
				xs[i], xv[i] = rng.Float64(), round == 0 && rng.IntN(3) == 0 // x only in the first file
				ss[i], sv[i] = fmt.Sprintf("s%d", rng.IntN(99)), rng.IntN(9) == 0
			}
			require.NoError(t, db.Insert("L", fmt.Sprintf("p%d/d%d", d%2, d), &tablet.Tablet{Times: times,
				Columns: []tablet.Column{tablet.Int64s("k", ks, kv), tablet.Doubles("x", xs, xv), tablet.Strings("s", ss, sv)}}))
		}
		require.NoError(t, db.Flush())
	}
	ty, _ := db.catalog.Load().Type("L")
	files, mems := db.pin(ty.ID)
	nfiles := len(files)
	unpin(files, mems)
	require.GreaterOrEqual(t, nfiles, 3, "the rounds are in several files")
	var props []schema.Property
	var names []string
	for _, p := range ty.Properties() {
		props, names = append(props, *p), append(names, p.Name)
	}
	// One property first: the others are read later, in their own pass.
	_, ok, err := db.lastFromFiles(context.Background(), ty, "", props[1:2])
	require.NoError(t, err)
	require.True(t, ok)
	check := func(prefix string) {
		t.Helper()
		got, ok, err := db.lastFromFiles(context.Background(), ty, prefix, props)
		require.NoError(t, err)
		require.True(t, ok)
		want, err := db.lastByScan(context.Background(), LastRequest{Type: "L", DevicePrefix: prefix}, props)
		require.NoError(t, err)
		g, w := lastRows(t, got), lastRows(t, want)
		require.Len(t, g, len(w), "prefix %q", prefix)
		for i := range w {
			require.Equal(t, w[i].Device, g[i].Device)
			assert.Equal(t, w[i].Rows.Times, g[i].Rows.Times, w[i].Device)
			for j := range w[i].Rows.Columns {
				assert.Equal(t, w[i].Rows.Columns[j].Value(0), g[i].Rows.Columns[j].Value(0), "%s %s", w[i].Device, w[i].Rows.Columns[j].Name)
			}
		}
	}
	for _, prefix := range []string{"", "p1/", "none/"} {
		for range 2 { // the second time from the files' kept summaries
			check(prefix)
		}
	}
	// Rows in the memtable: their devices are read one by one, in their
	// place. p0/d0 gets a row that overwrites its latest one with k null
	// (a file's last k may be hidden), p1/d1 a later row; "a", "p0/d0x"
	// and "z" exist only in the memtable (before, between, after the
	// files' devices).
	latest, err := db.Devices("L", "p0/d0")
	require.NoError(t, err)
	at := latest[0].Last
	require.NoError(t, db.Insert("L", "p0/d0", &tablet.Tablet{Times: []int64{at},
		Columns: []tablet.Column{tablet.Int64s("k", []int64{0}, []bool{false}), tablet.Strings("s", []string{"new"}, nil)}}))
	require.NoError(t, db.Insert("L", "p1/d1", int64Tablet([]int64{at + 10_000}, map[string][]int64{"k": {-1}})))
	for _, d := range []string{"a", "p0/d0x", "z"} {
		require.NoError(t, db.Insert("L", d, int64Tablet([]int64{5}, map[string][]int64{"k": {5}})))
	}
	defer func(v int64) { lastScanRows = v }(lastScanRows)
	lastScanRows = 1 // five reads cost less than the files' rows
	for _, prefix := range []string{"", "p0/", "p1/", "z", "none/"} {
		check(prefix)
	}
	// Too many devices in the memtable for their reads: a scan instead.
	lastScanRows = 1 << 40
	_, ok, err = db.lastFromFiles(context.Background(), ty, "", props)
	require.NoError(t, err)
	assert.False(t, ok)
	lastScanRows = 0
	// A delete waiting to be applied to the files: a scan instead.
	from := int64(0)
	require.NoError(t, db.Delete(DeleteRequest{Type: "L", Devices: []string{"p0/d2"}, Start: &from}))
	_, ok, err = db.lastFromFiles(context.Background(), ty, "", props)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestLastWithoutProperties: asked for no property, Last still gives each
// device its latest time, whichever way it reads the device: by itself
// (few devices, or rows in the memtable among files' summaries), from
// the summaries, or by a scan.
func TestLastWithoutProperties(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	for d := range 20 {
		require.NoError(t, db.Insert("L", fmt.Sprintf("d%02d", d), int64Tablet([]int64{1, 2, int64(3 + d)}, map[string][]int64{"k": {1, 2, 3}})))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("L", "d05", int64Tablet([]int64{100}, map[string][]int64{"k": {4}})))
	require.NoError(t, db.Insert("L", "zz", int64Tablet([]int64{7}, map[string][]int64{"k": {5}})))
	want := map[string]int64{"d05": 100, "zz": 7}
	for d := range 20 {
		if d != 5 {
			want[fmt.Sprintf("d%02d", d)] = int64(3 + d)
		}
	}
	defer func(v int64) { lastScanRows = v }(lastScanRows)
	for _, c := range []struct {
		name string
		rows int64
	}{{"a read per device", 0}, {"summaries and reads", 10}, {"one scan", 1 << 40}} {
		t.Run(c.name, func(t *testing.T) {
			lastScanRows = c.rows
			ty, _ := db.catalog.Load().Type("L")
			if c.rows == 10 {
				_, ok, err := db.lastFromFiles(context.Background(), ty, "", nil)
				require.NoError(t, err)
				require.True(t, ok, "the summaries, with reads of the devices in the memtable")
			}
			batches, _, props, err := db.Last(context.Background(), LastRequest{Type: "L", Properties: []string{}})
			require.NoError(t, err)
			require.Empty(t, props)
			got := map[string]int64{}
			for _, b := range lastRows(t, batches) {
				got[b.Device] = b.Rows.Times[0]
			}
			require.Equal(t, want, got)
		})
	}
}
