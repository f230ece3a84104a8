package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// TestLogStatsDuringClose: LogStats may run while another goroutine
// closes the database (the race detector checks the log handle).
func TestLogStatsDuringClose(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for range 1000 {
			s := db.LogStats()
			assert.True(t, s == wal.Stats{} || s.Appends >= 1, "zero once closed, else counting the insert: %+v", s)
		}
	}()
	close(start)
	require.NoError(t, db.Close())
	wg.Wait()
}

// TestOpenMakesNewDirectoriesDurable: opening a new database fsyncs every
// directory that gained an entry (wal/ and types/ in the database
// directory, the database directory in its parent, and so on up to the
// first directory that existed, then the database directory again for the
// new manifest), except in sync mode off.
func TestOpenMakesNewDirectoriesDurable(t *testing.T) {
	root := t.TempDir()
	var synced []string
	saved := syncDir
	syncDir = func(dir string) error { synced = append(synced, dir); return nil }
	t.Cleanup(func() { syncDir = saved })

	cases := []struct {
		name string
		path string
		mode wal.SyncMode
		want []string
	}{
		{"new nested", filepath.Join(root, "a", "b", "db"), wal.SyncFull,
			[]string{filepath.Join(root, "a", "b", "db"), filepath.Join(root, "a", "b"), filepath.Join(root, "a"), root, filepath.Join(root, "a", "b", "db")}},
		{"reopen", filepath.Join(root, "a", "b", "db"), wal.SyncFull, []string{filepath.Join(root, "a", "b", "db")}},
		{"new, normal", filepath.Join(root, "n"), wal.SyncNormal, []string{filepath.Join(root, "n"), root, filepath.Join(root, "n")}},
		{"new, off", filepath.Join(root, "o"), wal.SyncOff, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synced = nil
			db, err := Open(c.path, Options{Sync: c.mode})
			require.NoError(t, err)
			require.NoError(t, db.Close())
			assert.Equal(t, c.want, synced)
		})
	}

	syncDir = func(dir string) error { return errors.New("disk on fire") }
	_, err := Open(filepath.Join(root, "f"), Options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, errs.ErrIO)
	assert.Contains(t, err.Error(), "disk on fire")
}

// TestUnreadableRecordNamesFileAndOffset: a record that passes the log's
// checksum but is not a commit the engine can apply is corruption, and
// the error says in which file and at which offset it is.
func TestUnreadableRecordNamesFileAndOffset(t *testing.T) {
	cases := []struct {
		name    string
		kind    byte
		payload []byte
		mention string
	}{
		{"unknown kind", 7, []byte{recordVersion}, "unknown kind 7"},
		{"bad version", recordCommit, []byte{99}, "unknown version"},
		{"does not apply", recordCommit, encodeRecord([]schema.Op{{Kind: schema.DropType, Type: "Nope"}}, nil), "does not apply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, dir := openDisk(t, Options{AutoCreate: true})
			require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
			require.NoError(t, db.Close())
			log, err := wal.Open(filepath.Join(dir, walDir), wal.Options{})
			require.NoError(t, err)
			lsn, err := log.Append(c.kind, c.payload)
			require.NoError(t, err)
			path, off := log.Locate(lsn)
			require.NoError(t, log.Sync(lsn))
			require.NoError(t, log.Close())

			_, err = Open(dir, Options{})
			require.Error(t, err)
			assert.ErrorIs(t, err, errs.ErrCorrupt)
			assert.Contains(t, err.Error(), c.mention)
			assert.Contains(t, err.Error(), fmt.Sprintf("%s at offset %d", path, off))
			assert.Equal(t, "000001.wal", filepath.Base(path))
		})
	}
}

// TestCatalogVersionIsOnePerCommitAndSurvivesReplay: a commit of several
// statements and auto-created properties is one catalog version, live and
// after the log is replayed.
func TestCatalogVersionIsOnePerCommitAndSurvivesReplay(t *testing.T) {
	db, dir := openDisk(t, Options{AutoCreate: true})
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Exec("CREATE DOCUMENT TYPE A"))
	require.NoError(t, tx.Exec("CREATE PROPERTY A.k INT64"))
	require.NoError(t, tx.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}, "j": {2}})))
	require.NoError(t, tx.Commit())
	assert.Equal(t, uint64(1), db.Catalog().Version())
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE B"))
	require.NoError(t, db.Insert("B", "d", int64Tablet([]int64{1}, map[string][]int64{"x": {1}})))
	live := db.Catalog()
	assert.Equal(t, uint64(3), live.Version())
	require.NoError(t, db.Close())

	db2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer db2.Close()
	assert.Equal(t, live.Version(), db2.Catalog().Version())
	lt, lp, li := live.LastIDs()
	rt, rp, ri := db2.Catalog().LastIDs()
	assert.Equal(t, []uint32{uint32(lt), uint32(lp), uint32(li)}, []uint32{uint32(rt), uint32(rp), uint32(ri)})
}

// TestEntryBufferIsSizedByItsContent: an inserted tablet is encoded into a
// buffer sized by what it holds; a rows × columns × 8 guess reserved 32
// times the encoding for Boolean columns (8 GB for a million rows of
// 1,000 of them).
func TestEntryBufferIsSizedByItsContent(t *testing.T) {
	const rows = 10000
	tb := &tablet.Tablet{Times: make([]int64, rows)}
	for i := range 64 {
		tb.Columns = append(tb.Columns, tablet.Bools(fmt.Sprint("b", i), make([]bool, rows), nil))
	}
	tb.Columns = append(tb.Columns, tablet.Int32s("n", make([]int32, rows), nil), tablet.Strings("s", make([]string, rows), nil))
	enc := encodeEntry("T", "dev", tb)
	assert.LessOrEqual(t, cap(enc), len(enc)+1024, "len %d", len(enc))
	decoded, _, err := tablet.Decode(enc, entryHeadLen("T", "dev"))
	require.NoError(t, err)
	assert.Equal(t, rows, decoded.Rows())
}

// TestCloseWhileCommitting: Close during concurrent commits waits for the
// commits in flight; each commit either succeeds (and survives reopening)
// or fails with ErrClosed, and every Scan or Begin after Close is refused.
func TestCloseWhileCommitting(t *testing.T) {
	for _, mode := range []wal.SyncMode{wal.SyncFull, wal.SyncNormal} {
		t.Run(mode.String(), func(t *testing.T) {
			db, dir := openDisk(t, Options{Sync: mode, AutoCreate: true})
			const writers = 4
			acked := make([][]int64, writers)
			var wg sync.WaitGroup
			started := make(chan struct{}, writers)
			for w := range writers {
				wg.Go(func() {
					for i := int64(0); ; i++ {
						err := db.Insert("A", fmt.Sprint("d", w), int64Tablet([]int64{i}, map[string][]int64{"k": {i}}))
						if i == 0 {
							started <- struct{}{}
						}
						if err != nil {
							assert.ErrorIs(t, err, errs.ErrClosed)
							return
						}
						acked[w] = append(acked[w], i)
					}
				})
			}
			for range writers {
				<-started
			}
			require.NoError(t, db.Close())
			wg.Wait()
			_, err := db.Begin()
			assert.ErrorIs(t, err, errs.ErrClosed)
			_, err = db.Scan(context.Background(), ScanRequest{Type: "A"})
			assert.ErrorIs(t, err, errs.ErrClosed)

			db2, err := Open(dir, Options{})
			require.NoError(t, err)
			defer db2.Close()
			got := rowsOf(t, db2, "A")
			for w := range writers {
				dev := got[fmt.Sprint("d", w)]
				assert.Len(t, dev, len(acked[w]), "writer %d: acknowledged commits, and nothing else", w)
				for _, i := range acked[w] {
					assert.Equal(t, i, dev[i]["k"], "writer %d row %d", w, i)
				}
			}
		})
	}
}

// TestRefusedOpenLeavesNothing: options Open refuses are refused before
// the directory, its lock file or the log are created.
func TestRefusedOpenLeavesNothing(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"sync mode", Options{Sync: 9}},
		{"negative segment size", Options{SegmentBytes: -1}},
		{"huge segment size", Options{SegmentBytes: 1 << 62}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			_, err := Open(path, c.opts)
			require.Error(t, err)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), path)
			_, err = os.Stat(path)
			assert.ErrorIs(t, err, fs.ErrNotExist, "the directory was not created")
		})
	}
}
