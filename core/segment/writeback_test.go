package segment

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// largeTablet is 2 DOUBLE columns of random values (which are written
// uncompressed) over rows rows: 16 bytes a row.
func largeTablet(rows int) (Layout, *tablet.Tablet) {
	rng := rand.New(rand.NewPCG(7, 8))
	l := Layout{Columns: []Column{{ID: 1, Name: "a", Type: schema.Double}, {ID: 2, Name: "b", Type: schema.Double}}}
	tb := &tablet.Tablet{Times: make([]int64, rows)}
	for i := range tb.Times {
		tb.Times[i] = int64(i)
	}
	for _, c := range l.Columns {
		v := make([]float64, rows)
		for i := range v {
			v[i] = rng.Float64()
		}
		tb.Columns = append(tb.Columns, tablet.Doubles(c.Name, v, nil))
	}
	return l, tb
}

// TestSyncedFileIsFsyncedWhileWritten: a synced file of 2.5 times
// writebackBytes is fsynced in the background as it is written (counted
// in FileInfo.Fsyncs with the last fsync and the directory's), and reads
// back whole.
func TestSyncedFileIsFsyncedWhileWritten(t *testing.T) {
	var background atomic.Int64
	defer func(sync func(*os.File) error) { backgroundSync = sync }(backgroundSync)
	backgroundSync = func(f *os.File) error {
		background.Add(1)
		return f.Sync()
	}
	rows := writebackBytes * 5 / 2 / 16
	l, tb := largeTablet(rows)
	path := filepath.Join(t.TempDir(), "big.parquet")
	w, err := Create(path, l, WriterOptions{Sync: true})
	require.NoError(t, err)
	require.NoError(t, w.Append("d", tb))
	info, err := w.Close()
	require.NoError(t, err)
	assert.Greater(t, info.Size, int64(2*writebackBytes))
	require.Positive(t, background.Load(), "no fsync while the file was written")
	assert.Equal(t, int(background.Load())+2, info.Fsyncs)

	f, err := Open(path, info.Size)
	require.NoError(t, err)
	defer f.Close()
	got := readAll(t, f.Read("d", l.Columns, math.MinInt64, math.MaxInt64, 0), l.Columns, 0)
	require.Len(t, got, rows)
	assert.Equal(t, tb.Columns[1].Value(rows-1), got[rows-1].vals[1])

	// Not synced: no fsync at all.
	w, err = Create(filepath.Join(t.TempDir(), "nosync.parquet"), l, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Append("d", tb))
	info, err = w.Close()
	require.NoError(t, err)
	assert.Zero(t, info.Fsyncs)
}

// TestBackgroundFsyncFailureFailsTheFile: an fsync of the background that
// fails fails Close (the final fsync may then succeed: Linux reports a
// write-back error once), and Abort leaves nothing behind.
func TestBackgroundFsyncFailureFailsTheFile(t *testing.T) {
	defer func(sync func(*os.File) error) { backgroundSync = sync }(backgroundSync)
	backgroundSync = func(*os.File) error { return errors.New("injected: fsync failed") }
	l, tb := largeTablet(writebackBytes * 3 / 2 / 16)
	dir := t.TempDir()
	path := filepath.Join(dir, "big.parquet")
	w, err := Create(path, l, WriterOptions{Sync: true})
	require.NoError(t, err)
	require.NoError(t, w.Append("d", tb))
	requireCloseLeavesNothing(t, w, dir, errs.ErrIO, "injected: fsync failed")
}
