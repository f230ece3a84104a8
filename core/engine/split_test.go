package engine

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apache/arrow/go/v17/parquet/file"

	"github.com/arcadego/arcadego/core/errs"
)

// TestRowsSplit: the parts of a split scan, read at once on goroutines,
// hold the devices of the whole scan in order, each device in one part,
// with the same rows (files, memtable rows over them, a delete); rows
// committed after the scan started are in none; the parts' rows are
// about even; closing every part lets the files go.
func TestRowsSplit(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	insert := func(d int, from, n int64) {
		times := make([]int64, n)
		vals := make([]int64, n)
		for i := range times {
			times[i], vals[i] = from+int64(i), int64(d*1000)+from+int64(i)
		}
		require.NoError(t, db.Insert("P", fmt.Sprintf("d%02d", d), int64Tablet(times, map[string][]int64{"v": vals})))
	}
	for d := range 12 {
		insert(d, 0, 100)
	}
	require.NoError(t, db.Flush())
	for d := range 12 {
		insert(d, 50, 100) // over the files' last half, and past them
	}
	from, to := int64(10), int64(20)
	require.NoError(t, db.Delete(DeleteRequest{Type: "P", Devices: []string{"d03"}, Start: &from, End: &to}))
	want := rowsOf(t, db, "P")

	rows, err := db.Scan(context.Background(), ScanRequest{Type: "P", ReuseBatches: true})
	require.NoError(t, err)
	defer rows.Close()
	insert(99, 0, 10) // after the scan started: not seen
	files := rows.files
	parts := rows.split(4, 1)
	require.Len(t, parts, 4)
	for _, p := range parts[1:] {
		defer p.Close()
	}
	got := make([]map[string]map[int64]int64, len(parts))
	order := make([][]string, len(parts))
	var wg sync.WaitGroup
	for k, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[k] = map[string]map[int64]int64{}
			for b, ok := p.Next(); ok; b, ok = p.Next() {
				if len(order[k]) == 0 || order[k][len(order[k])-1] != b.Device {
					order[k] = append(order[k], b.Device)
				}
				if got[k][b.Device] == nil {
					got[k][b.Device] = map[int64]int64{}
				}
				for i, tm := range b.Rows.Times {
					got[k][b.Device][tm] = b.Rows.Columns[0].Int64(i)
				}
			}
		}()
	}
	wg.Wait()
	var devices []string
	all := map[string]map[int64]int64{}
	for k, p := range parts {
		require.NoError(t, p.Err())
		devices = append(devices, order[k]...)
		n := 0
		for d, r := range got[k] {
			all[d] = r
			n += len(r)
		}
		// 12 devices of 150 rows (d03 140) in 4 parts: 3 devices each.
		assert.InDelta(t, 450, n, 10, "part %d's rows", k)
	}
	require.Len(t, devices, 12)
	for i, d := range devices {
		assert.Equal(t, fmt.Sprintf("d%02d", i), d, "devices in order, each in one part")
	}
	require.Len(t, all, len(want))
	for d, r := range want {
		require.Len(t, all[d], len(r), d)
		for tm, row := range r {
			assert.Equal(t, row["v"], all[d][tm], "%s at %d", d, tm)
		}
	}
	assert.NotContains(t, all["d03"], int64(15), "the delete holds in its part")

	// Every part has finished: the files are released by each, and
	// held by the type's table only.
	for _, f := range files {
		assert.EqualValues(t, 1, f.refs.Load(), "file %s", f.Path())
	}
}

// TestRowsSplitTooFew: a scan of one device, or fewer rows than two parts
// need, or with a filter, stays whole.
func TestRowsSplitTooFew(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	for d := range 3 {
		require.NoError(t, db.Insert("P", fmt.Sprint("d", d), int64Tablet([]int64{1, 2, 3}, map[string][]int64{"v": {1, 2, 3}})))
	}
	for _, c := range []struct {
		req     ScanRequest
		minRows int64
	}{
		{ScanRequest{Type: "P", Devices: []string{"d1"}}, 1},
		{ScanRequest{Type: "P"}, 5}, // 9 rows: one part of 5
		{ScanRequest{Type: "P", Where: &Where{Cond: &Cond{Property: "v", Op: ">", Value: int64(1)}}}, 1},
	} {
		rows, err := db.Scan(context.Background(), c.req)
		require.NoError(t, err)
		assert.Len(t, rows.split(4, c.minRows), 1, "%+v", c.req)
		rows.Close()
	}

	// A part smaller than minRows joins the one before: devices of 100,
	// 100 and 1 rows make two parts of 50 or more, the last of 101 rows.
	for d, n := range []int{100, 100, 1} {
		times := make([]int64, n)
		for i := range times {
			times[i] = int64(i)
		}
		require.NoError(t, db.Insert("Q", fmt.Sprint("e", d), int64Tablet(times, map[string][]int64{"v": make([]int64, n)})))
	}
	rows, err := db.Scan(context.Background(), ScanRequest{Type: "Q"})
	require.NoError(t, err)
	defer rows.Close()
	parts := rows.split(3, 50)
	require.Len(t, parts, 2)
	defer parts[1].Close()
	assert.Len(t, parts[0].devices, 1)
	assert.Len(t, parts[1].devices, 2)
}

// TestAggregateSumExact: an INT64 sum is exact whatever the order of its
// parts: partial sums past INT64 that come back into range are no error
// (in one pass or split), and a total out of range is, both ways.
func TestAggregateSumExact(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	for d, v := range []int64{math.MaxInt64, math.MaxInt64, -math.MaxInt64, -3} {
		require.NoError(t, db.Insert("O", fmt.Sprint("d", d), int64Tablet([]int64{1}, map[string][]int64{"k": {v}})))
	}
	req := AggregateRequest{Type: "O", Aggs: []Agg{{"k", "sum"}}}
	b, _, err := db.Aggregate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64-3), b[0].Rows.Columns[0].Int64(0))
	b, split := splitAggregate(t, db, req)
	require.True(t, split)
	assert.Equal(t, int64(math.MaxInt64-3), b[0].Rows.Columns[0].Int64(0))

	require.NoError(t, db.Insert("O", "d9", int64Tablet([]int64{1}, map[string][]int64{"k": {4}})))
	_, _, err = db.Aggregate(context.Background(), req)
	assert.ErrorContains(t, err, `sum of "k" overflows INT64`)
	func() {
		defer splitSmall()()
		_, _, err = db.Aggregate(context.Background(), req)
		assert.ErrorContains(t, err, `sum of "k" overflows INT64`)
	}()
}

// TestAggregateIntegerMeanExact: an integer mean is the exact sum over the
// count, whatever the order of the rows: as a float sum, 2^53 + 1 + 1 + 1
// lost the ones or kept some, by the order they came in.
func TestAggregateIntegerMeanExact(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	for d, v := range []int64{1 << 53, 1, 1, 1} {
		require.NoError(t, db.Insert("M", fmt.Sprint("d", d), int64Tablet([]int64{1}, map[string][]int64{"k": {v}})))
	}
	req := AggregateRequest{Type: "M", Aggs: []Agg{{"k", "mean"}}}
	b, _, err := db.Aggregate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, float64(1<<51)+0.75, b[0].Rows.Columns[0].Double(0))
	b, split := splitAggregate(t, db, req)
	require.True(t, split)
	assert.Equal(t, float64(1<<51)+0.75, b[0].Rows.Columns[0].Double(0))
}

// TestAggregateSplitErrorInDeviceOrder: when two parts meet damaged
// files, the error is the one a single pass meets first: the later part
// fails at once, the earlier one only after a large device, and must not
// be stopped by the other's failure before it gets there.
func TestAggregateSplitErrorInDeviceOrder(t *testing.T) {
	db, dir := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(5, 6))
	var paths []string
	for _, devs := range [][]int{{0, 1}, {2, 3}} {
		for _, d := range devs {
			n := 1000
			if d == 0 || d == 3 {
				n = 200_000
			}
			require.NoError(t, db.Insert("E", fmt.Sprint("d", d), xkRows(rng, n, 0)))
		}
		require.NoError(t, db.Flush())
		ty, _ := db.catalog.Load().Type("E")
		files, mems := db.pin(ty.ID)
		paths = append(paths, files[len(files)-1].Path())
		unpin(files, mems)
	}
	require.NoError(t, db.Close())
	corruptTimes(t, paths[0], func(groups int) int { return groups - 1 }) // d1's rows, at the end of the first file
	corruptTimes(t, paths[1], func(int) int { return 0 })                 // d2's, at the start of the second
	db, err := Open(dir, Options{})
	require.NoError(t, err)
	defer db.Close()
	req := AggregateRequest{Type: "E", Aggs: []Agg{{"k", "sum"}}, ByDevice: true}
	defer splitSmall()()
	aggregateSplit.parts = 1
	_, _, want := db.Aggregate(context.Background(), req)
	require.ErrorIs(t, want, errs.ErrCorrupt)
	aggregateSplit.parts = 2
	before := aggregatePartsRun.Load()
	for range 5 {
		_, _, err := db.Aggregate(context.Background(), req)
		require.EqualError(t, err, want.Error())
	}
	require.Greater(t, aggregatePartsRun.Load(), before, "split")
}

// corruptTimes changes a byte of the time column's chunk of the row group
// pick chooses (of how many the Parquet file at path has).
func corruptTimes(t *testing.T, path string, pick func(groups int) int) {
	t.Helper()
	fh, err := os.Open(path)
	require.NoError(t, err)
	st, err := fh.Stat()
	require.NoError(t, err)
	pr, err := file.NewParquetReader(io.NewSectionReader(fh, 0, st.Size()))
	require.NoError(t, err)
	meta := pr.MetaData()
	require.NoError(t, fh.Close())
	cc, err := meta.RowGroup(pick(len(meta.RowGroups))).ColumnChunk(1)
	require.NoError(t, err)
	require.Equal(t, "time", cc.PathInSchema().String())
	wf, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = wf.WriteAt([]byte{0x5a}, cc.DataPageOffset()+cc.TotalCompressedSize()/2)
	require.NoError(t, err)
	require.NoError(t, wf.Close())
}

func TestInt128(t *testing.T) {
	var x int128
	for _, v := range []int64{math.MaxInt64, math.MaxInt64, 2, math.MinInt64, math.MinInt64} {
		x.add(v)
	}
	got, fits := x.int64()
	assert.True(t, fits)
	assert.Equal(t, int64(0), got)
	x.add(math.MinInt64)
	got, fits = x.int64()
	assert.True(t, fits)
	assert.Equal(t, int64(math.MinInt64), got)
	x.add(-1)
	_, fits = x.int64()
	assert.False(t, fits, "below INT64")
	var y int128
	y.add(math.MaxInt64)
	y.addWide(x) // MaxInt64 + MinInt64 - 1
	got, fits = y.int64()
	assert.True(t, fits)
	assert.Equal(t, int64(-2), got)

	// As floats: exact in INT64; beyond it, the magnitude rounded.
	for _, c := range []struct {
		adds []int64
		want float64
	}{
		{[]int64{-1}, -1},
		{[]int64{math.MinInt64, math.MinInt64, math.MinInt64}, -3 * (1 << 63)},
		{[]int64{math.MinInt64, -1}, -(1 << 63) - 1}, // rounds to -2^63
		{[]int64{math.MaxInt64, math.MaxInt64, 2}, 1 << 64},
	} {
		var z int128
		for _, v := range c.adds {
			z.add(v)
		}
		assert.Equal(t, c.want, z.float64(), "%v", c.adds)
	}
}

// TestRowsSplitNamedDevices: a scan naming more devices than point reads
// take is cut by device count (a lookup of each in every file would cost
// more than it saves), its rows, read at once, those of the whole scan.
func TestRowsSplitNamedDevices(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	var names []string
	for d := range 300 {
		name := fmt.Sprintf("n%03d", d)
		names = append(names, name)
		require.NoError(t, db.Insert("N", name, int64Tablet([]int64{1, 2, 3}, map[string][]int64{"v": {int64(d), 2, 3}})))
	}
	require.NoError(t, db.Flush())
	req := ScanRequest{Type: "N", Devices: names[:len(names)-1]} // all but the last
	want := requestRowsOf(t, db, req)
	rows, err := db.Scan(context.Background(), req)
	require.NoError(t, err)
	defer rows.Close()
	require.Nil(t, rows.hits, "named devices: no directory hits")
	parts := rows.split(3, 1)
	require.Len(t, parts, 3)
	got := map[string]int{}
	for k, p := range parts {
		if k > 0 {
			defer p.Close()
		}
		assert.InDelta(t, 100, len(p.devices), 1, "part %d", k)
		for b, ok := p.Next(); ok; b, ok = p.Next() {
			got[b.Device] += b.Rows.Rows()
		}
		require.NoError(t, p.Err())
	}
	require.Len(t, got, len(want))
	for d, r := range want {
		assert.Equal(t, len(r), got[d], d)
	}

	// Parts of about as many devices each: 15 in 8 parts, 1 or 2 each.
	few, err := db.Scan(context.Background(), ScanRequest{Type: "N", Devices: names[:15]})
	require.NoError(t, err)
	defer few.Close()
	fewParts := few.split(8, 1)
	require.Len(t, fewParts, 8)
	for k, p := range fewParts {
		if k > 0 {
			defer p.Close()
		}
		assert.InDelta(t, 1.5, len(p.devices), 0.5, "part %d", k)
	}
	// Two named devices of 3 rows each in a type of 900 rows: not the
	// type's rows, but theirs, count against minRows.
	two, err := db.Scan(context.Background(), ScanRequest{Type: "N", Devices: names[:2]})
	require.NoError(t, err)
	defer two.Close()
	assert.Len(t, two.split(2, 100), 1)
}
