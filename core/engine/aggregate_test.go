package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// refAggregate computes one aggregate of column prop over the rows (time
// -> value, nil for null) the way Aggregate must: nulls skipped.
func refAggregate(fn string, rows map[int64]any) any {
	var times []int64
	for tm, v := range rows {
		if v != nil {
			times = append(times, tm)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	if fn == "count" {
		return int64(len(times))
	}
	if len(times) == 0 {
		return nil
	}
	switch fn {
	case "first":
		return rows[times[0]]
	case "last":
		return rows[times[len(times)-1]]
	}
	switch rows[times[0]].(type) {
	case int64:
		var sum int64
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, tm := range times {
			v := rows[tm].(int64)
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		return map[string]any{"sum": sum, "min": lo, "max": hi, "mean": float64(sum) / float64(len(times))}[fn]
	case float64:
		var sum float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, tm := range times {
			v := rows[tm].(float64)
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		return map[string]any{"sum": sum, "min": lo, "max": hi, "mean": sum / float64(len(times))}[fn]
	}
	panic("type")
}

// TestAggregateMatchesScan: random rows with nulls, overwrites and
// out-of-order times, partly flushed, partly deleted, with a property
// dropped and made again (its old values must not count); every
// aggregate, by device or not, in buckets (of one time each too) or not,
// over ranges, equals the same computation over a scan's rows.
func TestAggregateMatchesScan(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE S; CREATE PROPERTY S.k INT64; CREATE PROPERTY S.x DOUBLE"))
	rng := rand.New(rand.NewPCG(3, 4))
	for step := range 12 {
		if step == 6 {
			// Flushed and unflushed x values go; the inserts below make x anew.
			require.NoError(t, db.Exec("DROP PROPERTY S.x"))
		}
		for d := range 5 {
			n := 1 + rng.IntN(40)
			times := make([]int64, n)
			ks := make([]int64, n)
			xs := make([]float64, n)
			kv := make([]bool, n)
			xv := make([]bool, n)
			for i := range n {
				times[i] = int64(rng.IntN(300)) - 50 // out of order, repeats, negative
				ks[i], kv[i] = int64(rng.IntN(1000))-500, rng.IntN(5) != 0
				xs[i], xv[i] = rng.NormFloat64(), rng.IntN(4) != 0
			}
			tb := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Int64s("k", ks, kv), tablet.Doubles("x", xs, xv)}}
			require.NoError(t, db.Insert("S", fmt.Sprintf("d%d", d), tb))
		}
		switch step % 4 {
		case 1:
			require.NoError(t, db.Flush())
		case 2:
			from, to := int64(rng.IntN(200)), int64(20)
			to += from
			require.NoError(t, db.Delete(DeleteRequest{Type: "S", Devices: []string{"d1"}, Start: &from, End: &to}))
		}
	}
	all := rowsOf(t, db, "S")
	fns := []string{"count", "min", "max", "sum", "mean", "first", "last"}
	var aggs []Agg
	for _, p := range []string{"k", "x"} {
		for _, fn := range fns {
			aggs = append(aggs, Agg{p, fn})
		}
	}
	for _, c := range []struct {
		byDevice      bool
		every, origin int64
		start, end    *int64
	}{
		{false, 0, 0, nil, nil},
		{true, 0, 0, nil, nil},
		{true, 25, 0, nil, nil},
		{true, 1, 0, nil, nil}, // a bucket per time
		{false, 40, 7, nil, nil},
		{true, 13, -3, ptr(int64(-10)), ptr(int64(120))},
		{false, 0, 0, ptr(int64(500)), nil}, // no rows
	} {
		name := fmt.Sprintf("byDevice=%v every=%d origin=%d", c.byDevice, c.every, c.origin)
		req := AggregateRequest{Type: "S", Aggs: aggs, ByDevice: c.byDevice, Every: c.every, Origin: c.origin, Start: c.start, End: c.end}
		batches, _, err := db.Aggregate(context.Background(), req)
		require.NoError(t, err, name)
		split, wasSplit := splitAggregate(t, db, req)
		requireSameAggregate(t, batches, split, name)
		if c.start == nil {
			require.True(t, wasSplit, "%s: the scan was split", name)
		}
		// The reference: group the scan's rows.
		type key struct {
			device string
			bucket int64
		}
		groups := map[key]map[string]map[int64]any{}
		firsts := map[key]int64{}
		for dev, rows := range all {
			for tm, row := range rows {
				if c.start != nil && tm < *c.start || c.end != nil && tm >= *c.end {
					continue
				}
				k := key{bucket: 0}
				if c.byDevice {
					k.device = dev
				}
				if c.every > 0 {
					k.bucket = int64(math.Floor(float64(tm-c.origin)/float64(c.every)))*c.every + c.origin
				}
				if groups[k] == nil {
					groups[k] = map[string]map[int64]any{"k": {}, "x": {}}
					firsts[k] = tm
				}
				firsts[k] = min(firsts[k], tm)
				// Across devices two rows may share a time: count both.
				tkey := tm*16 + int64(len(dev)) + int64(dev[len(dev)-1]-'0')
				if c.byDevice {
					tkey = tm
				}
				groups[k]["k"][tkey] = row["k"]
				groups[k]["x"][tkey] = row["x"]
			}
		}
		got := 0
		for _, b := range batches {
			for i, tm := range b.Rows.Times {
				k := key{device: b.Device, bucket: tm}
				if c.every == 0 {
					k.bucket = 0
					assert.Equal(t, firsts[k], tm, "%s: the group's first time", name)
				}
				g, ok := groups[k]
				require.True(t, ok, "%s: group %v has rows", name, k)
				got++
				for j, a := range aggs {
					col := &b.Rows.Columns[j]
					require.Equal(t, AggColumnName(a), col.Name)
					want := refAggregate(a.Func, g[a.Property])
					if !c.byDevice && (a.Func == "first" || a.Func == "last") {
						continue // ties across devices: checked by device
					}
					if want == nil {
						assert.False(t, col.Valid(i), "%s %v %s", name, k, col.Name)
						continue
					}
					require.True(t, col.Valid(i), "%s %v %s", name, k, col.Name)
					switch w := want.(type) {
					case float64:
						assert.InDelta(t, w, col.Value(i), 1e-9, "%s %v %s", name, k, col.Name)
					default:
						assert.Equal(t, w, col.Value(i), "%s %v %s", name, k, col.Name)
					}
				}
			}
		}
		assert.Equal(t, len(groups), got, "%s: every group, once", name)
	}
}

func ptr[T any](v T) *T { return &v }

// splitAggregate is db.Aggregate(req) with the scan split in parts of a
// device or more, as many as three, each aggregated on a goroutine; split
// says whether it was.
func splitAggregate(t *testing.T, db *DB, req AggregateRequest) (out []Batch, split bool) {
	t.Helper()
	defer splitSmall()()
	before := aggregatePartsRun.Load()
	out, _, err := db.Aggregate(context.Background(), req)
	require.NoError(t, err)
	return out, aggregatePartsRun.Load() > before
}

// splitSmall makes aggregates split their scans in up to three parts of
// a row or more; the returned func puts it back.
func splitSmall() func() {
	saved := aggregateSplit
	aggregateSplit.parts, aggregateSplit.minRows = 3, 1
	return func() { aggregateSplit = saved }
}

// requireSameAggregate: got, from parts aggregated apart and merged, is
// want, from one pass: the same groups and values, first and last of the
// same rows where devices tie (floats' sums to their last bits).
func requireSameAggregate(t *testing.T, want, got []Batch, name string) {
	t.Helper()
	require.Equal(t, len(want), len(got), name)
	for i := range want {
		w, g := want[i].Rows, got[i].Rows
		require.Equal(t, want[i].Device, got[i].Device, name)
		require.Equal(t, w.Times, g.Times, name)
		require.Equal(t, len(w.Columns), len(g.Columns), name)
		for j := range w.Columns {
			wc, gc := &w.Columns[j], &g.Columns[j]
			for r := range w.Times {
				require.Equal(t, wc.Valid(r), gc.Valid(r), "%s: %s row %d", name, wc.Name, r)
				if !wc.Valid(r) {
					continue
				}
				if v, ok := wc.Value(r).(float64); ok && (strings.HasSuffix(wc.Name, "_sum") || strings.HasSuffix(wc.Name, "_mean")) {
					require.InDelta(t, v, gc.Value(r), 1e-9*max(1, math.Abs(v)), "%s: %s row %d", name, wc.Name, r)
					continue
				}
				require.Equal(t, wc.Value(r), gc.Value(r), "%s: %s row %d", name, wc.Name, r)
			}
		}
	}
}

func TestAggregateEdges(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE E; CREATE PROPERTY E.k INT64; CREATE PROPERTY E.x DOUBLE; CREATE PROPERTY E.s STRING"))
	tb := &tablet.Tablet{Times: []int64{1, 2, 3}, Columns: []tablet.Column{
		tablet.Int64s("k", []int64{math.MaxInt64, 1, 0}, []bool{true, true, false}),
		tablet.Doubles("x", []float64{math.NaN(), 2, -1}, nil),
		tablet.Strings("s", []string{"b", "a", "c"}, []bool{true, true, false}),
	}}
	require.NoError(t, db.Insert("E", "d", tb))
	agg := func(aggs ...Agg) ([]Batch, error) {
		b, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "E", Aggs: aggs})
		return b, err
	}
	_, err := agg(Agg{"k", "sum"})
	require.ErrorIs(t, err, errs.ErrInvalidArgument, "MaxInt64 + 1 overflows")
	assert.Contains(t, err.Error(), `sum of "k" overflows`)
	b, err := agg(Agg{"k", "mean"}, Agg{"x", "max"}, Agg{"x", "min"}, Agg{"s", "min"}, Agg{"s", "max"}, Agg{"s", "count"})
	require.NoError(t, err)
	require.Len(t, b, 1)
	r := b[0].Rows
	assert.InDelta(t, (float64(math.MaxInt64)+1)/2, r.Columns[0].Double(0), 1e6)
	assert.True(t, math.IsNaN(r.Columns[1].Double(0)), "NaN is the greatest")
	assert.Equal(t, -1.0, r.Columns[2].Double(0))
	assert.Equal(t, "a", string(r.Columns[3].Bytes(0)))
	assert.Equal(t, "b", string(r.Columns[4].Bytes(0)))
	assert.Equal(t, int64(2), r.Columns[5].Int64(0))

	for _, c := range []struct {
		req  AggregateRequest
		kind error
		msg  string
	}{
		{AggregateRequest{Type: "E"}, errs.ErrInvalidArgument, "no aggregates"},
		{AggregateRequest{Type: "Nope", Aggs: []Agg{{"k", "sum"}}}, errs.ErrNotFound, "Nope"},
		{AggregateRequest{Type: "E", Aggs: []Agg{{"nope", "sum"}}}, errs.ErrNotFound, "E.nope"},
		{AggregateRequest{Type: "E", Aggs: []Agg{{"k", "median"}}}, errs.ErrInvalidArgument, `unknown function "median"`},
		{AggregateRequest{Type: "E", Aggs: []Agg{{"s", "sum"}}}, errs.ErrInvalidArgument, "sum of E.s"},
		{AggregateRequest{Type: "E", Aggs: []Agg{{"k", "min"}, {"k", "min"}}}, errs.ErrInvalidArgument, "asked twice"},
		{AggregateRequest{Type: "E", Aggs: []Agg{{"k", "min"}}, Every: -1}, errs.ErrInvalidArgument, "every -1"},
	} {
		_, _, err := db.Aggregate(context.Background(), c.req)
		require.ErrorIs(t, err, c.kind, c.msg)
		assert.Contains(t, err.Error(), c.msg)
	}
}

func TestAggregateFill(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("F", "a", &tablet.Tablet{Times: []int64{1, 35}, Columns: []tablet.Column{
		tablet.Int64s("k", []int64{10, 40}, nil), tablet.Doubles("x", []float64{1, 2.5}, nil), tablet.Strings("s", []string{"p", "q"}, nil)}}))
	require.NoError(t, db.Insert("F", "b", &tablet.Tablet{Times: []int64{12}, Columns: []tablet.Column{
		tablet.Int64s("k", []int64{7}, nil), tablet.Doubles("x", []float64{3}, nil), tablet.Strings("s", []string{"r"}, nil)}}))
	aggs := []Agg{{"k", "sum"}, {"x", "mean"}, {"s", "last"}, {"k", "count"}}
	run := func(fill string, start, end *int64) map[string][][]any {
		b, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "F", Aggs: aggs, ByDevice: true, Every: 10,
			Fill: fill, Start: start, End: end})
		require.NoError(t, err, fill)
		out := map[string][][]any{}
		for _, batch := range b {
			for i, tm := range batch.Rows.Times {
				row := []any{tm}
				for j := range batch.Rows.Columns {
					row = append(row, batch.Rows.Columns[j].Value(i))
				}
				out[batch.Device] = append(out[batch.Device], row)
			}
		}
		return out
	}
	assert.Equal(t, map[string][][]any{
		"a": {{int64(0), int64(10), 1.0, "p", int64(1)}, {int64(30), int64(40), 2.5, "q", int64(1)}},
		"b": {{int64(10), int64(7), 3.0, "r", int64(1)}},
	}, run("", nil, nil), "no fill: empty buckets are absent")
	assert.Equal(t, [][]any{
		{int64(0), int64(10), 1.0, "p", int64(1)}, {int64(10), nil, nil, nil, int64(0)},
		{int64(20), nil, nil, nil, int64(0)}, {int64(30), int64(40), 2.5, "q", int64(1)},
	}, run("null", nil, nil)["a"])
	assert.Equal(t, [][]any{
		{int64(0), int64(10), 1.0, "p", int64(1)}, {int64(10), int64(10), 1.0, "p", int64(0)},
		{int64(20), int64(10), 1.0, "p", int64(0)}, {int64(30), int64(40), 2.5, "q", int64(1)},
	}, run("previous", nil, nil)["a"])
	assert.Equal(t, [][]any{
		{int64(0), int64(10), 1.0, "p", int64(1)}, {int64(10), int64(20), 1.5, nil, int64(0)},
		{int64(20), int64(30), 2.0, nil, int64(0)}, {int64(30), int64(40), 2.5, "q", int64(1)},
	}, run("linear", nil, nil)["a"])
	// With a range, each device gets every bucket of it.
	got := run("previous", ptr(int64(0)), ptr(int64(50)))
	assert.Len(t, got["a"], 5)
	assert.Equal(t, [][]any{
		{int64(0), nil, nil, nil, int64(0)}, {int64(10), int64(7), 3.0, "r", int64(1)},
		{int64(20), int64(7), 3.0, "r", int64(0)}, {int64(30), int64(7), 3.0, "r", int64(0)}, {int64(40), int64(7), 3.0, "r", int64(0)},
	}, got["b"])

	_, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "F", Aggs: aggs, Every: 10, Fill: "zero"})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `unknown fill "zero"`)
	_, _, err = db.Aggregate(context.Background(), AggregateRequest{Type: "F", Aggs: aggs, Every: 1, Fill: "null", Start: ptr(int64(0)), End: ptr(int64(1 << 40))})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "narrow the range")
	_, _, err = db.Aggregate(context.Background(), AggregateRequest{Type: "F", Aggs: aggs, Fill: "previous"})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `fill "previous" needs buckets (every)`)
}

// TestAggregateDenseDoubles: DOUBLE columns without nulls take a loop of
// their own; its results equal a computation here, across batches and
// buckets, NaN included.
func TestAggregateDenseDoubles(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 5000
	times, xs := seq64(0, n), make([]float64, n)
	for i := range xs {
		xs[i] = rng.NormFloat64()
	}
	xs[4321] = math.NaN()
	require.NoError(t, db.Insert("D", "d", &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("x", xs, nil)}}))
	b, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "D", Every: 1000,
		Aggs: []Agg{{"x", "count"}, {"x", "sum"}, {"x", "mean"}, {"x", "min"}, {"x", "max"}}})
	require.NoError(t, err)
	r := b[0].Rows
	require.Equal(t, 5, r.Rows())
	for k := range 5 {
		part := xs[k*1000 : (k+1)*1000]
		sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
		for _, v := range part {
			sum += v
			if !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		assert.Equal(t, int64(1000), r.Columns[0].Int64(k))
		if k == 4 {
			assert.True(t, math.IsNaN(r.Columns[1].Double(k)) && math.IsNaN(r.Columns[4].Double(k)), "NaN sums to NaN and is the greatest")
			assert.Equal(t, lo, r.Columns[3].Double(k))
			continue
		}
		assert.InDelta(t, sum, r.Columns[1].Double(k), 1e-9)
		assert.InDelta(t, sum/1000, r.Columns[2].Double(k), 1e-12)
		assert.Equal(t, lo, r.Columns[3].Double(k))
		assert.Equal(t, hi, r.Columns[4].Double(k))
	}
}

// TestAggregateFromStatistics: count, min, max, sum and mean over
// everything are answered from the files' statistics (and their sums) where no memtable row of the file's
// devices overlaps them, read elsewhere, and equal the scan's either way;
// NaN (no min/max in the statistics), a property added after a file, and a
// pending delete all fall back to reading.
func TestAggregateFromStatistics(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE G; CREATE PROPERTY G.k INT64; CREATE PROPERTY G.x DOUBLE"))
	rng := rand.New(rand.NewPCG(6, 6))
	insert := func(dev string, from int64, n int, nan bool) {
		times, ks, xs, kv := seq64(from, int64(n)), make([]int64, n), make([]float64, n), make([]bool, n)
		for i := range n {
			ks[i], kv[i], xs[i] = rng.Int64N(1000)-500, rng.IntN(4) != 0, rng.NormFloat64()
		}
		if nan {
			xs[n/2] = math.NaN()
		}
		require.NoError(t, db.Insert("G", dev, &tablet.Tablet{Times: times, Columns: []tablet.Column{
			tablet.Int64s("k", ks, kv), tablet.Doubles("x", xs, nil)}}))
	}
	aggs := []Agg{{"k", "count"}, {"k", "min"}, {"k", "max"}, {"k", "sum"}, {"k", "mean"},
		{"x", "count"}, {"x", "min"}, {"x", "max"}, {"x", "sum"}, {"x", "mean"}}
	check := func(what string, wantStats bool) {
		t.Helper()
		before := statsFilesAnswered.Load()
		b, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "G", Aggs: aggs})
		require.NoError(t, err, what)
		assert.Equal(t, wantStats, statsFilesAnswered.Load() > before, "%s: statistics used", what)
		all := rowsOf(t, db, "G")
		for j, a := range aggs {
			values := map[int64]any{}
			i := int64(0)
			for _, rows := range all {
				for _, row := range rows {
					values[i] = row[a.Property]
					i++
				}
			}
			col := &b[0].Rows.Columns[j]
			if a.Func == "mean" || a.Property == "x" && a.Func == "sum" { // summed in another order
				want := refAggregate(a.Func, values).(float64)
				if math.IsNaN(want) {
					assert.True(t, math.IsNaN(col.Double(0)), "%s: %s is NaN", what, AggColumnName(a))
				} else {
					assert.InDelta(t, want, col.Double(0), 1e-9*max(1, math.Abs(want)), "%s: %s", what, AggColumnName(a))
				}
				continue
			}
			if a.Property == "x" && a.Func != "count" { // NaN is the greatest: min skips it, max is it
				lo, hi, nan := math.Inf(1), math.Inf(-1), false
				for _, v := range values {
					f := v.(float64)
					nan = nan || math.IsNaN(f)
					if !math.IsNaN(f) {
						lo, hi = min(lo, f), max(hi, f)
					}
				}
				if a.Func == "min" {
					assert.Equal(t, lo, col.Double(0), "%s: x_min", what)
				} else if nan {
					assert.True(t, math.IsNaN(col.Double(0)), "%s: x_max is NaN", what)
				} else {
					assert.Equal(t, hi, col.Double(0), "%s: x_max", what)
				}
				continue
			}
			assert.Equal(t, refAggregate(a.Func, values), col.Value(0), "%s: %s", what, AggColumnName(a))
		}
	}
	for d := range 4 { // a file each
		insert(fmt.Sprintf("d%d", d), 0, 500, false)
		require.NoError(t, db.Flush())
	}
	check("flushed only", true)
	insert("d1", 100, 50, false) // overlaps d1's rows in the file: that file is read
	insert("d9", 0, 50, false)   // a device the file lacks: no overlap
	check("with overlapping memtable rows", true)
	require.NoError(t, db.Flush())
	insert("d2", 10_000, 10, true) // after the files' spans: NaN in memory is read
	check("NaN in memory", true)
	require.NoError(t, db.Flush()) // the file with the NaN has no x min/max: read
	check("NaN flushed", true)
	// Sums alone: every file answers, the one with the NaN too.
	all, sums := aggs, []Agg{{"k", "sum"}, {"x", "sum"}, {"x", "mean"}}
	aggs = sums
	before := statsFilesAnswered.Load()
	check("sums", true)
	ty, _ := db.Catalog().Type("G")
	files := len(db.view.Load().tables[ty.ID].files)
	assert.Equal(t, int64(files), statsFilesAnswered.Load()-before, "files answered from their sums")
	aggs = all
	from := int64(0)
	to := int64(5)
	require.NoError(t, db.Delete(DeleteRequest{Type: "G", Devices: []string{"d3"}, Start: &from, End: &to}))
	check("a pending delete", false)
}

// TestAggregateSumOverflowFromStatistics: files whose INT64 sums fit but
// whose total does not give the scan's error, not a wrapped-around sum.
func TestAggregateSumOverflowFromStatistics(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	for d := range 3 {
		require.NoError(t, db.Insert("O", fmt.Sprint("d", d), int64Tablet([]int64{1}, map[string][]int64{"k": {math.MaxInt64 / 2}})))
		require.NoError(t, db.Flush())
	}
	before := statsFilesAnswered.Load()
	_, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "O", Aggs: []Agg{{"k", "sum"}}})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "overflows INT64")
	assert.Greater(t, statsFilesAnswered.Load(), before, "the sums came from the files")
	b, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "O", Aggs: []Agg{{"k", "mean"}}})
	require.NoError(t, err, "a mean does not overflow")
	assert.InDelta(t, float64(math.MaxInt64/2), b[0].Rows.Columns[0].Double(0), 1e3)
}

// TestMinDoubles: NaN is the greatest value, so the least of numbers and
// NaNs is the least number, and NaN only when every value is one; the
// greatest is NaN if one is; sums add up whatever the length.
func TestMinDoubles(t *testing.T) {
	nan := math.NaN()
	assert.Equal(t, -1.0, minDoubles([]float64{3, nan, -1, 2}))
	assert.Equal(t, 2.0, minDoubles([]float64{nan, nan, 2}))
	assert.Equal(t, math.Inf(-1), minDoubles([]float64{nan, math.Inf(-1), 0}))
	assert.True(t, math.IsNaN(minDoubles([]float64{nan, nan})))
	assert.Equal(t, 5.0, minDoubles([]float64{5}))
	// Both infinities sum to NaN without a NaN among them.
	both := []float64{1, math.Inf(1), math.Inf(-1), 2, 3}
	assert.Equal(t, math.Inf(-1), minDoubles(both))
	assert.Equal(t, math.Inf(1), maxDoubles(both))
	// Lengths around the four and eight chains, a NaN at each place.
	rng := rand.New(rand.NewPCG(2, 2))
	for n := 1; n < 20; n++ {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = rng.NormFloat64()
		}
		lo, hi, sum := slices.Min(vals), slices.Max(vals), 0.0
		for _, v := range vals {
			sum += v
		}
		assert.Equal(t, lo, minDoubles(vals), "n=%d", n)
		assert.Equal(t, hi, maxDoubles(vals), "n=%d", n)
		assert.InDelta(t, sum, sumDoubles(vals), 1e-12, "n=%d", n)
		for k := range n {
			withNaN := slices.Clone(vals)
			withNaN[k] = nan
			rest := slices.Delete(slices.Clone(vals), k, k+1)
			if len(rest) > 0 {
				assert.Equal(t, slices.Min(rest), minDoubles(withNaN), "n=%d NaN at %d", n, k)
			}
			assert.True(t, math.IsNaN(maxDoubles(withNaN)), "n=%d NaN at %d", n, k)
			assert.True(t, math.IsNaN(sumDoubles(withNaN)))
		}
	}
}
