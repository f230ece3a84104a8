package schema

import (
	"hash/maphash"
	"math/bits"
)

// trie is a persistent hash array mapped trie: a map whose versions share
// structure. Changing one key copies only the nodes on that key's path
// (at most 13 nodes of at most 32 slots; about log32(n) in practice), so
// publishing a catalog version costs nearly the same with a thousand types
// as with a million: one more node per table each time the schema grows
// 32-fold. A fixed array of 256 sharded Go maps, the simpler alternative,
// still copies n/256 entries per write, which grows linearly with the schema.
//
// Ownership: a node whose owner is the caller's token may be edited in
// place; any other node is shared with published versions and is copied
// first (copy-on-first-write). Path copying keeps the invariant that an
// owned node's ancestors are owned too, so a frozen node never points to a
// node that someone may still edit. Changing the token freezes everything.
type trie[K comparable, V any, H hasher[K]] struct {
	root *tnode[K, V]
	n    int
}

// hasher hashes trie keys. Implementations are zero-sized types, so a zero
// trie is ready to use and each slot need not store its key's hash.
type hasher[K any] interface{ hash(K) uint64 }

// nameHash hashes names with a per-process seed, so that names chosen to
// collide cannot be prepared in advance.
type nameHash struct{}

var hashSeed = maphash.MakeSeed()

func (nameHash) hash(s string) uint64 { return maphash.String(hashSeed, s) }

// idHash uses the id itself: ids are dense and distinct, so they spread
// evenly over the low levels and never collide.
type idHash struct{}

func (idHash) hash(id TypeID) uint64 { return uint64(id) }

// owner is an edit token. It must not be zero-sized: pointers to distinct
// zero-sized values may compare equal.
type owner struct{ _ int }

const (
	levelBits = 5
	levelMask = 1<<levelBits - 1
)

// tnode is one trie node. Below hash depth 64 a node holds one slot per set
// bit of bitmap, in bit order. At depth >= 64 (all hash bits used) it is a
// collision node: bitmap is zero and every slot is a leaf with the same hash.
type tnode[K comparable, V any] struct {
	owner  *owner
	bitmap uint32
	slots  []tslot[K, V]
}

// tslot is a subtrie (child != nil) or a leaf (key, val).
type tslot[K comparable, V any] struct {
	child *tnode[K, V]
	key   K
	val   V
}

func (t *trie[K, V, H]) len() int { return t.n }

func (t *trie[K, V, H]) get(k K) (v V, ok bool) {
	var hs H
	h := hs.hash(k)
	n := t.root
	for shift := uint(0); n != nil; shift += levelBits {
		if shift >= 64 {
			for i := range n.slots {
				if n.slots[i].key == k {
					return n.slots[i].val, true
				}
			}
			return v, false
		}
		bit := uint32(1) << ((h >> shift) & levelMask)
		if n.bitmap&bit == 0 {
			return v, false
		}
		s := &n.slots[bits.OnesCount32(n.bitmap&(bit-1))]
		if s.child == nil {
			if s.key == k {
				return s.val, true
			}
			return v, false
		}
		n = s.child
	}
	return v, false
}

// set maps k to v, editing in place the nodes owned by own.
func (t *trie[K, V, H]) set(own *owner, k K, v V) {
	var hs H
	var added bool
	t.root, added = setNode[K, V, H](t.root, own, 0, hs.hash(k), tslot[K, V]{key: k, val: v})
	if added {
		t.n++
	}
}

// delete removes k, editing in place the nodes owned by own.
func (t *trie[K, V, H]) delete(own *owner, k K) {
	var hs H
	var removed bool
	t.root, removed = deleteNode(t.root, own, 0, hs.hash(k), k)
	if removed {
		t.n--
	}
}

// each calls fn for every entry, in no particular order, until fn returns false.
func (t *trie[K, V, H]) each(fn func(K, V) bool) {
	if t.root != nil {
		t.root.each(fn)
	}
}

func (n *tnode[K, V]) each(fn func(K, V) bool) bool {
	for i := range n.slots {
		s := &n.slots[i]
		if s.child != nil {
			if !s.child.each(fn) {
				return false
			}
		} else if !fn(s.key, s.val) {
			return false
		}
	}
	return true
}

// editable returns n itself if own may edit it, else a private copy with
// room for one more slot.
func (n *tnode[K, V]) editable(own *owner) *tnode[K, V] {
	if own != nil && n.owner == own {
		return n
	}
	slots := make([]tslot[K, V], len(n.slots), len(n.slots)+1)
	copy(slots, n.slots)
	return &tnode[K, V]{owner: own, bitmap: n.bitmap, slots: slots}
}

// setNode sets leaf, whose key hashes to h, in the subtrie n at depth shift.
func setNode[K comparable, V any, H hasher[K]](n *tnode[K, V], own *owner, shift uint, h uint64, leaf tslot[K, V]) (*tnode[K, V], bool) {
	if n == nil {
		// Room for a few more: a change that adds many keys fills new
		// nodes in place, and growing them one append at a time was
		// most of its allocations.
		slots := make([]tslot[K, V], 1, 4)
		slots[0] = leaf
		n = &tnode[K, V]{owner: own, slots: slots}
		if shift < 64 {
			n.bitmap = 1 << ((h >> shift) & levelMask)
		}
		return n, true
	}
	if shift >= 64 {
		for i := range n.slots {
			if n.slots[i].key == leaf.key {
				n = n.editable(own)
				n.slots[i].val = leaf.val
				return n, false
			}
		}
		n = n.editable(own)
		n.slots = append(n.slots, leaf)
		return n, true
	}
	bit := uint32(1) << ((h >> shift) & levelMask)
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	if n.bitmap&bit == 0 {
		n = n.editable(own)
		n.slots = append(n.slots, tslot[K, V]{})
		copy(n.slots[i+1:], n.slots[i:])
		n.slots[i] = leaf
		n.bitmap |= bit
		return n, true
	}
	s := n.slots[i]
	switch {
	case s.child != nil:
		child, added := setNode[K, V, H](s.child, own, shift+levelBits, h, leaf)
		if child != s.child {
			n = n.editable(own)
			n.slots[i].child = child
		}
		return n, added
	case s.key == leaf.key:
		n = n.editable(own)
		n.slots[i].val = leaf.val
		return n, false
	default:
		// Two keys share this slot: push the old leaf one level down.
		var hs H
		child, _ := setNode[K, V, H](nil, own, shift+levelBits, hs.hash(s.key), s)
		child, _ = setNode[K, V, H](child, own, shift+levelBits, h, leaf)
		n = n.editable(own)
		n.slots[i] = tslot[K, V]{child: child}
		return n, true
	}
}

func deleteNode[K comparable, V any](n *tnode[K, V], own *owner, shift uint, h uint64, k K) (*tnode[K, V], bool) {
	if n == nil {
		return nil, false
	}
	if shift >= 64 {
		for i := range n.slots {
			if n.slots[i].key == k {
				return n.removeSlot(own, i, 0), true
			}
		}
		return n, false
	}
	bit := uint32(1) << ((h >> shift) & levelMask)
	if n.bitmap&bit == 0 {
		return n, false
	}
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	s := n.slots[i]
	if s.child == nil {
		if s.key != k {
			return n, false
		}
		return n.removeSlot(own, i, bit), true
	}
	child, removed := deleteNode(s.child, own, shift+levelBits, h, k)
	if !removed {
		return n, false
	}
	if child == nil {
		return n.removeSlot(own, i, bit), true
	}
	n = n.editable(own)
	if len(child.slots) == 1 && child.slots[0].child == nil {
		// A lone leaf moves up, so the trie stays as shallow as if the
		// deleted key had never been there.
		n.slots[i] = child.slots[0]
	} else {
		n.slots[i].child = child
	}
	return n, true
}

// removeSlot drops slot i (and bit from the bitmap); nil when n empties.
func (n *tnode[K, V]) removeSlot(own *owner, i int, bit uint32) *tnode[K, V] {
	if len(n.slots) == 1 {
		return nil
	}
	n = n.editable(own)
	copy(n.slots[i:], n.slots[i+1:])
	n.slots[len(n.slots)-1] = tslot[K, V]{}
	n.slots = n.slots[:len(n.slots)-1]
	n.bitmap &^= bit
	return n
}
