package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// Lifecycle benchmarks: compaction throughput, a delete of a time range
// and its flush on 10 M rows, and a clone of a database with about 1 GB
// flushed. Each iteration builds its database first (not timed); run
// them with -benchtime 1x.

// lifecycleRows returns n rows from time t0 with one random DOUBLE per
// property (incompressible: the bytes are what a real load writes).
func lifecycleRows(rng *rand.Rand, t0 int64, n, props int) *tablet.Tablet {
	t := &tablet.Tablet{Times: make([]int64, n)}
	for i := range t.Times {
		t.Times[i] = t0 + int64(i)
	}
	for p := range props {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64()
		}
		t.Columns = append(t.Columns, tablet.Doubles(fmt.Sprint("p", p), v, nil))
	}
	return t
}

// fill writes devices × rowsPerDevice rows of props DOUBLEs into type T,
// a flush every flushEvery rows per device, and returns the bytes of the
// Parquet files.
func fill(b *testing.B, db *DB, devices, rowsPerDevice, props, flushEvery int) int64 {
	rng := rand.New(rand.NewPCG(1, 2))
	for t0 := 0; t0 < rowsPerDevice; t0 += flushEvery {
		for d := range devices {
			require.NoError(b, db.Insert("T", fmt.Sprint("d", d), lifecycleRows(rng, int64(t0), flushEvery, props)))
		}
		require.NoError(b, db.Flush())
	}
	var total int64
	for _, ts := range db.Stats().Types {
		total += ts.Bytes
	}
	return total
}

func BenchmarkCompact(b *testing.B) {
	for range b.N {
		b.StopTimer()
		db, _ := openDisk(b, Options{Sync: wal.SyncNormal, AutoCreate: true, MemtableBudget: 1 << 30})
		db.directBytes = 1 << 40
		bytes := fill(b, db, 16, 7*16<<10, 4, 16<<10) // 1.8 M rows in 7 files of 256 Ki rows (8 would compact in the background)
		files := db.Stats().Types[0].Files
		b.StartTimer()
		start := time.Now()
		require.NoError(b, db.Compact("T"))
		b.ReportMetric(float64(bytes)/1e6/time.Since(start).Seconds(), "MB/s")
		b.ReportMetric(float64(files), "files-before")
		b.ReportMetric(float64(db.Stats().Types[0].Files), "files-after")
	}
}

func BenchmarkDeleteRange(b *testing.B) {
	for range b.N {
		b.StopTimer()
		db, _ := openDisk(b, Options{Sync: wal.SyncNormal, AutoCreate: true, MemtableBudget: 1 << 30})
		fill(b, db, 100, 100_000, 1, 100_000) // 10 M rows over 100 devices, flushed
		b.StartTimer()
		start := time.Now()
		lo, hi := int64(45_000), int64(55_000) // 10 % of every device
		require.NoError(b, db.Delete(DeleteRequest{Type: "T", Start: &lo, End: &hi}))
		commit := time.Since(start)
		require.NoError(b, db.Flush())
		b.ReportMetric(float64(commit.Microseconds()), "delete-µs")
		b.ReportMetric(time.Since(start).Seconds()-commit.Seconds(), "flush-s")
		b.ReportMetric(float64(db.Stats().Types[0].Rows)/1e6, "M-rows-left")
	}
}

func BenchmarkClone(b *testing.B) {
	for range b.N {
		b.StopTimer()
		db, dir := openDisk(b, Options{Sync: wal.SyncNormal, AutoCreate: true, MemtableBudget: 1 << 30})
		bytes := fill(b, db, 8, 1<<20, 15, 1<<18) // 8 M rows × 15 DOUBLE: about 1 GB flushed, 32 files
		dest := filepath.Join(filepath.Dir(dir), "clone")
		b.StartTimer()
		start := time.Now()
		require.NoError(b, db.Clone(dest))
		b.ReportMetric(float64(time.Since(start).Microseconds())/1e3, "clone-ms")
		b.ReportMetric(float64(bytes)/(1<<30), "GiB-flushed")
		b.StopTimer()
		require.NoError(b, os.RemoveAll(dest))
	}
}
