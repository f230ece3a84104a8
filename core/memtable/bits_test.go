package memtable

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The bitmap helpers against bit-by-bit loops, over every alignment.
func TestBitHelpers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, density := range []int{0, 1, 50} {
		t.Run(fmt.Sprint("density=", density), func(t *testing.T) {
			src := make([]byte, 40)
			for i := range len(src) * 8 {
				if rng.IntN(100) < density {
					src[i>>3] |= 1 << (i & 7)
				}
			}
			for from := range 70 {
				for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 130} {
					if from+n > len(src)*8 {
						continue
					}
					want := false
					for i := from; i < from+n; i++ {
						want = want || bitAt(src, i)
					}
					assert.Equal(t, want, anyBit(src, from, n), "anyBit(%d, %d)", from, n)

					for _, db := range []int{0, 5, 63} {
						dst := make([]uint64, wordsFor(db+n)+1)
						orBits(dst, db, src, from, n)
						set := make([]uint64, wordsFor(db+n)+1)
						setBits(set, db, db+n)
						for k := range n + 2 {
							d := db + k
							if d >= len(dst)*64 {
								break
							}
							wantOr := k < n && bitAt(src, from+k)
							assert.Equal(t, wantOr, loadBit(dst, d), "orBits from %d n %d db %d bit %d", from, n, db, k)
							assert.Equal(t, k < n, loadBit(set, d), "setBits n %d db %d bit %d", n, db, k)
						}
					}
				}
			}
		})
	}
}
