package index

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

func TestKeysSortAsValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ints := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}
	floats := []float64{math.Inf(-1), -1e300, -1, -1e-300, 0, 1e-300, 1, 1e300, math.Inf(1)}
	strs := []string{"", "\x00", "\x00\x00", "\x00a", "a", "a\x00", "a\x00b", "ab", "b"}
	for range 200 {
		ints = append(ints, rng.Int64()-rng.Int64())
		floats = append(floats, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = byte(rng.IntN(3))
		}
		strs = append(strs, string(b))
	}
	for _, a := range ints {
		for _, b := range ints[:20] {
			require.Equal(t, cmp.Compare(a, b), bytes.Compare(AppendInt(nil, a), AppendInt(nil, b)), "%d vs %d", a, b)
		}
	}
	sign := func(x float64) int {
		switch {
		case x < 0:
			return -1
		case x > 0:
			return 1
		}
		return 0
	}
	for _, a := range floats {
		for _, b := range floats[:30] {
			require.Equal(t, sign(a-b), bytes.Compare(AppendFloat(nil, a), AppendFloat(nil, b)), "%g vs %g", a, b)
		}
	}
	require.Equal(t, AppendFloat(nil, 0), AppendFloat(nil, math.Copysign(0, -1)))
	require.Equal(t, 1, bytes.Compare(AppendFloat(nil, math.NaN()), AppendFloat(nil, math.Inf(1))))
	// Strings, also as the first part of a two-part key: each part ends
	// where it ends, so the second never decides before the first.
	for _, a := range strs {
		for _, b := range strs[:30] {
			want := strings.Compare(a, b)
			require.Equal(t, want, bytes.Compare(AppendBytes(nil, []byte(a)), AppendBytes(nil, []byte(b))), "%q vs %q", a, b)
			ka := AppendInt(AppendBytes(nil, []byte(a)), 5)
			kb := AppendInt(AppendBytes(nil, []byte(b)), -5)
			if want != 0 {
				require.Equal(t, want, bytes.Compare(ka, kb), "%q,5 vs %q,-5", a, b)
			}
		}
	}
	col := tablet.Int64s("k", []int64{-1, 0}, []bool{true, false})
	a, ok := AppendColumn(nil, &col, 0)
	require.True(t, ok)
	b, ok := AppendColumn(nil, &col, 1)
	require.False(t, ok)
	require.Equal(t, -1, bytes.Compare(b, a), "a null sorts first")
	require.Equal(t, []byte{1, 3}, PrefixEnd([]byte{1, 2, 0xFF}))
	require.Nil(t, PrefixEnd([]byte{0xFF, 0xFF}))
}

// brute is a reference: every entry, searched by scanning.
type brute []Entry

func (b brute) search(devices []string, lo, hi []byte) []Row {
	var out []Row
	for _, e := range b {
		if (lo == nil || bytes.Compare(e.Key, lo) >= 0) && (hi == nil || bytes.Compare(e.Key, hi) < 0) {
			out = append(out, Row{devices[e.Device], e.Time})
		}
	}
	return sortRows(out)
}

func sortRows(rs []Row) []Row {
	slices.SortFunc(rs, func(a, b Row) int {
		if c := strings.Compare(a.Device, b.Device); c != 0 {
			return c
		}
		return cmp.Compare(a.Time, b.Time)
	})
	return rs
}

func TestFileAndMemSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	devices := []string{"a", "b", "plant/c", ""}
	var entries brute
	var mem Mem
	for range 50 {
		var batch []MemEntry
		for range rng.IntN(40) {
			e := Entry{Key: AppendInt(nil, int64(rng.IntN(100)-50)), Device: uint32(rng.IntN(len(devices))), Time: rng.Int64N(1000)}
			entries = append(entries, e)
			batch = append(batch, MemEntry{Key: string(e.Key), Device: devices[e.Device], Time: e.Time})
		}
		mem.Add(batch)
	}
	path := filepath.Join(t.TempDir(), "x.agix")
	require.NoError(t, WriteFile(path, devices, slices.Clone(entries)))
	f, err := OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, len(entries), f.Len())
	for range 200 {
		var lo, hi []byte
		if rng.IntN(4) > 0 {
			lo = AppendInt(nil, int64(rng.IntN(120)-60))
		}
		if rng.IntN(4) > 0 {
			hi = AppendInt(nil, int64(rng.IntN(120)-60))
		}
		want := entries.search(devices, lo, hi)
		var got, gotMem []Row
		f.Search(lo, hi, func(d string, t int64) { got = append(got, Row{d, t}) })
		mem.Search(lo, hi, func(d string, t int64) { gotMem = append(gotMem, Row{d, t}) })
		require.Equal(t, want, sortRows(got))
		require.Equal(t, want, sortRows(gotMem))
	}
	// SearchKeys: the entries of each of a sorted list of keys.
	for range 50 {
		var keys [][]byte
		var want []Row
		for k := int64(-60); k < 60; k += int64(1 + rng.IntN(20)) {
			key := AppendInt(nil, k)
			keys = append(keys, key)
			want = append(want, entries.search(devices, key, append(slices.Clone(key), 0))...)
		}
		var got, gotMem []Row
		f.SearchKeys(keys, func(d string, t int64) { got = append(got, Row{d, t}) })
		mem.SearchKeys(keys, func(d string, t int64) { gotMem = append(gotMem, Row{d, t}) })
		require.Equal(t, sortRows(want), sortRows(got))
		require.Equal(t, sortRows(want), sortRows(gotMem))
	}
	mem.AddPartial(Row{"p", 7})
	var all []Row
	mem.Search(AppendInt(nil, 1000), nil, func(d string, t int64) { all = append(all, Row{d, t}) })
	require.Equal(t, []Row{{"p", 7}}, all, "partial rows are always candidates")
}

func TestDamagedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.agix")
	require.NoError(t, WriteFile(path, []string{"d"}, []Entry{{Key: AppendInt(nil, 1), Time: 5}}))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, cut := range []int{len(data) - 1, 10, 0} {
		require.NoError(t, os.WriteFile(path, data[:cut], 0o644))
		_, err := OpenFile(path)
		require.True(t, errors.Is(err, ErrDamaged) && errors.Is(err, errs.ErrCorrupt), "cut at %d: %v", cut, err)
	}
	data[30] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = OpenFile(path)
	require.ErrorIs(t, err, ErrDamaged)
}
