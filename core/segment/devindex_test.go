package segment

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeviceIndexFindsEveryNameInPlace: every name of a directory is
// found at its position, through the table and through the binary search
// a file without a table uses; absent names are not found, and few of
// them cost a name comparison (a tag that matches along their probe).
func TestDeviceIndexFindsEveryNameInPlace(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 1000, 100_000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("plant-%02d/dev-%07d", i/(max(n, 100)/100), i) // sorted
		}
		indexed := &File{devices: names, index: newDeviceIndex(names)}
		searched := &File{devices: names}
		require.Equal(t, n > 0, indexed.index.slots != nil, "%d names", n)
		if n > 0 {
			assert.Greater(t, len(indexed.index.slots), n*3/2-1, "at most two thirds full")
		}
		for want, name := range names {
			for _, f := range []*File{indexed, searched} {
				got, ok := f.Index(name)
				require.True(t, ok, "%d names: %q missing", n, name)
				require.Equal(t, want, got, "%d names: %q", n, name)
			}
		}
		const absent = 100_000
		passed := 0
		for i := range absent {
			name := fmt.Sprintf("plant-%02d/other-%07d", i%100, i)
			for _, f := range []*File{indexed, searched} {
				_, ok := f.Index(name)
				require.False(t, ok, "%d names: %q found", n, name)
			}
			if tagMatches(indexed.index, DeviceHash(name)) {
				passed++
			}
		}
		// A tag of 32 - 17 bits for 100,000 names, probed a few slots
		// deep: well under 1%.
		if n > 0 {
			assert.Less(t, passed, absent/100, "%d names", n)
		} else {
			assert.Zero(t, passed, "an empty directory")
		}
	}
}

// TestDeviceIndexTagsCollide: with positions of 30 bits the tag has 2
// (a layout no directory gets: the table is built up to 2^28-1 names, tags
// of 4 bits at least), so most probes match a tag and compare names;
// lookups stay right.
func TestDeviceIndexTagsCollide(t *testing.T) {
	names := make([]string, 5000)
	for i := range names {
		names[i] = fmt.Sprintf("d%05d", i)
	}
	wide := buildDeviceIndex(names, 30)
	for p, name := range names {
		got, ok := wide.find(names, name, DeviceHash(name))
		require.True(t, ok, name)
		require.Equal(t, p, got, name)
	}
	for i := range 5000 {
		name := fmt.Sprintf("e%05d", i)
		_, ok := wide.probe(names, name, DeviceHash(name)) // the table alone: the filter would stop most
		require.False(t, ok, name)
	}
}

// tagMatches reports whether a slot along h's probe sequence carries h's
// tag: a lookup of h's name would compare names.
func tagMatches(x deviceIndex, h uint64) bool {
	if x.slots == nil {
		return false
	}
	i, tag := x.start(h)
	for s := x.slots[i]; s != 0; s = x.slots[i] {
		if s>>x.posBits == tag {
			return true
		}
		i = x.next(i)
	}
	return false
}

// TestDeviceFilterPassesFewAbsentNames: the filter before the table keeps
// every name and lets about 1% of absent ones through (10 bits a name).
func TestDeviceFilterPassesFewAbsentNames(t *testing.T) {
	for _, n := range []int{1, 7, 1000, 100_000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("plant-%02d/dev-%07d", i%100, i)
		}
		x := newDeviceIndex(names)
		f := &File{devices: names, index: x}
		for _, name := range names {
			require.True(t, x.mayHave(DeviceHash(name)), "%d names: %q missing", n, name)
			require.True(t, f.FirstProbe(DeviceHash(name)), "%d names: %q fails the first probe", n, name)
		}
		const absent = 100_000
		passed, first := 0, 0
		for i := range absent {
			h := DeviceHash(fmt.Sprintf("plant-%02d/other-%07d", i%100, i))
			if x.mayHave(h) {
				passed++
				require.True(t, f.FirstProbe(h), "a name the filter passes passes its first probe")
			}
			if f.FirstProbe(h) {
				first++
			}
		}
		// About 1%; the seed is the process's, so the bound leaves room.
		assert.Less(t, passed, absent*3/100, "%d names", n)
		// The first probe alone: one bit of a block about half full.
		assert.Less(t, first, absent*3/4, "%d names: the first probe rules out a good share", n)
	}
	// Without a filter (no names, or too many to index), every name passes.
	assert.True(t, (&File{}).FirstProbe(DeviceHash("x")))
}
