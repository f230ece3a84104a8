// Package schema owns the catalog: types, their properties (typed columns)
// and indexes, each with a stable numeric id; immutable catalog versions;
// pending edits (Change) built from DDL operations (Op); the binary encoding
// of operations for the write-ahead log; and the DDL script parser.
//
// A *Catalog is immutable once returned: readers share it without locks and
// writers publish a new version built by a Change. Publishing copies only
// what changed, never the whole catalog, so N single-statement commits cost
// O(N log N) at worst, not O(N²): the by-name, by-id and index-name tables,
// and each type's properties, are persistent hash tries (trie.go) of which
// a change copies only the paths to the keys it touched (a few nodes of at
// most 32 slots), and a type edited by a Change is copied once, on its
// first edit in that Change, sharing its property trie. Adding a property
// to a type of 10,000 costs about what it costs on a type of 100
// (BenchmarkAddProperty in core/engine).
// Changes are not safe for concurrent use; the engine serializes them.
//
// Ids are assigned from counters kept in the catalog, so applying the same
// operations to the same catalog yields the same ids: the write-ahead log
// stores operations, not ids, and replay rebuilds identical catalogs.
//
// This package must not do I/O, must not import Arrow, and must never turn
// a user string into a file name.
package schema

// PropertyType is the type of a property. Each maps one-to-one to an Arrow type.
type PropertyType uint8

// Property types. The zero value is invalid.
const (
	Boolean   PropertyType = iota + 1 // Arrow bool, bit-packed
	Int32                             // Arrow int32
	Int64                             // Arrow int64
	Float                             // Arrow float32
	Double                            // Arrow float64
	String                            // Arrow utf8 (int32 offsets)
	Binary                            // Arrow binary (int32 offsets)
	Timestamp                         // Arrow timestamp[ns], int64 nanoseconds since the epoch
	Date                              // Arrow date32, int32 days since the epoch
)

// TypeID, PropertyID and IndexID identify catalog objects. Ids are never
// reused: a dropped and re-created property is a new column.
type (
	TypeID     uint32
	PropertyID uint32
	IndexID    uint32
)

// Property is one typed column of a type.
type Property struct {
	ID   PropertyID
	Name string
	Type PropertyType
}

// Index is a UNIQUE or NOTUNIQUE index over one or more properties of a type.
type Index struct {
	ID         IndexID
	Name       string
	Unique     bool
	Properties []PropertyID
}

// OpKind is the kind of a DDL operation.
type OpKind uint8

// DDL operation kinds.
const (
	CreateType OpKind = iota + 1
	DropType
	CreateProperty
	DropProperty
	CreateIndex
	DropIndex
	SetTime // fixes how a type's time column is typed in Arrow (Op.TimeUnit, Op.TimeZone)
	SetTTL  // sets a type's time to live (Op.TTL, nanoseconds; 0: none)
)

// Op is one DDL statement. Fields that do not apply to Kind are zero.
type Op struct {
	Kind         OpKind
	Type         string
	Property     string       // CreateProperty, DropProperty
	PropertyType PropertyType // CreateProperty
	Index        string       // DropIndex; CreateIndex (empty: generated "Type[p1,p2]")
	Properties   []string     // CreateIndex, in key order
	Unique       bool         // CreateIndex
	IfExists     bool         // Drop*: no error when absent
	IfNotExists  bool         // Create*: no error when present
	TimeUnit     string       // SetTime: "" (plain int64), "s", "ms", "us" or "ns"
	TimeZone     string       // SetTime: Arrow timestamp time zone, "" for none
	TTL          int64        // SetTTL: nanoseconds, 0 for none
}
