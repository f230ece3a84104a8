package segment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// nullPattern decides which rows of column j are null.
type nullPattern func(i, j, n int) bool

var patterns = map[string]nullPattern{
	"none":     func(i, j, n int) bool { return false },
	"leading":  func(i, j, n int) bool { return i < 3 },
	"trailing": func(i, j, n int) bool { return i >= n-2 },
	"between":  func(i, j, n int) bool { return i%4 == 2 || (i+j)%5 == 0 },
	"all":      func(i, j, n int) bool { return true },
}

// makeRows makes n rows at times t0, t0+step, ... over cols.
func makeRows(cols []Column, n int, t0, step int64, null nullPattern) []row {
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{time: t0 + int64(i)*step, vals: make([]any, len(cols))}
		for j, c := range cols {
			if !null(i, j, n) {
				rows[i].vals[j] = sample(c.Type, i*31+j)
			}
		}
	}
	return rows
}

func pickAll(cols []Column) []int {
	p := make([]int, len(cols))
	for i := range p {
		p[i] = i
	}
	return p
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		devices []string
		rows    int
		per     int // rows per Append
		pad     int // tablet Offset
		opts    WriterOptions
		batch   int
		null    string
		unit    string
	}{
		{name: "one device", devices: []string{"d1"}, rows: 20, per: 20, null: "none"},
		{name: "leading nulls", devices: []string{"d1"}, rows: 20, per: 20, null: "leading"},
		{name: "trailing nulls", devices: []string{"d1"}, rows: 20, per: 20, null: "trailing"},
		{name: "nulls between", devices: []string{"d1"}, rows: 20, per: 20, null: "between"},
		{name: "all null", devices: []string{"d1"}, rows: 20, per: 20, null: "all"},
		{name: "offset", devices: []string{"d1"}, rows: 20, per: 20, pad: 5, null: "between"},
		{name: "offset no nulls", devices: []string{"d1"}, rows: 20, per: 20, pad: 13, null: "none"},
		{name: "devices", devices: []string{"", "a", "b", "zz"}, rows: 15, per: 15, null: "between"},
		{name: "appends per device", devices: []string{"a", "b"}, rows: 30, per: 4, pad: 3, null: "between"},
		{name: "row groups by rows", devices: []string{"a", "b", "c"}, rows: 25, per: 10, opts: WriterOptions{RowGroupRows: 7}, null: "between"},
		{name: "row groups by bytes", devices: []string{"a", "b"}, rows: 40, per: 40, opts: WriterOptions{RowGroupBytes: 300}, null: "between"},
		{name: "batches", devices: []string{"a", "b"}, rows: 40, per: 40, opts: WriterOptions{RowGroupRows: 16}, batch: 3, null: "between"},
		{name: "one-row batches", devices: []string{"a"}, rows: 10, per: 3, opts: WriterOptions{RowGroupRows: 4}, batch: 1, null: "leading"},
		{name: "time ms", devices: []string{"a"}, rows: 10, per: 10, null: "none", unit: "ms"},
		{name: "time us", devices: []string{"a"}, rows: 10, per: 10, null: "none", unit: "us"},
		{name: "time s", devices: []string{"a"}, rows: 10, per: 10, null: "none", unit: "s"},
		{name: "time ns", devices: []string{"a"}, rows: 10, per: 10, null: "none", unit: "ns", opts: WriterOptions{Sync: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := Layout{TimeUnit: tc.unit, Columns: allTypes}
			data := map[string][]row{}
			for k, d := range tc.devices {
				data[d] = makeRows(allTypes, tc.rows, int64(k*3-100), int64(k+1), patterns[tc.null])
			}
			f, info := writeFile(t, l, tc.opts, data, tc.per, tc.pad)
			assert.Equal(t, l, f.Layout())
			assert.Equal(t, tc.devices, f.Devices())
			assert.EqualValues(t, len(tc.devices)*tc.rows, f.Rows())
			assert.EqualValues(t, len(tc.devices)*tc.rows, info.Rows)
			st, err := os.Stat(f.Path())
			require.NoError(t, err)
			assert.Equal(t, st.Size(), info.Size)
			assert.Equal(t, "part-0.parquet", info.Name)
			minD, maxD, minT, maxT := f.Bounds()
			assert.Equal(t, tc.devices[0], minD)
			assert.Equal(t, tc.devices[len(tc.devices)-1], maxD)
			assert.Equal(t, info.MinDevice, minD)
			assert.Equal(t, info.MaxDevice, maxD)
			assert.Equal(t, info.MinTime, minT)
			assert.Equal(t, info.MaxTime, maxT)
			if tc.opts.RowGroupRows > 0 {
				for _, g := range f.groups {
					assert.LessOrEqual(t, g.rows, int64(tc.opts.RowGroupRows))
				}
			}
			if tc.opts.RowGroupBytes > 0 {
				assert.Greater(t, len(f.groups), 4, "the byte budget should split row groups")
			}
			for _, d := range tc.devices {
				got := readAll(t, f.Read(d, allTypes, math.MinInt64, math.MaxInt64, tc.batch), allTypes, tc.batch)
				assert.Equal(t, data[d], got, "device %q", d)
				// A time range cutting both ends.
				rows := data[d]
				start, end := rows[2].time, rows[len(rows)-3].time
				got = readAll(t, f.Read(d, allTypes, start, end, tc.batch), allTypes, tc.batch)
				assert.Equal(t, project(rows, pickAll(allTypes), start, end), got, "device %q range", d)
			}
		})
	}
}

func TestReadColumns(t *testing.T) {
	l := Layout{Columns: allTypes}
	data := map[string][]row{"a": makeRows(allTypes, 50, 0, 10, patterns["between"])}
	f, _ := writeFile(t, l, WriterOptions{RowGroupRows: 8}, data, 50, 0)
	cases := []struct {
		name string
		cols []Column
		pick []int
	}{
		{"none", nil, nil},
		{"reordered subset", []Column{allTypes[5], allTypes[0], allTypes[8]}, []int{5, 0, 8}},
		{"absent id", []Column{{ID: 99, Name: "gone", Type: schema.Double}, allTypes[4]}, []int{-1, 4}},
		{"same name new id", []Column{{ID: 100, Name: "f64", Type: schema.Double}}, []int{-1}},
		{"type mismatch", []Column{{ID: 15, Name: "f64", Type: schema.Int64}, {ID: 16, Name: "s", Type: schema.Binary}, {ID: 11, Name: "b", Type: schema.String}}, []int{-1, -1, -1}},
		{"mismatch bool", []Column{{ID: 13, Name: "i64", Type: schema.Boolean}}, []int{-1}},
		{"twice by id", []Column{allTypes[6], {ID: 17, Name: "bin2", Type: schema.Binary}}, []int{6, 6}},
	}
	ranges := [][2]int64{{math.MinInt64, math.MaxInt64}, {0, 1}, {5, 6}, {15, 255}, {490, 1000}, {491, 1000}, {500, 1000}, {-10, 0}, {100, 100}, {200, 100}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range ranges {
				for _, batch := range []int{0, 1, 5, 8, 100} {
					got := readAll(t, f.Read("a", tc.cols, r[0], r[1], batch), tc.cols, batch)
					want := project(data["a"], tc.pick, r[0], r[1])
					require.Equal(t, want, got, "range %v batch %d", r, batch)
				}
			}
		})
	}
	t.Run("null column layout", func(t *testing.T) {
		c := f.Read("a", []Column{{ID: 99, Name: "x", Type: schema.String}, {ID: 98, Name: "y", Type: schema.Boolean}, {ID: 97, Name: "z", Type: schema.Int32}}, 0, 1000, 0)
		rows := 0
		for {
			tb, err := c.Next()
			require.NoError(t, err)
			if tb == nil {
				break
			}
			rows += len(tb.Times)
			for _, col := range tb.Columns {
				assert.Equal(t, make([]byte, (len(tb.Times)+7)/8), col.Validity, "all zero bits")
			}
		}
		assert.Equal(t, 50, rows)
	})
}

func TestDeviceNotInFile(t *testing.T) {
	data := map[string][]row{"b": makeRows(allTypes, 5, 0, 1, patterns["none"]), "d": makeRows(allTypes, 5, 0, 1, patterns["none"])}
	f, _ := writeFile(t, Layout{Columns: allTypes}, WriterOptions{}, data, 5, 0)
	for _, d := range []string{"", "a", "c", "e", "bb", "b\x00"} {
		assert.Empty(t, readAll(t, f.Read(d, allTypes, math.MinInt64, math.MaxInt64, 0), allTypes, 0), "device %q", d)
	}
}

func TestDeviceTimes(t *testing.T) {
	data := map[string][]row{
		"a": makeRows(allTypes, 5, -10, 3, patterns["none"]), // -10 … 2
		"b": makeRows(allTypes, 1, math.MaxInt64-1, 1, patterns["all"]),
		"c": makeRows(allTypes, 4, math.MinInt64, 1, patterns["none"]),
	}
	f, _ := writeFile(t, Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 2}, data, 2, 0)
	for dev, want := range map[string][2]int64{"a": {-10, 2}, "b": {math.MaxInt64 - 1, math.MaxInt64 - 1}, "c": {math.MinInt64, math.MinInt64 + 3}} {
		first, last, ok := f.DeviceTimes(dev)
		require.True(t, ok, dev)
		assert.Equal(t, want, [2]int64{first, last}, dev)
	}
	_, _, ok := f.DeviceTimes("zz")
	assert.False(t, ok)
	// A range outside the device's span reads nothing.
	assert.Empty(t, readAll(t, f.Read("a", allTypes, 3, 100, 0), allTypes, 0))
	assert.Len(t, readAll(t, f.Read("a", allTypes, 2, 3, 0), allTypes, 0), 1)
}

func TestEmptyFile(t *testing.T) {
	for _, cols := range [][]Column{nil, allTypes} {
		f, info := writeFile(t, Layout{TimeUnit: "ms", Columns: cols}, WriterOptions{Sync: true}, nil, 1, 0)
		assert.Zero(t, f.Rows())
		assert.Zero(t, info.Rows)
		assert.Empty(t, f.Devices())
		minD, maxD, minT, maxT := f.Bounds()
		assert.Equal(t, []any{"", "", int64(0), int64(0)}, []any{minD, maxD, minT, maxT})
		assert.Empty(t, readAll(t, f.Read("", cols, math.MinInt64, math.MaxInt64, 0), cols, 0))
		assert.Contains(t, info.Stats, `"numRecords":0`)
	}
}

func TestAppendRejects(t *testing.T) {
	cols := allTypes[:2]
	good := func(times ...int64) *tablet.Tablet {
		rows := make([]row, len(times))
		for i, tm := range times {
			rows[i] = row{time: tm, vals: []any{true, int32(1)}}
		}
		return buildTablet(cols, rows, 0)
	}
	cases := []struct {
		name   string
		device string
		tab    func() *tablet.Tablet
		want   string
	}{
		{"device before previous", "a", func() *tablet.Tablet { return good(10) }, `comes after device "m"`},
		{"same device, time not after", "m", func() *tablet.Tablet { return good(5, 6) }, "not after the previous call's 5"},
		{"times not increasing", "n", func() *tablet.Tablet { return good(1, 1) }, "is not after 1"},
		{"too few columns", "n", func() *tablet.Tablet { tb := good(1); tb.Columns = tb.Columns[:1]; return tb }, "1 columns, the layout has 2"},
		{"wrong type", "n", func() *tablet.Tablet { tb := good(1); tb.Columns[1].Type = schema.Int64; return tb }, "is INT64"},
		{"short values", "n", func() *tablet.Tablet { tb := good(1, 2); tb.Columns[1].Values = tb.Columns[1].Values[:4]; return tb }, "values have 4 bytes, need 8"},
		{"short validity", "n", func() *tablet.Tablet {
			tb := good(1)
			tb.Columns[1].Offset = 8
			tb.Columns[1].Validity = []byte{0xff}
			return tb
		}, "validity has 8 bits"},
	}
	path := filepath.Join(t.TempDir(), "f.parquet")
	w, err := Create(path, Layout{Columns: cols}, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Append("m", good(3, 5)))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := w.Append(tc.device, tc.tab())
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Rejections left the writer usable and unchanged.
	require.NoError(t, w.Append("m", good(6)))
	require.NoError(t, w.Append("m", good()))
	require.NoError(t, w.Append("n", good(1)))
	info, err := w.Close()
	require.NoError(t, err)
	f, err := Open(path, info.Size)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, []string{"m", "n"}, f.Devices())
	got := readAll(t, f.Read("m", cols, math.MinInt64, math.MaxInt64, 0), cols, 0)
	assert.Equal(t, []int64{3, 5, 6}, []int64{got[0].time, got[1].time, got[2].time})
	_, err = w.Close()
	assert.ErrorIs(t, err, errs.ErrClosed)
	w.Abort() // no-op after a successful Close
	_, err = os.Stat(path)
	assert.NoError(t, err)
}

func TestCreateRejects(t *testing.T) {
	cases := []struct {
		name string
		l    Layout
	}{
		{"unit", Layout{TimeUnit: "m"}},
		{"reserved", Layout{Columns: []Column{{ID: 1, Name: "time", Type: schema.Int64}}}},
		{"dup name", Layout{Columns: []Column{{ID: 1, Name: "a", Type: schema.Int64}, {ID: 2, Name: "a", Type: schema.Int64}}}},
		{"dup id", Layout{Columns: []Column{{ID: 1, Name: "a", Type: schema.Int64}, {ID: 1, Name: "b", Type: schema.Int64}}}},
		{"zero id", Layout{Columns: []Column{{ID: 0, Name: "a", Type: schema.Int64}}}},
		{"big id", Layout{Columns: []Column{{ID: math.MaxInt32 + 1, Name: "a", Type: schema.Int64}}}},
		{"type", Layout{Columns: []Column{{ID: 1, Name: "a", Type: 0}}}},
		{"empty name", Layout{Columns: []Column{{ID: 1, Name: "", Type: schema.Int64}}}},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Create(filepath.Join(dir, "x.parquet"), tc.l, WriterOptions{})
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
		})
	}
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "a rejected Create leaves no file")
}

func TestAbortAndTempName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.parquet")
	w, err := Create(path, Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 2})
	require.NoError(t, err)
	require.NoError(t, w.Append("a", buildTablet(allTypes, makeRows(allTypes, 5, 0, 1, patterns["none"]), 0)))
	_, err = os.Stat(filepath.Join(dir, ".tmp-p.parquet"))
	require.NoError(t, err, "writes go to the temporary name")
	w.Abort()
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
	err = w.Append("b", buildTablet(allTypes, nil, 0))
	assert.Error(t, err)
	_, err = w.Close()
	assert.Error(t, err)
}

func TestCloseFailure(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	w, err := Create(filepath.Join(sub, "p.parquet"), Layout{}, WriterOptions{})
	require.NoError(t, err)
	// Rename onto a non-empty directory of the final name fails.
	require.NoError(t, os.Mkdir(filepath.Join(sub, "p.parquet"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "p.parquet", "x"), nil, 0o644))
	_, err = w.Close()
	require.ErrorIs(t, err, errs.ErrIO)
	w.Abort()
	_, err = os.Stat(filepath.Join(sub, ".tmp-p.parquet"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

func TestDeltaSchema(t *testing.T) {
	l := Layout{TimeUnit: "us", Columns: allTypes}
	want := `{"type":"struct","fields":[` +
		`{"name":"device","type":"string","nullable":false,"metadata":{}},` +
		`{"name":"time","type":"timestamp","nullable":false,"metadata":{}},` +
		`{"name":"b","type":"boolean","nullable":true,"metadata":{}},` +
		`{"name":"i32","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"i64","type":"long","nullable":true,"metadata":{}},` +
		`{"name":"f32","type":"float","nullable":true,"metadata":{}},` +
		`{"name":"f64","type":"double","nullable":true,"metadata":{}},` +
		`{"name":"s","type":"string","nullable":true,"metadata":{}},` +
		`{"name":"bin","type":"binary","nullable":true,"metadata":{}},` +
		`{"name":"ts","type":"long","nullable":true,"metadata":{}},` +
		`{"name":"d","type":"date","nullable":true,"metadata":{}}]}`
	assert.Equal(t, want, l.DeltaSchema())
	for unit, typ := range map[string]string{"": "long", "s": "long", "ms": "timestamp", "us": "timestamp", "ns": "long"} {
		assert.Contains(t, Layout{TimeUnit: unit}.DeltaSchema(), `"name":"time","type":"`+typ+`"`, "unit %q", unit)
	}
}

func TestParquetSchema(t *testing.T) {
	// The physical and logical types other readers see.
	f, _ := writeFile(t, Layout{TimeUnit: "ms", Columns: allTypes}, WriterOptions{}, nil, 1, 0)
	meta, err := f.metadata()
	require.NoError(t, err)
	sc := meta.Schema
	var got []string
	for i := 0; i < sc.NumColumns(); i++ {
		c := sc.Column(i)
		got = append(got, strings.Join([]string{c.Name(), c.PhysicalType().String(), c.LogicalType().String(),
			c.SchemaNode().RepetitionType().String()}, " "))
		if i >= 2 {
			assert.EqualValues(t, allTypes[i-2].ID, c.SchemaNode().FieldID())
		}
	}
	assert.Equal(t, []string{
		"device BYTE_ARRAY String required",
		"time INT64 Timestamp(isAdjustedToUTC=true, timeUnit=milliseconds, is_from_converted_type=false, force_set_converted_type=false) required",
		"b BOOLEAN None optional",
		"i32 INT32 None optional",
		"i64 INT64 None optional",
		"f32 FLOAT None optional",
		"f64 DOUBLE None optional",
		"s BYTE_ARRAY String optional",
		"bin BYTE_ARRAY None optional",
		"ts INT64 None optional",
		"d INT32 Date optional",
	}, got)
}

func TestRowGroupBytesCountsStrings(t *testing.T) {
	cols := []Column{{ID: 1, Name: "s", Type: schema.String}}
	rows := make([]row, 100)
	for i := range rows {
		rows[i] = row{time: int64(i), vals: []any{strings.Repeat("x", 100)}}
	}
	f, _ := writeFile(t, Layout{Columns: cols}, WriterOptions{RowGroupBytes: 1000}, map[string][]row{"d": rows}, 100, 0)
	for _, g := range f.groups {
		assert.LessOrEqual(t, g.rows, int64(1000/(8+4+100)), "one Append of long strings is split by bytes")
	}
	assert.Equal(t, rows, readAll(t, f.Read("d", cols, math.MinInt64, math.MaxInt64, 0), cols, 0))
}

func TestConcurrentReaders(t *testing.T) {
	data := map[string][]row{}
	for _, d := range []string{"a", "b", "c", "d"} {
		data[d] = makeRows(allTypes, 200, 0, 1, patterns["between"])
	}
	f, _ := writeFile(t, Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 64}, data, 50, 0)
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			d := []string{"a", "b", "c", "d"}[g%4]
			got, err := readDevices(f, []string{d})
			if err == nil && !assert.ObjectsAreEqual(data[d], got[d]) {
				err = fmt.Errorf("reader %d: wrong rows", g)
			}
			errc <- err
		}(g)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
}

func TestWriteFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.parquet")
	w, err := Create(path, Layout{Columns: allTypes}, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Append("a", buildTablet(allTypes, makeRows(allTypes, 10, 0, 1, patterns["none"]), 0)))
	require.NoError(t, w.f.Close()) // the disk goes away under the writer
	_, err = w.Close()
	require.ErrorIs(t, err, errs.ErrIO)
	assert.Contains(t, err.Error(), ".tmp-p.parquet")
	require.ErrorIs(t, w.Append("b", buildTablet(allTypes, nil, 0)), errs.ErrIO, "the failure is sticky")
	w.Abort()
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}

// TestWriteFailureInABackgroundRowGroup: a row group written while the
// next is built fails; the next flush or Close reports it, and it stays.
func TestWriteFailureInABackgroundRowGroup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.parquet")
	w, err := Create(path, Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 1000})
	require.NoError(t, err)
	require.NoError(t, w.f.Close()) // the disk goes away under the writer
	var failed error
	for i := 0; i < 100 && failed == nil; i++ { // 2 MiB and more: past the write buffer
		failed = w.Append(fmt.Sprintf("d%03d", i), buildTablet(allTypes, makeRows(allTypes, 1000, 0, 1, patterns["none"]), 0))
	}
	_, err = w.Close()
	require.ErrorIs(t, err, errs.ErrIO)
	if failed != nil {
		require.ErrorIs(t, failed, errs.ErrIO)
	}
	require.ErrorIs(t, w.Append("zz", buildTablet(allTypes, makeRows(allTypes, 1, 0, 1, patterns["none"]), 0)), errs.ErrIO)
	w.Abort()
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}

// TestAbortWhileARowGroupIsWritten: Abort waits for the row group being
// written before it closes and removes the file (run with -race).
func TestAbortWhileARowGroupIsWritten(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "p.parquet"), Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 100})
	require.NoError(t, err)
	require.NoError(t, w.Append("a", buildTablet(allTypes, makeRows(allTypes, 250, 0, 1, patterns["between"]), 0)))
	w.Abort()
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
	require.ErrorIs(t, w.Append("b", buildTablet(allTypes, makeRows(allTypes, 1, 0, 1, patterns["none"]), 0)), errs.ErrClosed)
}

func TestEmptyLayoutRoundTrip(t *testing.T) {
	f, _ := writeFile(t, Layout{TimeUnit: "s"}, WriterOptions{}, map[string][]row{"d": {{time: 1}, {time: 2}}}, 2, 0)
	assert.Equal(t, Layout{TimeUnit: "s"}, f.Layout())
	assert.Equal(t, []row{{time: 1, vals: []any{}}, {time: 2, vals: []any{}}}, readAll(t, f.Read("d", nil, 0, 10, 0), nil, 0))
}
