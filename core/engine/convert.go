package engine

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// The one conversion rule of inserts, for every caller (C, Python, Go): a
// column whose type differs from its property's is converted when no value
// changes, and refused, naming the column and the first value that would
// change, when one would.
//
//	column            property  accepted when
//	INT32             INT64     always
//	FLOAT             DOUBLE    always
//	INT32, INT64      DOUBLE    every value is exact in a double (|v| <= 2^53)
//	INT64             INT32     every value fits (Python's ints have no width)
//	DOUBLE            FLOAT     every value is exact in a float (0.5, not 0.1)
//
// The time column: a type's first insert declares its kind, int64 or
// timestamp(unit, zone). Timestamps of another unit convert when exact (a
// finer unit into a coarser one only when no value has a remainder) and
// of another zone as they are (a timestamp with a zone is an instant in
// UTC); plain int64 times into a timestamp type are refused (they do not
// say their unit), as are timestamps into an int64 type and timestamps
// with a zone into one without (or the reverse: a wall-clock time is not
// an instant).

// maxExactDouble is the largest magnitude from which every integer is
// exact in a float64.
const maxExactDouble = 1 << 53

// conform returns t with each column converted to its property's type in
// ty and its times to ty's time unit, per the rule above; t itself when
// nothing needs converting (ty nil: a type about to be created). Converted
// columns get buffers of their own; the others are shared with t.
func conform(ty *schema.Type, t *tablet.Tablet) (*tablet.Tablet, error) {
	if ty == nil {
		return t, nil
	}
	out := t
	own := func() {
		if out == t {
			c := *t
			c.Columns = append([]tablet.Column(nil), t.Columns...)
			out = &c
		}
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		p, ok := ty.Property(c.Name)
		if !ok || p.Type == c.Type {
			continue
		}
		conv, err := widen(c, p.Type, t.Rows())
		if err != nil {
			return nil, fmt.Errorf("column %q is %s but property %s.%s is %s: %v: %w", c.Name, c.Type, ty.Name, c.Name, p.Type, err, errs.ErrInvalidArgument)
		}
		if conv == nil {
			return nil, fmt.Errorf("column %q is %s but property %s.%s is %s (only conversions that change no value are made: see the README's conversion table): %w",
				c.Name, c.Type, ty.Name, c.Name, p.Type, errs.ErrInvalidArgument)
		}
		own()
		out.Columns[i] = *conv
	}
	// Timestamps of another unit or zone; every other difference of time
	// kind is refused by missing, after the columns' checks.
	if !ty.TimeSet || t.TimeUnit == "" || ty.TimeUnit == "" || (t.TimeZone == "") != (ty.TimeZone == "") ||
		(t.TimeUnit == ty.TimeUnit && t.TimeZone == ty.TimeZone) {
		return out, nil
	}
	times, err := rescale(t.Times, t.TimeUnit, ty.TimeUnit)
	if err != nil {
		return nil, fmt.Errorf("the time column is %s but type %q stores times as %s: %v: %w",
			timeName(t.TimeUnit, t.TimeZone), ty.Name, timeName(ty.TimeUnit, ty.TimeZone), err, errs.ErrInvalidArgument)
	}
	own()
	out.Times, out.TimeUnit, out.TimeZone = times, ty.TimeUnit, ty.TimeZone
	return out, nil
}

// unitNanos is the length of each timestamp unit in nanoseconds.
var unitNanos = map[string]int64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}

// rescale converts times from one timestamp unit to another, refusing a
// value that would overflow or lose a remainder.
func rescale(times []int64, from, to string) ([]int64, error) {
	f, g := unitNanos[from], unitNanos[to]
	out := make([]int64, len(times))
	for i, v := range times {
		if f >= g { // coarser into finer: multiply
			k := f / g
			if v > math.MaxInt64/k || v < math.MinInt64/k {
				return nil, fmt.Errorf("row %d: %d %s does not fit in int64 %s", i, v, from, to)
			}
			out[i] = v * k
			continue
		}
		k := g / f
		if v%k != 0 {
			return nil, fmt.Errorf("row %d: %d %s is not a whole number of %s", i, v, from, to)
		}
		out[i] = v / k
	}
	return out, nil
}

// widen converts column c of n rows to type to when the rule allows: the
// new column, or nil when the types do not convert at all, or an error
// naming the first value that would change.
func widen(c *tablet.Column, to schema.PropertyType, n int) (*tablet.Column, error) {
	from := c.Type
	if !(from == schema.Int32 && to == schema.Int64 || from == schema.Float && to == schema.Double ||
		(from == schema.Int32 || from == schema.Int64) && to == schema.Double ||
		from == schema.Int64 && to == schema.Int32 || from == schema.Double && to == schema.Float) {
		return nil, nil
	}
	out := &tablet.Column{Name: c.Name, Type: to, Values: make([]byte, tablet.Width(to)*n)}
	if c.Validity != nil {
		out.Validity = make([]byte, (n+7)/8)
		for i := range n {
			if c.Valid(i) {
				out.Validity[i>>3] |= 1 << (i & 7)
			}
		}
	}
	for i := range n {
		if c.Validity != nil && !c.Valid(i) {
			continue
		}
		var bits uint64
		switch {
		case to == schema.Int32:
			v := c.Int64(i)
			if v > math.MaxInt32 || v < math.MinInt32 {
				return nil, fmt.Errorf("row %d: %d does not fit in INT32", i, v)
			}
			binary.LittleEndian.PutUint32(out.Values[4*i:], uint32(int32(v)))
			continue
		case to == schema.Float:
			v := c.Double(i)
			f := float32(v)
			if float64(f) != v && !math.IsNaN(v) {
				return nil, fmt.Errorf("row %d: %v is not exact in a FLOAT", i, v)
			}
			binary.LittleEndian.PutUint32(out.Values[4*i:], math.Float32bits(f))
			continue
		case from == schema.Int32 && to == schema.Int64:
			bits = uint64(int64(c.Int32(i)))
		case from == schema.Float:
			bits = math.Float64bits(float64(math.Float32frombits(binary.LittleEndian.Uint32(c.Values[4*(c.Offset+i):]))))
		default: // integers into DOUBLE
			var v int64
			if from == schema.Int32 {
				v = int64(c.Int32(i))
			} else {
				v = c.Int64(i)
			}
			if v > maxExactDouble || v < -maxExactDouble {
				return nil, fmt.Errorf("row %d: %d is not exact in a double (|v| > 2^53)", i, v)
			}
			bits = math.Float64bits(float64(v))
		}
		binary.LittleEndian.PutUint64(out.Values[8*i:], bits)
	}
	return out, nil
}
