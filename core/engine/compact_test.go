package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/wal"
)

// compactionsDone waits until the background compactions the flushes so
// far asked for have run (they run after Flush returns).
func (db *DB) compactionsDone() {
	db.stateMu.Lock()
	defer db.stateMu.Unlock()
	for (db.compactDue || db.compacting) && !db.stopping && db.flusherDone != nil {
		db.stateCond.Wait()
	}
}

// parquetFiles lists the Parquet files under a type's table directory.
func parquetFiles(t *testing.T, db *DB, typ string) []string {
	t.Helper()
	ty, ok := db.Catalog().Type(typ)
	require.True(t, ok)
	entries, err := os.ReadDir(db.tableDir(ty.ID))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".parquet") {
			out = append(out, e.Name())
		}
	}
	return out
}

// smallFlushes writes n flushes of a few rows of two devices each into T,
// at times from, from+1, ...
func smallFlushes(t *testing.T, db *DB, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		for _, dev := range []string{"a", "b"} {
			tb := int64Tablet([]int64{int64(i)}, map[string][]int64{"k": {int64(i)}, "gone": {int64(-i)}})
			require.NoError(t, db.Insert("T", dev, tb))
		}
		require.NoError(t, db.Flush())
	}
}

// TestCompactMergesFilesAndDropsDeadColumns: on demand, a type's files
// become one, the Delta log lists it alone, a dropped property's data is
// gone from it, and the rows are the same, before and after a reopen.
func TestCompactMergesFilesAndDropsDeadColumns(t *testing.T) {
	db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
	smallFlushes(t, db, 0, 5)
	require.NoError(t, db.Exec("DROP PROPERTY T.gone"))
	want := rowsOf(t, db, "T")
	require.Len(t, parquetFiles(t, db, "T"), 5)
	before := db.Stats()

	require.NoError(t, db.Compact("T"))
	files := parquetFiles(t, db, "T")
	require.Len(t, files, 1)
	assert.Equal(t, want, rowsOf(t, db, "T"))
	st := db.Stats()
	assert.Equal(t, before.Compactions+1, st.Compactions)
	require.Len(t, st.Types, 1)
	assert.Equal(t, 1, st.Types[0].Files)
	assert.Equal(t, int64(10), st.Types[0].Rows)
	ty, _ := db.Catalog().Type("T")
	info, err := os.Stat(filepath.Join(db.tableDir(ty.ID), files[0]))
	require.NoError(t, err)
	f, err := segment.Open(filepath.Join(db.tableDir(ty.ID), files[0]), info.Size())
	require.NoError(t, err)
	assert.Equal(t, []string{"k"}, columnNames(f.Layout()), "the dropped property's column is gone")
	require.NoError(t, f.Close())
	// The Delta log's latest version lists exactly that file.
	delta, err := segment.OpenTable(db.tableDir(ty.ID), 0)
	require.NoError(t, err)
	var listed []string
	for _, a := range delta.Files() {
		listed = append(listed, a.Path)
	}
	assert.Equal(t, files, listed)

	// Nothing more to do: a second compaction writes nothing.
	require.NoError(t, db.Compact(""))
	assert.Equal(t, files, parquetFiles(t, db, "T"))
	assert.Equal(t, st.Compactions, db.Stats().Compactions)

	require.NoError(t, db.Close())
	db, err = Open(dir, Options{})
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, want, rowsOf(t, db, "T"))
}

// fileState is dirState of what a compaction may write: the tables'
// files and Delta logs (not the directories, whose times change when a
// file is created and removed again, nor the checkpoint of the flush a
// compaction starts with).
func fileState(t *testing.T, dir string) map[string]string {
	out := dirState(t, filepath.Join(dir, tablesDir))
	for p := range out {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			delete(out, p)
		}
	}
	return out
}

func columnNames(l segment.Layout) []string {
	var out []string
	for _, c := range l.Columns {
		out = append(out, c.Name)
	}
	return out
}

// TestCompactInTheBackground: once a type has gathered compactMinFiles
// small files, the flush that made the last one merges them.
func TestCompactInTheBackground(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncOff, AutoCreate: true})
	smallFlushes(t, db, 0, compactMinFiles-1)
	db.compactionsDone()
	assert.Len(t, parquetFiles(t, db, "T"), compactMinFiles-1)
	assert.Zero(t, db.Stats().Compactions)
	want := rowsOf(t, db, "T")
	smallFlushes(t, db, compactMinFiles-1, 1)
	db.compactionsDone() // it runs after the flush, in the background
	for dev, rows := range rowsOf(t, db, "T") {
		for tm, row := range rows {
			if want[dev] == nil {
				want[dev] = map[int64]map[string]any{}
			}
			want[dev][tm] = row
		}
	}
	assert.Len(t, parquetFiles(t, db, "T"), 1)
	assert.Equal(t, uint64(1), db.Stats().Compactions)
	assert.Equal(t, want, rowsOf(t, db, "T"))
}

// TestCompactFailureChangesNothing: a compaction that fails writing its
// files or committing them leaves the files, the Delta log and the rows
// as they were, and the next one succeeds.
func TestCompactFailureChangesNothing(t *testing.T) {
	for _, step := range []string{"compact-write", "compact-commit"} {
		t.Run(step, func(t *testing.T) {
			db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
			smallFlushes(t, db, 0, 3)
			want := rowsOf(t, db, "T")
			before := fileState(t, dir)
			boom := errors.New("injected")
			db.fault = func(s string) error {
				if s == step {
					return boom
				}
				return nil
			}
			err := db.Compact("T")
			require.ErrorIs(t, err, errs.ErrIO)
			require.ErrorIs(t, err, boom)
			assert.Equal(t, before, fileState(t, dir), "the failed compaction left something behind")
			assert.Equal(t, want, rowsOf(t, db, "T"))
			db.fault = nil
			require.NoError(t, db.Compact("T"))
			assert.Len(t, parquetFiles(t, db, "T"), 1)
			assert.Equal(t, want, rowsOf(t, db, "T"))
		})
	}
}

// TestCompactWhileScanning: a scan that started before a compaction reads
// the files it started with to the end.
func TestCompactWhileScanning(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncOff, AutoCreate: true})
	smallFlushes(t, db, 0, 4)
	rows, err := db.Scan(t.Context(), ScanRequest{Type: "T", BatchRows: 1})
	require.NoError(t, err)
	defer rows.Close()
	first, ok := rows.Next()
	require.True(t, ok)
	require.NoError(t, db.Compact("T"))
	n := first.Rows.Rows()
	for b, ok := rows.Next(); ok; b, ok = rows.Next() {
		n += b.Rows.Rows()
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, 8, n)
}

func TestCompactRefusals(t *testing.T) {
	db, dir := openDisk(t, Options{AutoCreate: true})
	require.ErrorIs(t, db.Compact("Nope"), errs.ErrNotFound)
	smallFlushes(t, db, 0, 2)
	r, err := Open(dir, Options{ReadOnly: true})
	require.NoError(t, err)
	require.ErrorIs(t, r.Compact(""), errs.ErrInvalidArgument)
	require.NoError(t, r.Close())
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Compact(""), errs.ErrClosed)
	mem := openMem(t, Options{AutoCreate: true})
	require.NoError(t, mem.Insert("T", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
	require.NoError(t, mem.Compact(""), "a database in memory has no files: nothing to do")
}

// TestCompactAndTTLChange: a TTL lifted while a compaction runs never
// loses rows after the ALTER returned: the ALTER waits for the
// compaction, which drops what the TTL in force expired, or comes first.
func TestCompactAndTTLChange(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncOff, AutoCreate: true})
	now := time.Now().UnixMilli()
	day := int64(24 * time.Hour / time.Millisecond)
	require.NoError(t, db.Insert("S", "a", msTablet(now-10*day, now-day)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("S", "a", msTablet(now-9*day)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Exec("ALTER TYPE S SET TTL 7d"))

	entered, release := make(chan struct{}), make(chan struct{})
	db.fault = func(s string) error {
		if s == "compact-write" {
			close(entered)
			<-release
		}
		return nil
	}
	compacted := make(chan error)
	go func() { compacted <- db.Compact("S") }()
	<-entered
	seen := make(chan int)
	go func() {
		assert.NoError(t, db.Exec("ALTER TYPE S SET TTL NONE"))
		seen <- len(timesOf(t, db, "S", "a")) // what the ALTER's caller sees
	}()
	close(release)
	require.NoError(t, <-compacted)
	n := <-seen
	db.fault = nil
	assert.Equal(t, n, len(timesOf(t, db, "S", "a")), "rows lost after the ALTER returned")
}

// TestCloseWaitsForCompact: Close returns only after a compaction in
// progress has finished with the files it reads.
func TestCloseWaitsForCompact(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "db"), Options{Sync: wal.SyncOff, AutoCreate: true})
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, db.Insert("T", "d", seriesRows(int64(i)*1000, 1000)))
		require.NoError(t, db.Flush())
	}
	entered, release := make(chan struct{}), make(chan struct{})
	db.fault = func(s string) error {
		if s == "compact-commit" {
			close(entered)
			<-release
		}
		return nil
	}
	ty, _ := db.Catalog().Type("T")
	logDir := filepath.Join(db.tableDir(ty.ID), segment.LogDirName)
	before, err := os.ReadDir(logDir)
	require.NoError(t, err)
	compacted, closed := make(chan error, 1), make(chan error, 1)
	go func() { compacted <- db.Compact("T") }()
	<-entered
	go func() { closed <- db.Close() }()
	close(release)
	require.NoError(t, <-closed)
	after, err := os.ReadDir(logDir)
	require.NoError(t, err)
	assert.Len(t, after, len(before)+1, "the compaction's Delta commit was written before Close returned")
	require.NoError(t, <-compacted)
}

// TestFlushAfterClose: a flush that gets past its closed check while the
// database closes returns ErrClosed instead of waiting for a flusher that
// is gone.
func TestFlushAfterClose(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncOff, AutoCreate: true})
	require.NoError(t, db.Insert("T", "d", seriesRows(0, 10)))
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.flushAll(), errs.ErrClosed)
}
