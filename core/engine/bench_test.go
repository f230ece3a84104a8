package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// wideRow returns a one-row tablet at time tm with n INT64 columns named
// prefix0..prefix<n-1>, all valid.
func wideRow(tm int64, prefix string, n int) *tablet.Tablet {
	t := &tablet.Tablet{Times: []int64{tm}, Columns: make([]tablet.Column, n)}
	vals := make([]int64, n)
	for j := range n {
		vals[j] = int64(j)
		t.Columns[j] = tablet.Int64s(fmt.Sprintf("%s%d", prefix, j), vals[j:j+1], nil)
	}
	return t
}

// BenchmarkInsertExpansion: a one-row write bringing N new INT64 columns
// through the whole commit path with auto-create on (catalog update for N
// new properties, one log record, memtable expansion of a chunk that
// already has a row). The IoTDB pull request's end-to-end figure for
// 10,000 columns is 32 ms over RPC.
func BenchmarkInsertExpansion(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, mode := range []wal.SyncMode{wal.SyncOff, wal.SyncFull} {
			b.Run(fmt.Sprintf("new=%d/sync=%s", n, mode), func(b *testing.B) {
				// No flush during the run: the commit path alone is measured.
				db, _ := openDisk(b, Options{Sync: mode, AutoCreate: true, MemtableBudget: 1 << 40})
				rows := make([]*tablet.Tablet, b.N)
				for i := range b.N {
					typ := fmt.Sprintf("E%d", i)
					require.NoError(b, db.Insert(typ, "d", int64Tablet([]int64{0}, map[string][]int64{"s0": {1}})))
					rows[i] = wideRow(1, "c", n)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if err := db.Insert(fmt.Sprintf("E%d", i), "d", rows[i]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSchemaBatch: 100 × (type + property + index) per op, in one
// transaction or as 300 autocommit statements, on disk or in memory.
func BenchmarkSchemaBatch(b *testing.B) {
	for _, where := range []string{"disk", "mem"} {
		for _, how := range []string{"tx", "autocommit"} {
			b.Run(where+"/"+how, func(b *testing.B) {
				var fsyncs uint64
				var files int
				b.ReportAllocs()
				for i := range b.N {
					b.StopTimer()
					path := ""
					if where == "disk" {
						path = filepath.Join(b.TempDir(), fmt.Sprint(i))
					}
					db, err := Open(path, Options{})
					require.NoError(b, err)
					before := db.LogStats().Fsyncs
					filesBefore := countFiles(path)
					b.StartTimer()
					if how == "tx" {
						tx, err := db.Begin()
						require.NoError(b, err)
						for t := range 100 {
							require.NoError(b, tx.Exec(fmt.Sprintf("CREATE DOCUMENT TYPE A%d; CREATE PROPERTY A%d.k INT64; CREATE INDEX ON A%d (k) NOTUNIQUE", t, t, t)))
						}
						require.NoError(b, tx.Commit())
					} else {
						for t := range 100 {
							require.NoError(b, db.Exec(fmt.Sprintf("CREATE DOCUMENT TYPE A%d", t)))
							require.NoError(b, db.Exec(fmt.Sprintf("CREATE PROPERTY A%d.k INT64", t)))
							require.NoError(b, db.Exec(fmt.Sprintf("CREATE INDEX ON A%d (k) NOTUNIQUE", t)))
						}
					}
					b.StopTimer()
					fsyncs += db.LogStats().Fsyncs - before
					files += countFiles(path) - filesBefore
					require.NoError(b, db.Close())
					b.StartTimer()
				}
				b.ReportMetric(float64(fsyncs)/float64(b.N), "fsyncs/op")
				b.ReportMetric(float64(files)/float64(b.N), "files/op")
			})
		}
	}
}

func countFiles(dir string) int {
	if dir == "" {
		return 0
	}
	n := 0
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// BenchmarkQueryDuringExpansion: while a writer adds 10,000 columns to
// fresh devices (each one-row write a 10,000-column chunk expansion; the
// properties exist, as in the IoTDB pull request's runs), a reader scans
// a one-row device of the same type without pause. One op is a burst of 10
// expansions. Reports scan latency percentiles over all bursts; the
// IoTDB pull request's figure for the concurrent query p99 is 4.09 ms.
func BenchmarkQueryDuringExpansion(b *testing.B) {
	const width, burst = 10000, 10
	db := openMem(b, Options{AutoCreate: true})
	require.NoError(b, db.Insert("W", "anchor", wideRow(0, "c", width)))
	row := wideRow(1, "c", width)
	req := ScanRequest{Type: "W", Devices: []string{"anchor"}, Properties: []string{"c0"}}
	var lat []time.Duration
	var expansion time.Duration
	b.ResetTimer()
	for i := range b.N {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for j := range burst {
				t0 := time.Now()
				if err := db.Insert("W", fmt.Sprintf("d%d_%d", i, j), row); err != nil {
					panic(err)
				}
				expansion += time.Since(t0)
			}
		}()
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			t0 := time.Now()
			rows, err := db.Scan(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for batch, ok := rows.Next(); ok; batch, ok = rows.Next() {
				n += batch.Rows.Rows()
			}
			rows.Close()
			lat = append(lat, time.Since(t0))
			if n != 1 {
				b.Fatalf("scan saw %d rows, want 1", n)
			}
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/float64(b.N), "scans/op")
	b.ReportMetric(float64(expansion.Microseconds())/float64(b.N*burst), "µs/expansion")
}

// BenchmarkBulkInsert: one tablet of 1M rows × 10 INT64/DOUBLE columns in
// one commit on disk, the bulk ingest path (encode once, log, memtable).
func BenchmarkBulkInsert(b *testing.B) {
	const rows = 1 << 20
	times := make([]int64, rows)
	ints := make([]int64, rows)
	floats := make([]float64, rows)
	for i := range rows {
		times[i], ints[i], floats[i] = int64(i), int64(i*3), float64(i)/7
	}
	t := &tablet.Tablet{Times: times}
	for j := range 5 {
		t.Columns = append(t.Columns, tablet.Int64s(fmt.Sprintf("i%d", j), ints, nil), tablet.Doubles(fmt.Sprintf("f%d", j), floats, nil))
	}
	for _, mode := range []wal.SyncMode{wal.SyncOff, wal.SyncFull} {
		b.Run(fmt.Sprintf("rows=%d/cols=10/sync=%s", rows, mode), func(b *testing.B) {
			b.SetBytes(int64(rows * 8 * 11))
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				db, _ := openDisk(b, Options{Sync: mode, AutoCreate: true})
				b.StartTimer()
				if err := db.Insert("T", "d", t); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				require.NoError(b, db.Close())
				b.StartTimer()
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// BenchmarkScan reads back 1M rows × 10 DOUBLE columns of one device in
// batches, the engine's share of a full-table read, from the memtable and
// from a flushed Parquet file (where=flushed), and a 1% time range of the
// flushed rows (range=1%). The values are random, as noisy sensor
// readings and the Python storage benchmark's: Snappy finds nothing to
// compress in them.
func BenchmarkScan(b *testing.B) {
	const rows = 1 << 20
	times := make([]int64, rows)
	rng := rand.New(rand.NewPCG(1, 2))
	t := &tablet.Tablet{Times: times}
	for i := range rows {
		times[i] = int64(i)
	}
	for j := range 10 {
		vals := make([]float64, rows)
		for i := range vals {
			vals[i] = rng.Float64()
		}
		t.Columns = append(t.Columns, tablet.Doubles(fmt.Sprintf("c%d", j), vals, nil))
	}
	mem := openMem(b, Options{AutoCreate: true})
	require.NoError(b, mem.Insert("T", "d", t))
	disk, _ := openDisk(b, Options{AutoCreate: true, Sync: wal.SyncOff})
	require.NoError(b, disk.Insert("T", "d", t))
	require.NoError(b, disk.Flush())
	// The same rows over 100 devices (10,486 rows each).
	many, _ := openDisk(b, Options{AutoCreate: true, Sync: wal.SyncOff})
	const devices = 100
	per := rows / devices
	tx, err := many.Begin()
	require.NoError(b, err)
	for d := range devices {
		require.NoError(b, tx.InsertBorrowed("T", fmt.Sprintf("dev-%03d", d), t.Slice(0, per)))
	}
	require.NoError(b, tx.Commit())
	require.NoError(b, many.Flush())
	start, end := int64(rows/2), int64(rows/2+rows/100)
	dstart, dend := int64(per/2), int64(per/2+per/100)
	cases := []struct {
		name string
		db   *DB
		req  ScanRequest
		want int
	}{
		{"where=memtable", mem, ScanRequest{Type: "T"}, rows},
		{"where=flushed", disk, ScanRequest{Type: "T"}, rows},
		{"where=flushed/range=1%", disk, ScanRequest{Type: "T", Start: &start, End: &end}, int(end - start)},
		{"where=flushed/devices=100", many, ScanRequest{Type: "T"}, per * devices},
		{"where=flushed/devices=100/range=1%", many, ScanRequest{Type: "T", Start: &dstart, End: &dend}, int(dend-dstart) * devices},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(c.want * 8 * 11))
			b.ReportAllocs()
			for range b.N {
				r, err := c.db.Scan(context.Background(), c.req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for batch, ok := r.Next(); ok; batch, ok = r.Next() {
					n += batch.Rows.Rows()
				}
				r.Close()
				if err := r.Err(); err != nil || n != c.want {
					b.Fatalf("scanned %d rows: %v", n, err)
				}
			}
			b.ReportMetric(float64(c.want*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// BenchmarkFlush: the flush of 1M rows × 10 DOUBLE columns over 1,000
// devices (sync off: the Parquet encoding, not the disk).
func BenchmarkFlush(b *testing.B) {
	const rows, devices = 1 << 20, 1000
	per := rows / devices
	times := make([]int64, per)
	vals := make([]float64, per)
	for i := range per {
		times[i], vals[i] = int64(i), float64(i)/3
	}
	t := &tablet.Tablet{Times: times}
	for j := range 10 {
		t.Columns = append(t.Columns, tablet.Doubles(fmt.Sprintf("c%d", j), vals, nil))
	}
	b.SetBytes(int64(rows * 8 * 11))
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		db, _ := openDisk(b, Options{AutoCreate: true, Sync: wal.SyncOff, MemtableBudget: 1 << 40})
		tx, err := db.Begin()
		require.NoError(b, err)
		for d := range devices {
			require.NoError(b, tx.InsertBorrowed("T", fmt.Sprint("dev-", d), t))
		}
		require.NoError(b, tx.Commit())
		b.StartTimer()
		require.NoError(b, db.Flush())
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// BenchmarkReopen opens a database of 5 M rows × 10 DOUBLE over 100
// devices, flushed and checkpointed by Close, and scans 10 rows of one.
func BenchmarkReopen(b *testing.B) {
	const rows, devices = 5_000_000, 100
	per := rows / devices
	times := make([]int64, per)
	vals := make([]float64, per)
	for i := range per {
		times[i], vals[i] = int64(i), float64(i)/3
	}
	t := &tablet.Tablet{Times: times}
	for j := range 10 {
		t.Columns = append(t.Columns, tablet.Doubles(fmt.Sprintf("c%d", j), vals, nil))
	}
	dir := filepath.Join(b.TempDir(), "db")
	db, err := Open(dir, Options{AutoCreate: true, Sync: wal.SyncOff})
	require.NoError(b, err)
	for d := range devices {
		require.NoError(b, db.Insert("T", fmt.Sprintf("dev-%03d", d), t))
	}
	require.NoError(b, db.Close())
	start, end := int64(0), int64(10)
	b.ResetTimer()
	for range b.N {
		db, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		r, err := db.Scan(context.Background(), ScanRequest{Type: "T", Devices: []string{"dev-042"}, Properties: []string{"c0"}, Start: &start, End: &end})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for batch, ok := r.Next(); ok; batch, ok = r.Next() {
			n += batch.Rows.Rows()
		}
		if n != 10 {
			b.Fatalf("%d rows", n)
		}
		b.StopTimer()
		require.NoError(b, db.Close())
		b.StartTimer()
	}
}

// BenchmarkAddProperty: one autocommit CREATE PROPERTY on a type that
// already has width properties (sync off: the catalog and commit path, not
// the disk). The catalog keeps a type's properties in a persistent trie, so
// the cost grows with log32(width), not width.
func BenchmarkAddProperty(b *testing.B) {
	for _, width := range []int{100, 1000, 10_000} {
		b.Run(fmt.Sprintf("width=%d", width), func(b *testing.B) {
			db, _ := openDisk(b, Options{Sync: wal.SyncOff})
			script := "CREATE DOCUMENT TYPE T"
			for i := range width {
				script += fmt.Sprintf("; CREATE PROPERTY T.w%d INT64", i)
			}
			require.NoError(b, db.Exec(script))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := db.Exec(fmt.Sprintf("CREATE PROPERTY T.n%d INT64", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInsertLong: one long-format batch of 1 M rows (time + 1 DOUBLE)
// over 100,000 devices of 10 rows each, grouped, into a fresh in-memory
// database: the split by device and the per-device commit work.
func BenchmarkInsertLong(b *testing.B) {
	const devices, per = 100_000, 10
	names, times := benchLongColumns(devices, per, func(d int) string { return fmt.Sprintf("dev-%06d", d) })
	vals := make([]float64, len(times))
	for i := range vals {
		vals[i] = float64(i)
	}
	t := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("device", names, nil), tablet.Doubles("v", vals, nil)}}
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		db := openMem(b, Options{AutoCreate: true, MemtableBudget: 1 << 40})
		b.StartTimer()
		if err := db.InsertLong("T", "device", t); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(devices*per*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// BenchmarkFlushManyDevices: the flush of 1 M rows (time + 5 DOUBLE) over
// 100,000 devices of 10 rows (sync off): the per-device cost of writing
// Parquet.
func BenchmarkFlushManyDevices(b *testing.B) {
	const devices, per = 100_000, 10
	names, times := benchLongColumns(devices, per, func(d int) string { return fmt.Sprintf("plant-%02d/dev-%06d", d%100, d) })
	t := &tablet.Tablet{}
	t.Times = times
	t.Columns = append(t.Columns, tablet.Strings("device", names, nil))
	for j := range 5 {
		vals := make([]float64, len(times))
		for i := range vals {
			vals[i] = float64(i * j)
		}
		t.Columns = append(t.Columns, tablet.Doubles(fmt.Sprintf("f%d", j), vals, nil))
	}
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		db, _ := openDisk(b, Options{AutoCreate: true, Sync: wal.SyncOff, MemtableBudget: 1 << 40})
		require.NoError(b, db.InsertLong("T", "device", t))
		b.StartTimer()
		require.NoError(b, db.Flush())
	}
	b.ReportMetric(float64(devices*per*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// BenchmarkScanWhereWide: a filtered scan of one device of 200,000 rows
// × 100 random DOUBLE columns, flushed (the columns written uncompressed),
// keeping 0.1 %, 1 % or 10 % of the rows by one column: the file reads
// that column first, then the other 99 at the kept rows only.
func BenchmarkScanWhereWide(b *testing.B) {
	db, _ := openDisk(b, Options{AutoCreate: true, Sync: wal.SyncOff})
	rng := rand.New(rand.NewPCG(1, 1))
	const n, width = 200_000, 100
	t := &tablet.Tablet{Times: make([]int64, n)}
	for i := range n {
		t.Times[i] = int64(i)
	}
	for j := range width {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64()
		}
		t.Columns = append(t.Columns, tablet.Doubles(fmt.Sprintf("c%d", j), v, nil))
	}
	require.NoError(b, db.Insert("W", "d", t))
	require.NoError(b, db.Flush())
	for _, c := range []struct {
		name string
		min  float64
	}{{"keep=0.1%", 0.999}, {"keep=1%", 0.99}, {"keep=10%", 0.9}} {
		b.Run(c.name, func(b *testing.B) {
			w := &Where{Cond: &Cond{Property: "c0", Op: ">", Value: c.min}}
			for range b.N {
				rows, err := db.Scan(context.Background(), ScanRequest{Type: "W", ReuseBatches: true, Where: w})
				require.NoError(b, err)
				for _, ok := rows.Next(); ok; _, ok = rows.Next() {
				}
				require.NoError(b, rows.Err())
				rows.Close()
			}
		})
	}
}

// BenchmarkDevicesFromMemtable: devices() of 300,000 devices of 10 rows
// each, all in the memtable (nothing flushed): a walk of its sorted device
// directory, each device's row count and time bounds read from its chunk.
// The first listing after a device is added also sorts the directory; the
// benchmark times the listings after it.
func BenchmarkDevicesFromMemtable(b *testing.B) {
	const devices, per = 300_000, 10
	names, times := benchLongColumns(devices, per, func(d int) string { return fmt.Sprintf("plant-%02d/dev-%07d", d%100, d) })
	vals := make([]int64, len(times))
	for i := range vals {
		vals[i] = int64(i)
	}
	db := openMem(b, Options{AutoCreate: true, MemtableBudget: 1 << 40})
	t := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("device", names, nil), tablet.Int64s("k", vals, nil)}}
	if err := db.InsertLong("T", "device", t); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Devices("T", ""); err != nil { // sorts the directory
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		list, err := db.Devices("T", "")
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != devices || list[0].Rows != per {
			b.Fatalf("%d devices, the first with %d rows", len(list), list[0].Rows)
		}
	}
}

// benchLongColumns returns the device and time columns of a long-format
// batch of per rows (times 0, 1, ...) for each of devices devices, named
// by name, grouped by device.
func benchLongColumns(devices, per int, name func(d int) string) ([]string, []int64) {
	names := make([]string, 0, devices*per)
	times := make([]int64, 0, devices*per)
	for d := range devices {
		for i := range per {
			names = append(names, name(d)) // a string per row, as a batch from a caller has
			times = append(times, int64(i))
		}
	}
	return names, times
}

// BenchmarkSmallTablets: a tablet of one row × 10 INT64 properties into a
// memory database, into one of 1,000 devices or a new device each time,
// each insert its own commit or 1,000 to a transaction (the tablet is
// copied: the caller's buffers are free when Insert returns). The C
// ABI's figures are tests/c/bench_insert.c's.
func BenchmarkSmallTablets(b *testing.B) {
	for _, how := range []string{"autocommit", "tx"} {
		for _, devices := range []string{"existing", "new"} {
			b.Run(how+"/"+devices, func(b *testing.B) {
				db, err := Open("", Options{AutoCreate: true})
				require.NoError(b, err)
				defer db.Close()
				cols := map[string][]int64{}
				for c := range 10 {
					cols[fmt.Sprintf("c%d", c)] = []int64{int64(c)}
				}
				t := int64Tablet([]int64{0}, cols)
				require.NoError(b, db.Insert("T", "warm", t))
				names := make([]string, b.N)
				for i := range names {
					if devices == "new" {
						names[i] = fmt.Sprintf("device-%d", i)
					} else {
						names[i] = fmt.Sprintf("device-%d", i%1000)
					}
				}
				var tx *Tx
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					t.Times[0] = int64(i)
					if how == "autocommit" {
						if err := db.Insert("T", names[i], t); err != nil {
							b.Fatal(err)
						}
						continue
					}
					if i%1000 == 0 {
						if tx, err = db.Begin(); err != nil {
							b.Fatal(err)
						}
					}
					if err := tx.Insert("T", names[i], t); err != nil {
						b.Fatal(err)
					}
					if (i+1)%1000 == 0 || i == b.N-1 {
						if err := tx.Commit(); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
