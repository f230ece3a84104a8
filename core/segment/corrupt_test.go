package segment

import (
	"errors"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
)

// corruptFixture writes a small file of every type over two row groups.
func corruptFixture(t *testing.T) (path string, size int64, data map[string][]row) {
	data = map[string][]row{
		"a": makeRows(allTypes, 6, 0, 1, patterns["between"]),
		"b": makeRows(allTypes, 3, 0, 1, patterns["leading"]),
	}
	path = filepath.Join(t.TempDir(), "c.parquet")
	w, err := Create(path, Layout{TimeUnit: "us", Columns: allTypes}, WriterOptions{RowGroupRows: 5})
	require.NoError(t, err)
	for _, d := range sortedKeys(data) {
		require.NoError(t, w.Append(d, buildTablet(allTypes, data[d], 0)))
	}
	info, err := w.Close()
	require.NoError(t, err)
	return path, info.Size, data
}

// readDevices reads every device of f, or returns the first error, with
// a Cursor per device and again with a Scanner; both must agree.
func readDevices(f *File, devices []string) (map[string][]row, error) {
	byCursor, err := readDevicesWith(devices, func(d string) batchReader { return f.Read(d, allTypes, math.MinInt64, math.MaxInt64, 0) })
	if err != nil {
		return nil, err
	}
	sc := f.Scanner(allTypes)
	byScanner, err := readDevicesWith(devices, func(d string) batchReader { return sc.Read(d, math.MinInt64, math.MaxInt64, 0) })
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(byCursor, byScanner) {
		return nil, errors.New("cursor and scanner disagree")
	}
	return byCursor, nil
}

func readDevicesWith(devices []string, read func(string) batchReader) (map[string][]row, error) {
	out := map[string][]row{}
	for _, d := range devices {
		c := read(d)
		for {
			tb, err := c.Next()
			if err != nil {
				return nil, err
			}
			if tb == nil {
				break
			}
			for i, tm := range tb.Times {
				r := row{time: tm, vals: make([]any, len(allTypes))}
				for j := range allTypes {
					r.vals[j] = tb.Columns[j].Value(i)
				}
				out[d] = append(out[d], r)
			}
		}
	}
	return out, nil
}

func requireCorrupt(t *testing.T, err error, path string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, errs.ErrCorrupt), "want ErrCorrupt, got %v", err)
	require.Contains(t, err.Error(), path)
}

func TestOpenCorrupt(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(t *testing.T, path string, size int64) int64 // returns the size to pass
	}{
		{"deleted", func(t *testing.T, path string, size int64) int64 {
			require.NoError(t, os.Remove(path))
			return size
		}},
		{"wrong size", func(t *testing.T, path string, size int64) int64 { return size + 1 }},
		{"truncated, log size", func(t *testing.T, path string, size int64) int64 {
			require.NoError(t, os.Truncate(path, size-10))
			return size
		}},
		{"truncated to the footer length", func(t *testing.T, path string, size int64) int64 {
			require.NoError(t, os.Truncate(path, size-4))
			return size - 4
		}},
		{"truncated mid-file", func(t *testing.T, path string, size int64) int64 {
			require.NoError(t, os.Truncate(path, size/2))
			return size / 2
		}},
		{"empty", func(t *testing.T, path string, size int64) int64 {
			require.NoError(t, os.Truncate(path, 0))
			return 0
		}},
		{"not parquet", func(t *testing.T, path string, size int64) int64 {
			require.NoError(t, os.WriteFile(path, []byte("hello, world: this is not a parquet file"), 0o644))
			return 40
		}},
		{"flipped footer length", func(t *testing.T, path string, size int64) int64 {
			flip(t, path, size-6)
			return size
		}},
		{"flipped leading magic", func(t *testing.T, path string, size int64) int64 {
			flip(t, path, 1)
			return size
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, size, _ := corruptFixture(t)
			size = tc.spoil(t, path, size)
			f, err := Open(path, size)
			requireCorrupt(t, err, path)
			assert.Nil(t, f)
		})
	}
}

func flip(t *testing.T, path string, off int64) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0x10
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
}

// TestEveryFlippedByte flips each byte of a file's footer, and every third
// byte of its data, in turn: Open or a read must fail with ErrCorrupt
// naming the file, or the data must read back unchanged (a byte our
// reader does not use, such as Parquet's own statistics). Never wrong
// data, never a panic.
func TestEveryFlippedByte(t *testing.T) {
	if testing.Short() {
		t.Skip("flips every byte")
	}
	path, size, data := corruptFixture(t)
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := Open(path, size)
	require.NoError(t, err)
	footer := size - 8 - int64(f.meta.Size())
	f.Close()
	harmless := 0
	for off := int64(0); off < size; off++ {
		if off < footer && off%3 != 0 {
			continue
		}
		require.NoError(t, os.WriteFile(path, orig, 0o644))
		flip(t, path, off)
		f, err := Open(path, size)
		if err != nil {
			requireCorrupt(t, err, path)
			continue
		}
		got, err := readDevices(f, []string{"a", "b"})
		f.Close()
		if err != nil {
			requireCorrupt(t, err, path)
			continue
		}
		require.Equal(t, data, got, "byte %d of %d flipped: wrong data", off, size)
		harmless++
	}
	t.Logf("%d of %d flipped bytes were harmless", harmless, size)
}

func TestReadAfterClose(t *testing.T) {
	path, size, _ := corruptFixture(t)
	f, err := Open(path, size)
	require.NoError(t, err)
	c := f.Read("a", allTypes, math.MinInt64, math.MaxInt64, 0)
	require.NoError(t, f.Close())
	_, err = c.Next()
	require.ErrorIs(t, err, errs.ErrIO)
	assert.Contains(t, err.Error(), path)
}

// TestShrunkWhileOpen: a file cut short after Open (never by us) makes the
// fast path fault on its mapping: an ErrCorrupt naming the file, not a
// crash.
func TestShrunkWhileOpen(t *testing.T) {
	cols := []Column{{ID: 1, Name: "v", Type: schema.Double}, {ID: 2, Name: "w", Type: schema.Int64}}
	data := map[string][]row{"a": makeRows(cols, 20000, 0, 1, patterns["none"])}
	f, _ := writeFile(t, Layout{Columns: cols}, WriterOptions{}, data, 20000, 0)
	require.NotNil(t, f.data, "the file is mapped")
	require.NoError(t, os.Truncate(f.Path(), 0))
	for _, window := range []bool{false, true} {
		sc := f.Scanner(cols)
		start, end := int64(math.MinInt64), int64(math.MaxInt64)
		if window {
			start, end = 100, 200
		}
		_, err := sc.Read("a", start, end, 0).Next()
		require.ErrorIs(t, err, errs.ErrCorrupt, "window %v", window)
		assert.Contains(t, err.Error(), f.Path())
	}
}

// TestPagesCheckedOnce: a mapped file's pages are checked against their
// CRC on their first read only; the second read returns the same rows.
func TestPagesCheckedOnce(t *testing.T) {
	path, size, data := corruptFixture(t)
	f, err := Open(path, size)
	require.NoError(t, err)
	defer f.Close()
	if f.data == nil {
		t.Skip("the file could not be mapped")
	}
	seen := func() (n int) {
		for i := range f.checked {
			n += bits.OnesCount32(f.checked[i].Load())
		}
		return n
	}
	require.Zero(t, seen())
	got, err := readDevices(f, []string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, data, got)
	first := seen()
	assert.Positive(t, first, "no page was checked")
	got, err = readDevices(f, []string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, data, got)
	assert.Equal(t, first, seen(), "the second read checked new pages")
}
