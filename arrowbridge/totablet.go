package arrowbridge

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// DefaultTimeColumn is the name of the time column when none is given.
const DefaultTimeColumn = schema.TimeColumn

// maxListedFields bounds the field names quoted in a "no time column" error.
const maxListedFields = 8

// ToTablet converts a record batch to a tablet for the engine. The time
// column is found by name (timeColumn, DefaultTimeColumn when empty): int64,
// or timestamp of any unit and zone (Tablet.TimeUnit "s"/"ms"/"us"/"ns",
// Tablet.TimeZone the zone; plain int64 → TimeUnit ""), without nulls.
// Every other column becomes a tablet.Column named by its field name, typed
// as the package doc lists.
//
// Times keep the time column's unit; property timestamps become ns.
//
// The tablet borrows the record's buffers when the layout matches (zero
// copy, sliced arrays included) and allocates only for conversions; the
// caller keeps rec alive until the tablet is consumed. Arrow computes and
// caches an array's unknown null count on first use, so convert a record
// from one goroutine at a time.
// Error kind: errs.ErrInvalidArgument, naming the column.
func ToTablet(rec arrow.Record, timeColumn string) (*tablet.Tablet, error) {
	if timeColumn == "" {
		timeColumn = DefaultTimeColumn
	}
	sch := rec.Schema()
	nf := sch.NumFields()
	for i := 0; i < nf; i++ {
		name := sch.Field(i).Name
		// The schema keeps an index of names, so this costs no allocation.
		if idx := sch.FieldIndices(name); len(idx) > 1 {
			return nil, fmt.Errorf("record has %d fields named %q: %w", len(idx), name, errs.ErrInvalidArgument)
		}
	}
	idx := sch.FieldIndices(timeColumn)
	if len(idx) == 0 {
		return nil, fmt.Errorf("no time column %q in record with fields %s: %w",
			timeColumn, listFields(sch), errs.ErrInvalidArgument)
	}
	ti := idx[0]
	n := int(rec.NumRows())

	t := &tablet.Tablet{}
	if nf > 1 {
		t.Columns = make([]tablet.Column, 0, nf-1)
	}
	for i := 0; i < nf; i++ {
		arr := rec.Column(i)
		name := sch.Field(i).Name
		if arr.Len() != n {
			return nil, fmt.Errorf("column %q has %d rows, record %d: %w", name, arr.Len(), n, errs.ErrInvalidArgument)
		}
		if i == ti {
			if err := timeColumnOf(t, name, arr); err != nil {
				return nil, err
			}
			continue
		}
		// Filled in place: a Column is large and full of pointers.
		t.Columns = append(t.Columns, tablet.Column{})
		if err := column(&t.Columns[len(t.Columns)-1], name, arr); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func listFields(sch *arrow.Schema) string {
	nf := sch.NumFields()
	if nf == 0 {
		return "(none)"
	}
	var b strings.Builder
	for i := 0; i < nf && i < maxListedFields; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", sch.Field(i).Name)
	}
	if nf > maxListedFields {
		fmt.Fprintf(&b, " and %d more", nf-maxListedFields)
	}
	return b.String()
}

// timeColumnOf sets t.Times (borrowed) and the time unit and zone.
func timeColumnOf(t *tablet.Tablet, name string, arr arrow.Array) error {
	switch dt := arr.DataType().(type) {
	case *arrow.Int64Type:
	case *arrow.TimestampType:
		t.TimeUnit = dt.Unit.String()
		t.TimeZone = dt.TimeZone
	default:
		return fmt.Errorf("time column %q has Arrow type %s, want int64 or timestamp: %w",
			name, arr.DataType(), errs.ErrInvalidArgument)
	}
	if nn := arr.NullN(); nn > 0 {
		return fmt.Errorf("time column %q has %d nulls in %d rows: %w", name, nn, arr.Len(), errs.ErrInvalidArgument)
	}
	v, err := fixedValues[int64](arr)
	if err != nil {
		return fmt.Errorf("time column %q: %w", name, err)
	}
	t.Times = v
	return nil
}

// propertyType maps an Arrow type to the property type it is stored as.
func propertyType(name string, dt arrow.DataType) (schema.PropertyType, error) {
	switch dt.ID() {
	case arrow.BOOL:
		return schema.Boolean, nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16:
		return schema.Int32, nil
	case arrow.INT64, arrow.UINT32, arrow.UINT64:
		return schema.Int64, nil
	case arrow.FLOAT32:
		return schema.Float, nil
	case arrow.FLOAT64:
		return schema.Double, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return schema.String, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return schema.Binary, nil
	case arrow.TIMESTAMP:
		return schema.Timestamp, nil
	case arrow.DATE32, arrow.DATE64:
		return schema.Date, nil
	case arrow.DICTIONARY:
		d := dt.(*arrow.DictionaryType)
		if d.ValueType.ID() != arrow.DICTIONARY && d.ValueType.ID() != arrow.NULL {
			if pt, err := propertyType(name, d.ValueType); err == nil {
				return pt, nil
			}
		}
	case arrow.NULL:
		return 0, fmt.Errorf("column %q has Arrow type null; give it a type: %w", name, errs.ErrInvalidArgument)
	}
	return 0, fmt.Errorf("column %q has unsupported Arrow type %s: %w", name, dt, errs.ErrInvalidArgument)
}

// emptyOffsets are the offsets of a var-width column without rows. Shared:
// tablets are read-only for their consumers.
var emptyOffsets = []int32{0}

// column sets *c to the conversion of one non-time column.
func column(c *tablet.Column, name string, arr arrow.Array) error {
	pt, err := propertyType(name, arr.DataType())
	if err != nil {
		return err
	}
	*c = tablet.Column{Name: name, Type: pt}
	if arr.Len() == 0 {
		if tablet.VarWidth(pt) {
			c.Offsets = emptyOffsets
		}
		return nil
	}
	if err := fill(c, arr); err != nil {
		return fmt.Errorf("column %q: %w", name, err)
	}
	return nil
}

// fill sets c's buffers from arr (at least one row), whose type maps to c.Type.
func fill(c *tablet.Column, arr arrow.Array) error {
	d := arr.Data()
	off, n := d.Offset(), d.Len()
	valid, err := validity(arr)
	if err != nil {
		return err
	}
	// Borrowed columns keep the array's offset. Converted ones start at the
	// offset's bit position within its byte, so that the validity bitmap can
	// still be borrowed from byte off/8.
	shift := off & 7
	convert := func() {
		c.Offset = shift
		if valid != nil {
			c.Validity = valid[off>>3:]
		}
	}
	// isValid reports whether row i (relative to the array) holds a value.
	isValid := func(i int) bool {
		return valid == nil || valid[(off+i)>>3]&(1<<((off+i)&7)) != 0
	}

	switch dt := arr.DataType(); dt.ID() {
	case arrow.BOOL:
		b := buffer(d, 1)
		if len(b)*8 < off+n {
			return errShort("values", len(b)*8, off+n)
		}
		c.Offset, c.Values, c.Validity = off, b, valid

	case arrow.INT32, arrow.DATE32, arrow.FLOAT32, arrow.INT64, arrow.FLOAT64:
		w := dt.(arrow.FixedWidthDataType).BitWidth() / 8
		b := buffer(d, 1)
		if len(b) < (off+n)*w {
			return errShort("value bytes", len(b), (off+n)*w)
		}
		c.Offset, c.Values, c.Validity = off, b, valid

	case arrow.UINT64:
		v, err := fixedValues[uint64](arr)
		if err != nil {
			return err
		}
		for i, x := range v {
			if x > math.MaxInt64 && isValid(i) {
				return fmt.Errorf("uint64 value %d at row %d does not fit in INT64: %w", x, i, errs.ErrInvalidArgument)
			}
		}
		// Every valid value has the same bits as int64: borrow.
		c.Offset, c.Values, c.Validity = off, buffer(d, 1), valid

	case arrow.INT8:
		return widen[int8, int32](c, arr, shift, convert)
	case arrow.INT16:
		return widen[int16, int32](c, arr, shift, convert)
	case arrow.UINT8:
		return widen[uint8, int32](c, arr, shift, convert)
	case arrow.UINT16:
		return widen[uint16, int32](c, arr, shift, convert)
	case arrow.UINT32:
		return widen[uint32, int64](c, arr, shift, convert)

	case arrow.TIMESTAMP:
		v, err := fixedValues[int64](arr)
		if err != nil {
			return err
		}
		unit := dt.(*arrow.TimestampType).Unit
		if unit == arrow.Nanosecond {
			c.Offset, c.Values, c.Validity = off, buffer(d, 1), valid
			return nil
		}
		mul := int64(unit.Multiplier())
		out := make([]int64, shift+n)
		for i, x := range v {
			if !isValid(i) {
				continue
			}
			if x > math.MaxInt64/mul || x < math.MinInt64/mul {
				return fmt.Errorf("timestamp[%s] value %d at row %d overflows int64 nanoseconds: %w",
					unit, x, i, errs.ErrInvalidArgument)
			}
			out[shift+i] = x * mul
		}
		convert()
		c.Values = arrow.GetBytes(out)

	case arrow.DATE64:
		v, err := fixedValues[int64](arr)
		if err != nil {
			return err
		}
		const msPerDay = 86_400_000
		out := make([]int32, shift+n)
		for i, x := range v {
			if !isValid(i) {
				continue
			}
			if x%msPerDay != 0 {
				// The format allows whole days only; flooring would change
				// the value, which no conversion here does.
				return fmt.Errorf("date64 value %d at row %d is not a whole day (a multiple of 86,400,000 ms, as Arrow requires): %w", x, i, errs.ErrInvalidArgument)
			}
			days := x / msPerDay
			if days > math.MaxInt32 || days < math.MinInt32 {
				return fmt.Errorf("date64 value %d at row %d is out of the DATE range: %w", x, i, errs.ErrInvalidArgument)
			}
			out[shift+i] = int32(days)
		}
		convert()
		c.Values = arrow.GetBytes(out)

	case arrow.STRING, arrow.BINARY:
		o := arrow.GetData[int32](buffer(d, 1))
		if len(o) < off+n+1 {
			return errShort("offsets", len(o), off+n+1)
		}
		c.Offset, c.Offsets, c.Data, c.Validity = off, o, buffer(d, 2), valid

	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		o := arrow.GetData[int64](buffer(d, 1))
		if len(o) < off+n+1 {
			return errShort("offsets", len(o), off+n+1)
		}
		o = o[off : off+n+1]
		data := buffer(d, 2)
		base, end := o[0], o[n]
		if base < 0 || end < base || end > int64(len(data)) {
			return fmt.Errorf("value offsets %d..%d are outside %d data bytes: %w", base, end, len(data), errs.ErrInvalidArgument)
		}
		if end-base > math.MaxInt32 {
			return fmt.Errorf("%d bytes of values exceed the %d-byte limit of a column: %w", end-base, math.MaxInt32, errs.ErrInvalidArgument)
		}
		out := make([]int32, shift+n+1)
		for i, x := range o {
			if x < base || x > end {
				return fmt.Errorf("value offset %d at row %d is out of order: %w", x, i, errs.ErrInvalidArgument)
			}
			out[shift+i] = int32(x - base)
		}
		convert()
		c.Offsets, c.Data = out, data[base:end]

	case arrow.STRING_VIEW:
		a := arr.(*array.StringView)
		return gatherViews(c, n, shift, isValid, a.Value, convert)
	case arrow.BINARY_VIEW:
		a := arr.(*array.BinaryView)
		return gatherViews(c, n, shift, isValid, a.Value, convert)

	case arrow.FIXED_SIZE_BINARY:
		w := dt.(*arrow.FixedSizeBinaryType).ByteWidth
		b := buffer(d, 1)
		if len(b) < (off+n)*w {
			return errShort("value bytes", len(b), (off+n)*w)
		}
		if int64(n)*int64(w) > math.MaxInt32 {
			return fmt.Errorf("%d bytes of values exceed the %d-byte limit of a column: %w", n*w, math.MaxInt32, errs.ErrInvalidArgument)
		}
		out := make([]int32, shift+n+1)
		for i := 0; i <= n; i++ {
			out[shift+i] = int32(i * w)
		}
		convert()
		c.Offsets, c.Data = out, b[off*w:(off+n)*w]

	case arrow.DICTIONARY:
		return decodeDictionary(c, arr.(*array.Dictionary))

	default:
		// propertyType admitted a type this switch does not handle.
		return fmt.Errorf("Arrow type %s has no conversion: %w", dt, errs.ErrInternal)
	}
	return nil
}

// buffer returns buffer i of d, or nil when absent.
func buffer(d arrow.ArrayData, i int) []byte {
	bufs := d.Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}

func errShort(what string, have, need int) error {
	return fmt.Errorf("buffer has %d %s, need %d: %w", have, what, need, errs.ErrInvalidArgument)
}

// validity returns the array's validity bitmap (absolute bit positions), or
// nil when the array has no nulls.
func validity(arr arrow.Array) ([]byte, error) {
	if arr.NullN() == 0 {
		return nil, nil
	}
	d := arr.Data()
	b := buffer(d, 0)
	if len(b)*8 < d.Offset()+d.Len() {
		return nil, errShort("validity bits", len(b)*8, d.Offset()+d.Len())
	}
	return b, nil
}

// fixedValues returns the array's fixed-width values, without copying.
func fixedValues[T arrow.FixedWidthType](arr arrow.Array) ([]T, error) {
	d := arr.Data()
	off, n := d.Offset(), d.Len()
	if n == 0 {
		return []T{}, nil
	}
	v := arrow.GetData[T](buffer(d, 1))
	if len(v) < off+n {
		return nil, errShort("values", len(v), off+n)
	}
	return v[off : off+n : off+n], nil
}

// widen copies an integer array into the wider type D, starting at shift.
func widen[S int8 | int16 | uint8 | uint16 | uint32, D int32 | int64](c *tablet.Column, arr arrow.Array, shift int, convert func()) error {
	v, err := fixedValues[S](arr)
	if err != nil {
		return err
	}
	out := make([]D, shift+len(v))
	for i, x := range v {
		out[shift+i] = D(x)
	}
	convert()
	c.Values = arrow.GetBytes(out)
	return nil
}

// gatherViews copies view values into offsets and data, starting at shift.
func gatherViews[V string | []byte](c *tablet.Column, n, shift int, isValid func(int) bool, value func(int) V, convert func()) error {
	total := 0
	for i := 0; i < n; i++ {
		if isValid(i) {
			total += len(value(i))
		}
	}
	if total > math.MaxInt32 {
		return fmt.Errorf("%d bytes of values exceed the %d-byte limit of a column: %w", total, math.MaxInt32, errs.ErrInvalidArgument)
	}
	out := make([]int32, shift+n+1)
	data := make([]byte, 0, total)
	for i := 0; i < n; i++ {
		if isValid(i) {
			data = append(data, value(i)...)
		}
		out[shift+i+1] = int32(len(data))
	}
	convert()
	c.Offsets, c.Data = out, data
	return nil
}

// decodeDictionary fills c with the dictionary's values looked up by index.
// A row is null when its index is null or the value it points at is null.
func decodeDictionary(c *tablet.Column, a *array.Dictionary) error {
	var dict tablet.Column
	if err := column(&dict, c.Name, a.Dictionary()); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	}
	idx := a.Indices()
	switch idx.DataType().ID() {
	case arrow.INT8:
		return gatherDict[int8](c, &dict, idx, a.Dictionary().Len())
	case arrow.INT16:
		return gatherDict[int16](c, &dict, idx, a.Dictionary().Len())
	case arrow.INT32:
		return gatherDict[int32](c, &dict, idx, a.Dictionary().Len())
	case arrow.INT64:
		return gatherDict[int64](c, &dict, idx, a.Dictionary().Len())
	case arrow.UINT8:
		return gatherDict[uint8](c, &dict, idx, a.Dictionary().Len())
	case arrow.UINT16:
		return gatherDict[uint16](c, &dict, idx, a.Dictionary().Len())
	case arrow.UINT32:
		return gatherDict[uint32](c, &dict, idx, a.Dictionary().Len())
	case arrow.UINT64:
		return gatherDict[uint64](c, &dict, idx, a.Dictionary().Len())
	}
	return fmt.Errorf("dictionary index type %s is not an integer: %w", idx.DataType(), errs.ErrInvalidArgument)
}

func gatherDict[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](c *tablet.Column, dict *tablet.Column, idx arrow.Array, dictLen int) error {
	v, err := fixedValues[T](idx)
	if err != nil {
		return err
	}
	valid, err := validity(idx)
	if err != nil {
		return err
	}
	off, n := idx.Data().Offset(), len(v)

	var bits []byte
	if valid != nil || dict.Validity != nil {
		bits = make([]byte, (n+7)/8)
	}
	nulls := 0
	// pos[i] is the dictionary row of row i, or -1 for a null row.
	pos := func(i int) (int, error) {
		if valid != nil && valid[(off+i)>>3]&(1<<((off+i)&7)) == 0 {
			return -1, nil
		}
		j := int64(v[i])
		if j < 0 || j >= int64(dictLen) { // a uint64 past MaxInt64 turns negative
			return 0, fmt.Errorf("dictionary index %d at row %d is outside [0, %d): %w", v[i], i, dictLen, errs.ErrInvalidArgument)
		}
		if !dict.Valid(int(j)) {
			return -1, nil
		}
		return int(j), nil
	}

	w := tablet.Width(c.Type)
	switch {
	case c.Type == schema.Boolean:
		vals := make([]byte, (n+7)/8)
		for i := 0; i < n; i++ {
			j, err := pos(i)
			if err != nil {
				return err
			}
			if j < 0 {
				nulls++
				continue
			}
			if bits != nil {
				bits[i>>3] |= 1 << (i & 7)
			}
			if dict.Bool(j) {
				vals[i>>3] |= 1 << (i & 7)
			}
		}
		c.Values = vals

	case tablet.VarWidth(c.Type):
		offsets := make([]int32, n+1)
		var data []byte
		for i := 0; i < n; i++ {
			j, err := pos(i)
			if err != nil {
				return err
			}
			if j < 0 {
				nulls++
			} else {
				if bits != nil {
					bits[i>>3] |= 1 << (i & 7)
				}
				// Arrow checked only the dictionary's first and last offsets.
				lo, hi := dict.Offsets[dict.Offset+j], dict.Offsets[dict.Offset+j+1]
				if lo < 0 || hi < lo || int(hi) > len(dict.Data) {
					return fmt.Errorf("dictionary value %d has offsets %d..%d outside %d data bytes: %w", j, lo, hi, len(dict.Data), errs.ErrInvalidArgument)
				}
				b := dict.Data[lo:hi]
				if len(data)+len(b) > math.MaxInt32 {
					return fmt.Errorf("decoded values exceed the %d-byte limit of a column: %w", math.MaxInt32, errs.ErrInvalidArgument)
				}
				data = append(data, b...)
			}
			offsets[i+1] = int32(len(data))
		}
		c.Offsets, c.Data = offsets, data

	default:
		vals := make([]byte, n*w)
		for i := 0; i < n; i++ {
			j, err := pos(i)
			if err != nil {
				return err
			}
			if j < 0 {
				nulls++
				continue
			}
			if bits != nil {
				bits[i>>3] |= 1 << (i & 7)
			}
			s := (dict.Offset + j) * w
			copy(vals[i*w:(i+1)*w], dict.Values[s:s+w])
		}
		c.Values = vals
	}
	c.Offset = 0
	if nulls > 0 {
		c.Validity = bits
	}
	return nil
}
