package schema

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/arcadego/arcadego/core/errs"
)

// Change is a pending edit of a catalog. Not safe for concurrent use.
//
// work is the catalog as edited so far. Its tries and Types share
// everything with base except what this Change touched; nodes and Types
// whose owner is tok were made by this Change and are edited in place, so
// a Type touched by many operations is copied once. Catalog() hands work
// out as a published version and replaces tok, which freezes everything
// made so far: later operations copy again instead of editing what the
// published version holds.
//
// Every operation validates completely before it edits anything, which is
// what keeps a failed Apply from leaving a partial effect.
type Change struct {
	base      *Catalog
	work      Catalog
	tok       *owner
	ops       []Op
	published *Catalog // what Catalog() returned, until the next recorded op
}

// Edit starts a change on top of c. c itself is never modified.
func (c *Catalog) Edit() *Change {
	return &Change{base: c, work: *c, tok: new(owner)}
}

// Base returns the catalog the change started from.
func (ch *Change) Base() *Catalog { return ch.base }

// Ops returns the operations applied so far, as recorded (IF [NOT] EXISTS
// operations that were no-ops are omitted). Recorded operations keep only
// the fields that apply to their kind. The caller must not modify them.
func (ch *Change) Ops() []Op { return ch.ops }

// Catalog returns the catalog as edited so far; calling Apply afterwards
// does not modify the returned catalog. With no recorded operations it is
// the base catalog itself; otherwise its version is the base's plus one.
func (ch *Change) Catalog() *Catalog {
	if len(ch.ops) == 0 {
		return ch.base
	}
	if ch.published == nil {
		c := new(Catalog)
		*c = ch.work
		ch.published = c
		ch.tok = new(owner)
	}
	return ch.published
}

// Apply validates op against the catalog as edited so far and records it.
// On error the change is exactly as before the call. Errors wrap
// errs.ErrAlreadyExists, errs.ErrNotFound or errs.ErrInvalidArgument and
// name the offending objects. Applying the same operations to the same
// catalog always assigns the same ids.
func (ch *Change) Apply(op Op) error {
	var changed bool
	var err error
	switch op.Kind {
	case CreateType:
		changed, err = ch.createType(op)
	case DropType:
		changed, err = ch.dropType(op)
	case CreateProperty:
		changed, err = ch.createProperty(op)
	case DropProperty:
		changed, err = ch.dropProperty(op)
	case CreateIndex:
		changed, err = ch.createIndex(op)
	case DropIndex:
		changed, err = ch.dropIndex(op)
	case SetTime:
		changed, err = ch.setTime(op)
	default:
		err = fmt.Errorf("unknown operation kind %d: %w", op.Kind, errs.ErrInvalidArgument)
	}
	if err != nil || !changed {
		return err
	}
	ch.ops = append(ch.ops, normalize(op))
	ch.work.version = ch.base.version + 1
	ch.published = nil
	return nil
}

// normalize keeps the fields that apply to op.Kind, and copies the slice
// so the caller's later edits cannot reach the record.
func normalize(op Op) Op {
	n := Op{Kind: op.Kind, Type: op.Type}
	switch op.Kind {
	case CreateType:
		n.IfNotExists = op.IfNotExists
	case DropType:
		n.IfExists = op.IfExists
	case CreateProperty:
		n.Property, n.PropertyType, n.IfNotExists = op.Property, op.PropertyType, op.IfNotExists
	case DropProperty:
		n.Property, n.IfExists = op.Property, op.IfExists
	case CreateIndex:
		n.Index, n.Properties, n.Unique, n.IfNotExists = op.Index, slices.Clone(op.Properties), op.Unique, op.IfNotExists
	case DropIndex:
		n.Index, n.IfExists = op.Index, op.IfExists
	case SetTime:
		n.TimeUnit, n.TimeZone = op.TimeUnit, op.TimeZone
	}
	return n
}

// errIDSpace is returned when a 32-bit id counter is used up.
func errIDSpace(what string) error {
	return fmt.Errorf("no %s ids left: %w", what, errs.ErrInternal)
}

// mutableType returns a version of t that this Change may edit, copying
// it (and re-linking the copy in the tables) on the first edit only.
func (ch *Change) mutableType(t *Type) *Type {
	if t.owner == ch.tok {
		return t
	}
	c := t.clone(ch.tok)
	ch.putType(c)
	return c
}

func (ch *Change) putType(t *Type) {
	ch.work.byName.set(ch.tok, hashString(t.Name), t.Name, t)
	ch.work.byID.set(ch.tok, hashID(t.ID), t.ID, t)
}

// liveType finds the type an operation works on.
func (ch *Change) liveType(verb, name string) (*Type, error) {
	if err := ValidateName("type", name); err != nil {
		return nil, fmt.Errorf("%s: %w", verb, err)
	}
	t, ok := ch.work.Type(name)
	if !ok {
		return nil, fmt.Errorf("%s: type %s: %w", verb, quote(name), errs.ErrNotFound)
	}
	return t, nil
}

func (ch *Change) createType(op Op) (bool, error) {
	if err := ValidateName("type", op.Type); err != nil {
		return false, fmt.Errorf("create type: %w", err)
	}
	if _, ok := ch.work.Type(op.Type); ok {
		if op.IfNotExists {
			return false, nil
		}
		return false, fmt.Errorf("create type %s: %w", quote(op.Type), errs.ErrAlreadyExists)
	}
	if ch.work.lastType == math.MaxUint32 {
		return false, errIDSpace("type")
	}
	ch.work.lastType++
	ch.putType(&Type{ID: ch.work.lastType, Name: op.Type, owner: ch.tok, propByName: map[string]*Property{}})
	return true, nil
}

func (ch *Change) dropType(op Op) (bool, error) {
	if err := ValidateName("type", op.Type); err != nil {
		return false, fmt.Errorf("drop type: %w", err)
	}
	t, ok := ch.work.Type(op.Type)
	if !ok {
		if op.IfExists {
			return false, nil
		}
		return false, fmt.Errorf("drop type %s: %w", quote(op.Type), errs.ErrNotFound)
	}
	for _, ix := range t.indexes {
		ch.work.indexes.delete(ch.tok, hashString(ix.Name), ix.Name)
	}
	ch.work.byName.delete(ch.tok, hashString(t.Name), t.Name)
	ch.work.byID.delete(ch.tok, hashID(t.ID), t.ID)
	return true, nil
}

func (ch *Change) createProperty(op Op) (bool, error) {
	verb := "create property"
	if err := validatePropertyName(op.Property); err != nil {
		return false, fmt.Errorf("%s on %s: %w", verb, quote(op.Type), err)
	}
	verb = fmt.Sprintf("create property %s", quote(op.Property))
	t, err := ch.liveType(verb, op.Type)
	if err != nil {
		return false, err
	}
	if _, ok := t.propByName[op.Property]; ok {
		if op.IfNotExists {
			return false, nil
		}
		return false, fmt.Errorf("%s on %s: %w", verb, quote(op.Type), errs.ErrAlreadyExists)
	}
	if !op.PropertyType.Valid() {
		return false, fmt.Errorf("%s on %s: bad property type %s: %w", verb, quote(op.Type), op.PropertyType, errs.ErrInvalidArgument)
	}
	if ch.work.lastProp == math.MaxUint32 {
		return false, errIDSpace("property")
	}
	ch.work.lastProp++
	p := &Property{ID: ch.work.lastProp, Name: op.Property, Type: op.PropertyType}
	t = ch.mutableType(t)
	t.props = append(t.props, p)
	t.propByName[p.Name] = p
	return true, nil
}

func (ch *Change) dropProperty(op Op) (bool, error) {
	if err := ValidateName("property", op.Property); err != nil {
		return false, fmt.Errorf("drop property on %s: %w", quote(op.Type), err)
	}
	verb := fmt.Sprintf("drop property %s", quote(op.Property))
	t, err := ch.liveType(verb, op.Type)
	if err != nil {
		return false, err
	}
	p, ok := t.propByName[op.Property]
	if !ok {
		if op.IfExists {
			return false, nil
		}
		return false, fmt.Errorf("%s on %s: %w", verb, quote(op.Type), errs.ErrNotFound)
	}
	for _, ix := range t.indexes {
		if slices.Contains(ix.Properties, p.ID) {
			return false, fmt.Errorf("%s on %s: used by index %s; drop the index first: %w",
				verb, quote(op.Type), quote(ix.Name), errs.ErrInvalidArgument)
		}
	}
	t = ch.mutableType(t)
	i, _ := slices.BinarySearchFunc(t.props, p.ID, func(q *Property, id PropertyID) int { return cmpID(q.ID, id) })
	t.props = slices.Delete(t.props, i, i+1)
	delete(t.propByName, p.Name)
	return true, nil
}

// IndexName returns the name CREATE INDEX gives an index when none is
// given, ArcadeDB style: "Type[p1,p2]".
func IndexName(typ string, props []string) string {
	return typ + "[" + strings.Join(props, ",") + "]"
}

func (ch *Change) createIndex(op Op) (bool, error) {
	verb := "create index"
	if op.Index != "" {
		verb = fmt.Sprintf("create index %s", quote(op.Index))
		if err := ValidateName("index", op.Index); err != nil {
			return false, fmt.Errorf("create index: %w", err)
		}
	}
	if len(op.Properties) == 0 {
		return false, fmt.Errorf("%s on %s: no properties: %w", verb, quote(op.Type), errs.ErrInvalidArgument)
	}
	for i, name := range op.Properties {
		if err := ValidateName("property", name); err != nil {
			return false, fmt.Errorf("%s on %s: %w", verb, quote(op.Type), err)
		}
		if slices.Contains(op.Properties[:i], name) {
			return false, fmt.Errorf("%s on %s: property %s listed twice: %w", verb, quote(op.Type), quote(name), errs.ErrInvalidArgument)
		}
	}
	t, err := ch.liveType(verb, op.Type)
	if err != nil {
		return false, err
	}
	name := op.Index
	if name == "" {
		name = IndexName(op.Type, op.Properties)
		verb = fmt.Sprintf("create index %s", quote(name))
		if len(name) > MaxNameLen {
			return false, fmt.Errorf("%s: generated name is longer than %d bytes; give the index a name: %w", verb, MaxNameLen, errs.ErrInvalidArgument)
		}
	}
	if owner, ok := ch.work.indexes.get(hashString(name), name); ok {
		if op.IfNotExists {
			return false, nil
		}
		on, _ := ch.work.TypeByID(owner)
		return false, fmt.Errorf("%s: an index of that name exists on %s: %w", verb, quote(on.Name), errs.ErrAlreadyExists)
	}
	ids := make([]PropertyID, len(op.Properties))
	for i, pn := range op.Properties {
		p, ok := t.propByName[pn]
		if !ok {
			return false, fmt.Errorf("%s on %s: property %s: %w", verb, quote(op.Type), quote(pn), errs.ErrNotFound)
		}
		ids[i] = p.ID
	}
	if ch.work.lastIndex == math.MaxUint32 {
		return false, errIDSpace("index")
	}
	ch.work.lastIndex++
	t = ch.mutableType(t)
	t.indexes = append(t.indexes, &Index{ID: ch.work.lastIndex, Name: name, Unique: op.Unique, Properties: ids})
	ch.work.indexes.set(ch.tok, hashString(name), name, t.ID)
	return true, nil
}

func (ch *Change) dropIndex(op Op) (bool, error) {
	if err := ValidateName("index", op.Index); err != nil {
		return false, fmt.Errorf("drop index: %w", err)
	}
	verb := fmt.Sprintf("drop index %s", quote(op.Index))
	if op.Type != "" {
		if err := ValidateName("type", op.Type); err != nil {
			return false, fmt.Errorf("%s: %w", verb, err)
		}
	}
	tid, ok := ch.work.indexes.get(hashString(op.Index), op.Index)
	if !ok {
		if op.IfExists {
			return false, nil
		}
		if op.Type != "" {
			return false, fmt.Errorf("%s on %s: %w", verb, quote(op.Type), errs.ErrNotFound)
		}
		return false, fmt.Errorf("%s: %w", verb, errs.ErrNotFound)
	}
	t, _ := ch.work.TypeByID(tid)
	if op.Type != "" && op.Type != t.Name {
		return false, fmt.Errorf("%s on %s: the index belongs to type %s: %w", verb, quote(op.Type), quote(t.Name), errs.ErrInvalidArgument)
	}
	t = ch.mutableType(t)
	i := slices.IndexFunc(t.indexes, func(ix *Index) bool { return ix.Name == op.Index })
	t.indexes = slices.Delete(t.indexes, i, i+1)
	ch.work.indexes.delete(ch.tok, hashString(op.Index), op.Index)
	return true, nil
}

// ValidTimeUnit reports whether u is a time unit SetTime accepts.
func ValidTimeUnit(u string) bool {
	switch u {
	case "", "s", "ms", "us", "ns":
		return true
	}
	return false
}

func (ch *Change) setTime(op Op) (bool, error) {
	t, err := ch.liveType("set time", op.Type)
	if err != nil {
		return false, err
	}
	verb := fmt.Sprintf("set time of %s", quote(op.Type))
	if !ValidTimeUnit(op.TimeUnit) {
		return false, fmt.Errorf("%s: unit %s is not one of \"\", s, ms, us, ns: %w", verb, quote(op.TimeUnit), errs.ErrInvalidArgument)
	}
	if op.TimeZone != "" {
		if op.TimeUnit == "" {
			return false, fmt.Errorf("%s: time zone %s needs a unit: %w", verb, quote(op.TimeZone), errs.ErrInvalidArgument)
		}
		if reason := nameProblem(op.TimeZone); reason != "" {
			return false, fmt.Errorf("%s: time zone %s: %s: %w", verb, quote(op.TimeZone), reason, errs.ErrInvalidArgument)
		}
	}
	if t.TimeSet {
		if t.TimeUnit == op.TimeUnit && t.TimeZone == op.TimeZone {
			return false, nil
		}
		return false, fmt.Errorf("%s to unit %q zone %q: already unit %q zone %q: %w",
			verb, op.TimeUnit, op.TimeZone, t.TimeUnit, t.TimeZone, errs.ErrInvalidArgument)
	}
	t = ch.mutableType(t)
	t.TimeSet, t.TimeUnit, t.TimeZone = true, op.TimeUnit, op.TimeZone
	return true, nil
}
