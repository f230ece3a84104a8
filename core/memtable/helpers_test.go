package memtable

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Test cells: nil is null; otherwise int64 (Int64, Timestamp), int32
// (Int32, Date), float32, float64, bool, or string (String, Binary).

var allTypes = []schema.PropertyType{
	schema.Boolean, schema.Int32, schema.Int64, schema.Float, schema.Double,
	schema.String, schema.Binary, schema.Timestamp, schema.Date,
}

// junk returns a value for padding rows before a column's Offset.
func junk(typ schema.PropertyType, i int) any { return sample(typ, -1000-i) }

// sample returns a deterministic value of typ derived from k.
func sample(typ schema.PropertyType, k int) any {
	switch typ {
	case schema.Boolean:
		return k%3 == 0
	case schema.Int32, schema.Date:
		return int32(k)
	case schema.Int64, schema.Timestamp:
		return int64(k) * 1_000_003
	case schema.Float:
		return float32(k) / 4
	case schema.Double:
		return float64(k) / 8
	case schema.String:
		return fmt.Sprintf("s%d", k)
	case schema.Binary:
		return string([]byte{byte(k), byte(k >> 8), 0xff}[:1+(k&1)])
	}
	panic("type")
}

// mkCol builds a column of typ whose rows are cells, placed at offset in
// its buffers (rows before offset hold junk, half of it valid).
func mkCol(name string, typ schema.PropertyType, offset int, cells ...any) tablet.Column {
	n := offset + len(cells)
	all := make([]any, n)
	valid := make([]bool, n)
	hasNull := false
	for i := range n {
		if i < offset {
			all[i], valid[i] = junk(typ, i), i%2 == 0
			continue
		}
		all[i] = cells[i-offset]
		valid[i] = all[i] != nil
		hasNull = hasNull || !valid[i]
	}
	c := tablet.Column{Name: name, Type: typ, Offset: offset}
	if hasNull || offset > 0 {
		c.Validity = make([]byte, (n+7)/8+1)
		for i, ok := range valid {
			if ok {
				c.Validity[i>>3] |= 1 << (i & 7)
			}
		}
	}
	switch {
	case typ == schema.Boolean:
		c.Values = make([]byte, (n+7)/8+1)
		for i, v := range all {
			if v != nil && v.(bool) {
				c.Values[i>>3] |= 1 << (i & 7)
			}
		}
	case tablet.VarWidth(typ):
		c.Offsets = []int32{0}
		for _, v := range all {
			if v != nil {
				c.Data = append(c.Data, v.(string)...)
			} else {
				c.Data = append(c.Data, "garbage"...) // Arrow allows bytes under a null
			}
			c.Offsets = append(c.Offsets, int32(len(c.Data)))
		}
	default:
		w := tablet.Width(typ)
		c.Values = make([]byte, n*w)
		for i, v := range all {
			if v != nil {
				putValue(c.Values[i*w:], v)
			}
		}
	}
	return c
}

func putValue(b []byte, v any) {
	switch x := v.(type) {
	case int64:
		binary.LittleEndian.PutUint64(b, uint64(x))
	case int32:
		binary.LittleEndian.PutUint32(b, uint32(x))
	case float64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(x))
	case float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(x))
	default:
		panic("value")
	}
}

// cellsOf returns the rows of a column as cells.
func cellsOf(c tablet.Column, n int) []any {
	out := make([]any, n)
	for i := range n {
		if !c.Valid(i) {
			continue
		}
		switch c.Type {
		case schema.Boolean:
			out[i] = c.Bool(i)
		case schema.Int32, schema.Date:
			out[i] = c.Int32(i)
		case schema.Int64, schema.Timestamp:
			out[i] = c.Int64(i)
		case schema.Float:
			out[i] = c.Float(i)
		case schema.Double:
			out[i] = c.Double(i)
		case schema.String, schema.Binary:
			out[i] = string(c.Bytes(i))
		}
	}
	return out
}

// tab builds a tablet.
func tab(times []int64, cols ...tablet.Column) *tablet.Tablet {
	return &tablet.Tablet{Times: times, Columns: cols}
}

// i64 builds an Int64 column at offset 0; nil cells are null.
func i64(name string, cells ...any) tablet.Column { return mkCol(name, schema.Int64, 0, cells...) }

func ids(v ...schema.PropertyID) []schema.PropertyID { return v }

func seq(from, n int) []int64 {
	t := make([]int64, n)
	for i := range t {
		t[i] = int64(from + i)
	}
	return t
}

// readAll reads every row of c with the given columns.
func readAll(c *Chunk, refs ...ColumnRef) *tablet.Tablet {
	return c.Snapshot().Read(refs, math.MinInt64, math.MaxInt64)
}

func ref(id schema.PropertyID, name string, typ schema.PropertyType) ColumnRef {
	return ColumnRef{ID: id, Name: name, Type: typ}
}

// column returns the cells of result column i.
func column(t *tablet.Tablet, i int) []any { return cellsOf(t.Columns[i], t.Rows()) }

// nulls returns n nil cells.
func nulls(n int) []any { return make([]any, n) }

func int64s(v ...int64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}
