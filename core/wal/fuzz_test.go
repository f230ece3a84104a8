package wal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/arcadego/arcadego/core/errs"
)

// FuzzMangledTail damages the end of a one-segment log (cut it, append
// bytes, flip a byte near the end) and checks that Open either reports
// ErrCorrupt or truncates to a prefix of valid records after which no valid
// record remains, keeping every record before the first damaged byte.
func FuzzMangledTail(f *testing.F) {
	dir := f.TempDir()
	l, err := Open(dir, Options{Sync: SyncOff})
	if err != nil {
		f.Fatal(err)
	}
	var ends []int // end offset of each record
	for i := range 20 {
		lsn, err := l.Append(byte(i), payloadFor(i))
		if err != nil {
			f.Fatal(err)
		}
		ends = append(ends, offsetOf(lsn)+frameSize+len(payloadFor(i)))
	}
	if err := l.Close(); err != nil {
		f.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join(dir, "000001.wal"))
	if err != nil {
		f.Fatal(err)
	}

	f.Add(uint16(0), []byte{}, uint16(0), byte(0))
	f.Add(uint16(3), []byte{}, uint16(0), byte(0))
	f.Add(uint16(0), make([]byte, 64), uint16(0), byte(0))
	f.Add(uint16(0), []byte("garbage at the end"), uint16(0), byte(0))
	f.Add(uint16(0), []byte{}, uint16(0), byte(1))
	f.Add(uint16(0), []byte{}, uint16(300), byte(0x80))
	f.Add(uint16(100), appendFrame(nil, 7, []byte("valid")), uint16(0), byte(0))
	f.Add(uint16(len(base)-10), []byte{}, uint16(0), byte(0))

	f.Fuzz(func(t *testing.T, cut uint16, extra []byte, flipBack uint16, mask byte) {
		keep := len(base) - int(cut)%(len(base)+1)
		m := append(bytes.Clone(base[:keep]), extra...)
		damaged := keep // first byte that may differ from base
		if mask != 0 && len(m) > 0 {
			at := len(m) - 1 - int(flipBack)%len(m)
			m[at] ^= mask
			damaged = min(damaged, at)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "000001.wal")
		if err := os.WriteFile(path, m, 0o644); err != nil {
			t.Fatal(err)
		}

		l, err := Open(dir, Options{Sync: SyncOff})
		if err != nil {
			if !errors.Is(err, errs.ErrCorrupt) {
				t.Fatalf("Open: %v, want success or ErrCorrupt", err)
			}
			return
		}
		defer l.Close()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) >= headerSize && !bytes.Equal(got, m[:len(got)]) {
			t.Fatalf("file is not a prefix of what was there: %d of %d bytes", len(got), len(m))
		}
		if p := naiveFindRecord(got, headerSize); len(got) > headerSize && p < 0 {
			t.Fatalf("kept %d bytes holding no valid record", len(got))
		}
		if p := naiveFindRecord(m, len(got)+1); len(got) < len(m) && p >= 0 {
			t.Fatalf("truncated at %d although a valid record follows at %d", len(got), p)
		}
		n := 0
		err = l.Replay(func(lsn LSN, kind byte, payload []byte) error {
			if off := offsetOf(lsn); off+frameSize+len(payload) <= damaged {
				if kind != byte(n) || !bytes.Equal(payload, payloadFor(n)) {
					t.Fatalf("record %d at %d differs from what was written", n, off)
				}
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		intact := 0
		for _, e := range ends {
			if e <= damaged {
				intact++
			}
		}
		if n < intact {
			t.Fatalf("replayed %d records, but %d were before the damage at %d", n, intact, damaged)
		}
	})
}
