package engine

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

func kRows(times []int64, ks []int64, valid []bool) *tablet.Tablet {
	return &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Int64s("k", ks, valid)}}
}

// TestUniqueIndex: a duplicate key is a conflict naming the index and
// the key, in one transaction, across transactions, against flushed rows
// and against rows written with part of a multi-property key; and the
// failed commit leaves nothing. Rewriting a row with its own key, moving
// a key from one row to another, reusing a deleted row's key and any
// number of null keys are not conflicts.
func TestUniqueIndex(t *testing.T) {
	db, dir := openDisk(t, Options{})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE U; CREATE PROPERTY U.k INT64; CREATE PROPERTY U.a STRING; CREATE PROPERTY U.b INT64; "+
		"CREATE INDEX uk ON U (k) UNIQUE; CREATE INDEX uab ON U (a, b) UNIQUE"))
	conflict := func(err error, key string) {
		t.Helper()
		require.ErrorIs(t, err, errs.ErrConflict)
		require.Contains(t, err.Error(), key)
	}
	require.NoError(t, db.Insert("U", "d1", kRows([]int64{1, 2}, []int64{10, 20}, nil)))
	before := rowsOf(t, db, "U")

	// In one transaction.
	conflict(db.Insert("U", "d2", kRows([]int64{1, 2}, []int64{30, 30}, nil)), `UNIQUE index "uk": key (k = 30)`)
	// Across transactions, from the memtable, then from a file.
	conflict(db.Insert("U", "d2", kRows([]int64{5}, []int64{10}, nil)), `key (k = 10) held by device "d2" at time 5 and by device "d1" at time 1`)
	require.NoError(t, db.Flush())
	conflict(db.Insert("U", "d3", kRows([]int64{5}, []int64{20}, nil)), `key (k = 20)`)
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Insert("U", "d4", kRows([]int64{1}, []int64{99}, nil)))
	require.NoError(t, tx.Insert("U", "d4", kRows([]int64{2}, []int64{10}, nil)))
	conflict(tx.Commit(), "k = 10")
	require.Equal(t, before, rowsOf(t, db, "U"), "failed commits leave nothing")
	got, _ := whereRows(t, db, "U", cond("k", "=", int64(99)))
	require.Empty(t, got)

	// Not conflicts.
	require.NoError(t, db.Insert("U", "d1", kRows([]int64{1}, []int64{10}, nil)), "the row's own key")
	tx, err = db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Insert("U", "d1", kRows([]int64{1, 2}, []int64{20, 10}, nil)), "two rows swap keys")
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Insert("U", "d5", kRows([]int64{1, 2, 3}, []int64{0, 0, 0}, []bool{false, false, false})), "nulls")
	lo, hi := int64(2), int64(3)
	tx, err = db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Delete(DeleteRequest{Type: "U", Devices: []string{"d1"}, Start: &lo, End: &hi}))
	require.NoError(t, tx.Insert("U", "d6", kRows([]int64{1}, []int64{10}, nil)), "the key of a row deleted in the transaction")
	require.NoError(t, tx.Commit())
	got, plan := whereRows(t, db, "U", cond("k", "=", int64(10)))
	require.Equal(t, []string{"d6@1"}, got)
	require.Contains(t, plan, "index uk")

	// A multi-property key completed from the stored row: b written
	// alone takes the row's a.
	ab := func(dev string, tm int64, a *string, b *int64) error {
		tb := &tablet.Tablet{Times: []int64{tm}}
		if a != nil {
			tb.Columns = append(tb.Columns, tablet.Strings("a", []string{*a}, nil))
		}
		if b != nil {
			tb.Columns = append(tb.Columns, tablet.Int64s("b", []int64{*b}, nil))
		}
		return db.Insert("U", dev, tb)
	}
	x, y := "x", "y"
	one, two := int64(1), int64(2)
	require.NoError(t, ab("e1", 1, &x, &one))
	require.NoError(t, ab("e2", 1, &x, nil), "(x, null) is not indexed")
	conflict(ab("e2", 1, nil, &one), `UNIQUE index "uab": key (a = "x", b = 1)`)
	require.NoError(t, ab("e2", 1, nil, &two))
	require.NoError(t, ab("e3", 1, &y, &two))
	require.NoError(t, db.Flush())
	conflict(ab("e3", 1, &x, nil), `key (a = "x", b = 2)`)

	// CREATE UNIQUE INDEX over rows that break it fails, and leaves the
	// catalog as it was; so does one over rows the same commit adds.
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE V; CREATE PROPERTY V.k INT64"))
	require.NoError(t, db.Insert("V", "v1", kRows([]int64{1, 2}, []int64{7, 8}, nil)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("V", "v2", kRows([]int64{1}, []int64{7}, nil)))
	conflict(db.Exec("CREATE INDEX vk ON V (k) UNIQUE"), `UNIQUE index "vk": key (k = 7)`)
	ty, _ := db.Catalog().Type("V")
	require.Empty(t, ty.Indexes())
	require.NoError(t, db.Exec("CREATE INDEX vk ON V (k) NOTUNIQUE"), "a NOTUNIQUE index takes them")
	require.NoError(t, db.Exec("DROP INDEX vk"))
	lo = 0
	require.NoError(t, db.Delete(DeleteRequest{Type: "V", Devices: []string{"v2"}}))
	require.NoError(t, db.Exec("CREATE INDEX vk ON V (k) UNIQUE"))
	conflict(db.Insert("V", "v3", kRows([]int64{1}, []int64{8}, nil)), "k = 8")

	// Reopened: the same.
	require.NoError(t, db.Close())
	db, err = Open(dir, Options{})
	require.NoError(t, err)
	defer func() { _ = db.Close() }()
	conflict(db.Insert("V", "v3", kRows([]int64{1}, []int64{8}, nil)), "k = 8")
	conflict(db.Insert("U", "z", kRows([]int64{1}, []int64{20}, nil)), "k = 20")
}

// TestUniqueConcurrent: writers racing for the same keys: each key is
// taken exactly once.
func TestUniqueConcurrent(t *testing.T) {
	db, _ := openDisk(t, Options{MemtableBudget: 1 << 16})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE U; CREATE PROPERTY U.k INT64; CREATE INDEX uk ON U (k) UNIQUE"))
	const writers, keys = 4, 40
	var wg sync.WaitGroup
	won := make([][]int64, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range int64(keys) {
				err := db.Insert("U", fmt.Sprintf("w%d", w), kRows([]int64{k}, []int64{k}, nil))
				if err == nil {
					won[w] = append(won[w], k)
				} else if !isConflict(err) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, ks := range won {
		total += len(ks)
	}
	require.Equal(t, keys, total, "each key exactly once")
	for k := range int64(keys) {
		got, _ := whereRows(t, db, "U", cond("k", "=", k))
		require.Len(t, got, 1, "key %d", k)
	}
}

func isConflict(err error) bool { return errors.Is(err, errs.ErrConflict) }
