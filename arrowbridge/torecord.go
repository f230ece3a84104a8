package arrowbridge

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// timestampNs is TIMESTAMP's Arrow type: nanoseconds without a zone
// (arrow.FixedWidthTypes.Timestamp_ns carries "UTC").
var timestampNs = &arrow.TimestampType{Unit: arrow.Nanosecond}

// arrowType returns the Arrow type of property type pt, or nil if pt is
// not a property type.
func arrowType(pt schema.PropertyType) arrow.DataType {
	switch pt {
	case schema.Boolean:
		return arrow.FixedWidthTypes.Boolean
	case schema.Int32:
		return arrow.PrimitiveTypes.Int32
	case schema.Int64:
		return arrow.PrimitiveTypes.Int64
	case schema.Float:
		return arrow.PrimitiveTypes.Float32
	case schema.Double:
		return arrow.PrimitiveTypes.Float64
	case schema.String:
		return arrow.BinaryTypes.String
	case schema.Binary:
		return arrow.BinaryTypes.Binary
	case schema.Timestamp:
		return timestampNs
	case schema.Date:
		return arrow.FixedWidthTypes.Date32
	}
	return nil
}

// DeviceType is the Arrow type of the device column of results:
// dictionary<int32, utf8>, not ordered. A result batch holds the rows of
// one device, so its dictionary is that one name and every index is 0: the
// column costs 4 bytes a row instead of a copy of the name per row. Batches
// of different devices have different dictionaries.
var DeviceType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// ResultSchema is the Arrow schema of scan results: "device" (DeviceType,
// not nullable), the time column named timeColumn (DefaultTimeColumn when
// empty; int64, or timestamp[timeUnit, timeZone] when timeUnit != ""), then
// one nullable field per property with the Arrow type of its property type.
//
// The arguments come from the catalog, which has validated them: an unknown
// time unit or property type is a programming error and panics.
func ResultSchema(timeColumn, timeUnit, timeZone string, props []schema.Property) *arrow.Schema {
	if timeColumn == "" {
		timeColumn = DefaultTimeColumn
	}
	var timeType arrow.DataType = arrow.PrimitiveTypes.Int64
	if timeUnit != "" {
		u, ok := timeUnitOf(timeUnit)
		if !ok {
			panic(fmt.Sprintf("arrowbridge: unknown time unit %q", timeUnit))
		}
		timeType = &arrow.TimestampType{Unit: u, TimeZone: timeZone}
	}
	fields := make([]arrow.Field, 0, 2+len(props))
	fields = append(fields,
		arrow.Field{Name: schema.DeviceColumn, Type: DeviceType},
		arrow.Field{Name: timeColumn, Type: timeType})
	for _, p := range props {
		dt := arrowType(p.Type)
		if dt == nil {
			panic(fmt.Sprintf("arrowbridge: property %q has unknown type %s", p.Name, p.Type))
		}
		fields = append(fields, arrow.Field{Name: p.Name, Type: dt, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

func timeUnitOf(s string) (arrow.TimeUnit, bool) {
	for _, u := range arrow.TimeUnitValues {
		if u.String() == s {
			return u, true
		}
	}
	return 0, false
}

// ToRecord builds one result record for one device from a tablet produced
// by the engine's scan: sch is a ResultSchema and t's columns follow its
// properties in order, with matching types. Every buffer is allocated from
// mem and filled by copying, so the record does not borrow from t; the
// caller releases it.
// Error kind: errs.ErrInvalidArgument when t does not fit sch.
func ToRecord(mem memory.Allocator, sch *arrow.Schema, device string, t *tablet.Tablet) (arrow.Record, error) {
	n := t.Rows()
	if sch.NumFields() != 2+len(t.Columns) {
		return nil, fmt.Errorf("schema has %d fields, want device, time and the tablet's %d columns: %w",
			sch.NumFields(), len(t.Columns), errs.ErrInvalidArgument)
	}
	if f := sch.Field(0); !arrow.TypeEqual(f.Type, DeviceType) {
		return nil, fmt.Errorf("device field %q has Arrow type %s, want %s: %w", f.Name, f.Type, DeviceType, errs.ErrInvalidArgument)
	}
	if f := sch.Field(1); f.Type.ID() != arrow.INT64 && f.Type.ID() != arrow.TIMESTAMP {
		return nil, fmt.Errorf("time field %q has Arrow type %s, want int64 or timestamp: %w", f.Name, f.Type, errs.ErrInvalidArgument)
	}

	cols := make([]arrow.Array, 0, sch.NumFields())
	// NewRecord takes its own references; ours go on every path.
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()

	dev, err := deviceArray(mem, device, n)
	if err != nil {
		return nil, err
	}
	cols = append(cols, dev)

	tb := allocate(mem, n*8)
	copy(tb.Bytes(), arrow.GetBytes(t.Times))
	cols = append(cols, makeArray(sch.Field(1).Type, n, 0, nil, tb))

	for i := range t.Columns {
		c := &t.Columns[i]
		f := sch.Field(2 + i)
		if want := arrowType(c.Type); want == nil || !arrow.TypeEqual(f.Type, want) {
			return nil, fmt.Errorf("column %q of type %s does not fit field %q of Arrow type %s: %w",
				c.Name, c.Type, f.Name, f.Type, errs.ErrInvalidArgument)
		}
		a, err := columnArray(mem, f.Type, c, n)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		cols = append(cols, a)
	}
	return array.NewRecord(sch, cols, int64(n)), nil
}

func allocate(mem memory.Allocator, size int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(size)
	return b
}

// makeArray wraps buffers in an array and drops the caller's references
// to them (the array holds its own).
func makeArray(dt arrow.DataType, n, nulls int, bufs ...*memory.Buffer) arrow.Array {
	d := array.NewData(dt, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	a := array.MakeFromData(d)
	d.Release()
	return a
}

// deviceArray is the device column of n rows: n int32 indices 0 into a
// dictionary holding device once (DeviceType).
func deviceArray(mem memory.Allocator, device string, n int) (arrow.Array, error) {
	l := len(device)
	if int64(l) > math.MaxInt32 {
		return nil, fmt.Errorf("device name of %d bytes exceeds the %d-byte limit of utf8: %w",
			l, math.MaxInt32, errs.ErrInvalidArgument)
	}
	ob := allocate(mem, 8)
	offsets := arrow.GetData[int32](ob.Bytes())
	offsets[0], offsets[1] = 0, int32(l)
	db := allocate(mem, l)
	copy(db.Bytes(), device)
	dict := array.NewData(arrow.BinaryTypes.String, 1, []*memory.Buffer{nil, ob, db}, nil, 0, 0)
	ob.Release()
	db.Release()
	defer dict.Release()

	ib := allocate(mem, 4*n)
	clear(ib.Bytes()) // every row is the dictionary's entry 0
	d := array.NewData(DeviceType, n, []*memory.Buffer{nil, ib}, nil, 0, 0)
	ib.Release()
	d.SetDictionary(dict)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// columnArray copies n rows of c into an array of type dt. It checks buffer
// sizes first, so a malformed tablet is an error, not a panic.
func columnArray(mem memory.Allocator, dt arrow.DataType, c *tablet.Column, n int) (arrow.Array, error) {
	off := c.Offset
	if off < 0 {
		return nil, fmt.Errorf("negative offset %d: %w", off, errs.ErrInvalidArgument)
	}
	if c.Validity != nil && len(c.Validity)*8 < off+n {
		return nil, errShort("validity bits", len(c.Validity)*8, off+n)
	}
	// Check the values before allocating anything.
	w := tablet.Width(c.Type)
	var lo, hi int32
	switch {
	case c.Type == schema.Boolean:
		if len(c.Values)*8 < off+n {
			return nil, errShort("values", len(c.Values)*8, off+n)
		}
	case tablet.VarWidth(c.Type):
		if len(c.Offsets) < off+n+1 {
			return nil, errShort("offsets", len(c.Offsets), off+n+1)
		}
		lo, hi = c.Offsets[off], c.Offsets[off+n]
		if lo < 0 || hi < lo || int(hi) > len(c.Data) {
			return nil, fmt.Errorf("value offsets %d..%d are outside %d data bytes: %w", lo, hi, len(c.Data), errs.ErrInvalidArgument)
		}
	default:
		if len(c.Values) < (off+n)*w {
			return nil, errShort("value bytes", len(c.Values), (off+n)*w)
		}
	}

	var vb *memory.Buffer
	nulls := 0
	if c.Validity != nil {
		nulls = n - bitutil.CountSetBits(c.Validity, off, n)
	}
	if nulls > 0 {
		vb = allocate(mem, (n+7)/8)
		clear(vb.Bytes())
		bitutil.CopyBitmap(c.Validity, off, n, vb.Bytes(), 0)
	}

	switch {
	case c.Type == schema.Boolean:
		b := allocate(mem, (n+7)/8)
		clear(b.Bytes())
		bitutil.CopyBitmap(c.Values, off, n, b.Bytes(), 0)
		return makeArray(dt, n, nulls, vb, b), nil
	case tablet.VarWidth(c.Type):
		ob := allocate(mem, (n+1)*4)
		offsets := arrow.GetData[int32](ob.Bytes())
		for i, o := range c.Offsets[off : off+n+1] {
			offsets[i] = o - lo
		}
		db := allocate(mem, int(hi-lo))
		copy(db.Bytes(), c.Data[lo:hi])
		return makeArray(dt, n, nulls, vb, ob, db), nil
	default:
		b := allocate(mem, n*w)
		copy(b.Bytes(), c.Values[off*w:(off+n)*w])
		return makeArray(dt, n, nulls, vb, b), nil
	}
}
