package schema

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type spreadHash struct{}

func (spreadHash) hash(k int) uint64 { return nameHash{}.hash(string(rune(k + 'A'))) }

type denseHash struct{}

func (denseHash) hash(k int) uint64 { return uint64(k) }

// collideHash gives many keys the same full hash: collision nodes.
type collideHash struct{}

func (collideHash) hash(k int) uint64 { return uint64(k % 3) }

// highBitsHash differs only in the top bits: the deepest levels.
type highBitsHash struct{}

func (highBitsHash) hash(k int) uint64 { return uint64(k%5) << 60 }

// TestTrieAgainstMap drives the trie and a Go map with the same random
// edits, with a well-spread hash and with hashes that collide on purpose,
// and checks that every frozen version keeps its contents.
func TestTrieAgainstMap(t *testing.T) {
	t.Run("spread", testTrieAgainstMap[spreadHash])
	t.Run("dense", testTrieAgainstMap[denseHash])
	t.Run("collide", testTrieAgainstMap[collideHash])
	t.Run("high bits", testTrieAgainstMap[highBitsHash])
}

func testTrieAgainstMap[H hasher[int]](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tr trie[int, int, H]
	ref := map[int]int{}
	type version struct {
		tr  trie[int, int, H]
		ref map[int]int
	}
	var versions []version
	own := new(owner)
	for step := range 4000 {
		k := rng.IntN(300)
		if rng.IntN(3) == 0 {
			tr.delete(own, k)
			delete(ref, k)
		} else {
			tr.set(own, k, step)
			ref[k] = step
		}
		if rng.IntN(50) == 0 { // publish: freeze and start a new owner
			versions = append(versions, version{tr, maps.Clone(ref)})
			own = new(owner)
		}
		if rng.IntN(200) == 0 {
			own = nil // nil owner edits nothing in place
		}
	}
	versions = append(versions, version{tr, ref})
	for i, v := range versions {
		require.Equal(t, len(v.ref), v.tr.len(), "version %d", i)
		got := map[int]int{}
		v.tr.each(func(k, val int) bool { got[k] = val; return true })
		assert.Equal(t, v.ref, got, "version %d", i)
		for k := range 300 {
			val, ok := v.tr.get(k)
			want, wantOK := v.ref[k]
			assert.Equal(t, wantOK, ok, "version %d key %d", i, k)
			assert.Equal(t, want, val, "version %d key %d", i, k)
		}
	}
}

func TestTrieDeleteToEmpty(t *testing.T) {
	var tr trie[string, int, nameHash]
	own := new(owner)
	for _, k := range []string{"a", "b", "c"} {
		tr.set(own, k, 1)
	}
	for _, k := range []string{"a", "b", "c", "c"} {
		tr.delete(own, k)
	}
	assert.Equal(t, 0, tr.len())
	assert.Nil(t, tr.root)
}

func TestTrieEachStops(t *testing.T) {
	var tr trie[int, int, denseHash]
	for k := range 100 {
		tr.set(nil, k, k)
	}
	n := 0
	tr.each(func(int, int) bool { n++; return n < 10 })
	assert.Equal(t, 10, n)
}
