// Package namesort sorts many strings that may share long prefixes, such
// as the device names of a large fleet, without following each string's
// pointer at every comparison. It owns nothing else.
package namesort

import (
	"encoding/binary"
	"runtime"
	"slices"
	"strings"

	"github.com/arcadego/arcadego/core/internal/par"
)

// keyed is a name's place, the 16 bytes of it at some offset (big endian,
// zero padded), and how many bytes it has there: 0-16, or 17 for more.
type keyed struct {
	hi, lo uint64
	end    int32
	i      int32
}

// window is the bytes of a name a key holds.
const window = 16

// parallelNames is the fewest names Order splits among goroutines.
var parallelNames = 1 << 16

// Order returns the permutation that sorts names ascending (by byte, as
// strings.Compare): names[Order(names)[0]] is the least. Names need not
// be unique.
//
// A comparison sort of a million names scattered over the heap spends its
// time waiting for their bytes: two cache misses a comparison, some
// twenty comparisons a name (1.2-2.8 s for a million device names on a
// slow machine). Here the names are read in passes whose loads do not wait
// on one another: one for the prefix all names share, one for the 16
// bytes after it; the sort compares those keys, and names whose keys are
// equal are sorted again by their next 16 bytes, and so on. Long lists are
// split among the processors, each part sorted on its own and the parts
// then merged.
func Order(names []string) []int32 {
	parts := 1
	if len(names) >= parallelNames {
		parts = runtime.GOMAXPROCS(0)
	}
	bounds := func(p int) (int, int) { return p * len(names) / parts, (p + 1) * len(names) / parts }
	prefixes := make([]int, parts) // the common prefix of each part and names[0]
	par.Do(parts, parts, func(_, p int) error {
		lo, hi := bounds(p)
		n := 0
		if len(names) > 0 {
			n = len(names[0])
		}
		for _, s := range names[lo:hi] {
			n = commonPrefix(names[0][:n], s)
		}
		prefixes[p] = n
		return nil
	})
	skip := slices.Min(prefixes)
	keys := make([]keyed, len(names))
	par.Do(parts, parts, func(_, p int) error {
		lo, hi := bounds(p)
		for i := lo; i < hi; i++ {
			keys[i].i = int32(i)
		}
		sortTop(names, keys[lo:hi], skip)
		return nil
	})
	cmp := func(a, b keyed) int {
		if c := compareKeys(a, b); c != 0 || a.end <= window {
			return c
		}
		return strings.Compare(names[a.i][skip+window:], names[b.i][skip+window:])
	}
	for width := 1; width < parts; width *= 2 { // merge sorted runs of width parts, pairwise
		merged := make([]keyed, len(keys))
		par.Do((parts+2*width-1)/(2*width), parts, func(_, m int) error {
			first := 2 * m * width
			lo, _ := bounds(first)
			mid, _ := bounds(min(first+width, parts))
			_, hi := bounds(min(first+2*width, parts) - 1)
			merge(merged[lo:hi], keys[lo:min(mid, hi)], keys[min(mid, hi):hi], cmp)
			return nil
		})
		keys = merged
	}
	order := make([]int32, len(names))
	for j, k := range keys {
		order[j] = k.i
	}
	return order
}

// Sort sorts names in place, ascending, as Order orders them.
func Sort(names []string) {
	if len(names) < 2 {
		return
	}
	sorted := make([]string, len(names))
	for j, i := range Order(names) {
		sorted[j] = names[i]
	}
	copy(names, sorted)
}

// sortTop sorts keys by their names' bytes from off on, all of which
// agree before off, and leaves in each key its hi, lo and end at off (the
// merge of parts compares them). A run of keys equal there is sorted by
// the names' next bytes in a scratch copy, whose deeper keys the run's
// keys do not take.
func sortTop(names []string, keys []keyed, off int) {
	keyAt(names, keys, off)
	var scratch []keyed
	eachTie(keys, func(lo, hi int) {
		if scratch == nil {
			scratch = make([]keyed, len(keys))
		}
		run := scratch[lo:hi]
		copy(run, keys[lo:hi])
		sortDeeper(names, run, off+window)
		for j := range run {
			keys[lo+j].i = run[j].i
		}
	})
}

// sortDeeper sorts keys by their names' bytes from off on, all of which
// agree before off, overwriting their hi, lo and end: below the top, a
// run's keys are not looked at again once its ties are sorted.
func sortDeeper(names []string, keys []keyed, off int) {
	keyAt(names, keys, off)
	eachTie(keys, func(lo, hi int) { sortDeeper(names, keys[lo:hi], off+window) })
}

// keyAt sets each key's hi, lo and end from its name's bytes at off, and
// sorts the keys by them.
func keyAt(names []string, keys []keyed, off int) {
	var buf [window]byte
	for j := range keys {
		k := &keys[j]
		rest := names[k.i][off:]
		clear(buf[:])
		copy(buf[:], rest)
		k.hi, k.lo, k.end = binary.BigEndian.Uint64(buf[:8]), binary.BigEndian.Uint64(buf[8:]), int32(min(len(rest), window+1))
	}
	slices.SortFunc(keys, compareKeys)
}

// eachTie calls fn for each run [lo, hi) of sorted keys that are equal
// and whose names go on past their 16 bytes: the runs the next 16 bytes
// must sort.
func eachTie(keys []keyed, fn func(lo, hi int)) {
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && compareKeys(keys[lo], keys[hi]) == 0 {
			hi++
		}
		if hi-lo > 1 && keys[lo].end > window {
			fn(lo, hi)
		}
		lo = hi
	}
}

// compareKeys orders keys of names that agree before the key's bytes: by
// those bytes, then the name that ends first (its missing bytes padded
// with zeros, it is a prefix of the other). Keys equal with end 17 need
// the bytes after them.
func compareKeys(a, b keyed) int {
	switch {
	case a.hi != b.hi:
		return cmpUint(a.hi, b.hi)
	case a.lo != b.lo:
		return cmpUint(a.lo, b.lo)
	}
	return int(a.end - b.end)
}

// merge merges sorted a and b into out (len(a)+len(b) long), a's first on
// ties.
func merge(out, a, b []keyed, cmp func(a, b keyed) int) {
	i, j := 0, 0
	for k := range out {
		if j == len(b) || (i < len(a) && cmp(a[i], b[j]) <= 0) {
			out[k] = a[i]
			i++
		} else {
			out[k] = b[j]
			j++
		}
	}
}

func cmpUint(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && a[i:i+8] == b[i:i+8] {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
