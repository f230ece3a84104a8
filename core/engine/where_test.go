package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestWhereMatchesModel: filtered scans (conditions on properties that
// are projected or not, and/or, nulls, in, NaN) return exactly the rows of
// an unfiltered scan that the predicate, evaluated here, accepts.
func TestWhereMatchesModel(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(9, 9))
	for step := range 6 {
		for d := range 3 {
			n := 1 + rng.IntN(50)
			times := make([]int64, n)
			ks, xs, ss := make([]int64, n), make([]float64, n), make([]string, n)
			kv, xv, sv := make([]bool, n), make([]bool, n), make([]bool, n)
			for i := range n {
				times[i] = int64(rng.IntN(200))
				ks[i], kv[i] = int64(rng.IntN(20))-10, rng.IntN(5) != 0
				xs[i], xv[i] = float64(rng.IntN(100))/10, rng.IntN(5) != 0
				if rng.IntN(10) == 0 {
					xs[i] = math.NaN()
				}
				ss[i], sv[i] = []string{"ok", "warn", "fail"}[rng.IntN(3)], rng.IntN(6) != 0
			}
			tb := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Int64s("k", ks, kv), tablet.Doubles("x", xs, xv), tablet.Strings("s", ss, sv)}}
			require.NoError(t, db.Insert("W", fmt.Sprintf("d%d", d), tb))
		}
		if step == 3 {
			require.NoError(t, db.Flush())
		}
	}
	all := rowsOf(t, db, "W")
	cond := func(p, op string, v any) Where { return Where{Cond: &Cond{Property: p, Op: op, Value: v}} }
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	var eval func(w Where, row map[string]any) bool
	eval = func(w Where, row map[string]any) bool {
		switch {
		case w.And != nil:
			for _, x := range w.And {
				if !eval(x, row) {
					return false
				}
			}
			return true
		case w.Or != nil:
			for _, x := range w.Or {
				if eval(x, row) {
					return true
				}
			}
			return false
		}
		c, v := w.Cond, row[w.Cond.Property]
		switch c.Op {
		case "is null":
			return v == nil
		case "is not null":
			return v != nil
		}
		if v == nil {
			return false
		}
		if c.Op == "in" {
			for _, x := range c.Value.([]any) {
				if eval(cond(c.Property, "=", x), row) {
					return true
				}
			}
			return false
		}
		if s, ok := v.(string); ok {
			switch c.Op {
			case "=":
				return s == c.Value
			case "!=":
				return s != c.Value
			case "<":
				return s < c.Value.(string)
			}
			panic(c.Op)
		}
		a, _ := num(v)
		b, _ := num(c.Value)
		switch c.Op {
		case "=":
			return a == b
		case "!=":
			return a != b
		case "<":
			return a < b
		case "<=":
			return a <= b
		case ">":
			return a > b
		case ">=":
			return a >= b
		}
		panic(c.Op)
	}
	for _, w := range []Where{
		cond("k", ">", int64(3)),
		cond("x", "<=", 2.5),
		cond("x", ">=", int64(5)),
		cond("x", "!=", 1.0),
		cond("s", "=", "warn"),
		cond("s", "<", "ok"),
		cond("k", "is null", nil),
		cond("x", "is not null", nil),
		cond("k", "in", []any{int64(-3), int64(0), 4.0}),
		cond("s", "in", []any{"ok", "fail"}),
		{And: []Where{cond("k", ">=", int64(0)), cond("x", "<", 5.0)}},
		{Or: []Where{cond("k", "=", int64(1)), {And: []Where{cond("s", "=", "fail"), cond("x", "is null", nil)}}}},
	} {
		for _, props := range [][]string{nil, {"s"}} { // the filter's properties projected, or not
			rows, err := db.Scan(context.Background(), ScanRequest{Type: "W", Properties: props, Where: &w, ReuseBatches: len(props) > 0})
			require.NoError(t, err)
			got := map[string][]int64{}
			for b, ok := rows.Next(); ok; b, ok = rows.Next() {
				wantCols := 3
				if props != nil {
					wantCols = len(props)
				}
				require.Len(t, b.Rows.Columns, wantCols, "only the requested columns")
				got[b.Device] = append(got[b.Device], b.Rows.Times...)
			}
			require.NoError(t, rows.Err())
			rows.Close()
			want := map[string][]int64{}
			for dev, byTime := range all {
				for _, tm := range sortedTimes(byTime) {
					if eval(w, byTime[tm]) {
						want[dev] = append(want[dev], tm)
					}
				}
			}
			assert.Equal(t, want, got, "%+v props %v", w, props)
		}
	}
	// Aggregates take the filter too.
	w := cond("k", ">", int64(0))
	b, _, err := db.Aggregate(context.Background(), AggregateRequest{Type: "W", Aggs: []Agg{{"k", "count"}}, Where: &w})
	require.NoError(t, err)
	var n int64
	for _, byTime := range all {
		for _, row := range byTime {
			if eval(w, row) {
				n++
			}
		}
	}
	assert.Equal(t, n, b[0].Rows.Columns[0].Int64(0))
}

func sortedTimes(m map[int64]map[string]any) []int64 {
	out := make([]int64, 0, len(m))
	for tm := range m {
		out = append(out, tm)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestWhereRefusesBadFilters(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("W", "d", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{
		tablet.Int64s("k", []int64{1}, nil), tablet.Bools("b", []bool{true}, nil), tablet.Doubles("x", []float64{1}, nil)}}))
	for _, c := range []struct{ json, msg string }{
		{`{"property": "nope", "op": "=", "value": 1}`, `no property W."nope"`},
		{`{"property": "k", "op": "~", "value": 1}`, `unknown op "~"`},
		{`{"property": "k", "op": "=", "value": "one"}`, `cannot be compared with "k"`},
		{`{"property": "k", "op": "=", "value": 1.5}`, `cannot be compared with "k"`},
		{`{"property": "b", "op": "<", "value": true}`, "only =, !=, in"},
		{`{"property": "k", "op": "in", "value": 1}`, "needs a list"},
		{`{"property": "k", "op": "is null", "value": 1}`, "takes no value"},
		{`{"and": []}`, "non-empty list"},
		{`{"and": [{"property": "k", "op": "=", "value": 1}], "or": []}`, "no other key"},
		{`{"property": "k", "op": "=", "value": 1, "x": 2}`, `unknown key "x"`},
		{`[1]`, "not an object"},
		{`{"property": "k"`, "unexpected EOF"},
		{`{"property": "k", "op": "<", "value": {"float": "Infinity"}}`, `cannot be compared with "k"`}, // floats only
		{`{"property": "x", "op": "<", "value": {"float": "inf"}}`, `cannot be compared with "x"`},
		{`{"property": "x", "op": "<", "value": {"float": ["NaN"]}}`, `cannot be compared with "x"`},
		{`{"property": "x", "op": "<", "value": {"float": "NaN", "more": 1}}`, `cannot be compared with "x"`},
	} {
		w, err := ParseWhere([]byte(c.json))
		if err == nil {
			_, err = db.Scan(context.Background(), ScanRequest{Type: "W", Where: w})
		}
		require.ErrorIs(t, err, errs.ErrInvalidArgument, c.json)
		assert.Contains(t, err.Error(), c.msg, c.json)
	}
	w, err := ParseWhere([]byte(`{"property": "k", "op": "=", "value": 9007199254740993}`))
	require.NoError(t, err)
	assert.Equal(t, json.Number("9007199254740993"), w.Cond.Value, "an int64 stays exact (not a float64)")
}

// TestWhereSpecialFloats: the JSON form gives NaN and the infinities as
// {"float": ...}; they compare as IEEE 754 says.
func TestWhereSpecialFloats(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	nan, inf := math.NaN(), math.Inf(1)
	vals := []float64{1, nan, inf, -inf, 2}
	// DOUBLE with a null (the careful loop), DOUBLE without (the loop per
	// operator), FLOAT with a null; row 5 holds the null, or 2.
	require.NoError(t, db.Insert("F", "d", &tablet.Tablet{Times: []int64{1, 2, 3, 4, 5},
		Columns: []tablet.Column{tablet.Doubles("x", vals, []bool{true, true, true, true, false})}}))
	require.NoError(t, db.Insert("G", "d", &tablet.Tablet{Times: []int64{1, 2, 3, 4, 5},
		Columns: []tablet.Column{tablet.Doubles("x", vals, nil)}}))
	f32 := make([]float32, len(vals))
	for i, v := range vals {
		f32[i] = float32(v)
	}
	require.NoError(t, db.Insert("H", "d", &tablet.Tablet{Times: []int64{1, 2, 3, 4, 5},
		Columns: []tablet.Column{tablet.Floats("x", f32, []bool{true, true, true, true, false})}}))
	for _, c := range []struct {
		json  string
		times []int64 // of rows 1-4
		two   bool    // whether 2 passes
	}{
		{`{"property": "x", "op": "<", "value": {"float": "Infinity"}}`, []int64{1, 4}, true},
		{`{"property": "x", "op": ">", "value": {"float": "-Infinity"}}`, []int64{1, 3}, true},
		{`{"property": "x", "op": "=", "value": {"float": "Infinity"}}`, []int64{3}, false},
		{`{"property": "x", "op": "=", "value": {"float": "NaN"}}`, nil, false},
		{`{"property": "x", "op": "!=", "value": {"float": "NaN"}}`, []int64{1, 2, 3, 4}, true},
		{`{"property": "x", "op": "<=", "value": {"float": "NaN"}}`, nil, false},
		{`{"property": "x", "op": ">=", "value": {"float": "NaN"}}`, nil, false},
		{`{"property": "x", "op": "<", "value": {"float": "NaN"}}`, nil, false},
		{`{"property": "x", "op": ">", "value": {"float": "NaN"}}`, nil, false},
		{`{"property": "x", "op": ">=", "value": {"float": "Infinity"}}`, []int64{3}, false},
		{`{"property": "x", "op": "<=", "value": {"float": "-Infinity"}}`, []int64{4}, false},
		{`{"property": "x", "op": "in", "value": [{"float": "-Infinity"}, 1]}`, []int64{1, 4}, false},
	} {
		w, err := ParseWhere([]byte(c.json))
		require.NoError(t, err, c.json)
		for _, typ := range []string{"F", "G", "H"} {
			var got []int64
			for tm := range requestRowsOf(t, db, ScanRequest{Type: typ, Where: w})["d"] {
				got = append(got, tm)
			}
			slices.Sort(got)
			want := c.times
			if typ == "G" && c.two {
				want = append(slices.Clone(want), 5)
			}
			assert.Equal(t, want, got, "%s: %s", typ, c.json)
		}
	}
}

// TestWhereFloatStatistics: a FLOAT file's min and max are float32
// values, compared as the rows are: a row of float32(0.1) is above 0.1,
// and its file is not pruned for x > 0.1.
func TestWhereFloatStatistics(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("F", "d", &tablet.Tablet{Times: []int64{1, 2},
		Columns: []tablet.Column{tablet.Floats("x", []float32{0.1, 0.05}, nil)}}))
	w, err := ParseWhere([]byte(`{"property": "x", "op": ">", "value": 0.1}`))
	require.NoError(t, err)
	require.Len(t, requestRowsOf(t, db, ScanRequest{Type: "F", Where: w})["d"], 1, "in memory")
	require.NoError(t, db.Flush())
	require.Len(t, requestRowsOf(t, db, ScanRequest{Type: "F", Where: w})["d"], 1, "flushed")
}

// TestWherePrunesFilesByStatistics: files whose statistics rule a filter
// out are not read, unless a newer row in memory could complete one of
// theirs; the rows are those of the model either way.
func TestWherePrunesFilesByStatistics(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	put := func(dev string, from int64, xs []float64, ys []int64) {
		require.NoError(t, db.Insert("P", dev, &tablet.Tablet{Times: seq64(from, int64(len(xs))), Columns: []tablet.Column{
			tablet.Doubles("x", xs, nil), tablet.Int64s("y", ys, nil)}}))
	}
	put("a", 0, []float64{1, 2, 3}, []int64{1, 1, 1})
	require.NoError(t, db.Flush()) // file 1: x in [1, 3]
	put("b", 0, []float64{10, 11, 12}, []int64{2, 2, 2})
	require.NoError(t, db.Flush()) // file 2: x in [10, 12]
	scan := func(w Where) map[string][]int64 {
		t.Helper()
		rows, err := db.Scan(context.Background(), ScanRequest{Type: "P", Where: &w})
		require.NoError(t, err)
		defer rows.Close()
		out := map[string][]int64{}
		for b, ok := rows.Next(); ok; b, ok = rows.Next() {
			out[b.Device] = append(out[b.Device], b.Rows.Times...)
		}
		require.NoError(t, rows.Err())
		return out
	}
	gt := Where{Cond: &Cond{Property: "x", Op: ">", Value: 5.0}}
	before := prunedFiles.Load()
	assert.Equal(t, map[string][]int64{"b": {0, 1, 2}}, scan(gt))
	assert.Equal(t, before+1, prunedFiles.Load(), "file 1 is not read")
	before = prunedFiles.Load()
	assert.Equal(t, map[string][]int64{"a": {1}}, scan(Where{Cond: &Cond{Property: "x", Op: "=", Value: 2.0}}))
	assert.Equal(t, before+1, prunedFiles.Load(), "file 2 is not read")
	before = prunedFiles.Load()
	assert.Equal(t, map[string][]int64{}, scan(Where{Cond: &Cond{Property: "x", Op: "is null"}}))
	assert.Equal(t, before+2, prunedFiles.Load(), "no nulls anywhere")

	// A newer row of device a inside file 1's span, with x but no y: the
	// merged row takes x from memory and y from the file, so file 1 must
	// be read although its statistics rule x > 5 out.
	require.NoError(t, db.Insert("P", "a", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{tablet.Doubles("x", []float64{50}, nil)}}))
	before = prunedFiles.Load()
	rows, err := db.Scan(context.Background(), ScanRequest{Type: "P", Where: &gt, Properties: []string{"y"}})
	require.NoError(t, err)
	var got []any
	for b, ok := rows.Next(); ok; b, ok = rows.Next() {
		for i := range b.Rows.Rows() {
			got = append(got, b.Device, b.Rows.Times[i], b.Rows.Columns[0].Value(i))
		}
	}
	rows.Close()
	assert.Equal(t, []any{"a", int64(1), int64(1), "b", int64(0), int64(2), "b", int64(1), int64(2), "b", int64(2), int64(2)}, got)
	assert.Equal(t, before, prunedFiles.Load(), "file 1 overlaps the memtable: read")

	// A property created after the files: they hold none of it.
	require.NoError(t, db.Exec("CREATE PROPERTY P.z INT64"))
	before = prunedFiles.Load()
	assert.Equal(t, map[string][]int64{}, scan(Where{Cond: &Cond{Property: "z", Op: ">", Value: int64(0)}}))
	assert.Equal(t, before+1, prunedFiles.Load(), "file 2 has no z (file 1 overlaps the memtable)")
}

// TestWhereDoublesFastPath: the loop for DOUBLE columns without nulls
// keeps the rows the row-at-a-time test keeps, NaN and infinities
// included, for every comparison and constant.
func TestWhereDoublesFastPath(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	vals := []float64{0, -1, 1, 0.5, nan, inf, -inf, 0.99, 0.991, -0.0}
	dense := tablet.Doubles("x", vals, nil)
	valid := make([]bool, len(vals))
	for i := range valid {
		valid[i] = true
	}
	checked := tablet.Doubles("x", vals, valid) // a validity bitmap: the general path
	require.NotNil(t, checked.Validity)
	// The same values after an offset, and at an address no float64 may
	// have (the fast loop declines them).
	shifted := tablet.Doubles("x", append([]float64{7, 7, 7}, vals...), nil)
	shifted.Offset = 3
	unaligned := dense
	unaligned.Values = append(make([]byte, 4, 4+len(dense.Values)), dense.Values...)[4:]
	for _, op := range []string{"=", "!=", "<", "<=", ">", ">="} {
		for _, cv := range []float64{0, 0.99, nan, inf, -inf, -0.0} {
			c := &compiledCond{typ: schema.Double, op: op, v: cell{f: cv}}
			fast, slow := make([]bool, len(vals)), make([]bool, len(vals))
			require.True(t, c.evalDoubles(&dense, fast))
			c.eval(&checked, slow)
			require.Equal(t, slow, fast, "x %s %v", op, cv)
			for _, col := range []*tablet.Column{&shifted, &unaligned} {
				got := make([]bool, len(vals))
				c.eval(col, got)
				require.Equal(t, slow, got, "x %s %v, offset %d", op, cv, col.Offset)
			}
		}
	}
	require.False(t, (&compiledCond{typ: schema.Double, op: ">", v: cell{f: 0}}).evalDoubles(&unaligned, make([]bool, len(vals))))
}

// TestWhereReadsFilesAtTheKeptRows: a device whose rows all sit in one
// file, and enough of them, is filtered as the file is read (the filter's
// columns first, the others at the kept rows only); one with newer rows
// in the memtable, or with a delete waiting, is merged first and then
// filtered. Every way gives the rows, with all their values, that an
// unfiltered scan filtered here gives.
func TestWhereReadsFilesAtTheKeptRows(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(3, 8))
	rows := func(n int, t0 int64) *tablet.Tablet {
		times := make([]int64, n)
		ks, xs, ys, zs := make([]int64, n), make([]float64, n), make([]float64, n), make([]float32, n)
		yv := make([]bool, n)
		for i := range n {
			times[i] = t0 + int64(i)
			ks[i], xs[i] = int64(rng.IntN(10)), rng.Float64() // x: random, written uncompressed
			ys[i], yv[i] = rng.Float64(), rng.IntN(4) != 0
			zs[i] = float32(rng.Float64())
		}
		return &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Int64s("k", ks, nil), tablet.Doubles("x", xs, nil),
			tablet.Doubles("y", ys, yv), tablet.Floats("z", zs, nil)}}
	}
	for _, d := range []string{"solo", "mixed", "gone"} {
		require.NoError(t, db.Insert("V", d, rows(12_000, 0)))
	}
	require.NoError(t, db.Insert("V", "small", rows(300, 0)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("V", "mixed", rows(2_000, 5_000))) // overwrites, in the memtable
	from, to := int64(100), int64(7_000)
	require.NoError(t, db.Delete(DeleteRequest{Type: "V", Devices: []string{"gone"}, Start: &from, End: &to}))

	all := rowsOf(t, db, "V")
	cond := func(p, op string, v any) Where { return Where{Cond: &Cond{Property: p, Op: op, Value: v}} }
	for _, c := range []struct {
		w    Where
		keep func(row map[string]any) bool
	}{
		{cond("x", ">", 0.98), func(r map[string]any) bool { return r["x"].(float64) > 0.98 }},
		{cond("y", "is null", nil), func(r map[string]any) bool { return r["y"] == nil }},
		{Where{And: []Where{cond("k", "=", int64(3)), cond("y", "<", 0.5)}},
			func(r map[string]any) bool { return r["k"].(int64) == 3 && r["y"] != nil && r["y"].(float64) < 0.5 }},
		{Where{Or: []Where{cond("x", "<", 0.01), cond("k", "=", int64(9))}},
			func(r map[string]any) bool { return r["x"].(float64) < 0.01 || r["k"].(int64) == 9 }},
		{cond("x", ">=", 0.0), func(map[string]any) bool { return true }},
		{cond("x", ">", 2.0), func(map[string]any) bool { return false }},
	} {
		for _, props := range [][]string{nil, {"z", "y"}} {
			for _, reuse := range []bool{false, true} {
				got := requestRowsOf(t, db, ScanRequest{Type: "V", Properties: props, Where: &c.w, ReuseBatches: reuse})
				require.Equal(t, keptOf(all, props, c.keep), got, "%+v props %v reuse %v", c.w, props, reuse)
			}
		}
	}
}

// keptOf returns the rows of all that keep accepts, with the properties
// props (nil: all).
func keptOf(all map[string]map[int64]map[string]any, props []string, keep func(row map[string]any) bool) map[string]map[int64]map[string]any {
	want := map[string]map[int64]map[string]any{}
	for dev, byTime := range all {
		for tm, r := range byTime {
			if !keep(r) {
				continue
			}
			if want[dev] == nil {
				want[dev] = map[int64]map[string]any{}
			}
			row := map[string]any{}
			for name, v := range r {
				if props == nil || slices.Contains(props, name) {
					row[name] = v
				}
			}
			want[dev][tm] = row
		}
	}
	return want
}

// A device whose rows lie in several files is filtered as each file reads
// it: its spans there are apart (a flush merges a file whose span of a
// device meets its new rows into its new files, and a compaction splits a
// device's rows between files in time order), so no file holds a row that
// replaces one another file's filter drops.
func TestWhereFiltersDevicesSplitBetweenFiles(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(5, 9))
	rows := func(t0 int64, n int) *tablet.Tablet {
		times, xs, ys, zs := make([]int64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			times[i], xs[i], ys[i], zs[i] = t0+int64(i), rng.Float64(), rng.Float64(), rng.Float64()
		}
		return &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("x", xs, nil), tablet.Doubles("y", ys, nil),
			tablet.Doubles("z", zs, nil)}}
	}
	const n = 6_000 // above the rows from which a device is read by ranges
	// Three flushes, so three files: a-apart at [0, n), [n, 2n), then
	// [3n, 4n); b-reversed at [2n, 3n), then [0, n); c-one in one file.
	require.NoError(t, db.Insert("V", "a-apart", rows(0, n)))
	require.NoError(t, db.Insert("V", "b-reversed", rows(2*n, n)))
	require.NoError(t, db.Insert("V", "c-one", rows(0, n)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("V", "a-apart", rows(n, n)))
	require.NoError(t, db.Insert("V", "b-reversed", rows(0, n)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("V", "a-apart", rows(3*n, n)))
	require.NoError(t, db.Flush())

	scan, err := db.Scan(context.Background(), ScanRequest{Type: "V"})
	require.NoError(t, err)
	require.Len(t, scan.files, 3)
	inFiles, apart := map[string]int{}, map[string]bool{}
	for _, dev := range []string{"a-apart", "b-reversed", "c-one"} {
		var hits []fileHit
		for i, f := range scan.files {
			if k, ok := f.Index(dev); ok {
				hits = append(hits, fileHit{file: int32(i), index: int32(k)})
			}
		}
		inFiles[dev], apart[dev] = len(hits), scan.apart(hits)
		// The same span twice overlaps itself.
		assert.False(t, scan.apart(append(hits, hits[0])), dev)
	}
	scan.Close()
	assert.Equal(t, map[string]int{"a-apart": 3, "b-reversed": 2, "c-one": 1}, inFiles)
	assert.Equal(t, map[string]bool{"a-apart": true, "b-reversed": true, "c-one": true}, apart)

	all := rowsOf(t, db, "V")
	for _, c := range []struct {
		w    Where
		keep func(row map[string]any) bool
	}{
		{Where{Cond: &Cond{Property: "x", Op: ">", Value: 0.5}}, func(r map[string]any) bool { return r["x"].(float64) > 0.5 }},
		{Where{Cond: &Cond{Property: "x", Op: "<", Value: 0.05}}, func(r map[string]any) bool { return r["x"].(float64) < 0.05 }},
	} {
		for _, reuse := range []bool{false, true} {
			got := requestRowsOf(t, db, ScanRequest{Type: "V", Where: &c.w, ReuseBatches: reuse})
			require.Equal(t, keptOf(all, nil, c.keep), got, "%+v reuse %v", c.w, reuse)
		}
	}

	// The files filtered as they read: y and z are decoded at the kept
	// rows only, so a scan keeping 1% takes about half the memory of the
	// whole scan (times and x whole), not all of it.
	taken := func(w *Where) int {
		bufs := &strictBuffers{}
		got := requestRowsOf(t, db, ScanRequest{Type: "V", Where: w, ReuseBatches: true, Buffers: bufs})
		require.NotEmpty(t, got)
		return bufs.bytes
	}
	whole, filtered := taken(nil), taken(&Where{Cond: &Cond{Property: "x", Op: ">", Value: 0.99}})
	assert.Less(t, filtered, whole*7/10, "bytes decoded by the filtered scan, against %d by the whole", whole)
}

// Spans that share one time, even at an end, are not apart: two files
// would hold a row of the same key.
func TestSpansApart(t *testing.T) {
	for _, c := range []struct {
		spans [][2]int64
		apart bool
	}{
		{nil, true},
		{[][2]int64{{0, 9}}, true},
		{[][2]int64{{0, 9}, {10, 19}}, true},
		{[][2]int64{{10, 19}, {0, 9}}, true},
		{[][2]int64{{0, 9}, {9, 19}}, false},
		{[][2]int64{{9, 19}, {0, 9}}, false},
		{[][2]int64{{5, 5}, {5, 5}}, false},
		{[][2]int64{{0, 0}, {1, 1}, {2, 2}}, true},
		{[][2]int64{{0, 100}, {20, 30}}, false},
		{[][2]int64{{40, 50}, {0, 10}, {20, 30}, {29, 35}}, false},
		{[][2]int64{{math.MinInt64, -1}, {0, math.MaxInt64}}, true},
	} {
		assert.Equal(t, c.apart, spansApart(slices.Clone(c.spans)), "%v", c.spans)
	}
}
