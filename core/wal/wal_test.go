package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

type rec struct {
	lsn     LSN
	kind    byte
	payload []byte
}

func openLog(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// payloadFor returns a deterministic payload of varying size for record i.
func payloadFor(i int) []byte {
	p := make([]byte, (i*37)%200)
	for j := range p {
		p[j] = byte(i*7 + j)
	}
	return p
}

func appendN(t testing.TB, l *Log, from, n int) []rec {
	t.Helper()
	var out []rec
	for i := from; i < from+n; i++ {
		p := payloadFor(i)
		lsn, err := l.Append(byte(i), p)
		require.NoError(t, err)
		out = append(out, rec{lsn, byte(i), p})
	}
	return out
}

func replayAll(t testing.TB, l *Log) []rec {
	t.Helper()
	var out []rec
	require.NoError(t, l.Replay(func(lsn LSN, kind byte, payload []byte) error {
		out = append(out, rec{lsn, kind, payload})
		return nil
	}))
	return out
}

func assertRecords(t testing.TB, want, got []rec) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].lsn, got[i].lsn, "record %d lsn", i)
		assert.Equal(t, want[i].kind, got[i].kind, "record %d kind", i)
		assert.True(t, bytes.Equal(want[i].payload, got[i].payload), "record %d payload", i)
	}
}

func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	require.NoError(t, err)
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	return names
}

func TestRoundTripAcrossSegments(t *testing.T) {
	for _, mode := range []SyncMode{SyncFull, SyncNormal, SyncOff} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, Options{Sync: mode, SegmentBytes: 1024})
			want := appendN(t, l, 0, 100)
			require.NoError(t, l.Sync(want[len(want)-1].lsn))
			assertRecords(t, want, replayAll(t, l))
			require.NoError(t, l.Close())

			files := segmentFiles(t, dir)
			assert.Greater(t, len(files), 5, "small segments must rotate")
			assert.Equal(t, "000001.wal", files[0])

			l2 := openLog(t, dir, Options{Sync: mode, SegmentBytes: 1024})
			assert.Equal(t, len(files), l2.Stats().Segments)
			assertRecords(t, want, replayAll(t, l2))
			more := appendN(t, l2, 100, 10)
			require.NoError(t, l2.Close())
			assertRecords(t, append(want, more...), replayAll(t, openLog(t, dir, Options{Sync: mode})))
		})
	}
}

func TestLSNsStrictlyIncrease(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{Sync: SyncOff, SegmentBytes: 300})
	var prev LSN
	for i := range 200 {
		if i%17 == 0 {
			start, err := l.Rotate()
			require.NoError(t, err)
			require.Greater(t, start, prev)
			lsn, err := l.Append(1, payloadFor(i))
			require.NoError(t, err)
			assert.Equal(t, start, lsn, "the first record after Rotate starts the new segment")
			prev = lsn
			continue
		}
		lsn, err := l.Append(1, payloadFor(i))
		require.NoError(t, err)
		assert.Greater(t, lsn, prev, "append %d", i)
		prev = lsn
	}
}

func TestReplayPayloadsAreFreshAndAligned(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{Sync: SyncOff})
	for n := range 40 {
		_, err := l.Append(0, bytes.Repeat([]byte{byte(n)}, n))
		require.NoError(t, err)
	}
	var kept [][]byte
	require.NoError(t, l.Replay(func(_ LSN, _ byte, p []byte) error {
		if len(p) > 0 {
			assert.Zero(t, uintptr(unsafe.Pointer(&p[0]))%8, "payload of %d bytes is not 8-byte aligned", len(p))
		}
		kept = append(kept, p)
		return nil
	}))
	require.Len(t, kept, 40)
	for n, p := range kept {
		assert.Equal(t, bytes.Repeat([]byte{byte(n)}, n), p, "payload %d must stay valid after the callback", n)
	}
}

func TestReplayStopsOnCallbackError(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{Sync: SyncOff})
	appendN(t, l, 0, 5)
	boom := errors.New("boom")
	calls := 0
	err := l.Replay(func(LSN, byte, []byte) error {
		calls++
		if calls == 3 {
			return boom
		}
		return nil
	})
	assert.Same(t, boom, err)
	assert.Equal(t, 3, calls)
}

func TestGroupCommitSharesFsyncs(t *testing.T) {
	const writers, perWriter = 16, 50
	dir := t.TempDir()
	l := openLog(t, dir, Options{Sync: SyncFull})
	before := l.Stats().Fsyncs

	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				lsn, err := l.Append(byte(w), []byte(fmt.Sprintf("%d/%d", w, i)))
				if err == nil {
					err = l.Sync(lsn)
				}
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	fsyncs := l.Stats().Fsyncs - before
	assert.Less(t, fsyncs, uint64(writers*perWriter), "concurrent Syncs must share fsyncs")
	assert.Positive(t, fsyncs)
	require.NoError(t, l.Close())

	next := make([]int, writers)
	got := replayAll(t, openLog(t, dir, Options{}))
	require.Len(t, got, writers*perWriter)
	for _, r := range got {
		w := int(r.kind)
		assert.Equal(t, fmt.Sprintf("%d/%d", w, next[w]), string(r.payload), "each writer's records replay in its order")
		next[w]++
	}
}

func TestFsyncCountsPerMode(t *testing.T) {
	t.Run("full", func(t *testing.T) {
		l := openLog(t, t.TempDir(), Options{Sync: SyncFull})
		assert.Equal(t, uint64(1), l.Stats().Fsyncs, "creating the first segment fsyncs the directory")
		recs := appendN(t, l, 0, 3)
		require.NoError(t, l.Sync(recs[2].lsn))
		assert.Equal(t, uint64(2), l.Stats().Fsyncs)
		require.NoError(t, l.Sync(recs[0].lsn))
		require.NoError(t, l.Sync(recs[2].lsn))
		assert.Equal(t, uint64(2), l.Stats().Fsyncs, "a covered lsn needs no fsync")
		_, err := l.Rotate()
		require.NoError(t, err)
		assert.Equal(t, uint64(4), l.Stats().Fsyncs, "rotation fsyncs the old segment and the directory")
		lsn, err := l.Append(1, nil)
		require.NoError(t, err)
		require.NoError(t, l.Sync(lsn))
		assert.Equal(t, uint64(5), l.Stats().Fsyncs)
		require.NoError(t, l.Close())
		assert.Equal(t, uint64(5), l.Stats().Fsyncs, "nothing left to sync at Close")
	})
	t.Run("normal waits for the flusher", func(t *testing.T) {
		l := openLog(t, t.TempDir(), Options{Sync: SyncNormal, Interval: time.Hour})
		recs := appendN(t, l, 0, 3)
		require.NoError(t, l.Sync(recs[2].lsn))
		assert.Equal(t, uint64(1), l.Stats().Fsyncs, "Sync does not fsync in normal mode")
		require.NoError(t, l.Close())
		assert.Equal(t, uint64(2), l.Stats().Fsyncs, "Close fsyncs the unsynced bytes")
	})
	t.Run("normal flushes in the background", func(t *testing.T) {
		l := openLog(t, t.TempDir(), Options{Sync: SyncNormal, Interval: time.Millisecond})
		require.Equal(t, uint64(1), l.Stats().Fsyncs)
		appendN(t, l, 0, 3)
		// Waits for the flusher (the bound only ends a hung test).
		require.Eventually(t, func() bool { return l.Stats().Fsyncs == 2 }, 5*time.Minute, time.Millisecond)
		time.Sleep(20 * time.Millisecond) // intervals with nothing to sync: the assertion holds however few pass
		assert.Equal(t, uint64(2), l.Stats().Fsyncs, "no fsync without unsynced bytes")
		require.NoError(t, l.Close())
		assert.Equal(t, uint64(2), l.Stats().Fsyncs)
	})
	t.Run("off", func(t *testing.T) {
		dir := t.TempDir()
		l := openLog(t, dir, Options{Sync: SyncOff, SegmentBytes: 256})
		recs := appendN(t, l, 0, 20)
		require.NoError(t, l.Sync(recs[19].lsn))
		_, err := l.Rotate()
		require.NoError(t, err)
		require.NoError(t, l.DeleteBefore(l.KeptFrom(recs[19].lsn)))
		require.NoError(t, l.Close())
		assert.Zero(t, l.Stats().Fsyncs)
		l2 := openLog(t, dir, Options{Sync: SyncOff})
		assert.Zero(t, l2.Stats().Fsyncs)
	})
	t.Run("reopening off segments in full fsyncs each once", func(t *testing.T) {
		dir := t.TempDir()
		l := openLog(t, dir, Options{Sync: SyncOff, SegmentBytes: 256})
		appendN(t, l, 0, 20)
		require.NoError(t, l.Close())
		segments := l.Stats().Segments
		require.Greater(t, segments, 1)
		l2 := openLog(t, dir, Options{Sync: SyncFull})
		assert.Equal(t, uint64(segments), l2.Stats().Fsyncs, "records written with sync off become durable before they count as such")
	})
}

func TestCloseSemantics(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{Sync: SyncNormal})
	recs := appendN(t, l, 0, 2)
	require.NoError(t, l.Close())
	calls := map[string]func() error{
		"Append":       func() error { _, err := l.Append(0, nil); return err },
		"Sync":         func() error { return l.Sync(recs[0].lsn) },
		"Rotate":       func() error { _, err := l.Rotate(); return err },
		"DeleteBefore": func() error { return l.DeleteBefore(l.KeptFrom(recs[1].lsn)) },
		"Replay":       func() error { return l.Replay(func(LSN, byte, []byte) error { return nil }) },
		"Close":        l.Close,
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) { assert.ErrorIs(t, call(), errs.ErrClosed) })
	}
}

func TestCloseDuringSyncs(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{Sync: SyncFull})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				lsn, err := l.Append(1, []byte("x"))
				if err == nil {
					err = l.Sync(lsn)
				}
				if err != nil {
					assert.ErrorIs(t, err, errs.ErrClosed)
					return
				}
			}
		})
	}
	for l.Stats().Appends < 100 {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, l.Close())
	wg.Wait()
}

// failingSync makes the nth and later fsyncs fail, and counts attempts.
func failingSync(t *testing.T, n int) *int {
	calls := 0
	var mu sync.Mutex
	orig := syncFile
	syncFile = func(f *os.File, dataOnly bool) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls >= n {
			return errors.New("injected EIO")
		}
		return orig(f, dataOnly)
	}
	t.Cleanup(func() { syncFile = orig })
	return &calls
}

func TestFsyncFailureIsPermanent(t *testing.T) {
	orig := syncFile
	dir := t.TempDir()
	calls := failingSync(t, 2) // the directory fsync at creation succeeds
	l, err := Open(dir, Options{Sync: SyncFull})
	require.NoError(t, err)
	lsn, err := l.Append(1, []byte("a"))
	require.NoError(t, err)
	err = l.Sync(lsn)
	require.ErrorIs(t, err, errs.ErrIO)
	assert.Contains(t, err.Error(), "injected EIO")
	require.Equal(t, 2, *calls)

	_, err = l.Append(1, []byte("b"))
	assert.ErrorIs(t, err, errs.ErrIO)
	assert.ErrorIs(t, l.Sync(lsn), errs.ErrIO)
	_, err = l.Rotate()
	assert.ErrorIs(t, err, errs.ErrIO)
	assert.ErrorIs(t, l.Close(), errs.ErrIO)
	assert.Equal(t, 2, *calls, "a failed fsync is never retried")

	syncFile = orig
	assertRecords(t, []rec{{lsn, 1, []byte("a")}}, replayAll(t, openLog(t, dir, Options{})))
}

func TestRotateFsyncFailureIsPermanent(t *testing.T) {
	failingSync(t, 2)
	l := openLog(t, t.TempDir(), Options{Sync: SyncNormal, Interval: time.Hour})
	appendN(t, l, 0, 1)
	_, err := l.Rotate()
	require.ErrorIs(t, err, errs.ErrIO)
	_, err = l.Append(0, nil)
	assert.ErrorIs(t, err, errs.ErrIO)
	assert.ErrorIs(t, l.Sync(0), errs.ErrIO)
}

func TestDeleteBeforeKeptFrom(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{Sync: SyncFull, SegmentBytes: 512})
	recs := appendN(t, l, 0, 60)
	segs := l.Stats().Segments
	require.Greater(t, segs, 4)

	require.NoError(t, l.DeleteBefore(l.KeptFrom(recs[0].lsn)))
	assert.Equal(t, segs, l.Stats().Segments, "nothing precedes the first record")

	cut := 30
	require.NoError(t, l.DeleteBefore(l.KeptFrom(recs[cut].lsn)))
	got := replayAll(t, l)
	require.NotEmpty(t, got)
	assert.Less(t, l.Stats().Segments, segs)
	assert.LessOrEqual(t, got[0].lsn, recs[cut].lsn, "the segment holding the cut record stays")
	first := slices.IndexFunc(recs, func(r rec) bool { return r.lsn == got[0].lsn })
	require.GreaterOrEqual(t, first, 1, "some whole segments were removed")
	assertRecords(t, recs[first:], got)
	assert.Len(t, segmentFiles(t, dir), l.Stats().Segments)

	require.NoError(t, l.DeleteBefore(l.KeptFrom(LSN(1<<63))))
	assert.Equal(t, 1, l.Stats().Segments, "the active segment is never removed")

	start, err := l.Rotate()
	require.NoError(t, err)
	require.NoError(t, l.DeleteBefore(l.KeptFrom(start)))
	assert.Equal(t, 1, l.Stats().Segments)
	assert.Empty(t, replayAll(t, l))
	more := appendN(t, l, 100, 3)
	require.NoError(t, l.Close())

	l2 := openLog(t, dir, Options{})
	assertRecords(t, more, replayAll(t, l2))
}

func TestOpenExistingCreatesNoFiles(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{SegmentBytes: 300})
	appendN(t, l, 0, 10)
	require.NoError(t, l.Close())
	before := segmentFiles(t, dir)
	l2 := openLog(t, dir, Options{SegmentBytes: 300})
	assert.Equal(t, uint64(len(before)), l2.Stats().Fsyncs, "one fsync per loaded segment, none of a directory")
	assert.Equal(t, before, segmentFiles(t, dir))
}

func TestZeroLengthLastSegment(t *testing.T) {
	cases := []struct {
		name    string
		content func(seq uint64) []byte
	}{
		{"empty", func(uint64) []byte { return nil }},
		{"partial header", func(seq uint64) []byte { return encodeHeader(seq)[:7] }},
		{"zeroed partial header", func(uint64) []byte { return make([]byte, 10) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, Options{})
			recs := appendN(t, l, 0, 5)
			_, err := l.Rotate()
			require.NoError(t, err)
			require.NoError(t, l.Close())
			require.NoError(t, os.WriteFile(filepath.Join(dir, "000002.wal"), c.content(2), 0o644))

			l2 := openLog(t, dir, Options{})
			assertRecords(t, recs, replayAll(t, l2))
			more := appendN(t, l2, 5, 3)
			require.NoError(t, l2.Close())
			assert.Equal(t, []string{"000001.wal", "000002.wal"}, segmentFiles(t, dir))
			assertRecords(t, append(recs, more...), replayAll(t, openLog(t, dir, Options{})))
		})
	}
}

func TestInvalidArguments(t *testing.T) {
	dir := t.TempDir()
	for name, opts := range map[string]Options{
		"sync mode":         {Sync: 3},
		"negative segment":  {SegmentBytes: -1},
		"huge segment":      {SegmentBytes: 1 << 41},
		"negative interval": {Interval: -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(dir, opts)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
		})
	}
	t.Run("missing directory", func(t *testing.T) {
		_, err := Open(filepath.Join(dir, "nope"), Options{})
		assert.ErrorIs(t, err, errs.ErrNotFound)
	})
	t.Run("sync past the end", func(t *testing.T) {
		l := openLog(t, t.TempDir(), Options{})
		lsn, err := l.Append(0, nil)
		require.NoError(t, err)
		assert.ErrorIs(t, l.Sync(lsn+1000), errs.ErrInvalidArgument)
	})
}

func TestParseSyncMode(t *testing.T) {
	for _, m := range []SyncMode{SyncFull, SyncNormal, SyncOff} {
		got, err := ParseSyncMode(m.String())
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	got, err := ParseSyncMode("FULL")
	require.NoError(t, err)
	assert.Equal(t, SyncFull, got)
	_, err = ParseSyncMode("sometimes")
	assert.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Equal(t, "SyncMode(9)", SyncMode(9).String())
}

// TestLocateNamesSegmentAndOffset: Locate gives the file and the frame's
// offset in it, which is where the record's bytes really are.
func TestLocateNamesSegmentAndOffset(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{Sync: SyncOff})
	first, err := l.Append(1, []byte("abc"))
	require.NoError(t, err)
	second, err := l.Append(2, []byte("de"))
	require.NoError(t, err)
	_, err = l.Rotate()
	require.NoError(t, err)
	third, err := l.Append(3, []byte("f"))
	require.NoError(t, err)
	cases := []struct {
		name string
		lsn  LSN
		file string
		off  int64
		kind byte
	}{
		{"first", first, "000001.wal", headerSize, 1},
		{"second", second, "000001.wal", headerSize + frameSize + 3, 2},
		{"after rotate", third, "000002.wal", headerSize, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, off := l.Locate(c.lsn)
			assert.Equal(t, filepath.Join(dir, c.file), path)
			assert.Equal(t, c.off, off)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, c.kind, data[off+8], "the kind byte of the frame there")
		})
	}
}

func TestAppendPartsEqualsAppendOfTheJoinedPayload(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	big := bytes.Repeat([]byte{0xab}, directPart+3)
	cases := [][][]byte{
		nil,
		{{}},
		{[]byte("a"), []byte("bc"), nil, []byte("def")},
		{big},
		{[]byte("head"), big, []byte("mid"), big, []byte("tail")},
	}
	var want []rec
	for i, parts := range cases {
		lsn, err := l.AppendParts(byte(i), parts...)
		require.NoError(t, err)
		want = append(want, rec{lsn, byte(i), bytes.Join(parts, nil)})
	}
	require.NoError(t, l.Close())
	l2 := openLog(t, dir, Options{})
	assert.Zero(t, l2.Stats().Truncated, "every frame's checksum holds")
	assertRecords(t, want, replayAll(t, l2))
}

// appendFrame appends a whole framed record, as tests build files by hand.
func appendFrame(dst []byte, kind byte, payload []byte) []byte {
	return append(appendFrameHeader(dst, kind, [][]byte{payload}), payload...)
}

func TestFirstSegment(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{SegmentBytes: 256})
	require.NoError(t, err)
	var lsns []LSN
	for i := 0; i < 20; i++ {
		lsn, err := l.Append(1, bytes.Repeat([]byte{byte(i)}, 100))
		require.NoError(t, err)
		lsns = append(lsns, lsn)
	}
	require.GreaterOrEqual(t, l.Stats().Segments, 4)
	cut := lsns[10]
	first := l.KeptFrom(cut)
	require.NoError(t, l.Close())

	// A checkpoint that stopped before deleting: Open deletes the older segments.
	l, err = Open(dir, Options{SegmentBytes: 256, First: first})
	require.NoError(t, err)
	var seen []LSN
	require.NoError(t, l.Replay(func(lsn LSN, _ byte, _ []byte) error { seen = append(seen, lsn); return nil }))
	assert.Contains(t, seen, cut)
	assert.NotContains(t, seen, lsns[0])
	require.NoError(t, l.Close())
	_, err = os.Stat(filepath.Join(dir, segmentName(first-1)))
	assert.True(t, os.IsNotExist(err), "segment before First still there")

	// The segment a checkpoint kept is gone: corrupt, naming it.
	require.NoError(t, os.Remove(filepath.Join(dir, segmentName(first))))
	_, err = Open(dir, Options{SegmentBytes: 256, First: first})
	require.ErrorIs(t, err, errs.ErrCorrupt)
	assert.Contains(t, err.Error(), segmentName(first))

	// Segments lost at the end: Last says how far the log had come.
	l, err = Open(dir, Options{SegmentBytes: 256})
	require.NoError(t, err)
	last := l.Active()
	require.NoError(t, l.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, segmentName(last))))
	_, err = Open(dir, Options{SegmentBytes: 256, Last: last})
	require.ErrorIs(t, err, errs.ErrCorrupt)
	assert.Contains(t, err.Error(), segmentName(last))

	// An emptied directory too.
	empty := t.TempDir()
	_, err = Open(empty, Options{First: 3})
	require.ErrorIs(t, err, errs.ErrCorrupt)
	assert.Contains(t, err.Error(), segmentName(3))
}

func TestEndAndLiveBytes(t *testing.T) {
	l, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	defer l.Close()
	a, err := l.Append(1, []byte("abc"))
	require.NoError(t, err)
	end := l.End()
	assert.Greater(t, end, a)
	b, err := l.Append(1, []byte("def"))
	require.NoError(t, err)
	assert.Equal(t, end, b, "End is the next record's LSN")
	assert.Equal(t, int64(uint64(l.End())&(1<<offsetBits-1)), l.Stats().LiveBytes)
}

func TestDeleteBefore(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{SegmentBytes: 256})
	require.NoError(t, err)
	defer l.Close()
	var lsns []LSN
	for i := 0; i < 20; i++ {
		lsn, err := l.Append(1, bytes.Repeat([]byte{byte(i)}, 100))
		require.NoError(t, err)
		lsns = append(lsns, lsn)
	}
	first := l.KeptFrom(lsns[10])
	// A rotation between KeptFrom and the deletion (a checkpoint racing a
	// hand-over) must not widen what is deleted, as deleting by LSN would.
	_, err = l.Rotate()
	require.NoError(t, err)
	require.NoError(t, l.DeleteBefore(first))
	_, err = os.Stat(filepath.Join(dir, segmentName(first)))
	require.NoError(t, err, "DeleteBefore kept segment first")
	_, err = os.Stat(filepath.Join(dir, segmentName(first-1)))
	assert.True(t, os.IsNotExist(err), "segments before first are gone")
	active := l.Active()
	require.NoError(t, l.DeleteBefore(active+5))
	assert.Equal(t, 1, l.Stats().Segments, "the active segment is never deleted")
	_, err = os.Stat(filepath.Join(dir, segmentName(active)))
	require.NoError(t, err)
}

// TestReplayAfterOpenReadsEachSegmentOnce: the first replay uses the bytes
// Open read and checked; a byte changed on disk after Open is not seen by
// it (the file is not read again), while a replay after an Append, whose
// kept bytes were dropped, reads the files and reports the change.
func TestReplayAfterOpenReadsEachSegmentOnce(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{SegmentBytes: 4096, Sync: SyncOff})
	want := appendN(t, l, 0, 100)
	require.NoError(t, l.Close())

	l = openLog(t, dir, Options{SegmentBytes: 4096, Sync: SyncOff})
	segs, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	require.NoError(t, err)
	require.Greater(t, len(segs), 2)
	data, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	data[headerSize+frameSize] ^= 0xff // the first record's payload, on disk only
	require.NoError(t, os.WriteFile(segs[0], data, 0o644))
	assert.Equal(t, want, replayAll(t, l), "the replay after Open read the files again")

	_, err = l.Append(7, []byte("x"))
	require.NoError(t, err)
	err = l.Replay(func(LSN, byte, []byte) error { return nil })
	require.ErrorIs(t, err, errs.ErrCorrupt)
	assert.Contains(t, err.Error(), filepath.Base(segs[0]))
}

// TestSyncNowMakesARecordDurableInNormalMode: Sync leaves SyncNormal's
// records to the background flusher; SyncNow waits for the fsync.
func TestSyncNowMakesARecordDurableInNormalMode(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{Sync: SyncNormal, Interval: time.Hour})
	lsn, err := l.Append(1, []byte("record"))
	require.NoError(t, err)
	require.NoError(t, l.Sync(lsn))
	assert.LessOrEqual(t, l.Durable(), lsn, "Sync in normal mode waited for an fsync")
	require.NoError(t, l.SyncNow(lsn))
	assert.Greater(t, l.Durable(), lsn)
	assert.Equal(t, l.End(), l.Durable())
}

// TestReadOnlyOpenWritesNothing: a read-only log of a log another handle
// is writing sees its whole records, stops at one being written, refuses
// appends, and leaves every byte of the directory as it was.
func TestReadOnlyOpenWritesNothing(t *testing.T) {
	dir := t.TempDir()
	w := openLog(t, dir, Options{SegmentBytes: 4096})
	want := appendN(t, w, 0, 60)
	require.NoError(t, w.Sync(want[len(want)-1].lsn))
	snapshot := func() map[string]string {
		out := map[string]string{}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			out[e.Name()] = string(data)
		}
		return out
	}
	// A record half written at the end of the active segment.
	segs, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	require.NoError(t, err)
	active := segs[len(segs)-1]
	f, err := os.OpenFile(active, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{40, 0, 0, 0, 1, 2, 3}, int64(w.Files()[len(w.Files())-1].Size))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before := snapshot()

	r := openLog(t, dir, Options{ReadOnly: true, First: 1})
	assert.Equal(t, want, replayAll(t, r))
	_, err = r.Append(1, []byte("no"))
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	_, err = r.Rotate()
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	require.NoError(t, r.Close())
	assert.Equal(t, before, snapshot(), "the read-only log changed the directory")
}
