// Package tablet owns the in-memory form of an aligned tablet: a time column
// and any number of typed property columns in Arrow layout, plus the
// tablet's binary encoding in write-ahead log records.
//
// A tablet only borrows its buffers: the producer (arrowbridge, a Go
// caller) keeps them alive and unmodified until the call that takes the
// tablet returns. Consumers that keep data past that point copy it.
//
// This package must not import Arrow and must not do I/O.
package tablet

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
)

// Column is one property column in Arrow layout. Row i of the tablet is
// element Offset+i of the buffers.
type Column struct {
	Name string
	Type schema.PropertyType
	// Offset is the index of row 0 in the buffers (in bits for Boolean
	// values and for Validity), as in a sliced Arrow array.
	Offset int
	// Values holds fixed-width values, little endian; for Boolean a
	// bit-packed LSB-first bitmap.
	Values []byte
	// Offsets and Data hold String and Binary values: value i is
	// Data[Offsets[Offset+i]:Offsets[Offset+i+1]].
	Offsets []int32
	Data    []byte
	// Validity is an LSB-first bitmap, 1 = valid; nil means no nulls.
	Validity []byte
}

// MaxOffset bounds Column.Offset+rows, so that buffer sizes computed from
// them (times 8 bytes, plus one offset) cannot overflow an int.
const MaxOffset = math.MaxInt/8 - 1

// Tablet is an aligned tablet: rows keyed by time, columns by name.
type Tablet struct {
	Times   []int64
	Columns []Column
	// TimeUnit and TimeZone say how the producer typed the time column:
	// TimeUnit "" for plain int64, else an Arrow timestamp unit
	// ("s", "ms", "us", "ns") with an optional zone.
	TimeUnit string
	TimeZone string
	// Names, when set, is the checked list of the columns' names, shared
	// by the tablets of one producer's schema (the C ABI's import sets
	// it): Validate then checks the names once per list instead of once
	// per tablet, and the engine reuses the property ids it resolved for
	// the list. It counts only while every column's name is the list's
	// string itself (CheckedNames); otherwise it is ignored.
	Names *NameList
}

// NameList is a list of column names checked once: CheckNames records
// whether they are valid, distinct, unreserved property names. Immutable.
type NameList struct {
	names []string
	err   error // what Validate reports for these names; nil if none
}

// CheckNames checks names as Tablet.Validate checks its columns' names and
// returns the list with the outcome. It keeps names (not a copy): the
// caller must not modify them.
func CheckNames(names []string) *NameList {
	cols := make([]Column, len(names))
	for i, name := range names {
		cols[i].Name = name
	}
	return &NameList{names: names, err: checkNames(cols)}
}

// CheckedNames returns t.Names if it lists exactly the columns' names,
// each the very string the list holds (a pointer comparison, not a string
// comparison), else nil.
func (t *Tablet) CheckedNames() *NameList {
	l := t.Names
	if l == nil || len(l.names) != len(t.Columns) {
		return nil
	}
	for i := range t.Columns {
		a, b := t.Columns[i].Name, l.names[i]
		if len(a) != len(b) || unsafe.StringData(a) != unsafe.StringData(b) {
			return nil
		}
	}
	return l
}

// Rows returns the number of rows.
func (t *Tablet) Rows() int { return len(t.Times) }

// Width returns the fixed size in bytes of one value of type pt, or 0 for
// Boolean (bits) and the variable-width String and Binary.
func Width(pt schema.PropertyType) int {
	switch pt {
	case schema.Int32, schema.Float, schema.Date:
		return 4
	case schema.Int64, schema.Double, schema.Timestamp:
		return 8
	}
	return 0
}

// VarWidth reports whether values of pt live in Offsets and Data.
func VarWidth(pt schema.PropertyType) bool { return pt == schema.String || pt == schema.Binary }

// Validate checks that every buffer is large enough for the tablet's rows,
// that names are valid and distinct, that offsets are monotonic and inside
// Data, and that String values are UTF-8. It names the offending column.
// Error kind: errs.ErrInvalidArgument.
func (t *Tablet) Validate() error {
	n := t.Rows()
	if l := t.CheckedNames(); l != nil {
		if l.err != nil {
			return l.err
		}
	} else if err := checkNames(t.Columns); err != nil {
		return err
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if err := c.validate(n); err != nil {
			return fmt.Errorf("column %q: %w", c.Name, err)
		}
	}
	return nil
}

// checkNames checks the columns' names: valid property names, none
// reserved, none twice.
func checkNames(cols []Column) error {
	for i := range cols {
		c := &cols[i]
		if err := schema.ValidateName("property", c.Name); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
		if c.Name == schema.TimeColumn || c.Name == schema.DeviceColumn {
			return fmt.Errorf("column %q: name is reserved: %w", c.Name, errs.ErrInvalidArgument)
		}
	}
	if dup := duplicateName(cols); dup != "" {
		return fmt.Errorf("column %q appears twice: %w", dup, errs.ErrInvalidArgument)
	}
	return nil
}

// duplicateName returns a name that two of cols have, or "". A few
// columns are compared pairwise: a map per tablet was most of the garbage
// of a small write. Names of one length are told apart by their last
// bytes first ("c0" to "c9"), without a call to compare them (11 columns:
// 414-517 to 114-141 ns, BenchmarkDuplicateName).
func duplicateName(cols []Column) string {
	if len(cols) <= 16 {
		for i := 1; i < len(cols); i++ {
			a := cols[i].Name
			for j := range i {
				if b := cols[j].Name; len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && a == b {
					return a
				}
			}
		}
		return ""
	}
	seen := make(map[string]struct{}, len(cols))
	for i := range cols {
		if _, dup := seen[cols[i].Name]; dup {
			return cols[i].Name
		}
		seen[cols[i].Name] = struct{}{}
	}
	return ""
}

// Validate checks c's buffers and values for n rows as Tablet.Validate
// does, without its name (a column that is no property, such as the device
// column of a long-format batch).
func (c *Column) Validate(n int) error { return c.validate(n) }

func (c *Column) validate(n int) error {
	if c.Offset < 0 {
		return fmt.Errorf("negative offset %d: %w", c.Offset, errs.ErrInvalidArgument)
	}
	if c.Offset > MaxOffset-n {
		// Larger, (Offset+n)*width wraps around and passes the checks below.
		return fmt.Errorf("offset %d is past any buffer: %w", c.Offset, errs.ErrInvalidArgument)
	}
	end := c.Offset + n
	if c.Validity != nil && len(c.Validity)*8 < end {
		return fmt.Errorf("validity has %d bits, need %d: %w", len(c.Validity)*8, end, errs.ErrInvalidArgument)
	}
	switch {
	case c.Type == schema.Boolean:
		if len(c.Values)*8 < end {
			return fmt.Errorf("values have %d bits, need %d: %w", len(c.Values)*8, end, errs.ErrInvalidArgument)
		}
	case VarWidth(c.Type):
		if len(c.Offsets) < end+1 {
			return fmt.Errorf("%d offsets, need %d: %w", len(c.Offsets), end+1, errs.ErrInvalidArgument)
		}
		prev := c.Offsets[c.Offset]
		if prev < 0 {
			return fmt.Errorf("negative value offset %d: %w", prev, errs.ErrInvalidArgument)
		}
		for i := c.Offset + 1; i <= end; i++ {
			o := c.Offsets[i]
			if o < prev || int(o) > len(c.Data) {
				return fmt.Errorf("value offset %d at row %d is out of order or past %d data bytes: %w",
					o, i-1-c.Offset, len(c.Data), errs.ErrInvalidArgument)
			}
			prev = o
		}
		// Values all ASCII are valid UTF-8 whatever their bounds: one pass
		// over the bytes instead of a call per value (a long-format batch's
		// million device names).
		if c.Type == schema.String && n > 0 && !ascii(c.Data[c.Offsets[c.Offset]:prev]) {
			for i := range n {
				if c.Valid(i) && !utf8.Valid(c.Data[c.Offsets[c.Offset+i]:c.Offsets[c.Offset+i+1]]) {
					return fmt.Errorf("row %d is not valid UTF-8: %w", i, errs.ErrInvalidArgument)
				}
			}
		}
	case Width(c.Type) > 0:
		if w := Width(c.Type); len(c.Values) < end*w {
			return fmt.Errorf("values have %d bytes, need %d: %w", len(c.Values), end*w, errs.ErrInvalidArgument)
		}
	default:
		return fmt.Errorf("unknown property type %d: %w", c.Type, errs.ErrInvalidArgument)
	}
	return nil
}

// ascii reports whether b holds no byte above 0x7f.
func ascii(b []byte) bool {
	var or uint64
	for len(b) >= 32 {
		or |= binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[8:]) |
			binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:])
		b = b[32:]
	}
	for _, c := range b {
		or |= uint64(c)
	}
	return or&0x8080808080808080 == 0
}

// Valid reports whether row i holds a value.
func (c *Column) Valid(i int) bool {
	if c.Validity == nil {
		return true
	}
	b := c.Offset + i
	return c.Validity[b>>3]&(1<<(b&7)) != 0
}

// Value returns row i as a Go value: nil for null, else bool, int32 (Int32,
// Date), int64 (Int64, Timestamp), float32, float64, string or a copy of
// the []byte. For tests and messages; hot paths read the buffers.
func (c *Column) Value(i int) any {
	if !c.Valid(i) {
		return nil
	}
	switch c.Type {
	case schema.Boolean:
		return c.Bool(i)
	case schema.Int32, schema.Date:
		return c.Int32(i)
	case schema.Int64, schema.Timestamp:
		return c.Int64(i)
	case schema.Float:
		return c.Float(i)
	case schema.Double:
		return c.Double(i)
	case schema.String:
		return string(c.Bytes(i))
	case schema.Binary:
		return append([]byte{}, c.Bytes(i)...)
	}
	return nil
}

// Int64 returns row i of an Int64 or Timestamp column.
func (c *Column) Int64(i int) int64 { return int64(le64(c.Values, c.Offset+i)) }

// Int32 returns row i of an Int32 or Date column.
func (c *Column) Int32(i int) int32 { return int32(le32(c.Values, c.Offset+i)) }

// Double returns row i of a Double column.
func (c *Column) Double(i int) float64 { return math.Float64frombits(le64(c.Values, c.Offset+i)) }

// Float returns row i of a Float column.
func (c *Column) Float(i int) float32 { return math.Float32frombits(le32(c.Values, c.Offset+i)) }

// Bool returns row i of a Boolean column.
func (c *Column) Bool(i int) bool {
	b := c.Offset + i
	return c.Values[b>>3]&(1<<(b&7)) != 0
}

// Bytes returns row i of a String or Binary column, without copying.
func (c *Column) Bytes(i int) []byte {
	return c.Data[c.Offsets[c.Offset+i]:c.Offsets[c.Offset+i+1]]
}

func le64(b []byte, i int) uint64 {
	b = b[i*8 : i*8+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func le32(b []byte, i int) uint32 {
	b = b[i*4 : i*4+4]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// bytesOf reinterprets a slice of fixed-width numbers as its little-endian
// bytes without copying (every supported platform is little endian).
func bytesOf[T int32 | int64 | float32 | float64](v []T) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(v[0])))
}

func validityOf(valid []bool) []byte {
	if valid == nil {
		return nil
	}
	bits := make([]byte, (len(valid)+7)/8)
	for i, ok := range valid {
		if ok {
			bits[i>>3] |= 1 << (i & 7)
		}
	}
	return bits
}

// Int64s, Int32s, Doubles, Floats, Timestamps and Dates build fixed-width
// columns that share v. valid, when not nil, marks rows that hold a value.
func Int64s(name string, v []int64, valid []bool) Column {
	return Column{Name: name, Type: schema.Int64, Values: bytesOf(v), Validity: validityOf(valid)}
}

// Int32s builds an Int32 column; see Int64s.
func Int32s(name string, v []int32, valid []bool) Column {
	return Column{Name: name, Type: schema.Int32, Values: bytesOf(v), Validity: validityOf(valid)}
}

// Doubles builds a Double column; see Int64s.
func Doubles(name string, v []float64, valid []bool) Column {
	return Column{Name: name, Type: schema.Double, Values: bytesOf(v), Validity: validityOf(valid)}
}

// Floats builds a Float column; see Int64s.
func Floats(name string, v []float32, valid []bool) Column {
	return Column{Name: name, Type: schema.Float, Values: bytesOf(v), Validity: validityOf(valid)}
}

// Timestamps builds a Timestamp column of nanoseconds; see Int64s.
func Timestamps(name string, v []int64, valid []bool) Column {
	return Column{Name: name, Type: schema.Timestamp, Values: bytesOf(v), Validity: validityOf(valid)}
}

// Dates builds a Date column of days since the epoch; see Int64s.
func Dates(name string, v []int32, valid []bool) Column {
	return Column{Name: name, Type: schema.Date, Values: bytesOf(v), Validity: validityOf(valid)}
}

// Bools builds a Boolean column; see Int64s.
func Bools(name string, v []bool, valid []bool) Column {
	return Column{Name: name, Type: schema.Boolean, Values: validityOf(v), Validity: validityOf(valid)}
}

// Strings builds a String column (copying v into Offsets and Data).
func Strings(name string, v []string, valid []bool) Column {
	c := Column{Name: name, Type: schema.String, Offsets: make([]int32, 1, len(v)+1), Validity: validityOf(valid)}
	for _, s := range v {
		c.Data = append(c.Data, s...)
		c.Offsets = append(c.Offsets, int32(len(c.Data)))
	}
	return c
}

// Binaries builds a Binary column (copying v into Offsets and Data).
func Binaries(name string, v [][]byte, valid []bool) Column {
	c := Column{Name: name, Type: schema.Binary, Offsets: make([]int32, 1, len(v)+1), Validity: validityOf(valid)}
	for _, s := range v {
		c.Data = append(c.Data, s...)
		c.Offsets = append(c.Offsets, int32(len(c.Data)))
	}
	return c
}
