package engine

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// msTablet returns rows at the given millisecond times (UTC).
func msTablet(times ...int64) *tablet.Tablet {
	t := int64Tablet(times, map[string][]int64{"k": times})
	t.TimeUnit, t.TimeZone = "ms", "UTC"
	return t
}

// TestTTL: rows older than the TTL are skipped by scans and devices() at
// once, and left out by compaction; a TTL needs timestamp times.
func TestTTL(t *testing.T) {
	db, dir := openDisk(t, Options{Sync: wal.SyncOff, AutoCreate: true})
	now := time.Now().UnixMilli()
	day := int64(24 * time.Hour / time.Millisecond)
	old, fresh := now-10*day, now-day
	require.NoError(t, db.Insert("S", "a", msTablet(old, old+1, fresh)))
	require.NoError(t, db.Insert("S", "b", msTablet(old)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("S", "a", msTablet(old+2, fresh+1)))
	require.Len(t, timesOf(t, db, "S", "a"), 5)

	require.NoError(t, db.Exec("ALTER TYPE S SET TTL 7d"))
	ty, _ := db.Catalog().Type("S")
	assert.Equal(t, int64(7*24*time.Hour), ty.TTL)
	assert.Equal(t, []int64{fresh, fresh + 1}, timesOf(t, db, "S", "a"))
	assert.Empty(t, timesOf(t, db, "S", "b"))
	devs, err := db.Devices("S", "")
	require.NoError(t, err)
	assert.Equal(t, []DeviceInfo{{Name: "a", Rows: 2, First: fresh, Last: fresh + 1}}, devs)

	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact("S"))
	assert.Equal(t, int64(2), db.Stats().Types[0].Rows, "compaction leaves the expired rows out")
	require.NoError(t, db.Close())

	// The TTL survives a reopen (the catalog snapshot) and can be lifted:
	// rows compaction removed stay removed, the others come back.
	db, err = Open(dir, Options{})
	require.NoError(t, err)
	defer db.Close()
	ty, _ = db.Catalog().Type("S")
	assert.Equal(t, int64(7*24*time.Hour), ty.TTL)
	require.NoError(t, db.Exec("ALTER TYPE S SET TTL NONE"))
	assert.Equal(t, []int64{fresh, fresh + 1}, timesOf(t, db, "S", "a"))

	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE I; CREATE PROPERTY I.k INT64; ALTER TYPE I SET TTL 1d; ALTER TYPE I SET TTL NONE"))
	require.NoError(t, db.Exec("ALTER TYPE I SET TTL 1d"))
	err = db.Insert("I", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}}))
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "TTL")
	require.NoError(t, db.Exec("ALTER TYPE I SET TTL NONE"))
	require.NoError(t, db.Insert("I", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
	require.ErrorIs(t, db.Exec("ALTER TYPE I SET TTL 1d"), errs.ErrInvalidArgument, "plain integer times")
}

// TestTTLExpiredFilesGoAfterAFlush: after a flush, the files of a TTL type
// that have mostly expired are rewritten without their expired rows.
func TestTTLExpiredFilesGoAfterAFlush(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncOff, AutoCreate: true})
	now := time.Now().UnixMilli()
	day := int64(24 * time.Hour / time.Millisecond)
	require.NoError(t, db.Insert("S", "a", msTablet(now-30*day, now-29*day)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Exec("ALTER TYPE S SET TTL 7d"))
	require.NoError(t, db.Insert("S", "b", msTablet(now)))
	require.NoError(t, db.Flush()) // its background compaction drops the expired file
	st := db.Stats().Types[0]
	assert.Equal(t, 1, st.Files)
	assert.Equal(t, int64(1), st.Rows)
	assert.Equal(t, []int64{now}, timesOf(t, db, "S", "b"))
}

func TestTTLCutoff(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("S", "a", msTablet(1)))
	require.NoError(t, db.Exec("ALTER TYPE S SET TTL 1s"))
	ty, _ := db.Catalog().Type("S")
	now := time.UnixMilli(10_500)
	assert.Equal(t, int64(9_500), ttlCutoff(ty, now))
	require.NoError(t, db.Exec("ALTER TYPE S SET TTL NONE"))
	ty, _ = db.Catalog().Type("S")
	assert.Equal(t, int64(math.MinInt64), ttlCutoff(ty, now))
}
