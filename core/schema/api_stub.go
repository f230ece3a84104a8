package schema

// This file lists the package's API with placeholder bodies; the schema
// work replaces it with the real implementation (same signatures).

// String returns the DDL name of t ("INT64", ...).
func (t PropertyType) String() string { panic("unimplemented") }

// ParsePropertyType parses a DDL type name, case-insensitively. Accepted
// aliases: BOOL, INTEGER/INT (INT32), LONG/BIGINT (INT64), FLOAT32/REAL
// (FLOAT), FLOAT64 (DOUBLE), VARCHAR/TEXT (STRING), BYTES (BINARY),
// DATETIME (TIMESTAMP). Error kind: errs.ErrInvalidArgument.
func ParsePropertyType(s string) (PropertyType, error) { panic("unimplemented") }

// ValidateName checks a type, property or index name: non-empty valid UTF-8
// of at most 256 bytes without control characters.
func ValidateName(what, name string) error { panic("unimplemented") }

// Type is one type (a table) in one catalog version. Immutable.
type Type struct {
	ID       TypeID
	Name     string
	TimeSet  bool   // a SetTime op has fixed the time representation
	TimeUnit string // "" (plain int64), "s", "ms", "us" or "ns"
	TimeZone string
}

// Property returns the live property called name.
func (t *Type) Property(name string) (*Property, bool) { panic("unimplemented") }

// PropertyByID returns the live property with that id.
func (t *Type) PropertyByID(id PropertyID) (*Property, bool) { panic("unimplemented") }

// Properties returns the live properties in creation order. The caller must not modify the slice.
func (t *Type) Properties() []*Property { panic("unimplemented") }

// Index returns the index called name.
func (t *Type) Index(name string) (*Index, bool) { panic("unimplemented") }

// Indexes returns the indexes in creation order.
func (t *Type) Indexes() []*Index { panic("unimplemented") }

// Catalog is one immutable version of the schema.
type Catalog struct{}

// Empty returns the empty catalog (version 0).
func Empty() *Catalog { panic("unimplemented") }

// Version counts the changes committed to reach this catalog.
func (c *Catalog) Version() uint64 { panic("unimplemented") }

// Type returns the type called name.
func (c *Catalog) Type(name string) (*Type, bool) { panic("unimplemented") }

// TypeByID returns the live type with that id.
func (c *Catalog) TypeByID(id TypeID) (*Type, bool) { panic("unimplemented") }

// Types returns all types sorted by name.
func (c *Catalog) Types() []*Type { panic("unimplemented") }

// Len returns the number of types.
func (c *Catalog) Len() int { panic("unimplemented") }

// Change is a pending edit of a catalog. Not safe for concurrent use.
type Change struct{}

// Edit starts a change on top of c. c itself is never modified.
func (c *Catalog) Edit() *Change { panic("unimplemented") }

// Apply validates op against the catalog as edited so far and records it.
// On error the change is exactly as before the call.
func (ch *Change) Apply(op Op) error { panic("unimplemented") }

// Ops returns the operations applied so far, as recorded (IF [NOT] EXISTS
// operations that were no-ops are omitted).
func (ch *Change) Ops() []Op { panic("unimplemented") }

// Catalog returns the catalog as edited so far; calling Apply afterwards
// does not modify the returned catalog.
func (ch *Change) Catalog() *Catalog { panic("unimplemented") }

// AppendOps appends the binary encoding of ops to dst.
func AppendOps(dst []byte, ops []Op) []byte { panic("unimplemented") }

// DecodeOps decodes operations encoded by AppendOps and returns the rest of
// buf. Error kind: errs.ErrCorrupt.
func DecodeOps(buf []byte) ([]Op, []byte, error) { panic("unimplemented") }

// ParseScript parses a DDL script of ';'-separated statements. Errors carry
// line and column ("line 3, column 17: ...") and kind errs.ErrInvalidArgument.
func ParseScript(src string) ([]Op, error) { panic("unimplemented") }
