package segment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestAppendRunsWritesWhatAppendWrites: devices of 1 to thousands of rows
// (some larger than a row group), nulls, strings, runs split over several
// calls: AppendRuns writes the very bytes one Append per device writes.
func TestAppendRunsWritesWhatAppendWrites(t *testing.T) {
	// Every type with nulls, and each fixed-width type without (AppendRuns
	// copies those for many runs at once, and takes their statistics
	// once) when there is no padding.
	cols := append(slices.Clone(allTypes), Column{ID: 20, Name: "clean", Type: schema.Double},
		Column{ID: 21, Name: "clean2", Type: schema.Double}, Column{ID: 22, Name: "clean_i32", Type: schema.Int32},
		Column{ID: 23, Name: "clean_i64", Type: schema.Int64}, Column{ID: 24, Name: "clean_f32", Type: schema.Float},
		Column{ID: 25, Name: "clean_ts", Type: schema.Timestamp}, Column{ID: 26, Name: "clean_d", Type: schema.Date})
	for seed := range 8 {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 3))
			var rows []row
			var devices []string
			var bounds = []int{0}
			for d := range 50 + rng.IntN(300) {
				n := 1 + rng.IntN(20)
				if rng.IntN(40) == 0 {
					n = 1000 + rng.IntN(5000)
				}
				for i := range n {
					r := row{time: int64(i*3 + rng.IntN(3)), vals: make([]any, len(cols))}
					for j, c := range cols {
						if rng.IntN(5) > 0 || c.ID >= 20 {
							r.vals[j] = sample(c.Type, rng.IntN(1000))
						}
					}
					rows = append(rows, r)
				}
				devices = append(devices, fmt.Sprintf("dev-%05d", d))
				bounds = append(bounds, len(rows))
			}
			tb := buildTablet(cols, rows, rng.IntN(3)*(seed%2)) // even seeds: no padding
			opts := WriterOptions{RowGroupRows: 256 << rng.IntN(5), RowGroupBytes: int64(64<<10) << rng.IntN(4), PageBytes: 1 << 10}
			dir := t.TempDir()

			// The runs in t's order, then with the devices' rows shuffled
			// in the tablet (the runs still in device order).
			inOrder := runsOf(devices, bounds)
			var perm []int32
			scattered := make([]Run, len(inOrder))
			for _, k := range rng.Perm(len(inOrder)) {
				r := inOrder[k]
				scattered[k] = Run{Device: r.Device, Lo: len(perm), Hi: len(perm) + r.Hi - r.Lo}
				for i := r.Lo; i < r.Hi; i++ {
					perm = append(perm, int32(i))
				}
			}
			for name, c := range map[string]struct {
				runs []Run
				tb   *tablet.Tablet
			}{"runs": {inOrder, tb}, "scattered": {scattered, tb.Gather(perm)}} {
				// What one Append per run writes from the same tablet (a
				// null string's slot counts toward the row group's bytes
				// as its bytes in the tablet: Gather leaves it empty).
				one, err := Create(filepath.Join(dir, "one.parquet"), Layout{Columns: cols}, opts)
				require.NoError(t, err)
				for _, r := range c.runs {
					require.NoError(t, one.Append(r.Device, c.tb.Slice(r.Lo, r.Hi)))
				}
				oneInfo, err := one.Close()
				require.NoError(t, err)

				w, err := Create(filepath.Join(dir, name+".parquet"), Layout{Columns: cols}, opts)
				require.NoError(t, err)
				for from := 0; from < len(c.runs); { // in a few calls
					to := min(len(c.runs), from+1+rng.IntN(len(c.runs)))
					require.NoError(t, w.AppendRuns(c.runs[from:to], c.tb))
					from = to
				}
				info, err := w.Close()
				require.NoError(t, err)
				require.Equal(t, oneInfo.Stats, info.Stats, "AppendRuns (%s) gave other statistics", name)

				a, err := os.ReadFile(filepath.Join(dir, "one.parquet"))
				require.NoError(t, err)
				b, err := os.ReadFile(filepath.Join(dir, name+".parquet"))
				require.NoError(t, err)
				require.Equal(t, a, b, "AppendRuns (%s) wrote a different file", name)
			}
		})
	}
}

// runsOf makes the runs of devices whose rows are [bounds[i], bounds[i+1]).
func runsOf(devices []string, bounds []int) []Run {
	runs := make([]Run, len(devices))
	for i, d := range devices {
		runs[i] = Run{Device: d, Lo: bounds[i], Hi: bounds[i+1]}
	}
	return runs
}

// TestAppendRunsAfterNulls: a row group holding a column's nulls from one
// tablet, then the same column without nulls from another (whose values
// AppendRuns copies run after run at once): the bytes of one Append per run.
func TestAppendRunsAfterNulls(t *testing.T) {
	cols := []Column{{ID: 1, Name: "f64", Type: schema.Double}, {ID: 2, Name: "i32", Type: schema.Int32},
		{ID: 3, Name: "i64", Type: schema.Int64}, {ID: 4, Name: "f32", Type: schema.Float}}
	rng := rand.New(rand.NewPCG(5, 6))
	tablets := make([]*tablet.Tablet, 2)
	for k, nulls := range []bool{true, false} {
		var rows []row
		for i := range 60 {
			r := row{time: int64(i % 6), vals: make([]any, len(cols))}
			for j, c := range cols {
				if !nulls || rng.IntN(3) > 0 {
					r.vals[j] = sample(c.Type, rng.IntN(1000))
				}
			}
			rows = append(rows, r)
		}
		tablets[k] = buildTablet(cols, rows, 0)
	}
	require.NotNil(t, tablets[0].Columns[0].Validity)
	require.Nil(t, tablets[1].Columns[0].Validity)
	// Devices of 6 rows: dev-00..09 from the tablet with nulls, dev-10..19
	// without, then dev-20..29 with nulls again, in calls of a few.
	type call struct {
		tb   *tablet.Tablet
		runs []Run
	}
	var calls []call
	for d := 0; d < 30; d += 5 {
		c := call{tb: tablets[d/10%2]}
		for k := d; k < d+5; k++ {
			lo := k % 10 * 6
			c.runs = append(c.runs, Run{Device: fmt.Sprintf("dev-%02d", k), Lo: lo, Hi: lo + 6})
		}
		calls = append(calls, c)
	}
	dir := t.TempDir()
	opts := WriterOptions{RowGroupRows: 4096, PageBytes: 256}
	one, err := Create(filepath.Join(dir, "one.parquet"), Layout{Columns: cols}, opts)
	require.NoError(t, err)
	runs, err := Create(filepath.Join(dir, "runs.parquet"), Layout{Columns: cols}, opts)
	require.NoError(t, err)
	for _, c := range calls {
		for _, r := range c.runs {
			require.NoError(t, one.Append(r.Device, c.tb.Slice(r.Lo, r.Hi)))
		}
		require.NoError(t, runs.AppendRuns(c.runs, c.tb))
	}
	oneInfo, err := one.Close()
	require.NoError(t, err)
	runsInfo, err := runs.Close()
	require.NoError(t, err)
	assert.Equal(t, oneInfo.Stats, runsInfo.Stats)
	a, err := os.ReadFile(filepath.Join(dir, "one.parquet"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "runs.parquet"))
	require.NoError(t, err)
	require.Equal(t, a, b, "AppendRuns wrote a different file")
	f, err := Open(filepath.Join(dir, "runs.parquet"), runsInfo.Size)
	require.NoError(t, err)
	defer f.Close()
	got := readAll(t, f.Read("dev-15", cols, math.MinInt64, math.MaxInt64, 0), cols, 0)
	require.Equal(t, tabletRows(t, tablets[1].Slice(30, 36), cols, true), got)
}

func TestAppendRunsRefusesBadRuns(t *testing.T) {
	rows := []row{{time: 1}, {time: 2}, {time: 3}, {time: 1}}
	for i := range rows {
		rows[i].vals = make([]any, len(allTypes))
	}
	tb := buildTablet(allTypes, rows, 0)
	cases := []struct {
		name    string
		devices []string
		bounds  []int
		want    string
	}{
		{"past the rows", []string{"a"}, []int{0, 5}, "outside the tablet's 4 rows"},
		{"times out of order", []string{"a"}, []int{0, 4}, "time 1 at row 3 is not after 3"},
		{"devices out of order", []string{"b", "a"}, []int{0, 3, 4}, `device "a" comes after device "b"`},
		{"reversed run", []string{"a", "b"}, []int{0, 3, 2}, "is reversed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := Create(filepath.Join(t.TempDir(), "f.parquet"), Layout{Columns: allTypes}, WriterOptions{})
			require.NoError(t, err)
			defer w.Abort()
			err = w.AppendRuns(runsOf(c.devices, c.bounds), tb)
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.want)
			// Nothing was taken: a good call still works.
			require.NoError(t, w.AppendRuns(runsOf([]string{"a", "b"}, []int{0, 2, 3}), tb))
			info, err := w.Close()
			require.NoError(t, err)
			assert.Equal(t, int64(3), info.Rows)
		})
	}
}

// TestAppendRunsCountsBytesAsAppendDoes: null strings whose slots hold
// bytes (Arrow allows it) and a device continued across calls and within
// one: still the bytes of one Append per run.
func TestAppendRunsCountsBytesAsAppendDoes(t *testing.T) {
	layout := Layout{Columns: []Column{{ID: 1, Name: "s", Type: schema.String}}}
	var devs, vals []string
	var valid []bool
	var times []int64
	bounds := []int{0}
	for d := range 200 {
		for i := range 3 {
			vals = append(vals, strings.Repeat("x", 40+d%7))
			valid = append(valid, (d+i)%3 == 0)
			times = append(times, int64(i))
		}
		devs = append(devs, fmt.Sprintf("dev-%04d", d))
		bounds = append(bounds, len(times))
	}
	tb := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("s", vals, valid)}}
	opts := WriterOptions{RowGroupBytes: 4096}
	dir := t.TempDir()
	one, err := Create(filepath.Join(dir, "one.parquet"), layout, opts)
	require.NoError(t, err)
	for i, d := range devs {
		require.NoError(t, one.Append(d, tb.Slice(bounds[i], bounds[i]+1)))
		require.NoError(t, one.Append(d, tb.Slice(bounds[i]+1, bounds[i+1])))
	}
	_, err = one.Close()
	require.NoError(t, err)

	runs, err := Create(filepath.Join(dir, "runs.parquet"), layout, opts)
	require.NoError(t, err)
	// Device 0 across two calls; devices 100 on, each as two runs of one call.
	require.NoError(t, runs.AppendRuns(runsOf(devs[:1], []int{0, 1}), tb))
	require.NoError(t, runs.AppendRuns(runsOf(devs[:100], append([]int{1}, bounds[1:101]...)), tb))
	var twice []string
	var cuts []int
	for d := 100; d < 200; d++ {
		twice = append(twice, devs[d], devs[d])
		cuts = append(cuts, bounds[d], bounds[d]+1)
	}
	cuts = append(cuts, bounds[200])
	require.NoError(t, runs.AppendRuns(runsOf(twice, cuts), tb))
	_, err = runs.Close()
	require.NoError(t, err)

	a, err := os.ReadFile(filepath.Join(dir, "one.parquet"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "runs.parquet"))
	require.NoError(t, err)
	require.Equal(t, a, b, "AppendRuns wrote a different file")
}
