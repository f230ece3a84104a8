package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// deferredBatch is a long-format batch of devs devices × per rows, k =
// time*10 + base, large enough for openDirect's direct writes.
func deferredBatch(devs, per int, base int64) *tablet.Tablet {
	var names []string
	var times []int64
	for d := range devs {
		for i := range per {
			names = append(names, fmt.Sprintf("d%03d", d))
			times = append(times, int64(i))
		}
	}
	t := longTablet(names, times)
	for i := range t.Times {
		t.Columns[1].Values[i*8] += byte(base) // k = time*10 + base (small values)
	}
	return t
}

// kAt returns k of device dev at time tm in T, and whether the row exists.
func kAt(t *testing.T, db *DB, dev string, tm int64) (any, bool) {
	t.Helper()
	row, ok := rowsOf(t, db, "T")[dev][tm]
	if !ok {
		return nil, false
	}
	return row["k"], true
}

// TestDeferredLongInsertKeepsTransactionOrder: a long-format insert big
// enough to go straight to Parquet is written whole at commit, yet the
// transaction's later writes into the type (an insert, a delete, DDL)
// still come after it, and the earlier ones before it.
func TestDeferredLongInsertKeepsTransactionOrder(t *testing.T) {
	db := openDirect(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()

	// Alone in its transaction: one direct write, nothing in the log's way.
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.InsertLongBorrowed("T", "dev", deferredBatch(50, 10, 1)))
	require.Len(t, tx.entries, 0, "the batch was split by device")
	require.NoError(t, tx.Commit())
	assert.Equal(t, uint64(1), db.Stats().DirectWrites)
	k, ok := kAt(t, db, "d007", 3)
	require.True(t, ok)
	assert.Equal(t, int64(31), k)
	assert.Zero(t, db.Stats().MemtableBytes)

	// A later insert of the same key wins over the batch.
	tx, err = db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.InsertLongBorrowed("T", "dev", deferredBatch(50, 10, 2)))
	require.NoError(t, tx.Insert("T", "d007", int64Tablet([]int64{3}, map[string][]int64{"k": {-1}})))
	require.NoError(t, tx.Commit())
	k, _ = kAt(t, db, "d007", 3)
	assert.Equal(t, int64(-1), k)
	k, _ = kAt(t, db, "d008", 3)
	assert.Equal(t, int64(32), k)

	// An earlier one loses to it (the batch is then not deferred).
	tx, err = db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Insert("T", "d007", int64Tablet([]int64{4}, map[string][]int64{"k": {-1}})))
	require.NoError(t, tx.InsertLongBorrowed("T", "dev", deferredBatch(50, 10, 3)))
	require.NoError(t, tx.Commit())
	k, _ = kAt(t, db, "d007", 4)
	assert.Equal(t, int64(43), k)

	// A later delete removes the batch's rows.
	tx, err = db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.InsertLongBorrowed("T", "dev", deferredBatch(50, 20, 4)))
	require.NoError(t, tx.Delete(DeleteRequest{Type: "T", Devices: []string{"d009"}}))
	require.NoError(t, tx.Commit())
	_, ok = kAt(t, db, "d009", 15)
	assert.False(t, ok, "deleted in the same transaction after the insert")
	k, _ = kAt(t, db, "d010", 15)
	assert.Equal(t, int64(154), k)

	// A UNIQUE index created after it in the transaction sees its rows:
	// k repeats across devices, so the commit fails and writes nothing.
	files, before := parquetFiles(t, db, "T"), rowsOf(t, db, "T")
	tx, err = db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.InsertLongBorrowed("T", "dev", deferredBatch(50, 10, 5)))
	require.NoError(t, tx.Exec("CREATE INDEX tk ON T (k) UNIQUE"))
	err = tx.Commit()
	require.ErrorIs(t, err, errs.ErrConflict)
	assert.Equal(t, before, rowsOf(t, db, "T"), "the failed commit wrote rows")
	assert.Equal(t, files, parquetFiles(t, db, "T"), "the failed commit left files")
}

// TestDeferredLongInsertFallsBack: when a deferred batch cannot go
// straight to Parquet (rows out of time order, rows of its devices in the
// memtable, a UNIQUE index created by another commit meanwhile), the
// commit takes the log's way and the result is the same.
func TestDeferredLongInsertFallsBack(t *testing.T) {
	db := openDirect(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()

	// Out of time order within a device.
	b := deferredBatch(50, 10, 1)
	b.Times[0], b.Times[1] = b.Times[1], b.Times[0]
	require.NoError(t, db.InsertLong("T", "dev", b))
	k, _ := kAt(t, db, "d000", 1)
	assert.Equal(t, int64(1), k, "the row written at time 1 is the one with k = 0*10 + 1")

	// Rows of its devices in the memtable, within its time span.
	require.NoError(t, db.Insert("T", "d020", int64Tablet([]int64{5}, map[string][]int64{"k": {-5}})))
	direct := db.Stats().DirectWrites
	require.NoError(t, db.InsertLong("T", "dev", deferredBatch(50, 10, 2)))
	assert.Equal(t, direct, db.Stats().DirectWrites, "a direct write would hide newer rows behind older")
	k, _ = kAt(t, db, "d020", 5)
	assert.Equal(t, int64(52), k)

	// A UNIQUE index committed between the insert and the commit.
	require.NoError(t, db.Exec("CREATE TYPE U; CREATE PROPERTY U.k INT64"))
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.InsertLongBorrowed("U", "dev", deferredBatch(50, 10, 3)))
	require.Len(t, tx.entries, 0)
	require.NoError(t, db.Exec("CREATE INDEX uk ON U (k) UNIQUE"))
	require.ErrorIs(t, tx.Commit(), errs.ErrConflict)
	assert.Empty(t, rowsOf(t, db, "U"))
	if ty, ok := db.Catalog().Type("U"); ok {
		entries, _ := os.ReadDir(db.tableDir(ty.ID)) // none, or no such directory
		assert.Empty(t, slices.DeleteFunc(entries, func(e os.DirEntry) bool { return !strings.HasSuffix(e.Name(), ".parquet") }))
	}
}

// TestLongBatchGoesDirectFromAQuarterOfTheThreshold: a long-format batch
// that is its type's only write in the transaction goes straight to
// Parquet from a quarter of the direct-write threshold; a tablet of one
// device of the same size, or the batch beside another insert into its
// type, needs the whole threshold.
func TestLongBatchGoesDirectFromAQuarterOfTheThreshold(t *testing.T) {
	db := openDirect(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()
	batch := deferredBatch(50, 40, 1)
	rest := &tablet.Tablet{Times: batch.Times, Columns: batch.Columns[1:]} // as the log encodes it: no device column
	n := tablet.AppendSize(rest)

	db.directBytes = 4*n + 4 // a quarter is more than the batch
	require.NoError(t, db.InsertLong("T", "dev", batch))
	assert.Zero(t, db.Stats().DirectWrites, "below a quarter of the threshold")

	db.directBytes = 2 * n // a quarter is less than the batch, the whole more
	later := deferredBatch(50, 40, 2)
	for i := range later.Times {
		later.Times[i] += 1000
	}
	require.NoError(t, db.InsertLong("T", "dev", later))
	assert.Equal(t, uint64(1), db.Stats().DirectWrites, "a quarter of the threshold")

	one := &tablet.Tablet{Times: make([]int64, len(rest.Times)), Columns: rest.Columns}
	for i := range one.Times {
		one.Times[i] = int64(i)
	}
	require.NoError(t, db.Insert("T", "single", one))
	assert.Equal(t, uint64(1), db.Stats().DirectWrites, "a tablet of one device needs the whole threshold")

	beside := deferredBatch(50, 40, 3)
	for i := range beside.Times {
		beside.Times[i] += 2000
	}
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.InsertLong("T", "dev", beside))
	require.NoError(t, tx.Insert("T", "other", int64Tablet([]int64{1}, map[string][]int64{"k": {5}})))
	require.NoError(t, tx.Commit())
	assert.Equal(t, uint64(1), db.Stats().DirectWrites, "not the type's only write: the whole threshold")

	rows := rowsOf(t, db, "T")
	for _, b := range []*tablet.Tablet{batch, later, beside} {
		for i, tm := range b.Times {
			row, ok := rows[string(b.Columns[0].Bytes(i))][tm]
			require.True(t, ok)
			require.Equal(t, b.Columns[1].Int64(i), row["k"])
		}
	}
}
