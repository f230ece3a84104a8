package namesort

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shapes are kinds of name lists: each returns n names, some repeated.
var shapes = map[string]func(rng *rand.Rand, n int) []string{
	"fleet": func(rng *rand.Rand, n int) []string { // a long shared infix, numbers after it
		return gen(n, func(int) string {
			return fmt.Sprintf("site-%02d/building-7/floor-3/dev-%06d", rng.IntN(3), rng.IntN(n+1))
		})
	},
	"bytes": func(rng *rand.Rand, n int) []string { // anything: zero bytes, high bytes, empty
		return gen(n, func(int) string { return randomBytes(rng, rng.IntN(40)) })
	},
	"window lengths": func(rng *rand.Rand, n int) []string { // ending at or around 16-byte windows
		pre := strings.Repeat("P", rng.IntN(40))
		return gen(n, func(int) string {
			return pre + randomBytes(rng, []int{0, 1, 15, 16, 17, 31, 32, 33, 48}[rng.IntN(9)])
		})
	},
	"padding": func(rng *rand.Rand, n int) []string { // zero bytes against ended names, 0xff runs
		return gen(n, func(int) string {
			return "p" + strings.Repeat("\xff", rng.IntN(34)) + strings.Repeat("\x00", rng.IntN(3))
		})
	},
	"prefixes": func(rng *rand.Rand, n int) []string { // each a prefix of the others
		s := strings.Repeat("Q", rng.IntN(20)) + strings.Repeat("\x00", 40)
		return gen(n, func(int) string { return s[:rng.IntN(len(s)+1)] })
	},
	"infix": func(rng *rand.Rand, n int) []string { // a differing first byte, then 50 shared ones
		infix := strings.Repeat("\x00", rng.IntN(3)) + strings.Repeat("y", rng.IntN(50)) + strings.Repeat("\xff", rng.IntN(3))
		return gen(n, func(i int) string {
			if i == 0 {
				return "" // no common prefix at all
			}
			return string("ab\x00"[rng.IntN(3)]) + infix + randomBytes(rng, rng.IntN(3))
		})
	},
	"few": func(rng *rand.Rand, n int) []string { // duplicates of a few values
		vals := []string{"", "\x00", "same", "same\x00", "same" + strings.Repeat("z", 30), "same" + strings.Repeat("z", 30) + "\x00"}
		return gen(n, func(int) string { return vals[rng.IntN(len(vals))] })
	},
}

func gen(n int, name func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = name(i)
	}
	return out
}

func randomBytes(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for j := range b {
		b[j] = []byte{0, 1, 'a', 'b', 0x7f, 0x80, 0xfe, 0xff}[rng.IntN(8)]
	}
	return string(b)
}

// checkOrder checks that Order and Sort sort in as slices.Sort does.
func checkOrder(t *testing.T, in []string, what string) {
	order := Order(in)
	require.Len(t, order, len(in), what)
	got := make([]string, len(in))
	seen := make([]bool, len(in))
	for j, i := range order {
		require.False(t, seen[i], "index %d twice: %s", i, what)
		seen[i] = true
		got[j] = in[i]
	}
	want := slices.Clone(in)
	slices.Sort(want)
	require.Equal(t, want, got, what)
	Sort(in)
	require.Equal(t, want, in, "Sort: %s", what)
}

func TestOrderSortsAsStringsCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	defer func(old int) { parallelNames = old }(parallelNames)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs := 1; procs <= 5; procs++ {
		runtime.GOMAXPROCS(procs)
		for _, parallel := range []int{1 << 16, 0, 1, 3, 5} {
			parallelNames = parallel
			for kind, shape := range shapes {
				for _, n := range []int{0, 1, 2, 3, 7, 13, 100, 1000} {
					checkOrder(t, shape(rng, n), fmt.Sprintf("%s, %d names, %d procs, parallel from %d", kind, n, procs, parallel))
				}
			}
		}
	}
}

// FuzzOrder: names split from the input at byte 1, sorted by 1 to 5
// goroutines.
func FuzzOrder(f *testing.F) {
	f.Add([]byte("a\x00b\x01\x00\x01c\x01a\x00b\x00"), uint8(3))
	f.Add([]byte("site-1/xxxxxxxxxxxxxxxxxxxxxx/7\x01site-1/xxxxxxxxxxxxxxxxxxxxxx/10\x01site-0"), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, procs uint8) {
		defer func(old int) { parallelNames = old }(parallelNames)
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
		runtime.GOMAXPROCS(int(procs%5) + 1)
		parallelNames = int(procs / 5 % 4)
		checkOrder(t, strings.Split(string(data), "\x01"), fmt.Sprintf("%q", data))
	})
}

// BenchmarkOrder: a million device names in the order a map gives them.
func BenchmarkOrder(b *testing.B) {
	m := map[string]bool{}
	for d := range 1_000_000 {
		m[fmt.Sprintf("plant-%02d/dev-%07d", d%100, d)] = true
	}
	in := make([]string, 0, len(m))
	for s := range m {
		in = append(in, s)
	}
	b.Run("Order", func(b *testing.B) {
		for range b.N {
			Order(in)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for range b.N {
			slices.Sort(slices.Clone(in))
		}
	})
}
