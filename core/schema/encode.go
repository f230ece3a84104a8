package schema

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/arcadego/arcadego/core/errs"
)

// Encoding of operations (one WAL record may hold several lists):
//
//	list   = uvarint(count) op*
//	op     = kind:byte flags:byte fields
//	flags  = bit 0 IfExists, bit 1 IfNotExists, bit 2 Unique
//	string = uvarint(len) bytes
//
// and the fields of each kind, in order:
//
//	CreateType, DropType           Type
//	CreateProperty                 Type Property PropertyType:byte
//	DropProperty                   Type Property
//	CreateIndex                    Type Index uvarint(n) Properties[n]
//	DropIndex                      Type Index
//	SetTime                        Type TimeUnit TimeZone
//	SetTTL                         Type varint(TTL)
//
// Only the fields that apply to a kind are written. Decoding checks the
// framing (kinds, flags, lengths, property types), not the names: applying
// the decoded operations validates them again.

const (
	flagIfExists = 1 << iota
	flagIfNotExists
	flagUnique
	flagsKnown = flagIfExists | flagIfNotExists | flagUnique
)

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendOps appends the binary encoding of ops to dst. Operations of an
// unknown kind (never produced by Apply or ParseScript) encode as records
// that DecodeOps refuses.
func AppendOps(dst []byte, ops []Op) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ops)))
	for i := range ops {
		op := &ops[i]
		var flags byte
		if op.IfExists {
			flags |= flagIfExists
		}
		if op.IfNotExists {
			flags |= flagIfNotExists
		}
		if op.Unique {
			flags |= flagUnique
		}
		dst = append(dst, byte(op.Kind), flags)
		dst = appendString(dst, op.Type)
		switch op.Kind {
		case CreateProperty:
			dst = appendString(dst, op.Property)
			dst = append(dst, byte(op.PropertyType))
		case DropProperty:
			dst = appendString(dst, op.Property)
		case CreateIndex:
			dst = appendString(dst, op.Index)
			dst = binary.AppendUvarint(dst, uint64(len(op.Properties)))
			for _, p := range op.Properties {
				dst = appendString(dst, p)
			}
		case DropIndex:
			dst = appendString(dst, op.Index)
		case SetTime:
			dst = appendString(dst, op.TimeUnit)
			dst = appendString(dst, op.TimeZone)
		case SetTTL:
			dst = binary.AppendVarint(dst, op.TTL)
		}
	}
	return dst
}

// decoder reads the encodings of this file. The first failure sticks in
// err and every later read returns zero values, so callers check once.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("schema encoding at byte %d: %s: %w", d.off, fmt.Sprintf(format, args...), errs.ErrCorrupt)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.buf) {
		d.fail("truncated")
		return 0
	}
	b := d.buf[d.off]
	d.off++
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

// count reads a count of items that take at least min bytes each, so that
// a corrupt count cannot make the caller allocate more than buf could hold.
func (d *decoder) count(min int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.buf)-d.off)/uint64(min) {
		d.fail("count %d exceeds the remaining %d bytes", v, len(d.buf)-d.off)
		return 0
	}
	return int(v)
}

func (d *decoder) string() string {
	n := d.count(1)
	if d.err != nil {
		return ""
	}
	s := string(d.buf[d.off : d.off+n])
	d.off += n
	return s
}

func (d *decoder) id() uint32 {
	v := d.uvarint()
	if v > 1<<32-1 {
		d.fail("id %d out of range", v)
		return 0
	}
	return uint32(v)
}

// DecodeOps decodes operations encoded by AppendOps and returns the rest of
// buf. Error kind: errs.ErrCorrupt.
func DecodeOps(buf []byte) ([]Op, []byte, error) {
	d := &decoder{buf: buf}
	ops := d.ops()
	if d.err != nil {
		return nil, buf, d.err
	}
	return ops, buf[d.off:], nil
}

func (d *decoder) ops() []Op {
	n := d.count(3) // kind, flags, an empty type name
	if d.err != nil || n == 0 {
		return nil
	}
	ops := make([]Op, n)
	for i := range ops {
		op := &ops[i]
		op.Kind = OpKind(d.byte())
		flags := d.byte()
		if flags&^flagsKnown != 0 {
			d.fail("unknown flags %#x", flags)
		}
		op.IfExists = flags&flagIfExists != 0
		op.IfNotExists = flags&flagIfNotExists != 0
		op.Unique = flags&flagUnique != 0
		op.Type = d.string()
		switch op.Kind {
		case CreateType, DropType:
		case CreateProperty:
			op.Property = d.string()
			op.PropertyType = PropertyType(d.byte())
			if d.err == nil && !op.PropertyType.Valid() {
				d.fail("bad property type %d", op.PropertyType)
			}
		case DropProperty:
			op.Property = d.string()
		case CreateIndex:
			op.Index = d.string()
			if k := d.count(1); k > 0 {
				op.Properties = make([]string, k)
				for j := range op.Properties {
					op.Properties[j] = d.string()
				}
			}
		case DropIndex:
			op.Index = d.string()
		case SetTime:
			op.TimeUnit = d.string()
			op.TimeZone = d.string()
		case SetTTL:
			op.TTL = d.varint()
		default:
			d.fail("unknown operation kind %d", op.Kind)
		}
		if d.err != nil {
			return nil
		}
	}
	return ops
}

// Encoding of a catalog snapshot (checkpoints):
//
//	snapshot = magic:"ACAT" format:byte(1 or 2) uvarint(version)
//	           uvarint(lastType) uvarint(lastProp) uvarint(lastIndex)
//	           uvarint(ntypes) type*            (types in id order)
//	type     = uvarint(id) string(name) timeSet:byte string(unit) string(zone)
//	           format 2 only: varint(ttl)
//	           uvarint(nprops) (uvarint(id) string(name) ptype:byte)*
//	           uvarint(nindexes) (uvarint(id) string(name) unique:byte
//	                              uvarint(nkeys) uvarint(propertyID)*)*
//
// DecodeCatalog checks everything a Change would have guaranteed (valid
// and unique names, ids in order and within the counters, indexes over live
// properties), so a damaged snapshot is refused rather than half-trusted.

// Format 2 adds the types' TTLs; a catalog without one is written as
// format 1, as before TTLs existed.
const (
	catalogMagic     = "ACAT"
	catalogFormat    = 1
	catalogFormatTTL = 2
)

// AppendCatalog appends a snapshot of c to dst: every type, property and
// index with its id, the id counters, the version and the time settings.
func AppendCatalog(dst []byte, c *Catalog) []byte {
	format := byte(catalogFormat)
	c.byID.each(func(_ TypeID, t *Type) bool {
		if t.TTL != 0 {
			format = catalogFormatTTL
		}
		return format == catalogFormat
	})
	dst = append(dst, catalogMagic...)
	dst = append(dst, format)
	dst = binary.AppendUvarint(dst, c.version)
	dst = binary.AppendUvarint(dst, uint64(c.lastType))
	dst = binary.AppendUvarint(dst, uint64(c.lastProp))
	dst = binary.AppendUvarint(dst, uint64(c.lastIndex))
	types := make([]*Type, 0, c.Len())
	c.byID.each(func(_ TypeID, t *Type) bool {
		types = append(types, t)
		return true
	})
	slices.SortFunc(types, func(a, b *Type) int { return cmpID(a.ID, b.ID) })
	dst = binary.AppendUvarint(dst, uint64(len(types)))
	for _, t := range types {
		dst = binary.AppendUvarint(dst, uint64(t.ID))
		dst = appendString(dst, t.Name)
		dst = append(dst, boolByte(t.TimeSet))
		dst = appendString(dst, t.TimeUnit)
		dst = appendString(dst, t.TimeZone)
		if format == catalogFormatTTL {
			dst = binary.AppendVarint(dst, t.TTL)
		}
		props := t.Properties()
		dst = binary.AppendUvarint(dst, uint64(len(props)))
		for _, p := range props {
			dst = binary.AppendUvarint(dst, uint64(p.ID))
			dst = appendString(dst, p.Name)
			dst = append(dst, byte(p.Type))
		}
		dst = binary.AppendUvarint(dst, uint64(len(t.indexes)))
		for _, ix := range t.indexes {
			dst = binary.AppendUvarint(dst, uint64(ix.ID))
			dst = appendString(dst, ix.Name)
			dst = append(dst, boolByte(ix.Unique))
			dst = binary.AppendUvarint(dst, uint64(len(ix.Properties)))
			for _, id := range ix.Properties {
				dst = binary.AppendUvarint(dst, uint64(id))
			}
		}
	}
	return dst
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func (d *decoder) bool() bool {
	switch b := d.byte(); b {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("bad boolean %d", b)
		return false
	}
}

func (d *decoder) name(what string) string {
	s := d.string()
	if d.err == nil {
		if reason := nameProblem(s); reason != "" {
			d.fail("%s name %s: %s", what, quote(s), reason)
		}
	}
	return s
}

// DecodeCatalog decodes a snapshot written by AppendCatalog; buf must hold
// exactly one. Error kind: errs.ErrCorrupt.
func DecodeCatalog(buf []byte) (*Catalog, error) {
	d := &decoder{buf: buf}
	c, err := d.catalog()
	if err != nil {
		return nil, err
	}
	if d.off != len(buf) {
		d.fail("%d bytes after the snapshot", len(buf)-d.off)
		return nil, d.err
	}
	return c, nil
}

func (d *decoder) catalog() (*Catalog, error) {
	if len(d.buf) < len(catalogMagic)+1 || string(d.buf[:len(catalogMagic)]) != catalogMagic {
		d.fail("not a catalog snapshot")
		return nil, d.err
	}
	d.off = len(catalogMagic)
	format := d.byte()
	if format != catalogFormat && format != catalogFormatTTL {
		d.fail("unknown snapshot format %d", format)
		return nil, d.err
	}
	c := &Catalog{version: d.uvarint()}
	c.lastType, c.lastProp, c.lastIndex = TypeID(d.id()), PropertyID(d.id()), IndexID(d.id())
	own := new(owner) // never handed out: the decoded catalog is frozen
	propIDs := make(map[PropertyID]bool)
	indexIDs := make(map[IndexID]bool)
	var prevType TypeID
	ntypes := d.count(8)
	for range ntypes {
		t := &Type{ID: TypeID(d.id()), Name: d.name("type"), owner: own}
		t.TimeSet = d.bool()
		t.TimeUnit, t.TimeZone = d.string(), d.string()
		if format == catalogFormatTTL {
			t.TTL = d.varint()
		}
		if d.err != nil {
			return nil, d.err
		}
		if t.TTL < 0 || t.TTL > 0 && t.TimeSet && t.TimeUnit == "" {
			d.fail("type %s: bad TTL %d", quote(t.Name), t.TTL)
		}
		switch {
		case t.ID <= prevType || t.ID > c.lastType:
			d.fail("type id %d out of order or above the counter %d", t.ID, c.lastType)
		case !ValidTimeUnit(t.TimeUnit) || (!t.TimeSet && (t.TimeUnit != "" || t.TimeZone != "")) ||
			(t.TimeZone != "" && (t.TimeUnit == "" || nameProblem(t.TimeZone) != "")):
			d.fail("type %s: bad time settings", quote(t.Name))
		}
		if _, dup := c.byName.get(t.Name); dup {
			d.fail("type %s twice", quote(t.Name))
		}
		prevType = t.ID
		nprops := d.count(3)
		var lastID PropertyID
		for range nprops {
			p := &Property{ID: PropertyID(d.id()), Name: d.name("property"), Type: PropertyType(d.byte())}
			if d.err != nil {
				return nil, d.err
			}
			switch {
			case p.ID == 0 || p.ID > c.lastProp || propIDs[p.ID] ||
				p.ID <= lastID:
				d.fail("property id %d out of order, reused or above the counter %d", p.ID, c.lastProp)
			case !p.Type.Valid():
				d.fail("property %s: bad type %d", quote(p.Name), p.Type)
			case p.Name == TimeColumn || p.Name == DeviceColumn:
				d.fail("reserved property name %s", quote(p.Name))
			}
			if _, dup := t.Property(p.Name); dup {
				d.fail("property %s twice in type %s", quote(p.Name), quote(t.Name))
			}
			propIDs[p.ID] = true
			lastID = p.ID
			t.addProperty(p)
		}
		nindexes := d.count(4)
		var prevIndex IndexID
		for range nindexes {
			ix := &Index{ID: IndexID(d.id()), Name: d.name("index"), Unique: d.bool()}
			nkeys := d.count(1)
			if d.err == nil && nkeys == 0 {
				d.fail("index %s has no properties", quote(ix.Name))
			}
			if d.err != nil {
				return nil, d.err
			}
			ix.Properties = make([]PropertyID, nkeys)
			for i := range ix.Properties {
				id := PropertyID(d.id())
				if _, ok := t.PropertyByID(id); !ok || slices.Contains(ix.Properties[:i], id) {
					d.fail("index %s: property id %d missing or repeated", quote(ix.Name), id)
				}
				ix.Properties[i] = id
			}
			if ix.ID <= prevIndex || ix.ID > c.lastIndex || indexIDs[ix.ID] {
				d.fail("index id %d out of order, reused or above the counter %d", ix.ID, c.lastIndex)
			}
			if _, dup := c.indexes.get(ix.Name); dup {
				d.fail("index %s twice", quote(ix.Name))
			}
			if d.err != nil {
				return nil, d.err
			}
			prevIndex = ix.ID
			indexIDs[ix.ID] = true
			t.indexes = append(t.indexes, ix)
			c.indexes.set(own, ix.Name, t.ID)
		}
		if d.err != nil {
			return nil, d.err
		}
		c.byName.set(own, t.Name, t)
		c.byID.set(own, t.ID, t)
	}
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}
