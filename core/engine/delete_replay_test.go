package engine

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/wal"
)

// A flush that made a delete physical, then no checkpoint (a crash, or a
// failed checkpoint): replay must not bring the deleted rows back, even
// when it flushes on the way (a small budget) before reaching the delete.
func TestDeleteReplayAfterFlushWithoutCheckpoint(t *testing.T) {
	for _, budget := range []int64{0, 1} {
		db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
		require.NoError(t, db.Insert("T", "d", seriesRows(0, 100)))
		require.NoError(t, db.Delete(DeleteRequest{Type: "T"}))
		require.NoError(t, db.Insert("T", "d", seriesRows(200, 3))) // after the delete: stays
		db.fault = func(s string) error {
			if s == "checkpoint" {
				return errors.New("crash before the checkpoint")
			}
			return nil
		}
		require.Error(t, db.Flush())
		assert.Equal(t, seq64(200, 3), timesOf(t, db, "T", "d"))
		db.fault = nil
		require.NoError(t, db.Close())
		db, err := Open(dir, Options{MemtableBudget: budget})
		require.NoError(t, err)
		assert.Equal(t, seq64(200, 3), timesOf(t, db, "T", "d"), "budget %d: after the reopen", budget)
		require.NoError(t, db.Flush())
		assert.Equal(t, seq64(200, 3), timesOf(t, db, "T", "d"), "budget %d: after its flush", budget)
		require.NoError(t, db.Close())
	}
}

// A flush that fails for one type after another type (holding a delete
// and rows written after it) committed: scans, the retry and a reopen
// keep exactly the rows written after the delete.
func TestDeletePartialFlush(t *testing.T) {
	for fail := int32(1); fail <= 2; fail++ {
		for _, budget := range []int64{0, 1} {
			db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
			require.NoError(t, db.Insert("T", "d", seriesRows(0, 10)))
			require.NoError(t, db.Insert("U", "d", seriesRows(0, 10)))
			require.NoError(t, db.Flush())
			require.NoError(t, db.Insert("T", "d", seriesRows(10, 10)))
			require.NoError(t, db.Delete(DeleteRequest{Type: "T"}))
			require.NoError(t, db.Insert("T", "d", seriesRows(5, 3)))
			require.NoError(t, db.Insert("U", "d", seriesRows(10, 10)))
			var n atomic.Int32
			db.fault = func(s string) error {
				if s == "write" && n.Add(1) == fail {
					return errors.New("injected")
				}
				return nil
			}
			require.Error(t, db.Flush())
			assert.Equal(t, []int64{5, 6, 7}, timesOf(t, db, "T", "d"), "after the failed flush")
			assert.Len(t, timesOf(t, db, "U", "d"), 20)
			db.fault = nil
			require.NoError(t, db.Close())
			db, err := Open(dir, Options{MemtableBudget: budget})
			require.NoError(t, err)
			assert.Equal(t, []int64{5, 6, 7}, timesOf(t, db, "T", "d"), "fail %d budget %d: after the reopen", fail, budget)
			require.NoError(t, db.Flush())
			assert.Equal(t, []int64{5, 6, 7}, timesOf(t, db, "T", "d"), "fail %d budget %d: after its flush", fail, budget)
			assert.Len(t, timesOf(t, db, "U", "d"), 20)
			require.NoError(t, db.Close())
		}
	}
}
