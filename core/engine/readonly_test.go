package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/wal"
)

// dirState lists every file under dir with its size and modification time.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprint(info.ModTime().Format(time.RFC3339Nano), " ", info.Mode(), " ", info.Size())
		return nil
	}))
	return out
}

// TestReadOnlyOpenSeesTheWritersDatabase: while a writer holds the
// database, a read-only open sees its flushed files, direct writes and
// logged rows, refuses to write, does not change as the writer goes on,
// and leaves the directory as it found it.
func TestReadOnlyOpenSeesTheWritersDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	w := openDirect(t, dir)
	defer w.Close()
	a, _ := seriesTablet(0, 3000, 1)
	require.NoError(t, w.Insert("T", "a", a))
	require.NoError(t, w.Flush())
	b, _ := seriesTablet(0, 5000, 2) // a direct write
	require.NoError(t, w.Insert("T", "b", b))
	w.directBytes = 1 << 30
	c, _ := seriesTablet(100, 20, 3) // in the log and the memtable only
	require.NoError(t, w.Insert("T", "a", c))
	want := rowsOf(t, w, "T")
	before := dirState(t, dir)

	r, err := Open(dir, Options{ReadOnly: true})
	require.NoError(t, err)
	assert.Equal(t, want, rowsOf(t, r, "T"))
	_, err = r.Begin()
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	require.ErrorIs(t, r.Exec("CREATE DOCUMENT TYPE X"), errs.ErrInvalidArgument)
	require.ErrorIs(t, r.Flush(), errs.ErrInvalidArgument)
	require.ErrorIs(t, r.Clone(filepath.Join(t.TempDir(), "c")), errs.ErrInvalidArgument)
	require.NoError(t, r.Close())
	assert.Equal(t, before, dirState(t, dir), "the read-only open changed the directory")

	// The writer goes on; a reader opened before sees what it saw, one
	// opened after sees the rest.
	r, err = Open(dir, Options{ReadOnly: true})
	require.NoError(t, err)
	defer r.Close()
	more, _ := seriesTablet(10_000, 10, 4)
	require.NoError(t, w.Insert("T", "z", more))
	require.NoError(t, w.Flush())
	assert.Equal(t, want, rowsOf(t, r, "T"))
	r2, err := Open(dir, Options{ReadOnly: true})
	require.NoError(t, err)
	defer r2.Close()
	assert.Equal(t, rowsOf(t, w, "T"), rowsOf(t, r2, "T"))
}

// TestReadOnlyOpensDuringWrites: readers open again and again while a
// writer commits, writes straight to Parquet, flushes and checkpoints;
// every open succeeds, holds only whole commits, and never sees fewer
// commits than the one before.
func TestReadOnlyOpensDuringWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	w, err := Open(dir, Options{Sync: wal.SyncOff, MemtableBudget: 32 << 10, AutoCreate: true, SegmentBytes: 16 << 10})
	require.NoError(t, err)
	defer w.Close()
	w.directBytes = 4 << 10
	first := int64Tablet([]int64{0}, map[string][]int64{"k": {0}})
	require.NoError(t, w.Insert("A", "d", first))
	require.NoError(t, w.Insert("B", "d", first))
	stop, done := make(chan struct{}), make(chan error, 1)
	var committed atomic.Int64
	go func() {
		for n := 1; ; n++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if n > 800 {
				<-stop
				done <- nil
				return
			}
			tx, err := w.Begin()
			if err == nil {
				rows := 5
				if n%7 == 0 {
					rows = 400 // a direct write
				}
				big, _ := seriesTablet(int64(n)*1000, rows, int64(n))
				err = tx.Insert("A", "d", big)
			}
			if err == nil {
				err = tx.Insert("B", "d", int64Tablet([]int64{int64(n)}, map[string][]int64{"k": {int64(n)}}))
			}
			if err == nil {
				err = tx.Commit()
			}
			if err == nil && n%50 == 0 {
				err = w.Flush()
			}
			if err != nil {
				done <- err
				return
			}
			committed.Store(int64(n))
		}
	}()
	seen := 0
	for i := range 40 {
		for committed.Load() < int64(i*20) { // the writer gets on between opens
			runtime.Gosched()
		}
		r, err := Open(dir, Options{ReadOnly: true})
		require.NoError(t, err, "read-only open %d", i)
		a, b := rowsOf(t, r, "A")["d"], rowsOf(t, r, "B")["d"]
		for tm := range b {
			if _, whole := a[tm*1000]; tm > 0 && !whole {
				require.Failf(t, "a commit is there in part", "open %d: commit %d", i, tm)
			}
		}
		require.GreaterOrEqual(t, len(b), seen, "open %d saw fewer commits than the one before", i)
		seen = len(b)
		require.NoError(t, r.Close())
	}
	close(stop)
	require.NoError(t, <-done)
	assert.Greater(t, seen, 1)
}

func TestReadOnlyOpenOfNothing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "none"), Options{ReadOnly: true})
	require.ErrorIs(t, err, errs.ErrNotFound)
	empty := t.TempDir()
	_, err = Open(empty, Options{ReadOnly: true})
	require.ErrorIs(t, err, errs.ErrNotFound)
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries, "a refused read-only open created files")
	_, err = Open("", Options{ReadOnly: true})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
}
