package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// seriesTablet is n rows from time start, k = time*10 + base.
func seriesTablet(start int64, n int, base int64) (*tablet.Tablet, map[int64]int64) {
	times := make([]int64, n)
	ks := make([]int64, n)
	want := map[int64]int64{}
	for i := range n {
		times[i] = start + int64(i)
		ks[i] = times[i]*10 + base
		want[times[i]] = ks[i]
	}
	return int64Tablet(times, map[string][]int64{"k": ks}), want
}

// openDirect opens a database whose inserts of 1 KiB or more go straight
// to Parquet, with type T (k INT64).
func openDirect(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Options{Sync: wal.SyncFull})
	require.NoError(t, err)
	db.directBytes = 1 << 10
	if _, ok := db.Catalog().Type("T"); !ok {
		require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.k INT64"))
	}
	return db
}

// checkSeries asserts that device dev of T holds exactly want.
func checkSeries(t *testing.T, db *DB, dev string, want map[int64]int64) {
	t.Helper()
	got := rowsOf(t, db, "T")[dev]
	require.Len(t, got, len(want), "rows of %s", dev)
	for tm, k := range want {
		require.Equal(t, k, got[tm]["k"], "%s at %d", dev, tm)
	}
}

func TestDirectWriteGoesToParquetNotTheLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	before := db.LogStats().LiveBytes
	tb, want := seriesTablet(0, 20000, 1)
	require.NoError(t, db.Insert("T", "d1", tb))
	st := db.Stats()
	assert.Equal(t, uint64(1), st.DirectWrites)
	assert.Less(t, db.LogStats().LiveBytes-before, int64(1<<10), "the rows went to the log")
	require.Len(t, st.Types, 1)
	assert.Equal(t, int64(20000), st.Types[0].Rows)
	assert.Zero(t, st.MemtableBytes)
	checkSeries(t, db, "d1", want)

	// The Delta log lists the file: readers outside see the rows at once.
	dt, err := segment.OpenTable(db.tableDir(schema.TypeID(st.Types[0].ID)), -1)
	require.NoError(t, err)
	require.NotEmpty(t, dt.Files())
	v, ok := dt.TxnVersion(txnApp)
	require.True(t, ok)
	assert.Positive(t, v)

	// Reopen replays the commit record without publishing it twice.
	require.NoError(t, db.Close())
	db = openDirect(t, dir)
	defer db.Close()
	checkSeries(t, db, "d1", want)
	assert.Zero(t, db.Stats().DirectWrites, "replay published a published write again")
}

func TestDirectWriteFallsBackWhereOlderRowsOverlap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	defer db.Close()
	db.directBytes = 1 << 30
	small, want := seriesTablet(100, 10, 0) // in the memtable
	require.NoError(t, db.Insert("T", "d1", small))
	db.directBytes = 1 << 10

	// Overlaps the memtable's rows of d1: goes through the log, and wins.
	big, newer := seriesTablet(0, 5000, 7)
	require.NoError(t, db.Insert("T", "d1", big))
	assert.Zero(t, db.Stats().DirectWrites)
	for tm, k := range newer {
		want[tm] = k
	}
	checkSeries(t, db, "d1", want)

	// Another device does not overlap: direct.
	other, otherWant := seriesTablet(0, 5000, 3)
	require.NoError(t, db.Insert("T", "d2", other))
	assert.Equal(t, uint64(1), db.Stats().DirectWrites)

	// Once flushed, d1's rows are in a file: a write over them goes
	// through the log and wins too, and one after them is direct.
	require.NoError(t, db.Flush())
	again, newest := seriesTablet(50, 5000, 9)
	require.NoError(t, db.Insert("T", "d1", again))
	assert.Equal(t, uint64(1), db.Stats().DirectWrites)
	for tm, k := range newest {
		want[tm] = k
	}
	later, laterWant := seriesTablet(1_000_000, 5000, 5)
	require.NoError(t, db.Insert("T", "d1", later))
	assert.Equal(t, uint64(2), db.Stats().DirectWrites)
	for tm, k := range laterWant {
		want[tm] = k
	}
	checkSeries(t, db, "d1", want)
	checkSeries(t, db, "d2", otherWant)

	// A direct file older than memtable rows over it loses to them, in a
	// scan and after the flush that merges both.
	over, overWant := seriesTablet(1_000_100, 10, 2)
	require.NoError(t, db.Insert("T", "d1", over))
	for tm, k := range overWant {
		want[tm] = k
	}
	checkSeries(t, db, "d1", want)
	require.NoError(t, db.Flush())
	checkSeries(t, db, "d1", want)
}

// TestDirectWriteIsPartOfItsTransaction: a transaction with DDL, a small
// insert and a direct write commits whole; when the Delta commit of the
// direct write fails after the log record is durable, the commit reports
// it and reopening finishes it.
func TestDirectWriteIsPartOfItsTransaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	db.fault = func(step string) error {
		if step == "attach" {
			return syscall.ENOSPC
		}
		return nil
	}
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Exec("CREATE DOCUMENT TYPE U; CREATE PROPERTY U.k INT64"))
	require.NoError(t, tx.Insert("U", "u", int64Tablet([]int64{1}, map[string][]int64{"k": {42}})))
	big, want := seriesTablet(0, 5000, 4)
	require.NoError(t, tx.Insert("T", "d1", big))
	err = tx.Commit()
	require.ErrorIs(t, err, errs.ErrIO)
	assert.Contains(t, err.Error(), "reopen")
	require.Error(t, db.Exec("CREATE DOCUMENT TYPE V"), "a database whose publication failed must refuse commits")
	require.NoError(t, db.Close())

	db = openDirect(t, dir)
	defer db.Close()
	checkSeries(t, db, "d1", want)
	assert.Equal(t, int64(42), rowsOf(t, db, "U")["u"][1]["k"])
	assert.Equal(t, uint64(1), db.Stats().DirectWrites, "replay published the write")
}

// TestFailedDirectWriteLeavesNothing: a commit that fails while its files
// are written (a full disk), or after (a conflicting commit came first),
// leaves nothing: no DDL, no rows, no file.
func TestFailedDirectWriteLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	defer db.Close()
	small, want := seriesTablet(0, 3, 0)
	require.NoError(t, db.Insert("T", "d0", small))
	for _, how := range []string{"disk full", "conflict"} {
		tx, err := db.Begin()
		require.NoError(t, err)
		require.NoError(t, tx.Exec("CREATE PROPERTY T.extra DOUBLE"))
		big, _ := seriesTablet(0, 5000, 4)
		big.Columns = append(big.Columns, tablet.Doubles("extra", make([]float64, 5000), nil))
		require.NoError(t, tx.Insert("T", "d1", big))
		var kind error
		if how == "disk full" {
			db.fault = func(s string) error {
				if s == "direct" {
					return syscall.ENOSPC
				}
				return nil
			}
			kind = errs.ErrIO
		} else {
			require.NoError(t, db.Exec("CREATE PROPERTY T.extra STRING"))
			kind = errs.ErrAlreadyExists
		}
		require.ErrorIs(t, tx.Commit(), kind, how)
		db.fault = nil
		if how == "conflict" {
			require.NoError(t, db.Exec("DROP PROPERTY T.extra"))
		}
		ty, _ := db.Catalog().Type("T")
		_, has := ty.Property("extra")
		assert.False(t, has, "%s: the failed commit's DDL is visible", how)
		assert.Len(t, rowsOf(t, db, "T"), 1, how)
		checkSeries(t, db, "d0", want)
		files, err := filepath.Glob(filepath.Join(dir, tablesDir, "*", "*.parquet"))
		require.NoError(t, err)
		assert.Empty(t, files, "%s: files left", how)
		assert.Zero(t, db.Stats().DirectWrites, how)
	}
}

// TestStrayDirectFilesAreRemovedOnOpen: files of a direct write whose
// commit never reached the log are deleted by the next open.
func TestStrayDirectFilesAreRemovedOnOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	big, want := seriesTablet(0, 5000, 4)
	require.NoError(t, db.Insert("T", "d1", big))
	ty, _ := db.Catalog().Type("T")
	tdir := db.tableDir(ty.ID)
	require.NoError(t, db.Close())
	stray := filepath.Join(tdir, "part-00000000-0000-4000-8000-000000000000-0.parquet")
	require.NoError(t, os.WriteFile(stray, []byte("PAR1"), 0o644))
	db = openDirect(t, dir)
	defer db.Close()
	_, err := os.Stat(stray)
	assert.True(t, errors.Is(err, os.ErrNotExist), "stray file kept")
	checkSeries(t, db, "d1", want)
}

// TestDirectWriteOfAMissingFileIsCorrupt: a log record naming a direct
// write whose files are gone is corruption naming the file, not a
// shorter database.
func TestDirectWriteOfAMissingFileIsCorrupt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	db.fault = func(step string) error {
		if step == "attach" {
			return syscall.ENOSPC
		}
		return nil
	}
	big, _ := seriesTablet(0, 5000, 4)
	require.Error(t, db.Insert("T", "d1", big))
	ty, _ := db.Catalog().Type("T")
	tdir := db.tableDir(ty.ID)
	require.NoError(t, db.Close())
	files, err := filepath.Glob(filepath.Join(tdir, "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	require.NoError(t, os.Remove(files[0]))
	_, err = Open(dir, Options{})
	require.ErrorIs(t, err, errs.ErrCorrupt)
	assert.Contains(t, err.Error(), filepath.Base(files[0]))
}

func BenchmarkDirectWrite(b *testing.B) {
	for _, direct := range []bool{false, true} {
		b.Run(fmt.Sprint("direct=", direct), func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "db"), Options{Sync: wal.SyncFull})
			require.NoError(b, err)
			defer db.Close()
			require.NoError(b, db.Exec("CREATE DOCUMENT TYPE T"))
			if !direct {
				db.directBytes = 1 << 62
			}
			const rows = 1 << 20
			rng := rand.New(rand.NewPCG(1, 2))
			cols := make([]tablet.Column, 10)
			for j := range cols {
				v := make([]float64, rows)
				for i := range v {
					v[i] = rng.Float64() // random: Snappy finds nothing
				}
				cols[j] = tablet.Doubles(fmt.Sprint("c", j), v, nil)
			}
			db.opts.AutoCreate = true
			b.SetBytes(rows * 11 * 8)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				times := make([]int64, rows)
				for k := range times {
					times[k] = int64(i*rows + k)
				}
				if err := db.Insert("T", "d", &tablet.Tablet{Times: times, Columns: cols}); err != nil {
					b.Fatal(err)
				}
			}
			require.NoError(b, db.Flush())
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// TestDirectWritesMatchTheLogPath writes the same random transactions into
// a database that writes large inserts straight to Parquet and into one
// that never does, and compares them after each, after flushes and after
// reopening: rows in time order (read from the caller's tablets) and not
// (merged by a private memtable), several inserts of a device in one
// transaction, files split by time, columns missing from some inserts,
// every kind of column.
func TestDirectWritesMatchTheLogPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	root := t.TempDir()
	open := func(name string, direct bool) *DB {
		db, err := Open(filepath.Join(root, name), Options{Sync: wal.SyncOff})
		require.NoError(t, err)
		db.fileRows = 3000
		db.directBytes = 1 << 62
		if direct {
			db.directBytes = 1
		}
		return db
	}
	direct, plain := open("direct", true), open("plain", false)
	defer func() { direct.Close(); plain.Close() }()
	for _, db := range []*DB{direct, plain} {
		require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.i INT64; CREATE PROPERTY T.d DOUBLE; "+
			"CREATE PROPERTY T.s STRING; CREATE PROPERTY T.b BOOLEAN"))
	}
	next := map[string]int64{}
	randomInsert := func() (string, *tablet.Tablet) {
		dev := fmt.Sprint("d", rng.IntN(3))
		n := 1 + rng.IntN(20000)
		times := make([]int64, n)
		if rng.IntN(3) > 0 { // in order, after the device's earlier rows
			tm := next[dev]
			for i := range times {
				times[i] = tm
				tm += int64(1 + rng.IntN(3))
			}
			next[dev] = times[n-1] + 1
		} else { // anywhere, some twice
			for i := range times {
				times[i] = rng.Int64N(next[dev] + 100)
			}
		}
		valid := func() []bool {
			v := make([]bool, n)
			for i := range v {
				v[i] = rng.IntN(5) > 0
			}
			return v
		}
		tb := &tablet.Tablet{Times: times}
		if rng.IntN(4) > 0 {
			v := make([]int64, n)
			for i := range v {
				v[i] = rng.Int64()
			}
			tb.Columns = append(tb.Columns, tablet.Int64s("i", v, valid()))
		}
		if rng.IntN(4) > 0 {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			tb.Columns = append(tb.Columns, tablet.Doubles("d", v, valid()))
		}
		if rng.IntN(4) > 0 {
			v := make([]string, n)
			for i := range v {
				v[i] = fmt.Sprint("s", rng.IntN(50))
			}
			tb.Columns = append(tb.Columns, tablet.Strings("s", v, valid()))
		}
		if rng.IntN(4) > 0 {
			v := make([]bool, n)
			for i := range v {
				v[i] = rng.IntN(2) == 0
			}
			tb.Columns = append(tb.Columns, tablet.Bools("b", v, valid()))
		}
		return dev, tb
	}
	for round := range 12 {
		type ins struct {
			dev string
			t   *tablet.Tablet
		}
		var batch []ins
		for range 1 + rng.IntN(3) {
			dev, tb := randomInsert()
			batch = append(batch, ins{dev, tb})
		}
		for _, db := range []*DB{direct, plain} {
			tx, err := db.Begin()
			require.NoError(t, err)
			for _, in := range batch {
				require.NoError(t, tx.Insert("T", in.dev, in.t))
			}
			require.NoError(t, tx.Commit())
			if round%4 == 3 {
				require.NoError(t, db.Flush())
			}
		}
		require.Equal(t, rowsOf(t, plain, "T"), rowsOf(t, direct, "T"), "round %d", round)
	}
	assert.Positive(t, direct.Stats().DirectWrites)
	assert.Zero(t, plain.Stats().DirectWrites)
	require.NoError(t, direct.Close())
	direct = open("direct", true)
	require.Equal(t, rowsOf(t, plain, "T"), rowsOf(t, direct, "T"), "after reopening")
}

// BenchmarkDirectWriteManyDevices: a long-format batch of 1 M rows (time +
// 5 DOUBLE) over 100,000 devices of 10 rows, written straight to Parquet
// (sync full), into a type that already holds earlier batches' devices.
func BenchmarkDirectWriteManyDevices(b *testing.B) {
	const devices, per = 100_000, 10
	db, batch := manyDevicesDB(b, wal.SyncFull, devices, per)
	b.ReportAllocs()
	for i := range b.N {
		b.StopTimer()
		t := batch(i)
		b.StartTimer()
		if err := db.InsertLong("M", "device", t); err != nil {
			b.Fatal(err)
		}
	}
	if db.Stats().DirectWrites != uint64(b.N) {
		b.Fatalf("%d direct writes for %d batches", db.Stats().DirectWrites, b.N)
	}
	b.ReportMetric(float64(devices*per*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// manyDevicesDB opens a database (closed at the benchmark's end) with
// type M of 5 DOUBLE properties f0..f4 and returns it with a maker of
// long-format batches k = 0, 1, ...: time + f0..f4 over devices new
// devices of per rows each, named plant-PP/dev-NNNNNN.
func manyDevicesDB(b testing.TB, sync wal.SyncMode, devices, per int) (*DB, func(k int) *tablet.Tablet) {
	db, err := Open(filepath.Join(b.TempDir(), "db"), Options{Sync: sync})
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	require.NoError(b, db.Exec("CREATE DOCUMENT TYPE M; CREATE PROPERTY M.f0 DOUBLE; CREATE PROPERTY M.f1 DOUBLE; "+
		"CREATE PROPERTY M.f2 DOUBLE; CREATE PROPERTY M.f3 DOUBLE; CREATE PROPERTY M.f4 DOUBLE"))
	rng := rand.New(rand.NewPCG(1, 2))
	return db, func(k int) *tablet.Tablet {
		names := make([]string, 0, devices*per)
		times := make([]int64, 0, devices*per)
		for d := range devices {
			for i := range per {
				names = append(names, fmt.Sprintf("plant-%02d/dev-%06d", d%100, k*devices+d))
				times = append(times, int64(i))
			}
		}
		t := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("device", names, nil)}}
		for j := range 5 {
			vals := make([]float64, len(times))
			for i := range vals {
				vals[i] = rng.Float64()
			}
			t.Columns = append(t.Columns, tablet.Doubles(fmt.Sprintf("f%d", j), vals, nil))
		}
		return t
	}
}

// BenchmarkPointRead: one device's 10 rows (time + 5 DOUBLE) from a
// type of 1,000,000 devices written in ten long-format batches, a random
// device each time, as the C ABI scans (batches reused).
func BenchmarkPointRead(b *testing.B) {
	const devices, per, files = 100_000, 10, 10
	db, batch := manyDevicesDB(b, wal.SyncOff, devices, per)
	for k := range files {
		require.NoError(b, db.InsertLong("M", "device", batch(k)))
	}
	// Written straight to files (no flush, so no compaction runs during
	// the reads), as bench_devices.py's ingest leaves them.
	require.Equal(b, uint64(files), db.Stats().DirectWrites)
	rng := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		d := rng.IntN(devices * files)
		readDevice(b, db, []string{fmt.Sprintf("plant-%02d/dev-%06d", d%devices%100, d)}, per)
	}
}

// BenchmarkPointReadEveryFile: one device's rows where every file holds
// every device (a fleet flushed ten times): 100,000 devices, each with 10
// rows in each of ten files, a random device's 100 rows a read. Each file
// is looked in through its hash table of names, where a binary search of
// its directory would take 17 steps.
func BenchmarkPointReadEveryFile(b *testing.B) {
	const devices, per, files = 100_000, 10, 10
	db, batch := manyDevicesDB(b, wal.SyncOff, devices, per)
	for k := range files {
		t := batch(0)
		for i := range t.Times {
			t.Times[i] += int64(k * per)
		}
		require.NoError(b, db.InsertLong("M", "device", t))
		require.NoError(b, db.Flush())
	}
	require.Equal(b, files, db.Stats().Types[0].Files, "compaction must not have merged the files")
	rng := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		d := rng.IntN(devices)
		readDevice(b, db, []string{fmt.Sprintf("plant-%02d/dev-%06d", d%100, d)}, per*files)
	}
}

// readDevice scans the device named in one (a one-name slice) as the C
// ABI does (batches reused) and fails b unless it holds rows rows.
func readDevice(b *testing.B, db *DB, one []string, rows int) {
	r, err := db.Scan(context.Background(), ScanRequest{Type: "M", Devices: one, ReuseBatches: true})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for bt, ok := r.Next(); ok; bt, ok = r.Next() {
		n += bt.Rows.Rows()
	}
	if err := r.Err(); err != nil || n != rows {
		b.Fatalf("read %d rows: %v", n, err)
	}
	r.Close()
}

// BenchmarkPointReadByDevices: one device's 10 rows from a type of 10,
// 10,000 or 1,000,000 devices (one long-format batch), in one file (a
// direct write or a flush) or in the memtable (a memory database): a device is
// found by a hash probe (the file's index of its names, the memtable's
// map), so the read costs about the same at every size.
func BenchmarkPointReadByDevices(b *testing.B) {
	const per = 10
	for _, where := range []string{"file", "memtable"} {
		for _, devices := range []int{10, 10_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/devices=%d", where, devices), func(b *testing.B) {
				db, batch := manyDevicesDB(b, wal.SyncOff, devices, per)
				if where == "memtable" {
					require.NoError(b, db.Close())
					var err error
					db, err = Open("", Options{})
					require.NoError(b, err)
					b.Cleanup(func() { db.Close() })
					require.NoError(b, db.Exec("CREATE DOCUMENT TYPE M; CREATE PROPERTY M.f0 DOUBLE; CREATE PROPERTY M.f1 DOUBLE; "+
						"CREATE PROPERTY M.f2 DOUBLE; CREATE PROPERTY M.f3 DOUBLE; CREATE PROPERTY M.f4 DOUBLE"))
				}
				require.NoError(b, db.InsertLong("M", "device", batch(0)))
				if where == "file" && db.Stats().DirectWrites == 0 { // too small to go straight to a file
					require.NoError(b, db.Flush())
				}
				names := make([]string, 4096)
				rng := rand.New(rand.NewPCG(5, 6))
				for i := range names {
					d := rng.IntN(devices)
					names[i] = fmt.Sprintf("plant-%02d/dev-%06d", d%100, d)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					readDevice(b, db, names[i%len(names):i%len(names)+1], per)
				}
			})
		}
	}
}

// TestDirectLongWritesMatchTheLogPath: long-format batches (devices
// interleaved or grouped, in name order or not, times in order or not)
// written straight to Parquet hold what the log's way holds.
func TestDirectLongWritesMatchTheLogPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	root := t.TempDir()
	open := func(name string, direct bool) *DB {
		db, err := Open(filepath.Join(root, name), Options{Sync: wal.SyncOff})
		require.NoError(t, err)
		db.fileRows = 500
		db.directBytes = 1 << 62
		if direct {
			db.directBytes = 1
		}
		return db
	}
	direct, plain := open("direct", true), open("plain", false)
	defer func() { direct.Close(); plain.Close() }()
	for _, db := range []*DB{direct, plain} {
		require.NoError(t, db.Exec("CREATE DOCUMENT TYPE L; CREATE PROPERTY L.x DOUBLE; CREATE PROPERTY L.s STRING"))
	}
	next := map[string]int64{}
	for round := range 16 {
		var devs, ss []string
		var times []int64
		var xs []float64
		var valid []bool
		ordered := rng.IntN(4) > 0
		for _, d := range rng.Perm(40)[:1+rng.IntN(40)] {
			dev := fmt.Sprintf("dev-%02d", d)
			for range 1 + rng.IntN(60) {
				devs = append(devs, dev)
				if ordered {
					next[dev] += int64(1 + rng.IntN(3))
					times = append(times, next[dev])
				} else {
					times = append(times, rng.Int64N(next[dev]+50))
				}
				xs = append(xs, rng.NormFloat64())
				ss = append(ss, fmt.Sprint("v", rng.IntN(9)))
				valid = append(valid, rng.IntN(6) > 0)
			}
		}
		if rng.IntN(2) == 0 { // interleave the devices' rows, keeping each device's order
			perm := interleave(rng, devs)
			devs, times, xs, ss, valid = permute(devs, perm), permute(times, perm), permute(xs, perm), permute(ss, perm), permute(valid, perm)
		}
		tb := &tablet.Tablet{Times: times, Columns: []tablet.Column{
			tablet.Strings("device", devs, nil), tablet.Doubles("x", xs, valid), tablet.Strings("s", ss, nil)}}
		for _, db := range []*DB{direct, plain} {
			require.NoError(t, db.InsertLong("L", "device", tb), "round %d", round)
		}
		if round%5 == 4 {
			require.NoError(t, direct.Flush())
		}
		require.Equal(t, rowsOf(t, plain, "L"), rowsOf(t, direct, "L"), "round %d", round)
	}
	assert.Positive(t, direct.Stats().DirectWrites)
	require.NoError(t, direct.Close())
	direct = open("direct", true)
	require.Equal(t, rowsOf(t, plain, "L"), rowsOf(t, direct, "L"), "after reopening")
}

// interleave returns an order of the rows that mixes devices but keeps
// each device's rows in their order.
func interleave(rng *rand.Rand, devs []string) []int {
	byDev := map[string][]int{}
	var names []string
	for i, d := range devs {
		if byDev[d] == nil {
			names = append(names, d)
		}
		byDev[d] = append(byDev[d], i)
	}
	var out []int
	for len(out) < len(devs) {
		d := names[rng.IntN(len(names))]
		if q := byDev[d]; len(q) > 0 {
			out = append(out, q[0])
			byDev[d] = q[1:]
		}
	}
	return out
}

func permute[T any](v []T, perm []int) []T {
	out := make([]T, len(v))
	for i, p := range perm {
		out[i] = v[p]
	}
	return out
}

// TestCommitsAfterAFailedPublicationAppendNothing: once a commit's
// publication failed, later commits fail without reaching the log, so a
// later direct write can never be replayed out of order with them.
func TestCommitsAfterAFailedPublicationAppendNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	db.fault = func(step string) error {
		if step == "attach" {
			return syscall.ENOSPC
		}
		return nil
	}
	x, xWant := seriesTablet(0, 5000, 1)
	require.ErrorIs(t, db.Insert("T", "x", x), errs.ErrIO)
	db.fault = nil
	end := db.log.End()
	small, _ := seriesTablet(100, 10, 0)
	require.ErrorIs(t, db.Insert("T", "d1", small), errs.ErrIO)
	big, _ := seriesTablet(0, 5000, 7)
	require.ErrorIs(t, db.Insert("T", "d1", big), errs.ErrIO)
	assert.Equal(t, end, db.log.End(), "a commit after the failure reached the log")
	require.NoError(t, db.Close())

	db = openDirect(t, dir)
	defer db.Close()
	rows := rowsOf(t, db, "T")
	assert.Len(t, rows, 1)
	checkSeries(t, db, "x", xWant)
}

// TestDirectWriteLogRecordIsDurableFirst: with sync "normal" a commit does
// not wait for its record's fsync, but a direct write's does, before its
// Delta commit makes the files durable: a machine crash cannot leave the
// files published and the rest of the transaction lost.
func TestDirectWriteLogRecordIsDurableFirst(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "db"), Options{Sync: wal.SyncNormal})
	require.NoError(t, err)
	defer db.Close()
	db.directBytes = 1 << 10
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.k INT64"))
	var durable, end wal.LSN
	db.fault = func(step string) error {
		if step == "attach" {
			durable, end = db.log.Durable(), db.log.End()
		}
		return nil
	}
	big, _ := seriesTablet(0, 5000, 4)
	require.NoError(t, db.Insert("T", "d1", big))
	require.Equal(t, uint64(1), db.Stats().DirectWrites)
	assert.Positive(t, end)
	assert.Equal(t, end, durable, "the Delta commit was written before its log record was durable")
}

// TestConcurrentDirectAndLogWritesKeepTheNewest: writers on their own
// devices alternate large (direct) and small (log) writes over the same
// keys, alongside each other's commits, hand-overs and flushes; every key
// ends with its writer's last value, before and after reopening.
func TestConcurrentDirectAndLogWritesKeepTheNewest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Options{Sync: wal.SyncOff, MemtableBudget: 256 << 10})
	require.NoError(t, err)
	db.directBytes = 8 << 10 // 1,000 rows go direct, 100 do not
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.k INT64"))
	const writers, commits, keys = 4, 24, 1000
	want := make([]map[int64]int64, writers)
	errc := make(chan error, writers)
	for w := range writers {
		want[w] = map[int64]int64{}
		go func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			dev := fmt.Sprint("w", w)
			next := int64(0) // large writes append at next, or rewrite old ranges
			for c := range commits {
				n, from := keys, next
				switch r := rng.IntN(3); {
				case r == 0 && next > 0: // small: over earlier keys, through the log
					n, from = 100, rng.Int64N(next)
				case r == 1 && next > 0: // large over an old range: falls back to the log
					from = rng.Int64N(next)
				default:
					next += keys
				}
				times := make([]int64, n)
				ks := make([]int64, n)
				for i := range times {
					times[i] = from + int64(i)
					ks[i] = int64(c*1000 + w)
					want[w][times[i]] = ks[i]
				}
				if err := db.Insert("T", dev, int64Tablet(times, map[string][]int64{"k": ks})); err != nil {
					errc <- err
					return
				}
				if c%8 == 7 && w == 0 {
					if err := db.Flush(); err != nil {
						errc <- err
						return
					}
				}
			}
			errc <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-errc)
	}
	check := func(db *DB, when string) {
		rows := rowsOf(t, db, "T")
		for w := range writers {
			got := rows[fmt.Sprint("w", w)]
			require.Len(t, got, len(want[w]), "%s: writer %d", when, w)
			for tm, k := range want[w] {
				require.Equal(t, k, got[tm]["k"], "%s: writer %d at %d", when, w, tm)
			}
		}
	}
	check(db, "before reopening")
	assert.Positive(t, db.Stats().DirectWrites)
	require.NoError(t, db.Close())
	db, err = Open(dir, Options{Sync: wal.SyncOff})
	require.NoError(t, err)
	defer db.Close()
	check(db, "after reopening")
}

// TestDirectWriteWaitsForAnEarlierOneToLeave: a direct write checked just
// as an earlier direct write of the same keys finishes publishing sees its
// files (the view is read under the lock the earlier one leaves by), goes
// through the log instead, and its values win.
func TestDirectWriteWaitsForAnEarlierOneToLeave(t *testing.T) {
	db := openDirect(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()
	atAttach, release := make(chan struct{}), make(chan struct{})
	first := true
	db.fault = func(step string) error {
		if step == "attach" && first { // D1, publishing: hold it until D2 is checked
			first = false
			close(atAttach)
			<-release
		}
		return nil
	}
	d1Done, errc := make(chan error, 1), make(chan error, 1)
	checks := 0
	db.beforeKeepDirect = func() { // under commitMu
		if checks++; checks == 2 { // D2 is being checked: let D1 finish first
			close(release)
			d1Done <- <-errc
		}
	}
	d1, _ := seriesTablet(0, 5000, 1)
	go func() { errc <- db.Insert("T", "d1", d1) }()
	<-atAttach
	d2, want := seriesTablet(1000, 1000, 2)
	require.NoError(t, db.Insert("T", "d1", d2))
	require.NoError(t, <-d1Done)
	assert.Equal(t, uint64(1), db.Stats().DirectWrites, "D2 stayed direct over D1's keys")
	got := rowsOf(t, db, "T")["d1"]
	for tm, k := range want {
		require.Equal(t, k, got[tm]["k"], "at %d", tm)
	}
	require.NoError(t, db.Flush())
	got = rowsOf(t, db, "T")["d1"]
	require.Equal(t, want[1500], got[1500]["k"])
}

// TestCloseWaitsForADirectWrite: a direct write writing its files when
// Close is called fails with ErrClosed and leaves no file (Close waits for
// it, so that no file appears in a directory whose lock was dropped).
func TestCloseWaitsForADirectWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDirect(t, dir)
	writing, release := make(chan struct{}), make(chan struct{})
	db.fault = func(step string) error {
		if step == "direct" {
			close(writing)
			<-release
		}
		return nil
	}
	big, _ := seriesTablet(0, 5000, 4)
	inserted := make(chan error, 1)
	go func() { inserted <- db.Insert("T", "d1", big) }()
	<-writing
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	for !db.closed.Load() { // Close has begun: it waits for the write
		runtime.Gosched()
	}
	close(release)
	require.NoError(t, <-closed)
	files, err := filepath.Glob(filepath.Join(dir, tablesDir, "*", "*.parquet"))
	require.NoError(t, err)
	assert.Empty(t, files, "files of the direct write remain after Close returned")
	require.ErrorIs(t, <-inserted, errs.ErrClosed)
}

// TestDirectWriteChecksFilesFlushedWhileItWrites: a long write looks at
// the type's files while it writes its own (its precheck), and under the
// commit mutex only at the files that came since; rows of its device
// flushed into such a file meanwhile, within its time span, send it the
// log's way, and its rows win over them as the newer. Devices and files
// it does not meet leave it direct.
func TestDirectWriteChecksFilesFlushedWhileItWrites(t *testing.T) {
	db := openDirect(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()
	long := func(base int64, devices ...string) (*tablet.Tablet, map[string]map[int64]int64) {
		var names []string
		var times, ks []int64
		want := map[string]map[int64]int64{}
		for _, d := range devices {
			want[d] = map[int64]int64{}
			for i := range int64(3000) {
				names, times, ks = append(names, d), append(times, i), append(ks, i*10+base)
				want[d][i] = i*10 + base
			}
		}
		return &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("device", names, nil), tablet.Int64s("k", ks, nil)}}, want
	}
	// Files the precheck clears: another device, earlier.
	first, want := long(1, "a0", "a1")
	require.NoError(t, db.InsertLong("T", "device", first))
	require.Equal(t, uint64(1), db.Stats().DirectWrites)

	meanwhile, older := seriesTablet(100, 10, 5)
	flushed := false
	db.fault = func(step string) error {
		if step == "direct" && !flushed { // after the precheck started, before the files
			flushed = true
			db.directBytes = 1 << 30 // the insert below goes to the memtable
			if err := db.Insert("T", "b1", meanwhile); err != nil {
				return err
			}
			db.directBytes = 1 << 10
			return db.Flush() // b1's rows now in a file the precheck did not see
		}
		return nil
	}
	second, newer := long(2, "b0", "b1")
	require.NoError(t, db.InsertLong("T", "device", second))
	require.True(t, flushed)
	assert.Equal(t, uint64(1), db.Stats().DirectWrites, "b1 meets the file flushed meanwhile: the log's way")
	for tm, k := range older {
		if _, ok := newer["b1"][tm]; !ok {
			newer["b1"][tm] = k
		}
	}
	maps.Copy(want, newer)
	for d, rows := range want {
		checkSeries(t, db, d, rows)
	}
	db.fault = nil
	third, later := long(3, "c0")
	require.NoError(t, db.InsertLong("T", "device", third))
	assert.Equal(t, uint64(2), db.Stats().DirectWrites, "c0 meets no file: direct")
	checkSeries(t, db, "c0", later["c0"])
}
