package wal

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

// offsetOf is the byte offset of a record within its segment file.
func offsetOf(lsn LSN) int { return int(uint64(lsn) & (1<<offsetBits - 1)) }

// threeSegments writes records into three segments and returns them with
// the path of the last segment.
func threeSegments(t *testing.T, dir string) ([]rec, string) {
	t.Helper()
	l := openLog(t, dir, Options{Sync: SyncOff})
	var recs []rec
	for s := range 3 {
		if s > 0 {
			_, err := l.Rotate()
			require.NoError(t, err)
		}
		recs = append(recs, appendN(t, l, s*10, 10)...)
	}
	require.NoError(t, l.Close())
	return recs, filepath.Join(dir, "000003.wal")
}

func TestTornTailIsTruncated(t *testing.T) {
	// Each case mangles the last segment, given its bytes and the offset of
	// its last record, and says how many records survive.
	cases := []struct {
		name   string
		mangle func(data []byte, last int) []byte
		lost   int
	}{
		{"truncated header", func(d []byte, last int) []byte { return d[:last+5] }, 1},
		{"header only", func(d []byte, last int) []byte { return d[:last+frameSize] }, 1},
		{"truncated payload", func(d []byte, last int) []byte { return d[:len(d)-3] }, 1},
		{"length past EOF", func(d []byte, last int) []byte {
			binary.LittleEndian.PutUint32(d[last:], uint32(len(d)-last))
			return d
		}, 1},
		{"length beyond MaxPayload", func(d []byte, last int) []byte {
			binary.LittleEndian.PutUint32(d[last:], MaxPayload+1)
			return d
		}, 1},
		{"crc mismatch on final record", func(d []byte, last int) []byte {
			d[len(d)-1] ^= 0x40
			return d
		}, 1},
		{"kind flipped on final record", func(d []byte, last int) []byte {
			d[last+8] ^= 1
			return d
		}, 1},
		{"zero bytes appended", func(d []byte, last int) []byte { return append(d, make([]byte, 5000)...) }, 0},
		{"garbage appended", func(d []byte, last int) []byte {
			g := make([]byte, 3000)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range g {
				g[i] = byte(r.Uint32())
			}
			return append(d, g...)
		}, 0},
		{"torn record then zeros", func(d []byte, last int) []byte {
			return append(d[:last+12], make([]byte, 4096)...)
		}, 1},
		{"every record of the segment torn", func(d []byte, last int) []byte { return d[:headerSize+3] }, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			recs, path := threeSegments(t, dir)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			last := offsetOf(recs[len(recs)-1].lsn)
			mangled := c.mangle(data, last)
			require.NoError(t, os.WriteFile(path, mangled, 0o644))

			want := recs[:len(recs)-c.lost]
			cutAt := headerSize
			if c.lost < 10 {
				cutAt = offsetOf(recs[len(recs)-c.lost-1].lsn) + frameSize + len(recs[len(recs)-c.lost-1].payload)
			}

			l := openLog(t, dir, Options{Sync: SyncFull})
			assert.Equal(t, uint64(len(mangled)-cutAt), l.Stats().Truncated)
			assert.Equal(t, uint64(3), l.Stats().Fsyncs, "the two intact segments and the truncation are fsynced")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, int64(cutAt), fi.Size(), "file truncated at the bad record")
			assertRecords(t, want, replayAll(t, l))

			more := appendN(t, l, 100, 4)
			require.NoError(t, l.Close())
			assertRecords(t, append(want, more...), replayAll(t, openLog(t, dir, Options{})))
		})
	}
}

func TestCorruptionIsReported(t *testing.T) {
	// Each case damages the files and returns the file and offset the
	// error must name.
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string, recs []rec) (file string, off int)
	}{
		{"flipped payload byte mid-segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			r := recs[24]
			return "000003.wal", flip(t, dir, "000003.wal", offsetOf(r.lsn)+frameSize+len(r.payload)/2, offsetOf(r.lsn))
		}},
		{"flipped length mid-segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			return "000003.wal", flip(t, dir, "000003.wal", offsetOf(recs[21].lsn)+1, offsetOf(recs[21].lsn))
		}},
		{"flipped crc mid-segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			return "000003.wal", flip(t, dir, "000003.wal", offsetOf(recs[27].lsn)+5, offsetOf(recs[27].lsn))
		}},
		{"flipped first record", func(t *testing.T, dir string, recs []rec) (string, int) {
			return "000003.wal", flip(t, dir, "000003.wal", headerSize+9, headerSize)
		}},
		{"flipped byte in an earlier segment's last record", func(t *testing.T, dir string, recs []rec) (string, int) {
			r := recs[9]
			return "000001.wal", flip(t, dir, "000001.wal", offsetOf(r.lsn)+frameSize+len(r.payload)-1, offsetOf(r.lsn))
		}},
		{"torn tail in an earlier segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			r := recs[19]
			path := filepath.Join(dir, "000002.wal")
			require.NoError(t, os.Truncate(path, int64(offsetOf(r.lsn)+4)))
			return "000002.wal", offsetOf(r.lsn)
		}},
		{"garbage after an earlier segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			path := filepath.Join(dir, "000001.wal")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write(make([]byte, 100))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			return "000001.wal", int(fi.Size())
		}},
		{"bad magic", func(t *testing.T, dir string, recs []rec) (string, int) {
			return "000002.wal", flip(t, dir, "000002.wal", 1, 0)
		}},
		{"bad version", func(t *testing.T, dir string, recs []rec) (string, int) {
			return "000003.wal", flip(t, dir, "000003.wal", 4, 4)
		}},
		{"segment number disagrees with name", func(t *testing.T, dir string, recs []rec) (string, int) {
			return "000001.wal", flip(t, dir, "000001.wal", 8, 8)
		}},
		{"short header in an earlier segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			require.NoError(t, os.Truncate(filepath.Join(dir, "000002.wal"), 0))
			return "000002.wal", 0
		}},
		{"short garbage header in the last segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "000003.wal"), []byte("junk"), 0o644))
			return "000003.wal", 0
		}},
		{"missing segment", func(t *testing.T, dir string, recs []rec) (string, int) {
			require.NoError(t, os.Remove(filepath.Join(dir, "000002.wal")))
			return "000002.wal", 0
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			recs, _ := threeSegments(t, dir)
			file, off := c.damage(t, dir, recs)
			before := snapshot(t, dir)

			_, err := Open(dir, Options{})
			require.ErrorIs(t, err, errs.ErrCorrupt)
			assert.Contains(t, err.Error(), filepath.Join(dir, file))
			assert.Contains(t, err.Error(), fmt.Sprintf("at offset %d:", off))
			assert.Equal(t, before, snapshot(t, dir), "a failed Open changes no file")
		})
	}
}

// flip inverts one byte of a segment file and passes want through.
func flip(t *testing.T, dir, name string, at, want int) int {
	t.Helper()
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[at] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return want
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range segmentFiles(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		out[name] = string(data)
	}
	return out
}

// TestPreallocatedZerosAreNoRecords: the active segment is preallocated
// ahead of its records; a crash leaves the zeros, which Open cuts as a
// tail of nothing; a clean Close leaves none; rotation cuts them from the
// segment it finishes.
func TestPreallocatedZerosAreNoRecords(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{Sync: SyncFull})
	recs := appendN(t, l, 0, 20)
	require.NoError(t, l.Sync(recs[len(recs)-1].lsn))
	path := filepath.Join(dir, segmentName(1))
	logical := int64(offsetOf(recs[len(recs)-1].lsn) + frameSize + len(recs[len(recs)-1].payload))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	if l.noPrealloc {
		t.Skip("this file system cannot preallocate")
	}
	require.Greater(t, fi.Size(), logical, "preallocated ahead of the records")

	// A crash now: a copy of the directory as the disk holds it.
	crashed := t.TempDir()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(crashed, segmentName(1)), data, 0o644))
	c := openLog(t, crashed, Options{Sync: SyncFull})
	assertRecords(t, recs, replayAll(t, c))
	more := appendN(t, c, 100, 3)
	require.NoError(t, c.Close())
	assertRecords(t, append(recs, more...), replayAll(t, openLog(t, crashed, Options{})))

	// Rotation cuts the zeros of the segment it finishes; Close, those of
	// the active one.
	_, err = l.Rotate()
	require.NoError(t, err)
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, logical, fi.Size())
	more = appendN(t, l, 200, 2)
	require.NoError(t, l.Close())
	fi, err = os.Stat(filepath.Join(dir, segmentName(2)))
	require.NoError(t, err)
	last := more[len(more)-1]
	assert.Equal(t, int64(offsetOf(last.lsn)+frameSize+len(last.payload)), fi.Size())
	l2 := openLog(t, dir, Options{Sync: SyncFull})
	assert.Zero(t, l2.Stats().Truncated)
	assertRecords(t, append(recs, more...), replayAll(t, l2))
}
