package schema

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/arcadego/arcadego/core/errs"
)

// MaxNameLen is the longest type, property or index name, in bytes.
const MaxNameLen = 256

// Reserved property names: every row of every type is keyed by (device,
// time), and those keys travel as columns of these names.
const (
	TimeColumn   = "time"
	DeviceColumn = "device"
)

var typeNames = [...]string{
	Boolean:   "BOOLEAN",
	Int32:     "INT32",
	Int64:     "INT64",
	Float:     "FLOAT",
	Double:    "DOUBLE",
	String:    "STRING",
	Binary:    "BINARY",
	Timestamp: "TIMESTAMP",
	Date:      "DATE",
}

// typeAliases maps every accepted upper-case spelling to its type.
var typeAliases = map[string]PropertyType{
	"BOOL": Boolean, "INTEGER": Int32, "INT": Int32, "LONG": Int64, "BIGINT": Int64,
	"FLOAT32": Float, "REAL": Float, "FLOAT64": Double, "VARCHAR": String, "TEXT": String,
	"BYTES": Binary, "DATETIME": Timestamp,
}

func init() {
	for t, s := range typeNames {
		if s != "" {
			typeAliases[s] = PropertyType(t)
		}
	}
}

// Valid reports whether t is one of the defined property types.
func (t PropertyType) Valid() bool { return t >= Boolean && t <= Date }

// String returns the DDL name of t ("INT64", ...).
func (t PropertyType) String() string {
	if t.Valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("PropertyType(%d)", uint8(t))
}

// ParsePropertyType parses a DDL type name, case-insensitively. Accepted
// aliases: BOOL, INTEGER/INT (INT32), LONG/BIGINT (INT64), FLOAT32/REAL
// (FLOAT), FLOAT64 (DOUBLE), VARCHAR/TEXT (STRING), BYTES (BINARY),
// DATETIME (TIMESTAMP). Error kind: errs.ErrInvalidArgument.
func ParsePropertyType(s string) (PropertyType, error) {
	var up [16]byte // every accepted name is short ASCII: upper-case it without allocating
	if len(s) <= len(up) {
		for i := range len(s) {
			c := s[i]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			up[i] = c
		}
		if t, ok := typeAliases[string(up[:len(s)])]; ok {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown property type %s: %w", quote(s), errs.ErrInvalidArgument)
}

// ValidateName checks a type, property or index name: non-empty valid UTF-8
// of at most 256 bytes without control characters. what names the kind of
// object in the error ("type", "property", "index").
func ValidateName(what, name string) error {
	if reason := nameProblem(name); reason != "" {
		return fmt.Errorf("invalid %s name %s: %s: %w", what, quote(name), reason, errs.ErrInvalidArgument)
	}
	return nil
}

// nameProblem says what is wrong with name, or "" if nothing is.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("%d bytes, longer than %d", len(name), MaxNameLen)
	}
	// Printable ASCII, the usual name, needs no decoding: one pass over
	// its bytes (a long insert checks every device of a batch, 100,000
	// of them, before anything else can start).
	printable := true
	for i := 0; i < len(name) && printable; i++ {
		printable = name[i] >= 0x20 && name[i] < 0x7f
	}
	if printable {
		return ""
	}
	if !utf8.ValidString(name) {
		return "not valid UTF-8"
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Sprintf("control character %U", r)
		}
	}
	return ""
}

// validatePropertyName adds the reserved names to ValidateName.
func validatePropertyName(name string) error {
	if err := ValidateName("property", name); err != nil {
		return err
	}
	if name == TimeColumn || name == DeviceColumn {
		return fmt.Errorf("property name %q is reserved: %w", name, errs.ErrInvalidArgument)
	}
	return nil
}

// quote quotes a user string for an error message, cut short so that a
// megabyte of garbage does not become a megabyte of message.
func quote(s string) string {
	const max = 80
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...(%d bytes)", s[:cut], len(s))
}
