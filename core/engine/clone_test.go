package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/wal"
)

// TestCloneHoldsWhatTheDatabaseHolds: a clone of a database with flushed
// files, direct writes, rows still in the memtable and a schema in the log
// opens with the same rows and schema, and the two then go their own ways.
func TestCloneHoldsWhatTheDatabaseHolds(t *testing.T) {
	root := t.TempDir()
	db := openDirect(t, filepath.Join(root, "db"))
	defer db.Close()
	flushed, _ := seriesTablet(0, 3000, 1)
	require.NoError(t, db.Insert("T", "a", flushed))
	require.NoError(t, db.Flush())
	direct, _ := seriesTablet(10_000, 5000, 2) // straight to Parquet
	require.NoError(t, db.Insert("T", "a", direct))
	db.directBytes = 1 << 30
	mem, _ := seriesTablet(0, 50, 3) // over flushed keys, in the memtable
	require.NoError(t, db.Insert("T", "b", mem))
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE U; CREATE PROPERTY U.s STRING; CREATE INDEX ON U (s) NOTUNIQUE"))
	require.Positive(t, db.Stats().DirectWrites)

	dest := filepath.Join(root, "clone")
	require.NoError(t, db.Clone(dest))
	c, err := Open(dest, Options{})
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, rowsOf(t, db, "T"), rowsOf(t, c, "T"))
	_, ok := c.Catalog().Type("U")
	assert.True(t, ok)

	// Independent afterwards.
	require.NoError(t, c.Exec("CREATE DOCUMENT TYPE OnlyInClone"))
	more, _ := seriesTablet(20_000, 10, 4)
	require.NoError(t, db.Insert("T", "z", more))
	_, inOriginal := db.Catalog().Type("OnlyInClone")
	assert.False(t, inOriginal)
	assert.NotContains(t, rowsOf(t, c, "T"), "z")
}

// TestCloneDuringCommitsIsConsistent: commits run while clones are taken;
// each clone holds every commit acknowledged before it began, and every
// commit it holds is whole (its rows in both types).
func TestCloneDuringCommitsIsConsistent(t *testing.T) {
	root := t.TempDir()
	db, err := Open(filepath.Join(root, "db"), Options{Sync: wal.SyncOff, MemtableBudget: 64 << 10, AutoCreate: true})
	require.NoError(t, err)
	defer db.Close()
	db.directBytes = 4 << 10
	acked := make(chan int, 1000)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if n == 2000 { // enough: wait to be stopped
				<-stop
				done <- nil
				return
			}
			rows := 10
			if n%5 == 0 {
				rows = 400 // a direct write
			}
			tx, err := db.Begin()
			if err == nil {
				big, _ := seriesTablet(int64(n)*1000, rows, int64(n))
				err = tx.Insert("A", "d", big)
			}
			if err == nil {
				err = tx.Insert("B", "d", int64Tablet([]int64{int64(n)}, map[string][]int64{"k": {int64(n)}}))
			}
			if err == nil {
				err = tx.Commit()
			}
			if err != nil {
				done <- err
				return
			}
			select {
			case acked <- n:
			default:
			}
		}
	}()
	last := -1
	last = <-acked // the types exist, and a commit to hold
	for i := range 4 {
		// Commits acknowledged before this clone began.
	drain:
		for {
			select {
			case n := <-acked:
				last = n
			default:
				break drain
			}
		}
		dest := filepath.Join(root, fmt.Sprint("clone", i))
		require.NoError(t, db.Clone(dest))
		c, err := Open(dest, Options{})
		require.NoError(t, err)
		var a, b map[int64]map[string]any
		if _, ok := c.Catalog().Type("B"); ok { // the first commit creates both types
			a, b = rowsOf(t, c, "A")["d"], rowsOf(t, c, "B")["d"]
		}
		// Map lookups, not require.Contains: it walks a map by reflection.
		for n := 0; n <= last; n++ {
			if _, ok := b[int64(n)]; !ok {
				require.Failf(t, "an acknowledged commit is missing", "clone %d: commit %d", i, n)
			}
		}
		for tm := range b {
			if _, whole := a[tm*1000]; !whole {
				require.Failf(t, "a commit is there in part", "clone %d: commit %d", i, tm)
			}
		}
		require.NoError(t, c.Close())
	}
	close(stop)
	require.NoError(t, <-done)
}

func TestCloneRefusesWhatItCannotDo(t *testing.T) {
	root := t.TempDir()
	db := openDirect(t, filepath.Join(root, "db"))
	full := filepath.Join(root, "full")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), []byte("mine"), 0o644))
	require.ErrorIs(t, db.Clone(full), errs.ErrAlreadyExists)
	data, err := os.ReadFile(filepath.Join(full, "x"))
	require.NoError(t, err)
	assert.Equal(t, "mine", string(data), "a refused clone touched the directory")

	mem, err := Open("", Options{})
	require.NoError(t, err)
	require.ErrorIs(t, mem.Clone(filepath.Join(root, "m")), errs.ErrInvalidArgument)
	require.NoError(t, mem.Close())

	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Clone(filepath.Join(root, "after")), errs.ErrClosed)
	_, err = os.Stat(filepath.Join(root, "after"))
	assert.True(t, os.IsNotExist(err))
}
