package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

func i64(v int64) *int64 { return &v }

// times returns the times of device d of type T, sorted.
func timesOf(t *testing.T, db *DB, typ, d string) []int64 {
	t.Helper()
	var out []int64
	rows, err := db.Scan(context.Background(), ScanRequest{Type: typ, Devices: []string{d}})
	require.NoError(t, err)
	for b, ok := rows.Next(); ok; b, ok = rows.Next() {
		out = append(out, b.Rows.Times...)
	}
	require.NoError(t, rows.Err())
	return out
}

func seriesRows(from, n int64) *tablet.Tablet {
	times := make([]int64, n)
	ks := make([]int64, n)
	for i := range times {
		times[i], ks[i] = from+int64(i), from+int64(i)
	}
	return int64Tablet(times, map[string][]int64{"k": ks})
}

// TestDeleteInTransactionOrder: a delete removes what was committed before
// it and what its transaction added before it, not what comes after.
func TestDeleteInTransactionOrder(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("T", "d", seriesRows(0, 10)))
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Insert("T", "d", seriesRows(10, 5)))
	require.NoError(t, tx.Delete(DeleteRequest{Type: "T", Start: i64(3), End: i64(12)}))
	require.NoError(t, tx.Insert("T", "d", seriesRows(5, 2)))
	assert.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, timesOf(t, db, "T", "d"), "nothing before the commit")
	require.NoError(t, tx.Commit())
	assert.Equal(t, []int64{0, 1, 2, 5, 6, 12, 13, 14}, timesOf(t, db, "T", "d"))
}

// TestDeleteAcrossStorage: rows in files, in a memtable being flushed and
// in the live one are deleted at once; the flush makes it physical (the
// file is rewritten without them); a reopen sees the same.
func TestDeleteAcrossStorage(t *testing.T) {
	db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
	for _, d := range []string{"a", "b"} {
		require.NoError(t, db.Insert("T", d, seriesRows(0, 100)))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("T", "a", seriesRows(100, 50)))
	before := db.Stats().Types[0].Rows

	// A scan started before the delete does not see it.
	early, err := db.Scan(context.Background(), ScanRequest{Type: "T", Devices: []string{"a"}})
	require.NoError(t, err)
	require.NoError(t, db.Delete(DeleteRequest{Type: "T", Devices: []string{"a"}, Start: i64(50), End: i64(120)}))
	require.NoError(t, db.Delete(DeleteRequest{Type: "T", End: i64(10)})) // every device
	n := 0
	for b, ok := early.Next(); ok; b, ok = early.Next() {
		n += b.Rows.Rows()
	}
	assert.Equal(t, 150, n, "a scan keeps what it started with")

	wantA := append(seq64(10, 40), seq64(120, 30)...)
	wantB := seq64(10, 90)
	check := func(when string) {
		assert.Equal(t, wantA, timesOf(t, db, "T", "a"), when)
		assert.Equal(t, wantB, timesOf(t, db, "T", "b"), when)
		devs, err := db.Devices("T", "")
		require.NoError(t, err)
		require.Len(t, devs, 2, when)
		assert.Equal(t, DeviceInfo{Name: "a", Rows: 70, First: 10, Last: 149}, devs[0], when)
		assert.Equal(t, DeviceInfo{Name: "b", Rows: 90, First: 10, Last: 99}, devs[1], when)
	}
	check("before the flush")
	require.NoError(t, db.Flush())
	check("after the flush")
	st := db.Stats().Types[0]
	assert.Equal(t, int64(160), st.Rows, "the files hold the live rows only (were %d)", before)
	require.NoError(t, db.Close())
	db, err = Open(dir, Options{})
	require.NoError(t, err)
	defer db.Close()
	check("after a reopen")
}

// TestDeleteThenReplay: a delete still in the log is replayed on open,
// before and after its flush.
func TestDeleteThenReplay(t *testing.T) {
	db, dir := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
	require.NoError(t, db.Insert("T", "d", seriesRows(0, 20)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("T", "d", seriesRows(20, 20)))
	require.NoError(t, db.Delete(DeleteRequest{Type: "T", Devices: []string{"d"}, Start: i64(15), End: i64(25)}))
	require.NoError(t, db.Insert("T", "d", seriesRows(18, 2))) // after the delete: stays
	require.NoError(t, db.Close())                             // a small log: no checkpoint
	db, err := Open(dir, Options{})
	require.NoError(t, err)
	want := append(append(seq64(0, 15), 18, 19), seq64(25, 15)...)
	assert.Equal(t, want, timesOf(t, db, "T", "d"))
	require.NoError(t, db.Flush())
	assert.Equal(t, want, timesOf(t, db, "T", "d"))
	require.NoError(t, db.Close())
	db, err = Open(dir, Options{})
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, want, timesOf(t, db, "T", "d"))
}

// TestDeleteBlocksDirectWritesUntilFlushed: rows inserted after a delete
// of their type go through the memtable until the delete is flushed, then
// straight to Parquet again.
func TestDeleteBlocksDirectWritesUntilFlushed(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncFull, AutoCreate: true})
	db.directBytes = 64
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.k INT64"))
	require.NoError(t, db.Insert("T", "d", seriesRows(0, 100)))
	direct := db.Stats().DirectWrites
	require.Positive(t, direct)
	require.NoError(t, db.Delete(DeleteRequest{Type: "T", Start: i64(0), End: i64(50)}))
	require.NoError(t, db.Insert("T", "e", seriesRows(0, 100)))
	assert.Equal(t, direct, db.Stats().DirectWrites, "a direct write while a delete is pending")
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("T", "f", seriesRows(0, 100)))
	assert.Equal(t, direct+1, db.Stats().DirectWrites)
	assert.Equal(t, seq64(50, 50), timesOf(t, db, "T", "d"))
	assert.Equal(t, seq64(0, 100), timesOf(t, db, "T", "e"))
	assert.Equal(t, seq64(0, 100), timesOf(t, db, "T", "f"))
}

func TestDeleteRefusals(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.ErrorIs(t, db.Delete(DeleteRequest{Type: "Nope"}), errs.ErrNotFound)
	require.ErrorIs(t, db.Delete(DeleteRequest{Type: "A\x00"}), errs.ErrInvalidArgument)
	require.NoError(t, db.Insert("T", "d", seriesRows(0, 3)))
	require.ErrorIs(t, db.Delete(DeleteRequest{Type: "T", Devices: []string{"bad\x01"}}), errs.ErrInvalidArgument)
	require.NoError(t, db.Delete(DeleteRequest{Type: "T", Start: i64(5), End: i64(5)}), "an empty range deletes nothing")
	assert.Equal(t, []int64{0, 1, 2}, timesOf(t, db, "T", "d"))
	// The type dropped between the delete and the commit: a conflict.
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Delete(DeleteRequest{Type: "T"}))
	require.NoError(t, db.Exec("DROP TYPE T"))
	require.ErrorIs(t, tx.Commit(), errs.ErrConflict)
}

func seq64(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// TestScanSeesADeleteWholeOrNotAtAll: while deletes of time ranges run,
// each covering rows in a flushed file and in the memtable, every scan
// sees each range's rows all or none.
func TestScanSeesADeleteWholeOrNotAtAll(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncOff, AutoCreate: true})
	const ranges, half = 40, 50
	for k := range ranges { // the first half of each range, flushed
		require.NoError(t, db.Insert("T", "d", seriesRows(int64(k)*100, half)))
	}
	require.NoError(t, db.Flush())
	for k := range ranges { // the second half, in the memtable
		require.NoError(t, db.Insert("T", "d", seriesRows(int64(k)*100+half, half)))
	}
	done := make(chan error)
	go func() {
		for k := range ranges {
			lo, hi := int64(k)*100, int64(k)*100+100
			if err := db.Delete(DeleteRequest{Type: "T", Start: &lo, End: &hi}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for finished := false; !finished; {
		select {
		case err := <-done:
			require.NoError(t, err)
			finished = true
		default:
		}
		counts := map[int64]int{}
		for _, tm := range timesOf(t, db, "T", "d") {
			counts[tm/100]++
		}
		for k, n := range counts {
			require.Equal(t, 2*half, n, "range %d seen in part", k)
		}
	}
	assert.Empty(t, timesOf(t, db, "T", "d"))
}
