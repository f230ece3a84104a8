package schema

import (
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// Type is one type (a table) in one catalog version. Immutable once its
// catalog is published: a Change that edits a type edits its own copy,
// made on the first edit of that type in that Change.
//
// Its properties are a persistent trie by name (see trie), so that a copy
// shares it and adding or dropping one property costs O(log32 width)
// nodes, not a copy of every property: a type of 10,000 properties grows
// by one about as cheaply as a type of 100. Creation order is id order
// (property ids come from one catalog-wide counter that only grows):
// Properties sorts once per version and keeps the list, which
// PropertyByID searches.
// indexes is in creation (= ID) order.
type Type struct {
	ID       TypeID
	Name     string
	TimeSet  bool   // a SetTime op has fixed the time representation
	TimeUnit string // "" (plain int64), "s", "ms", "us" or "ns"
	TimeZone string
	// TTL, when > 0, is how long a row lives, in nanoseconds: scans skip
	// rows older than now minus TTL, and flushes and compactions drop
	// them. Only types with timestamp times have one.
	TTL int64

	owner   *owner // the Change token that may still edit this Type in place (see Change)
	byName  trie[string, *Property, nameHash]
	sorted  atomic.Pointer[[]*Property] // Properties' list, made on first use
	indexes []*Index
}

// Property returns the live property called name.
func (t *Type) Property(name string) (*Property, bool) { return t.byName.get(name) }

// addProperty adds p; t must be editable (owned by the caller's Change).
func (t *Type) addProperty(p *Property) {
	t.byName.set(t.owner, p.Name, p)
	t.sorted.Store(nil)
}

// removeProperty removes p, a live property; t must be editable.
func (t *Type) removeProperty(p *Property) {
	t.byName.delete(t.owner, p.Name)
	t.sorted.Store(nil)
}

// PropertyByID returns the live property with that id.
func (t *Type) PropertyByID(id PropertyID) (*Property, bool) {
	props := t.Properties()
	i, ok := slices.BinarySearchFunc(props, id, func(p *Property, id PropertyID) int { return cmpID(p.ID, id) })
	if !ok {
		return nil, false
	}
	return props[i], true
}

// NumProperties returns the number of live properties.
func (t *Type) NumProperties() int { return t.byName.len() }

// Properties returns the live properties in creation order. The first call
// on a version sorts them (O(n log n)); later calls return the same list.
// The caller must not modify the slice.
func (t *Type) Properties() []*Property {
	if p := t.sorted.Load(); p != nil {
		return *p
	}
	out := make([]*Property, 0, t.byName.len())
	t.byName.each(func(_ string, p *Property) bool {
		out = append(out, p)
		return true
	})
	slices.SortFunc(out, func(a, b *Property) int { return cmpID(a.ID, b.ID) })
	t.sorted.Store(&out)
	return out
}

// Index returns the index called name.
func (t *Type) Index(name string) (*Index, bool) {
	for _, ix := range t.indexes {
		if ix.Name == name {
			return ix, true
		}
	}
	return nil, false
}

// Indexes returns the indexes in creation order. The caller must not
// modify the slice or the indexes' Properties.
func (t *Type) Indexes() []*Index { return t.indexes }

// clone returns a copy of t that own may edit. The property tries are
// shared (their nodes are copied on first write); the short index list is
// copied here, once per Change.
func (t *Type) clone(own *owner) *Type {
	c := &Type{ID: t.ID, Name: t.Name, TimeSet: t.TimeSet, TimeUnit: t.TimeUnit, TimeZone: t.TimeZone, TTL: t.TTL,
		owner: own, byName: t.byName, indexes: slices.Clone(t.indexes)}
	c.sorted.Store(t.sorted.Load()) // the same properties until c is edited
	return c
}

func cmpID[T ~uint32](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Catalog is one immutable version of the schema. Readers share it without
// locks; the engine publishes new versions with an atomic pointer swap.
//
// The three tables are persistent tries (see trie), so a new version
// shares all but the edited paths with the one it came from. The counters
// hold the last id handed out of each kind; ids start at 1 and are never
// reused, even after a drop.
type Catalog struct {
	version   uint64
	lastType  TypeID
	lastProp  PropertyID
	lastIndex IndexID

	byName  trie[string, *Type, nameHash]
	byID    trie[TypeID, *Type, idHash]
	indexes trie[string, TypeID, nameHash] // every index name in the catalog → its type
}

// Empty returns the empty catalog (version 0).
func Empty() *Catalog { return &Catalog{} }

// Version counts the changes committed to reach this catalog.
func (c *Catalog) Version() uint64 { return c.version }

// Type returns the type called name.
func (c *Catalog) Type(name string) (*Type, bool) {
	return c.byName.get(name)
}

// TypeByID returns the live type with that id.
func (c *Catalog) TypeByID(id TypeID) (*Type, bool) {
	return c.byID.get(id)
}

// IndexByName returns the index called name, wherever it is, and its
// type. Index names are unique in the whole catalog.
func (c *Catalog) IndexByName(name string) (*Index, *Type, bool) {
	tid, ok := c.indexes.get(name)
	if !ok {
		return nil, nil, false
	}
	t, ok := c.TypeByID(tid)
	if !ok {
		return nil, nil, false
	}
	ix, ok := t.Index(name)
	return ix, t, ok
}

// Types returns all types sorted by name. It costs O(n log n): it is for
// listings and snapshots, not for per-statement paths.
func (c *Catalog) Types() []*Type {
	out := make([]*Type, 0, c.byName.len())
	c.byName.each(func(_ string, t *Type) bool {
		out = append(out, t)
		return true
	})
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].Name, out[j].Name) < 0 })
	return out
}

// Len returns the number of types.
func (c *Catalog) Len() int { return c.byName.len() }

// LastIDs returns the last type, property and index ids handed out (0 when
// none): the counters that make replay assign the same ids.
func (c *Catalog) LastIDs() (TypeID, PropertyID, IndexID) {
	return c.lastType, c.lastProp, c.lastIndex
}
