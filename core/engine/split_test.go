package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Equal(t, int64(math.MaxInt64-3), splitAggregate(t, db, req)[0].Rows.Columns[0].Int64(0))

	require.NoError(t, db.Insert("O", "d9", int64Tablet([]int64{1}, map[string][]int64{"k": {4}})))
	_, _, err = db.Aggregate(context.Background(), req)
	assert.ErrorContains(t, err, `sum of "k" overflows INT64`)
	saved := aggregateSplit
	aggregateSplit.parts, aggregateSplit.minRows = 3, 1
	_, _, err = db.Aggregate(context.Background(), req)
	aggregateSplit = saved
	assert.ErrorContains(t, err, `sum of "k" overflows INT64`)
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
}
