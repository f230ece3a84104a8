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

// names returns n names of the given kind, some of them repeated.
func names(rng *rand.Rand, kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		switch kind {
		case "fleet": // a long shared prefix, numbers after it
			out[i] = fmt.Sprintf("site-%02d/building-7/floor-3/dev-%06d", rng.IntN(3), rng.IntN(n))
		case "bytes": // short, anything: zero bytes, high bytes, empty
			b := make([]byte, rng.IntN(20))
			for j := range b {
				b[j] = []byte{0, 1, 'a', 'b', 0xff}[rng.IntN(5)]
			}
			out[i] = string(b)
		case "padding": // names that differ only past 16 bytes, or by a trailing zero byte
			out[i] = "p" + strings.Repeat("x", rng.IntN(20)) + strings.Repeat("\x00", rng.IntN(3))
		case "shared": // every name the same but a few
			out[i] = "same"
			if rng.IntN(10) == 0 {
				out[i] = fmt.Sprint("same", rng.IntN(5))
			}
		}
	}
	return out
}

func TestOrderSortsAsStringsCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	defer func(old int) { parallelNames = old }(parallelNames)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		for _, parallel := range []int{1 << 16, 5} {
			parallelNames = parallel
			for _, kind := range []string{"fleet", "bytes", "padding", "shared"} {
				for _, n := range []int{0, 1, 2, 3, 7, 100, 5000} {
					in := names(rng, kind, n)
					order := Order(in)
					require.Len(t, order, n)
					got := make([]string, n)
					seen := make([]bool, n)
					for j, i := range order {
						require.False(t, seen[i], "index %d twice", i)
						seen[i] = true
						got[j] = in[i]
					}
					want := slices.Clone(in)
					slices.Sort(want)
					require.Equal(t, want, got, "%s, %d names, %d procs, parallel from %d", kind, n, procs, parallel)
					Sort(in)
					require.Equal(t, want, in, "Sort: %s, %d names", kind, n)
				}
			}
		}
	}
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
