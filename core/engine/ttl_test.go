package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
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
	db.compactionsDone()
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

// TestTTLMatchesModel: random inserts (some expired, some not), deletes,
// flushes, compactions and reopens of a type with a TTL, against a model
// that keeps the rows younger than the TTL. No row lies within half an
// hour of the cutoff, so the clock's advance during the test changes
// nothing.
func TestTTLMatchesModel(t *testing.T) {
	hour := int64(time.Hour / time.Millisecond)
	for seed := range 6 {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 5))
			opts := Options{Sync: wal.SyncOff, AutoCreate: true, MemtableBudget: 8 << 10}
			db, dir := openDisk(t, opts)
			ttl := []int64{2, 5, 24}[seed%3]
			require.NoError(t, db.Exec(fmt.Sprintf("CREATE DOCUMENT TYPE S; CREATE PROPERTY S.k INT64; ALTER TYPE S SET TTL %dh", ttl)))
			now := time.Now().UnixMilli()
			model := map[string]map[int64]int64{} // device → time → k
			check := func(what string) {
				want := map[string]map[int64]map[string]any{}
				for d, rows := range model {
					for tm, k := range rows {
						if tm < now-ttl*hour {
							continue
						}
						if want[d] == nil {
							want[d] = map[int64]map[string]any{}
						}
						want[d][tm] = map[string]any{"k": k}
					}
				}
				require.Equal(t, want, rowsOf(t, db, "S"), "seed %d: %s", seed, what)
			}
			for step := range 150 {
				var what string
				switch op := rng.IntN(12); {
				case op == 1:
					what = "flush"
					require.NoError(t, db.Flush(), what)
				case op == 2:
					what = "compact"
					require.NoError(t, db.Compact("S"), what)
				case op == 3:
					what = "reopen"
					require.NoError(t, db.Close())
					var err error
					db, err = Open(dir, opts)
					require.NoError(t, err)
				case op == 4:
					d := fmt.Sprint("d", rng.IntN(3))
					lo := now - int64(rng.IntN(30))*hour
					hi := lo + int64(1+rng.IntN(5))*hour
					what = fmt.Sprintf("delete %s [%d, %d)", d, lo, hi)
					require.NoError(t, db.Delete(DeleteRequest{Type: "S", Devices: []string{d}, Start: &lo, End: &hi}), what)
					for tm := range model[d] {
						if tm >= lo && tm < hi {
							delete(model[d], tm)
						}
					}
				default:
					d := fmt.Sprint("d", rng.IntN(3))
					n := 1 + rng.IntN(20)
					times := make([]int64, 0, n)
					for range n {
						// Whole hours back plus 30 minutes: never near a cutoff.
						times = append(times, now-int64(rng.IntN(30))*hour-hour/2)
					}
					what = fmt.Sprintf("insert %d rows into %s", n, d)
					require.NoError(t, db.Insert("S", d, msTablet(times...)), what)
					if model[d] == nil {
						model[d] = map[int64]int64{}
					}
					for _, tm := range times {
						model[d][tm] = tm
					}
				}
				check(fmt.Sprintf("step %d (%s)", step, what))
			}
		})
	}
}
