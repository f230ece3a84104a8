package arrowbridge

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// col is a named array for building test records.
type col struct {
	name string
	arr  arrow.Array
}

// newRecord builds a record from cols; it takes over the caller's
// references to the arrays.
func newRecord(t testing.TB, cols ...col) arrow.Record {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	n := int64(-1)
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.arr.DataType(), Nullable: true}
		arrs[i] = c.arr
		n = int64(c.arr.Len())
	}
	if n < 0 {
		n = 0
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), arrs, n)
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// fromJSON builds an array of type dt from a JSON list.
func fromJSON(t testing.TB, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(js))
	require.NoError(t, err, "building %s from %s", dt, js)
	return a
}

// times returns an int64 array 0..n-1.
func times(n int) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Append(int64(i))
	}
	return b.NewArray()
}

func tabletValues(c *tablet.Column, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = c.Value(i)
	}
	return out
}

// arrowValues reads a result array in the same domain as tabletValue.
func arrowValues(t testing.TB, a arrow.Array) []any {
	t.Helper()
	out := make([]any, a.Len())
	for i := range out {
		if a.IsNull(i) {
			continue
		}
		switch a := a.(type) {
		case *array.Boolean:
			out[i] = a.Value(i)
		case *array.Int32:
			out[i] = a.Value(i)
		case *array.Int64:
			out[i] = a.Value(i)
		case *array.Float32:
			out[i] = a.Value(i)
		case *array.Float64:
			out[i] = a.Value(i)
		case *array.String:
			out[i] = a.Value(i)
		case *array.Binary:
			out[i] = append([]byte{}, a.Value(i)...)
		case *array.Timestamp:
			out[i] = int64(a.Value(i))
		case *array.Date32:
			out[i] = int32(a.Value(i))
		case *array.Dictionary:
			out[i] = arrowValues(t, a.Dictionary())[a.GetValueIndex(i)]
		default:
			t.Fatalf("unexpected result array type %s", a.DataType())
		}
	}
	return out
}

// sameMem reports whether a and b start at the same byte (zero copy).
func sameMem(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// propsOf lists the tablet's columns as properties, in order.
func propsOf(tb *tablet.Tablet) []schema.Property {
	props := make([]schema.Property, len(tb.Columns))
	for i, c := range tb.Columns {
		props[i] = schema.Property{ID: schema.PropertyID(i + 1), Name: c.Name, Type: c.Type}
	}
	return props
}
