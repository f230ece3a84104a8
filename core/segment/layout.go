package segment

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/parquet"
	pqschema "github.com/apache/arrow/go/v17/parquet/schema"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
)

// Column is one property column of a file.
type Column struct {
	ID   schema.PropertyID
	Name string
	Type schema.PropertyType
}

// Layout is what one file holds besides device and time.
type Layout struct {
	TimeUnit string   // "", "s", "ms", "us", "ns"
	Columns  []Column // properties in file order
}

// validate checks what Create needs: a known time unit, and columns with
// valid, distinct, non-reserved names, distinct ids that fit a Parquet
// field_id, and known types.
func (l Layout) validate() error {
	switch l.TimeUnit {
	case "", "s", "ms", "us", "ns":
	default:
		return fmt.Errorf("segment: unknown time unit %q: %w", l.TimeUnit, errs.ErrInvalidArgument)
	}
	names := make(map[string]struct{}, len(l.Columns))
	ids := make(map[schema.PropertyID]struct{}, len(l.Columns))
	for i, c := range l.Columns {
		if err := schema.ValidateName("property", c.Name); err != nil {
			return fmt.Errorf("segment: column %d: %w", i, err)
		}
		if c.Name == schema.TimeColumn || c.Name == schema.DeviceColumn {
			return fmt.Errorf("segment: column name %q is reserved: %w", c.Name, errs.ErrInvalidArgument)
		}
		if _, dup := names[c.Name]; dup {
			return fmt.Errorf("segment: column %q appears twice: %w", c.Name, errs.ErrInvalidArgument)
		}
		names[c.Name] = struct{}{}
		if c.ID == 0 || c.ID > math.MaxInt32 {
			return fmt.Errorf("segment: column %q: id %d does not fit a Parquet field_id: %w", c.Name, c.ID, errs.ErrInvalidArgument)
		}
		if _, dup := ids[c.ID]; dup {
			return fmt.Errorf("segment: column id %d appears twice: %w", c.ID, errs.ErrInvalidArgument)
		}
		ids[c.ID] = struct{}{}
		if !c.Type.Valid() {
			return fmt.Errorf("segment: column %q: unknown property type %d: %w", c.Name, c.Type, errs.ErrInvalidArgument)
		}
	}
	return nil
}

// parquetSchema returns the file schema of l: device, time, then one
// OPTIONAL column per property whose field_id is the property id.
func (l Layout) parquetSchema() (*pqschema.GroupNode, error) {
	fields := make(pqschema.FieldList, 0, 2+len(l.Columns))
	dev, err := pqschema.NewPrimitiveNodeLogical(schema.DeviceColumn, parquet.Repetitions.Required,
		pqschema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
	if err != nil {
		return nil, err
	}
	var timeLogical pqschema.LogicalType // plain int64 for "", "s" and "ns"
	switch l.TimeUnit {
	case "ms":
		timeLogical = pqschema.NewTimestampLogicalType(true, pqschema.TimeUnitMillis)
	case "us":
		timeLogical = pqschema.NewTimestampLogicalType(true, pqschema.TimeUnitMicros)
	}
	tm, err := pqschema.NewPrimitiveNodeLogical(schema.TimeColumn, parquet.Repetitions.Required,
		timeLogical, parquet.Types.Int64, -1, -1)
	if err != nil {
		return nil, err
	}
	fields = append(fields, dev, tm)
	for _, c := range l.Columns {
		var logical pqschema.LogicalType
		switch c.Type {
		case schema.String:
			logical = pqschema.StringLogicalType{}
		case schema.Date:
			logical = pqschema.DateLogicalType{}
		}
		n, err := pqschema.NewPrimitiveNodeLogical(c.Name, parquet.Repetitions.Optional,
			logical, physicalType(c.Type), -1, int32(c.ID))
		if err != nil {
			return nil, err
		}
		fields = append(fields, n)
	}
	return pqschema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
}

func physicalType(t schema.PropertyType) parquet.Type {
	switch t {
	case schema.Boolean:
		return parquet.Types.Boolean
	case schema.Int32, schema.Date:
		return parquet.Types.Int32
	case schema.Int64, schema.Timestamp:
		return parquet.Types.Int64
	case schema.Float:
		return parquet.Types.Float
	case schema.Double:
		return parquet.Types.Double
	}
	return parquet.Types.ByteArray
}

// deltaType is the Delta/Spark type of a property column.
func deltaType(t schema.PropertyType) string {
	switch t {
	case schema.Boolean:
		return "boolean"
	case schema.Int32:
		return "integer"
	case schema.Int64, schema.Timestamp: // nanoseconds: Delta's timestamp is microseconds
		return "long"
	case schema.Float:
		return "float"
	case schema.Double:
		return "double"
	case schema.String:
		return "string"
	case schema.Binary:
		return "binary"
	case schema.Date:
		return "date"
	}
	return ""
}

// timeIsTimestamp reports whether the time column is a Parquet (and Delta)
// timestamp: only milli- and microseconds are; seconds and nanoseconds
// stay exact longs.
func timeIsTimestamp(unit string) bool { return unit == "ms" || unit == "us" }

// DeltaSchema returns the Delta/Spark JSON schemaString for l: device
// (string, nullable false), time, then the columns (nullable true).
func (l Layout) DeltaSchema() string {
	type field struct {
		Name     string   `json:"name"`
		Type     string   `json:"type"`
		Nullable bool     `json:"nullable"`
		Metadata struct{} `json:"metadata"`
	}
	timeType := "long"
	if timeIsTimestamp(l.TimeUnit) {
		timeType = "timestamp"
	}
	fields := make([]field, 0, 2+len(l.Columns))
	fields = append(fields, field{Name: schema.DeviceColumn, Type: "string"}, field{Name: schema.TimeColumn, Type: timeType})
	for _, c := range l.Columns {
		fields = append(fields, field{Name: c.Name, Type: deltaType(c.Type), Nullable: true})
	}
	b, err := json.Marshal(struct {
		Type   string  `json:"type"`
		Fields []field `json:"fields"`
	}{"struct", fields})
	if err != nil { // cannot happen: strings and bools only
		panic(err)
	}
	return string(b)
}

// encodeLayout is the "arcadego.layout" value: the time unit, the
// property types in file order, and a CRC-32C of the column ids and names
// ("ms;DOUBLE,STRING;1a2b3c4d"). Names and ids live in the Parquet schema
// (the CRC puts them under the metadata checksum); types are needed
// because Parquet types do not tell INT64 from TIMESTAMP, nor "" from "s"
// from "ns".
func encodeLayout(l Layout) string {
	var b strings.Builder
	b.WriteString(l.TimeUnit)
	b.WriteByte(';')
	for i, c := range l.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.Type.String())
	}
	b.WriteByte(';')
	b.WriteString(namesCRC(l.Columns))
	return b.String()
}

func namesCRC(cols []Column) string {
	h := crc32.New(castagnoli)
	var buf []byte
	for _, c := range cols {
		buf = binary.AppendUvarint(buf[:0], uint64(c.ID))
		buf = binary.AppendUvarint(buf, uint64(len(c.Name)))
		h.Write(buf)
		h.Write([]byte(c.Name))
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// decodeLayout rebuilds the layout from the "arcadego.layout" value and
// the file schema, and checks that the schema is exactly what Create
// would write for it.
func decodeLayout(v string, sc *pqschema.Schema) (Layout, error) {
	parts := strings.Split(v, ";")
	if len(parts) != 3 {
		return Layout{}, fmt.Errorf("layout %q is not unit;types;crc", v)
	}
	unit, types := parts[0], parts[1]
	l := Layout{TimeUnit: unit}
	root := sc.Root()
	n := root.NumFields() - 2
	var list []string
	if types != "" {
		list = strings.Split(types, ",")
	}
	if n < 0 || len(list) != n {
		return Layout{}, fmt.Errorf("layout has %d types for %d columns", len(list), n)
	}
	if n > 0 {
		l.Columns = make([]Column, n)
	}
	for i := range l.Columns {
		f := root.Field(2 + i)
		t, err := schema.ParsePropertyType(list[i])
		if err != nil {
			return Layout{}, err
		}
		if f.FieldID() <= 0 {
			return Layout{}, fmt.Errorf("column %q has no field_id", f.Name())
		}
		l.Columns[i] = Column{ID: schema.PropertyID(f.FieldID()), Name: f.Name(), Type: t}
	}
	if err := l.validate(); err != nil {
		return Layout{}, err
	}
	if namesCRC(l.Columns) != parts[2] {
		return Layout{}, errors.New("column names or ids do not match their checksum")
	}
	want, err := l.parquetSchema()
	if err != nil {
		return Layout{}, err
	}
	if !want.Equals(root) {
		return Layout{}, fmt.Errorf("schema does not match layout %q", v)
	}
	return l, nil
}
