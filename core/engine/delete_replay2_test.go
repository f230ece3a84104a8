package engine

import (
	"errors"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/wal"
)

// Tests from a review of replayed deletes.

// A reopen after a flush that made a delete physical but had no checkpoint,
// replaying with a tiny budget, then a compaction and a flush: the deleted
// rows stay deleted.
func TestDeleteCompactAfterReplay(t *testing.T) {
	db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
	require.NoError(t, db.Insert("T", "d", seriesRows(0, 100)))
	require.NoError(t, db.Delete(DeleteRequest{Type: "T"}))
	require.NoError(t, db.Insert("T", "d", seriesRows(200, 3)))
	db.fault = func(s string) error {
		if s == "checkpoint" {
			return errors.New("crash before the checkpoint")
		}
		return nil
	}
	require.Error(t, db.Flush())
	db.fault = nil
	require.NoError(t, db.Close())
	db, err := Open(dir, Options{MemtableBudget: 1})
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, seq64(200, 3), timesOf(t, db, "T", "d"), "after the reopen")
	require.NoError(t, db.Compact("T"))
	assert.Equal(t, seq64(200, 3), timesOf(t, db, "T", "d"), "after Compact")
	require.NoError(t, db.Flush())
	assert.Equal(t, seq64(200, 3), timesOf(t, db, "T", "d"), "after Compact and Flush")
}

// A direct write after a delete's flush (which had no checkpoint): replay,
// with and without flushes on the way, keeps the direct write's rows.
func TestDeleteThenDirectWriteReplayed(t *testing.T) {
	db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
	db.directBytes = 1 << 30
	require.NoError(t, db.Insert("T", "d", int64Tablet([]int64{0, 2, 4, 6, 8, 10, 12, 14, 16, 18}, map[string][]int64{"k": {0, 2, 4, 6, 8, 10, 12, 14, 16, 18}})))
	require.NoError(t, db.Delete(DeleteRequest{Type: "T", End: i64(100)}))
	db.fault = func(s string) error {
		if s == "checkpoint" {
			return errors.New("crash before the checkpoint")
		}
		return nil
	}
	require.Error(t, db.Flush())
	db.fault = nil
	// The window between a flush's Delta commit and its checkpoint, in
	// which a direct write may publish (a real crash would end it).
	db.flushErr.Store(nil)
	db.directBytes = 64
	y := []int64{1, 3, 5, 7, 9, 11, 13, 15, 17}
	require.NoError(t, db.Insert("T", "d", int64Tablet(y, map[string][]int64{"k": y})))
	require.Equal(t, y, timesOf(t, db, "T", "d"))
	require.Len(t, parquetFiles(t, db, "T"), 1, "Y went direct")
	require.NoError(t, db.Close())
	for _, budget := range []int64{0, 1} {
		clone := t.TempDir() + "/c"
		require.NoError(t, copyDir(dir, clone))
		db, err := Open(clone, Options{MemtableBudget: budget})
		require.NoError(t, err)
		assert.Equal(t, y, timesOf(t, db, "T", "d"), "budget %d", budget)
		require.NoError(t, db.Close())
	}
}

func copyDir(src, dst string) error {
	return exec.Command("cp", "-a", src, dst).Run()
}

// SyncNormal with a commit in flight at the hand-over: the flush makes
// the log durable up to its memtable's end before its Delta commits, so a
// power loss cannot cut the log below what the flushed files (and their
// flushed marks) cover.
func TestFlushMakesItsLogDurable(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncNormal, AutoCreate: true})
	require.NoError(t, db.Insert("T", "d", seriesRows(1000, 1)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("T", "d", seriesRows(0, 10)))
	e0 := db.log.End()
	db.publishMu.Lock()
	done := make(chan error)
	go func() { done <- db.Insert("T", "d", seriesRows(500, 1)) }() // in flight at the hand-over
	for db.log.End() == e0 {
		runtime.Gosched()
	}
	committed := make(chan struct{})
	db.fault = func(s string) error {
		if s == "checkpoint" {
			close(committed) // the flush's Delta commits are written by now
			return errors.New("power loss before the checkpoint")
		}
		return nil
	}
	imm := db.handOver(true)
	require.NotNil(t, imm)
	require.Equal(t, e0, imm.end)
	db.publishMu.Unlock()
	require.NoError(t, <-done)
	<-committed
	assert.GreaterOrEqual(t, uint64(db.log.Durable()), uint64(imm.end), "the log is durable up to what the flush covers")
}
