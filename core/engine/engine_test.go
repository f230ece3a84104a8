package engine

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

func openDisk(t testing.TB, opts Options) (*DB, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db, dir
}

func openMem(t testing.TB, opts Options) *DB {
	t.Helper()
	db, err := Open("", opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func int64Tablet(times []int64, cols map[string][]int64) *tablet.Tablet {
	names := make([]string, 0, len(cols))
	for n := range cols {
		names = append(names, n)
	}
	sort.Strings(names)
	t := &tablet.Tablet{Times: times}
	for _, n := range names {
		t.Columns = append(t.Columns, tablet.Int64s(n, cols[n], nil))
	}
	return t
}

// rowsOfScans counts rowsOf's scans: every other one reuses its batches'
// memory (as the C ABI's scans do), which rowsOf allows by reading each
// batch before the next.
var rowsOfScans atomic.Int64

// rowsOf scans typ and returns device -> time -> property -> value (nil for null).
func rowsOf(t testing.TB, db *DB, typ string) map[string]map[int64]map[string]any {
	t.Helper()
	reuse := rowsOfScans.Add(1)%2 == 0
	return requestRowsOf(t, db, ScanRequest{Type: typ, ReuseBatches: reuse})
}

// requestRowsOf is rowsOf of the scan req.
func requestRowsOf(t testing.TB, db *DB, req ScanRequest) map[string]map[int64]map[string]any {
	t.Helper()
	rows, err := db.Scan(context.Background(), req)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]map[int64]map[string]any{}
	for {
		b, ok := rows.Next()
		if !ok {
			break
		}
		if out[b.Device] == nil {
			out[b.Device] = map[int64]map[string]any{}
		}
		for i, tm := range b.Rows.Times {
			row := map[string]any{}
			for j := range b.Rows.Columns {
				c := &b.Rows.Columns[j]
				if !c.Valid(i) {
					row[c.Name] = nil
					continue
				}
				switch c.Type {
				case schema.Int64, schema.Timestamp:
					row[c.Name] = c.Int64(i)
				case schema.Double:
					row[c.Name] = c.Double(i)
				case schema.String:
					row[c.Name] = string(c.Bytes(i))
				case schema.Boolean:
					row[c.Name] = c.Bool(i)
				case schema.Int32, schema.Float:
					row[c.Name] = c.Value(i)
				default:
					row[c.Name] = fmt.Sprint(c.Type)
				}
			}
			out[b.Device][tm] = row
		}
	}
	require.NoError(t, rows.Err())
	return out
}

func TestDDLScriptIsOneTransactionAndOneRecord(t *testing.T) {
	db, _ := openDisk(t, Options{})
	before := db.LogStats()
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE INDEX ON A (k) NOTUNIQUE"))
	after := db.LogStats()
	assert.Equal(t, uint64(1), after.Appends-before.Appends, "one log record per script")
	assert.Equal(t, uint64(1), after.Fsyncs-before.Fsyncs, "one fsync per script")
	ty, ok := db.Catalog().Type("A")
	require.True(t, ok)
	_, ok = ty.Property("k")
	assert.True(t, ok)
	assert.Len(t, ty.Indexes(), 1)
}

func TestFailingStatementInScriptLeavesNothing(t *testing.T) {
	db, _ := openDisk(t, Options{})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A"))
	version, appends := db.Catalog().Version(), db.LogStats().Appends
	err := db.Exec("CREATE DOCUMENT TYPE B; CREATE PROPERTY A.k INT64; CREATE PROPERTY Missing.k INT64")
	require.Error(t, err)
	assert.ErrorIs(t, err, errs.ErrNotFound)
	assert.Contains(t, err.Error(), "Missing")
	_, ok := db.Catalog().Type("B")
	assert.False(t, ok, "B must not exist after a failed script")
	ty, _ := db.Catalog().Type("A")
	_, ok = ty.Property("k")
	assert.False(t, ok)
	assert.Equal(t, version, db.Catalog().Version())
	assert.Equal(t, appends, db.LogStats().Appends, "a failed script writes nothing")

	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Exec("CREATE DOCUMENT TYPE C"))
	require.Error(t, tx.Exec("CREATE PROPERTY C.k INT64; CREATE PROPERTY C.k INT64"))
	require.NoError(t, tx.Exec("CREATE PROPERTY C.j DOUBLE"), "the transaction stays usable")
	require.NoError(t, tx.Commit())
	ty, ok = db.Catalog().Type("C")
	require.True(t, ok)
	_, hasK := ty.Property("k")
	_, hasJ := ty.Property("j")
	assert.False(t, hasK, "the failed script added nothing")
	assert.True(t, hasJ)
}

func TestRollbackLeavesNothing(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	appends := db.LogStats().Appends
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
	require.NoError(t, tx.Insert("A", "d1", int64Tablet([]int64{1, 2}, map[string][]int64{"k": {10, 20}, "new": {1, 2}})))
	tx.Rollback()
	assert.Equal(t, 0, db.Catalog().Len())
	assert.Equal(t, appends, db.LogStats().Appends)
	assert.Equal(t, int64(0), db.MemoryUsage())
	assert.ErrorIs(t, tx.Commit(), errs.ErrClosed, "a rolled back transaction cannot commit")
	assert.ErrorIs(t, tx.Insert("A", "", int64Tablet([]int64{1}, nil)), errs.ErrClosed)
}

func TestDDLAndDataCommitTogetherOrNotAtAll(t *testing.T) {
	db, dir := openDisk(t, Options{})
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
	require.NoError(t, tx.Insert("A", "d1", int64Tablet([]int64{5}, map[string][]int64{"k": {50}})))
	_, visible := db.Catalog().Type("A")
	assert.False(t, visible, "nothing is visible before commit")
	require.NoError(t, tx.Commit())
	assert.Equal(t, map[string]map[int64]map[string]any{"d1": {5: {"k": int64(50)}}}, rowsOf(t, db, "A"))

	// A transaction whose insert no longer fits at commit (a concurrent
	// commit changed the property's type) commits none of its DDL either.
	tx, err = db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Exec("CREATE DOCUMENT TYPE B"))
	require.NoError(t, tx.Insert("A", "d1", int64Tablet([]int64{6}, map[string][]int64{"k": {60}})))
	require.NoError(t, db.Exec("DROP PROPERTY A.k; CREATE PROPERTY A.k STRING"))
	appends := db.LogStats().Appends
	err = tx.Commit()
	require.Error(t, err)
	assert.ErrorIs(t, err, errs.ErrInvalidArgument)
	_, ok := db.Catalog().Type("B")
	assert.False(t, ok)
	assert.Equal(t, appends, db.LogStats().Appends)

	require.NoError(t, db.Close())
	db2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer db2.Close()
	_, ok = db2.Catalog().Type("B")
	assert.False(t, ok)
	assert.Equal(t, map[string]map[int64]map[string]any{"d1": {5: {"k": nil}}}, rowsOf(t, db2, "A"),
		"the old k is dropped; the new k has no values")
}

func TestEverythingSurvivesCloseAndReopen(t *testing.T) {
	db, dir := openDisk(t, Options{AutoCreate: true})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE INDEX ON A (k) UNIQUE"))
	for d := range 3 {
		dev := fmt.Sprintf("dev%d", d)
		require.NoError(t, db.Insert("A", dev, int64Tablet([]int64{3, 1, 2}, map[string][]int64{"k": {30 + 100*int64(d), 10 + 100*int64(d), 20 + 100*int64(d)}, "x": {int64(d), int64(d), int64(d)}})))
	}
	ts := &tablet.Tablet{Times: []int64{1000}, TimeUnit: "ms", TimeZone: "UTC",
		Columns: []tablet.Column{tablet.Strings("s", []string{"héllo"}, nil), tablet.Doubles("f", []float64{1.5}, nil)}}
	require.NoError(t, db.Insert("B", "", ts))
	want := rowsOf(t, db, "A")
	wantB := rowsOf(t, db, "B")
	wantTypes := len(db.Catalog().Types())
	require.NoError(t, db.Close())
	assert.ErrorIs(t, db.Close(), errs.ErrClosed)
	assert.ErrorIs(t, db.Insert("A", "", int64Tablet([]int64{1}, nil)), errs.ErrClosed)
	assert.ErrorIs(t, db.Exec("CREATE DOCUMENT TYPE Z"), errs.ErrClosed)

	db2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer db2.Close()
	assert.Equal(t, want, rowsOf(t, db2, "A"))
	assert.Equal(t, wantB, rowsOf(t, db2, "B"))
	assert.Len(t, db2.Catalog().Types(), wantTypes)
	b, _ := db2.Catalog().Type("B")
	assert.Equal(t, "ms", b.TimeUnit)
	assert.Equal(t, "UTC", b.TimeZone)
	a, _ := db2.Catalog().Type("A")
	assert.Len(t, a.Indexes(), 1)
	assert.Equal(t, map[int64]map[string]any{1: {"k": int64(110), "x": int64(1)}, 2: {"k": int64(120), "x": int64(1)},
		3: {"k": int64(130), "x": int64(1)}}, want["dev1"])
	err = db2.Insert("A", "dev9", int64Tablet([]int64{1}, map[string][]int64{"k": {120}}))
	assert.ErrorIs(t, err, errs.ErrConflict, "the UNIQUE index holds after reopening")
}

func TestSecondOpenOfSameDirectoryIsRefused(t *testing.T) {
	_, dir := openDisk(t, Options{})
	_, err := Open(dir, Options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, errs.ErrIO)
	assert.Contains(t, err.Error(), "in use")
}

func TestEqualTimesMergeLastNonNullWins(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("A", "d", &tablet.Tablet{Times: []int64{1, 2},
		Columns: []tablet.Column{tablet.Int64s("a", []int64{1, 2}, nil), tablet.Int64s("b", []int64{10, 20}, nil)}}))
	require.NoError(t, db.Insert("A", "d", &tablet.Tablet{Times: []int64{1},
		Columns: []tablet.Column{tablet.Int64s("b", []int64{11}, nil), tablet.Int64s("a", []int64{0}, []bool{false})}}))
	assert.Equal(t, map[int64]map[string]any{1: {"a": int64(1), "b": int64(11)}, 2: {"a": int64(2), "b": int64(20)}},
		rowsOf(t, db, "A")["d"])
}

func TestBadInputIsRejectedAndChangesNothing(t *testing.T) {
	db, _ := openDisk(t, Options{})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.s STRING; CREATE DOCUMENT TYPE Gone; DROP TYPE Gone"))
	good := func() *tablet.Tablet { return int64Tablet([]int64{1}, map[string][]int64{"k": {1}}) }
	require.NoError(t, db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, TimeUnit: "ms"}), "fixes A's time unit")
	cases := []struct {
		name    string
		run     func() error
		kind    error
		mention string
	}{
		{"unknown type", func() error { return db.Insert("Nope", "", good()) }, errs.ErrNotFound, "Nope"},
		{"unknown property", func() error {
			return db.Insert("A", "", int64Tablet([]int64{1}, map[string][]int64{"zz": {1}}))
		}, errs.ErrNotFound, "zz"},
		{"type mismatch", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{tablet.Doubles("k", []float64{1}, nil)}})
		}, errs.ErrInvalidArgument, "k"},
		{"duplicate column", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{tablet.Int64s("k", []int64{1}, nil), tablet.Int64s("k", []int64{2}, nil)}})
		}, errs.ErrInvalidArgument, "k"},
		{"reserved column", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{tablet.Int64s("time", []int64{1}, nil)}})
		}, errs.ErrInvalidArgument, "time"},
		{"invalid utf-8 column name", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{tablet.Int64s("bad\xff", []int64{1}, nil)}})
		}, errs.ErrInvalidArgument, "UTF-8"},
		{"control character in device", func() error { return db.Insert("A", "d\n1", good()) }, errs.ErrInvalidArgument, "device"},
		{"lengths disagree", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1, 2, 3}, Columns: []tablet.Column{tablet.Int64s("k", []int64{1}, nil)}})
		}, errs.ErrInvalidArgument, "k"},
		{"string offsets past data", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{{Name: "s", Type: schema.String, Offsets: []int32{0, 9}, Data: []byte("ab")}}})
		}, errs.ErrInvalidArgument, "s"},
		{"negative offset", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{{Name: "k", Type: schema.Int64, Offset: -1, Values: make([]byte, 8)}}})
		}, errs.ErrInvalidArgument, "k"},
		{"offset past any buffer", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, Columns: []tablet.Column{{Name: "k", Type: schema.Int64, Offset: math.MaxInt, Values: make([]byte, 8)}}})
		}, errs.ErrInvalidArgument, "k"},
		{"nil tablet", func() error { return db.Insert("A", "", nil) }, errs.ErrInvalidArgument, "A"},
		{"DDL on a dropped type", func() error { return db.Exec("CREATE PROPERTY Gone.k INT64") }, errs.ErrNotFound, "Gone"},
		{"duplicate type", func() error { return db.Exec("CREATE DOCUMENT TYPE A") }, errs.ErrAlreadyExists, "A"},
		{"reserved property", func() error { return db.Exec("CREATE PROPERTY A.device STRING") }, errs.ErrInvalidArgument, "device"},
		{"parse error", func() error { return db.Exec("CREATE TYPO A") }, errs.ErrInvalidArgument, "line 1"},
		{"time unit conflict", func() error {
			return db.Insert("A", "", &tablet.Tablet{Times: []int64{1}, TimeUnit: "us"})
		}, errs.ErrInvalidArgument, "timestamp[ms]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			version, appends, usage := db.Catalog().Version(), db.LogStats().Appends, db.MemoryUsage()
			err := c.run()
			require.Error(t, err)
			assert.ErrorIs(t, err, c.kind)
			assert.Contains(t, err.Error(), c.mention)
			assert.Equal(t, version, db.Catalog().Version(), "catalog unchanged")
			assert.Equal(t, appends, db.LogStats().Appends, "nothing logged")
			assert.Equal(t, usage, db.MemoryUsage(), "memtable unchanged")
		})
	}
}

func TestAutoCreateMixesExistingNewAndDroppedProperties(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.old INT64; CREATE PROPERTY A.dropped INT64"))
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"old": {1}, "dropped": {2}})))
	ty, _ := db.Catalog().Type("A")
	oldDropped, _ := ty.Property("dropped")
	require.NoError(t, db.Exec("DROP PROPERTY A.dropped"))
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{2}, map[string][]int64{"old": {3}, "dropped": {4}, "fresh": {5}})))
	ty, _ = db.Catalog().Type("A")
	again, ok := ty.Property("dropped")
	require.True(t, ok)
	assert.NotEqual(t, oldDropped.ID, again.ID, "a re-created property is a new column")
	assert.Equal(t, map[int64]map[string]any{
		1: {"old": int64(1), "dropped": nil, "fresh": nil},
		2: {"old": int64(3), "dropped": int64(4), "fresh": int64(5)},
	}, rowsOf(t, db, "A")["d"])
}

func TestSchemaBatchOnDiskIsOneFsyncAndNoFiles(t *testing.T) {
	db, dir := openDisk(t, Options{})
	files := func() []string {
		var names []string
		require.NoError(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			names = append(names, p)
			return err
		}))
		return names
	}
	before, stats := files(), db.LogStats()
	tx, err := db.Begin()
	require.NoError(t, err)
	for i := range 100 {
		require.NoError(t, tx.Exec(fmt.Sprintf("CREATE DOCUMENT TYPE T%d; CREATE PROPERTY T%d.k INT64; CREATE INDEX ON T%d (k) NOTUNIQUE", i, i, i)))
	}
	require.NoError(t, tx.Commit())
	after := db.LogStats()
	assert.Equal(t, uint64(1), after.Fsyncs-stats.Fsyncs)
	assert.Equal(t, before, files(), "DDL creates no file")
	assert.Equal(t, 100, db.Catalog().Len())
}

func TestGroupCommitSharesFsyncs(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
	before := db.LogStats().Fsyncs
	const writers, each = 16, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				assert.NoError(t, db.Insert("A", fmt.Sprintf("d%d", w), int64Tablet([]int64{int64(i)}, map[string][]int64{"k": {int64(i)}})))
			}
		}()
	}
	wg.Wait()
	fsyncs := db.LogStats().Fsyncs - before
	assert.Less(t, fsyncs, uint64(writers*each), "concurrent commits share fsyncs")
	rows := rowsOf(t, db, "A")
	assert.Len(t, rows, writers)
	for _, r := range rows {
		assert.Len(t, r, each)
	}
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("A", "anchor", int64Tablet([]int64{0}, map[string][]int64{"k": {7}})))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				cols := map[string][]int64{"k": {int64(i)}}
				cols[fmt.Sprintf("c%d_%d", w, i%7)] = []int64{int64(i)}
				assert.NoError(t, db.Insert("A", fmt.Sprintf("w%d", w%2), int64Tablet([]int64{int64(i)}, cols)))
			}
		}()
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for ctx.Err() == nil {
				got := rowsOf(t, db, "A")
				assert.Equal(t, int64(7), got["anchor"][0]["k"])
				for _, dev := range []string{"w0", "w1"} {
					for tm, row := range got[dev] {
						assert.Equal(t, tm, row["k"], "a row is never torn")
					}
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	readers.Wait()
	got := rowsOf(t, db, "A")
	assert.Len(t, got["w0"], 50)
	assert.Len(t, got["w1"], 50)
}

func TestScanProjectionRangeDevicesAndBatches(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	times := make([]int64, 100)
	vals := make([]int64, 100)
	for i := range times {
		times[i], vals[i] = int64(i), int64(i*10)
	}
	for _, d := range []string{"b", "a", "c"} {
		require.NoError(t, db.Insert("A", d, int64Tablet(times, map[string][]int64{"k": vals, "j": vals})))
	}
	start, end := int64(10), int64(35)
	rows, err := db.Scan(context.Background(), ScanRequest{Type: "A", Devices: []string{"c", "a", "zz"},
		Properties: []string{"k"}, Start: &start, End: &end, BatchRows: 10})
	require.NoError(t, err)
	defer rows.Close()
	var devices []string
	var sizes []int
	for {
		b, ok := rows.Next()
		if !ok {
			break
		}
		devices = append(devices, b.Device)
		sizes = append(sizes, b.Rows.Rows())
		require.Len(t, b.Rows.Columns, 1)
		for i, tm := range b.Rows.Times {
			assert.Equal(t, tm*10, b.Rows.Columns[0].Int64(i))
		}
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"a", "a", "a", "c", "c", "c"}, devices)
	assert.Equal(t, []int{10, 10, 5, 10, 10, 5}, sizes)

	_, err = db.Scan(context.Background(), ScanRequest{Type: "A", Properties: []string{"nope"}})
	assert.ErrorIs(t, err, errs.ErrNotFound)
	_, err = db.Scan(context.Background(), ScanRequest{Type: "Nope"})
	assert.ErrorIs(t, err, errs.ErrNotFound)
	// Names no write could have used are bad arguments.
	for _, req := range []ScanRequest{
		{Type: "A\x00B"}, {Type: ""}, {Type: "A", Properties: []string{"k\nx"}}, {Type: "A", Devices: []string{"a", "c\x00"}},
	} {
		_, err = db.Scan(context.Background(), req)
		assert.ErrorIs(t, err, errs.ErrInvalidArgument, "%+v", req)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rows, err = db.Scan(ctx, ScanRequest{Type: "A"})
	require.NoError(t, err)
	_, ok := rows.Next()
	assert.False(t, ok)
	assert.ErrorIs(t, rows.Err(), errs.ErrCanceled)
}

func TestTornAndCorruptLogOnReopen(t *testing.T) {
	db, dir := openDisk(t, Options{AutoCreate: true})
	for i := range 5 {
		require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{int64(i)}, map[string][]int64{"k": {int64(i)}})))
	}
	require.NoError(t, db.Close())
	segs, err := filepath.Glob(filepath.Join(dir, walDir, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	last := segs[len(segs)-1]
	data, err := os.ReadFile(last)
	require.NoError(t, err)

	t.Run("torn tail", func(t *testing.T) {
		require.NoError(t, os.WriteFile(last, data[:len(data)-3], 0o644))
		db, err := Open(dir, Options{})
		require.NoError(t, err)
		got := rowsOf(t, db, "A")["d"]
		assert.Len(t, got, 4, "the torn last commit is gone, the others are intact")
		require.NoError(t, db.Close())
	})
	t.Run("flipped byte in the middle", func(t *testing.T) {
		bad := append([]byte(nil), data...)
		bad[len(bad)/2] ^= 0x40
		require.NoError(t, os.WriteFile(last, bad, 0o644))
		_, err := Open(dir, Options{})
		require.Error(t, err)
		assert.ErrorIs(t, err, errs.ErrCorrupt)
		assert.True(t, strings.Contains(err.Error(), filepath.Base(last)), "the error names the file: %v", err)
	})
}

func TestModesAndMemoryDatabase(t *testing.T) {
	for _, mode := range []wal.SyncMode{wal.SyncFull, wal.SyncNormal, wal.SyncOff} {
		t.Run(mode.String(), func(t *testing.T) {
			db, dir := openDisk(t, Options{Sync: mode, AutoCreate: true})
			require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
			require.NoError(t, db.Close())
			db2, err := Open(dir, Options{Sync: mode})
			require.NoError(t, err)
			defer db2.Close()
			assert.Equal(t, int64(1), rowsOf(t, db2, "A")["d"][1]["k"], "a clean close keeps data in every mode")
		})
	}
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
	assert.Equal(t, wal.Stats{}, db.LogStats())
	assert.Equal(t, int64(1), rowsOf(t, db, "A")["d"][1]["k"])
	_, err := Open(t.TempDir(), Options{Sync: 9})
	assert.ErrorIs(t, err, errs.ErrInvalidArgument)
}

func TestBorrowedEntriesLogTheSameRecordAsEncodedOnes(t *testing.T) {
	big := make([]int64, 5000)
	for i := range big {
		big[i] = int64(i)
	}
	tabs := []*tablet.Tablet{
		int64Tablet([]int64{1, 2}, map[string][]int64{"k": {1, 2}}),
		{Times: big, TimeUnit: "ns", Columns: []tablet.Column{tablet.Int64s("v", big, nil), tablet.Strings("s", make([]string, 5000), nil)}},
		(&tablet.Tablet{Times: big, Columns: []tablet.Column{tablet.Doubles("d", make([]float64, 5000), nil)}}).Slice(3, 4999),
	}
	ops := []schema.Op{{Kind: schema.CreateType, Type: "T"}}
	var encoded, borrowed []entry
	for i, tab := range tabs {
		typ, dev := fmt.Sprintf("T%d", i), strings.Repeat("d", i*3)
		encoded = append(encoded, entry{typ: typ, device: dev, enc: encodeEntry(typ, dev, tab)})
		borrowed = append(borrowed, entry{typ: typ, device: dev, t: tab})
	}
	want := encodeRecord(ops, encoded)
	assert.Equal(t, want, encodeRecord(ops, borrowed))
	rec, err := decodeRecord(want)
	require.NoError(t, err)
	require.Len(t, rec.entries, len(tabs))
	assert.Equal(t, tabs[2].Rows(), rec.entries[2].t.Rows())
}

func TestAutocommitInsertDoesNotKeepTheCallersTablet(t *testing.T) {
	db, dir := openDisk(t, Options{AutoCreate: true})
	vals := []int64{1, 2, 3}
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1, 2, 3}, map[string][]int64{"k": vals})))
	vals[0], vals[1], vals[2] = 9, 9, 9 // the caller reuses its buffer after Insert returns
	assert.Equal(t, map[int64]map[string]any{1: {"k": int64(1)}, 2: {"k": int64(2)}, 3: {"k": int64(3)}}, rowsOf(t, db, "A")["d"])
	require.NoError(t, db.Close())
	db2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer db2.Close()
	assert.Equal(t, map[int64]map[string]any{1: {"k": int64(1)}, 2: {"k": int64(2)}, 3: {"k": int64(3)}}, rowsOf(t, db2, "A")["d"])
}

// TestDeletingFilesDoesNotUnlock: the lock is the directory's, so no file
// a user deletes (an old LOCK file, say) lets a second handle in.
func TestDeletingFilesDoesNotUnlock(t *testing.T) {
	db, dir := openDisk(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "LOCK")))
	_, err := Open(dir, Options{})
	require.ErrorIs(t, err, errs.ErrIO)
	assert.Contains(t, err.Error(), "in use")
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{2}, map[string][]int64{"k": {2}})))
	require.NoError(t, db.Close())
	again, err := Open(dir, Options{})
	require.NoError(t, err)
	defer again.Close()
	assert.Len(t, rowsOf(t, again, "A")["d"], 2)
}

// A memory database's memtable is its data: the collector's pacing sees
// no memtable of it (its rows count as the rest of the heap, with
// GOGC=100's room), only its budget. A disk database's memtable counts
// as one.
func TestPacingCountsOnlyMemtablesThatAreFlushed(t *testing.T) {
	const budget = 1 << 20
	mem := openMem(t, Options{AutoCreate: true, MemtableBudget: budget})
	disk, _ := openDisk(t, Options{AutoCreate: true, MemtableBudget: budget})
	times := make([]int64, 1<<12)
	vals := make([]int64, len(times))
	for i := range times {
		times[i] = int64(i)
	}
	for _, db := range []*DB{mem, disk} {
		for _, dev := range []string{"a", "b", "c"} {
			require.NoError(t, db.Insert("T", dev, int64Tablet(times, map[string][]int64{"x": vals, "y": vals})))
		}
		require.Positive(t, db.MemoryUsage())
		assert.Equal(t, int64(budget), paced{db}.Budget())
	}
	assert.Zero(t, paced{mem}.MemoryUsage())
	assert.Equal(t, disk.MemoryUsage(), paced{disk}.MemoryUsage())
}
