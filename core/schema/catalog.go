package schema

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// Type is one type (a table) in one catalog version. Immutable once its
// catalog is published: a Change that edits a type edits its own copy,
// made on the first edit of that type in that Change.
//
// Invariants: props is sorted by ID, which is also creation order, since
// property ids come from one catalog-wide counter that only grows;
// propByName is nil or indexes all of props by name (it is built once a
// type has more than propMapMin properties: most types are narrow, and a
// short scan costs less than a map per type, in memory and in copies);
// indexes is in creation (= ID) order.
type Type struct {
	ID       TypeID
	Name     string
	TimeSet  bool   // a SetTime op has fixed the time representation
	TimeUnit string // "" (plain int64), "s", "ms", "us" or "ns"
	TimeZone string

	owner      *owner // the Change token that may still edit this Type in place (see Change)
	props      []*Property
	propByName map[string]*Property
	indexes    []*Index
}

const propMapMin = 8

// Property returns the live property called name.
func (t *Type) Property(name string) (*Property, bool) {
	if t.propByName != nil {
		p, ok := t.propByName[name]
		return p, ok
	}
	for _, p := range t.props {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// addProperty appends p; t must be editable. more is how many properties
// the caller expects to add after p (see Change.Grow; 0 when unknown), so
// that a wide change sizes the list and the name map once instead of
// doubling them about log2(more) times.
func (t *Type) addProperty(p *Property, more int) {
	if len(t.props) == cap(t.props) {
		t.props = slices.Grow(t.props, max(len(t.props), more)+1) // double (see Change.Apply)
	}
	t.props = append(t.props, p)
	switch {
	case t.propByName == nil && len(t.props)+more > propMapMin,
		t.propByName != nil && more > len(t.propByName):
		t.propByName = make(map[string]*Property, 2*len(t.props)+more)
		for _, q := range t.props {
			t.propByName[q.Name] = q
		}
	case t.propByName != nil:
		t.propByName[p.Name] = p
	}
}

// removeProperty removes p, a live property; t must be editable.
func (t *Type) removeProperty(p *Property) {
	i, _ := slices.BinarySearchFunc(t.props, p.ID, func(q *Property, id PropertyID) int { return cmpID(q.ID, id) })
	t.props = slices.Delete(t.props, i, i+1)
	if t.propByName != nil {
		delete(t.propByName, p.Name)
	}
}

// PropertyByID returns the live property with that id.
func (t *Type) PropertyByID(id PropertyID) (*Property, bool) {
	i, ok := slices.BinarySearchFunc(t.props, id, func(p *Property, id PropertyID) int {
		return cmpID(p.ID, id)
	})
	if !ok {
		return nil, false
	}
	return t.props[i], true
}

// Properties returns the live properties in creation order. The caller must not modify the slice.
func (t *Type) Properties() []*Property { return t.props }

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

// clone returns a copy of t that own may edit. The property and index
// lists are copied here, once per Change, not once per operation.
func (t *Type) clone(own *owner) *Type {
	c := *t
	c.owner = own
	c.props = slices.Clone(t.props)
	c.propByName = maps.Clone(t.propByName)
	c.indexes = slices.Clone(t.indexes)
	return &c
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
