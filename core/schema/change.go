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
	bump      uint64   // version step: 1 (Edit) or 0 (Continue)
}

// Edit starts a change on top of c. c itself is never modified.
func (c *Catalog) Edit() *Change {
	return &Change{base: c, work: *c, tok: new(owner), bump: 1}
}

// Continue is Edit for a catalog that is itself an unpublished result of
// the same commit (a transaction's view after its earlier statements): the
// result keeps c's version, so that a commit of many statements is one
// version, as it is when the log replays it as one change.
func (c *Catalog) Continue() *Change {
	ch := c.Edit()
	ch.bump = 0
	return ch
}

// Base returns the catalog the change started from.
func (ch *Change) Base() *Catalog { return ch.base }

// Ops returns the operations applied so far, as recorded (IF [NOT] EXISTS
// operations that were no-ops are omitted). Recorded operations keep only
// the fields that apply to their kind. The caller must not modify them.
func (ch *Change) Ops() []Op { return ch.ops }

// Grow says that about n more operations will follow: it makes room for
// them in the recorded list at once (a wide tablet's new columns).
func (ch *Change) Grow(n int) {
	ch.ops = slices.Grow(ch.ops, n)
}

// Catalog returns the catalog as edited so far; calling Apply afterwards
// does not modify the returned catalog. With no recorded operations it is
// the base catalog itself; otherwise its version is the base's plus one
// (plus none after Continue).
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
	case SetTTL:
		changed, err = ch.setTTL(op)
	default:
		err = fmt.Errorf("unknown operation kind %d: %w", op.Kind, errs.ErrInvalidArgument)
	}
	if err != nil || !changed {
		return err
	}
	if len(ch.ops) == cap(ch.ops) {
		// Double, where append would grow large slices by 1.25: a change
		// of 10,000 operations (a wide tablet's new columns) copies less.
		ch.ops = slices.Grow(ch.ops, len(ch.ops)+1)
	}
	ch.ops = append(ch.ops, normalize(op))
	ch.work.version = ch.base.version + ch.bump
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
	case SetTTL:
		n.TTL = op.TTL
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
	ch.work.byName.set(ch.tok, t.Name, t)
	ch.work.byID.set(ch.tok, t.ID, t)
}

// what names op and its objects for an error message. It is called only
// on failure, so the success path formats nothing.
func (op *Op) what() string {
	switch op.Kind {
	case CreateType:
		return "create type " + quote(op.Type)
	case DropType:
		return "drop type " + quote(op.Type)
	case CreateProperty:
		return "create property " + quote(op.Property) + " on " + quote(op.Type)
	case DropProperty:
		return "drop property " + quote(op.Property) + " on " + quote(op.Type)
	case CreateIndex:
		if op.Index == "" {
			return "create index on " + quote(op.Type)
		}
		return "create index " + quote(op.Index) + " on " + quote(op.Type)
	case DropIndex:
		if op.Type == "" {
			return "drop index " + quote(op.Index)
		}
		return "drop index " + quote(op.Index) + " on " + quote(op.Type)
	case SetTime:
		return "set time of " + quote(op.Type)
	case SetTTL:
		return "set TTL of " + quote(op.Type)
	}
	return fmt.Sprintf("operation %d", op.Kind)
}

func opError(op *Op, err error) error { return fmt.Errorf("%s: %w", op.what(), err) }

func opErrorf(op *Op, kind error, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", op.what(), fmt.Sprintf(format, args...), kind)
}

// liveType finds the type an operation works on.
func (ch *Change) liveType(op *Op) (*Type, error) {
	if err := ValidateName("type", op.Type); err != nil {
		return nil, opError(op, err)
	}
	t, ok := ch.work.Type(op.Type)
	if !ok {
		return nil, opErrorf(op, errs.ErrNotFound, "type %s", quote(op.Type))
	}
	return t, nil
}

func (ch *Change) createType(op Op) (bool, error) {
	if err := ValidateName("type", op.Type); err != nil {
		return false, opError(&op, err)
	}
	if _, ok := ch.work.Type(op.Type); ok {
		if op.IfNotExists {
			return false, nil
		}
		return false, opError(&op, errs.ErrAlreadyExists)
	}
	if ch.work.lastType == math.MaxUint32 {
		return false, errIDSpace("type")
	}
	ch.work.lastType++
	ch.putType(&Type{ID: ch.work.lastType, Name: op.Type, owner: ch.tok})
	return true, nil
}

func (ch *Change) dropType(op Op) (bool, error) {
	if err := ValidateName("type", op.Type); err != nil {
		return false, opError(&op, err)
	}
	t, ok := ch.work.Type(op.Type)
	if !ok {
		if op.IfExists {
			return false, nil
		}
		return false, opError(&op, errs.ErrNotFound)
	}
	for _, ix := range t.indexes {
		ch.work.indexes.delete(ch.tok, ix.Name)
	}
	ch.work.byName.delete(ch.tok, t.Name)
	ch.work.byID.delete(ch.tok, t.ID)
	return true, nil
}

func (ch *Change) createProperty(op Op) (bool, error) {
	if err := validatePropertyName(op.Property); err != nil {
		return false, opError(&op, err)
	}
	t, err := ch.liveType(&op)
	if err != nil {
		return false, err
	}
	if _, ok := t.Property(op.Property); ok {
		if op.IfNotExists {
			return false, nil
		}
		return false, opError(&op, errs.ErrAlreadyExists)
	}
	if !op.PropertyType.Valid() {
		return false, opErrorf(&op, errs.ErrInvalidArgument, "bad property type %s", op.PropertyType)
	}
	if ch.work.lastProp == math.MaxUint32 {
		return false, errIDSpace("property")
	}
	ch.work.lastProp++
	p := &Property{ID: ch.work.lastProp, Name: op.Property, Type: op.PropertyType}
	ch.mutableType(t).addProperty(p)
	return true, nil
}

func (ch *Change) dropProperty(op Op) (bool, error) {
	if err := ValidateName("property", op.Property); err != nil {
		return false, opError(&op, err)
	}
	t, err := ch.liveType(&op)
	if err != nil {
		return false, err
	}
	p, ok := t.Property(op.Property)
	if !ok {
		if op.IfExists {
			return false, nil
		}
		return false, opError(&op, errs.ErrNotFound)
	}
	for _, ix := range t.indexes {
		if slices.Contains(ix.Properties, p.ID) {
			return false, opErrorf(&op, errs.ErrInvalidArgument, "used by index %s; drop the index first", quote(ix.Name))
		}
	}
	ch.mutableType(t).removeProperty(p)
	return true, nil
}

// IndexName returns the name CREATE INDEX gives an index when none is
// given, ArcadeDB style: "Type[p1,p2]".
func IndexName(typ string, props []string) string {
	return typ + "[" + strings.Join(props, ",") + "]"
}

func (ch *Change) createIndex(op Op) (bool, error) {
	if op.Index != "" {
		if err := ValidateName("index", op.Index); err != nil {
			return false, opError(&op, err)
		}
	}
	if len(op.Properties) == 0 {
		return false, opErrorf(&op, errs.ErrInvalidArgument, "no properties")
	}
	for i, name := range op.Properties {
		if err := ValidateName("property", name); err != nil {
			return false, opError(&op, err)
		}
		if slices.Contains(op.Properties[:i], name) {
			return false, opErrorf(&op, errs.ErrInvalidArgument, "property %s listed twice", quote(name))
		}
	}
	t, err := ch.liveType(&op)
	if err != nil {
		return false, err
	}
	name := op.Index
	if name == "" {
		name = IndexName(op.Type, op.Properties)
		if len(name) > MaxNameLen {
			return false, opErrorf(&op, errs.ErrInvalidArgument,
				"generated name %s is longer than %d bytes; give the index a name", quote(name), MaxNameLen)
		}
	}
	if owner, ok := ch.work.indexes.get(name); ok {
		if op.IfNotExists {
			return false, nil
		}
		on, _ := ch.work.TypeByID(owner)
		return false, opErrorf(&op, errs.ErrAlreadyExists, "index %s exists on %s", quote(name), quote(on.Name))
	}
	ids := make([]PropertyID, len(op.Properties))
	for i, pn := range op.Properties {
		p, ok := t.Property(pn)
		if !ok {
			return false, opErrorf(&op, errs.ErrNotFound, "property %s", quote(pn))
		}
		ids[i] = p.ID
	}
	if ch.work.lastIndex == math.MaxUint32 {
		return false, errIDSpace("index")
	}
	ch.work.lastIndex++
	t = ch.mutableType(t)
	t.indexes = append(t.indexes, &Index{ID: ch.work.lastIndex, Name: name, Unique: op.Unique, Properties: ids})
	ch.work.indexes.set(ch.tok, name, t.ID)
	return true, nil
}

func (ch *Change) dropIndex(op Op) (bool, error) {
	if err := ValidateName("index", op.Index); err != nil {
		return false, opError(&op, err)
	}
	if op.Type != "" {
		if err := ValidateName("type", op.Type); err != nil {
			return false, opError(&op, err)
		}
	}
	tid, ok := ch.work.indexes.get(op.Index)
	if !ok {
		if op.IfExists {
			return false, nil
		}
		return false, opError(&op, errs.ErrNotFound)
	}
	t, _ := ch.work.TypeByID(tid)
	if op.Type != "" && op.Type != t.Name {
		return false, opErrorf(&op, errs.ErrInvalidArgument, "the index belongs to type %s", quote(t.Name))
	}
	t = ch.mutableType(t)
	i := slices.IndexFunc(t.indexes, func(ix *Index) bool { return ix.Name == op.Index })
	t.indexes = slices.Delete(t.indexes, i, i+1)
	ch.work.indexes.delete(ch.tok, op.Index)
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

func (ch *Change) setTTL(op Op) (bool, error) {
	t, err := ch.liveType(&op)
	if err != nil {
		return false, err
	}
	switch {
	case op.TTL < 0:
		return false, opErrorf(&op, errs.ErrInvalidArgument, "TTL %d is negative", op.TTL)
	case op.TTL > 0 && t.TimeSet && t.TimeUnit == "":
		return false, opErrorf(&op, errs.ErrInvalidArgument,
			"its times are plain integers, whose unit is unknown: a TTL needs timestamp times")
	case t.TTL == op.TTL:
		return false, nil
	}
	ch.mutableType(t).TTL = op.TTL
	return true, nil
}

func (ch *Change) setTime(op Op) (bool, error) {
	t, err := ch.liveType(&op)
	if err != nil {
		return false, err
	}
	if !ValidTimeUnit(op.TimeUnit) {
		return false, opErrorf(&op, errs.ErrInvalidArgument, "unit %s is not one of \"\", s, ms, us, ns", quote(op.TimeUnit))
	}
	if op.TimeZone != "" {
		if op.TimeUnit == "" {
			return false, opErrorf(&op, errs.ErrInvalidArgument, "time zone %s needs a unit", quote(op.TimeZone))
		}
		if reason := nameProblem(op.TimeZone); reason != "" {
			return false, opErrorf(&op, errs.ErrInvalidArgument, "time zone %s: %s", quote(op.TimeZone), reason)
		}
	}
	if t.TTL > 0 && op.TimeUnit == "" {
		return false, opErrorf(&op, errs.ErrInvalidArgument,
			"the type has a TTL, which needs timestamp times, not plain integers")
	}
	if t.TimeSet {
		if t.TimeUnit == op.TimeUnit && t.TimeZone == op.TimeZone {
			return false, nil
		}
		return false, opErrorf(&op, errs.ErrInvalidArgument, "to unit %q zone %q: already unit %q zone %q",
			op.TimeUnit, op.TimeZone, t.TimeUnit, t.TimeZone)
	}
	t = ch.mutableType(t)
	t.TimeSet, t.TimeUnit, t.TimeZone = true, op.TimeUnit, op.TimeZone
	return true, nil
}
