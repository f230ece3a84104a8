package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMergeDevicesFindsEveryFileOfEveryName: the merged names are the
// sorted union of the lists, and each name's hits are exactly the files
// (and directory entries) that list it; memtable lists add names, not hits.
func TestMergeDevicesFindsEveryFileOfEveryName(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	for trial := range 50 {
		var lists []deviceList
		dirs := map[int32][]string{}
		for f := range rng.IntN(6) {
			var dir []string
			for d := range 40 {
				if rng.IntN(3) == 0 {
					dir = append(dir, fmt.Sprintf("d%02d", d))
				}
			}
			base := rng.IntN(len(dir) + 1)
			dirs[int32(f)] = dir
			lists = append(lists, deviceList{names: dir[base:], file: int32(f), base: int32(base)})
		}
		var mem []string
		for d := range 50 {
			if rng.IntN(10) == 0 {
				mem = append(mem, fmt.Sprintf("d%02d", d))
			}
		}
		lists = append(lists, deviceList{names: mem, file: -1})

		names, ends, hits := mergeDevices(lists)
		var want []string
		for _, l := range lists {
			want = append(want, l.names...)
		}
		slices.Sort(want)
		want = slices.Compact(want)
		require.Equal(t, len(want), len(names), "trial %d", trial)
		if len(want) > 0 {
			assert.Equal(t, want, names, "trial %d", trial)
		}
		require.Len(t, ends, len(names))
		from := int32(0)
		for k, name := range names {
			var got, wantHits []fileHit
			got = append(got, hits[from:ends[k]]...)
			from = ends[k]
			for _, l := range lists {
				if i := slices.Index(l.names, name); i >= 0 && l.file >= 0 {
					wantHits = append(wantHits, fileHit{file: l.file, index: l.base + int32(i)})
					assert.Equal(t, name, dirs[l.file][l.base+int32(i)])
				}
			}
			slices.SortFunc(got, func(a, b fileHit) int { return int(a.file - b.file) })
			assert.Equal(t, wantHits, got, "trial %d, %s", trial, name)
		}
	}
}
