package segment

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// allTypes is a layout with one column of every property type.
var allTypes = []Column{
	{ID: 11, Name: "b", Type: schema.Boolean},
	{ID: 12, Name: "i32", Type: schema.Int32},
	{ID: 13, Name: "i64", Type: schema.Int64},
	{ID: 14, Name: "f32", Type: schema.Float},
	{ID: 15, Name: "f64", Type: schema.Double},
	{ID: 16, Name: "s", Type: schema.String},
	{ID: 17, Name: "bin", Type: schema.Binary},
	{ID: 18, Name: "ts", Type: schema.Timestamp},
	{ID: 19, Name: "d", Type: schema.Date},
}

// row is one row of the test model: values per column, nil = null.
type row struct {
	time int64
	vals []any
}

// sample returns a value of type t derived from k.
func sample(t schema.PropertyType, k int) any {
	switch t {
	case schema.Boolean:
		return k%3 == 0
	case schema.Int32:
		return int32(k*7 - 50)
	case schema.Int64:
		return int64(k)*1_000_000_007 - 3
	case schema.Float:
		return float32(k) / 4
	case schema.Double:
		return float64(k)*1.5 - 0.25
	case schema.String:
		return string(rune('a'+k%26)) + "é" + string(rune('a'+k%7))
	case schema.Binary:
		return []byte{byte(k), 0, byte(k >> 8)}
	case schema.Timestamp:
		return int64(k)*1_000_000_123 + 1
	case schema.Date:
		return int32(18000 + k)
	}
	panic("type")
}

// buildColumn makes a tablet column of vals with pad junk rows before
// them, so that Offset = pad.
func buildColumn(c Column, vals []any, pad int) tablet.Column {
	n := pad + len(vals)
	valid := make([]bool, n)
	hasNull := false
	for i, v := range vals {
		valid[pad+i] = v != nil
		hasNull = hasNull || v == nil
	}
	for i := 0; i < pad; i++ {
		valid[i] = i%2 == 0 // junk
	}
	if !hasNull && pad == 0 {
		valid = nil
	}
	get := func(i int) any {
		if i < pad {
			return sample(c.Type, 1000+i) // junk the reader must not see
		}
		if vals[i-pad] == nil {
			return sample(c.Type, 0)
		}
		return vals[i-pad]
	}
	var col tablet.Column
	switch c.Type {
	case schema.Boolean:
		v := make([]bool, n)
		for i := range v {
			v[i] = get(i).(bool)
		}
		col = tablet.Bools(c.Name, v, valid)
	case schema.Int32, schema.Date:
		v := make([]int32, n)
		for i := range v {
			v[i] = get(i).(int32)
		}
		col = tablet.Int32s(c.Name, v, valid)
	case schema.Int64, schema.Timestamp:
		v := make([]int64, n)
		for i := range v {
			v[i] = get(i).(int64)
		}
		col = tablet.Int64s(c.Name, v, valid)
	case schema.Float:
		v := make([]float32, n)
		for i := range v {
			v[i] = get(i).(float32)
		}
		col = tablet.Floats(c.Name, v, valid)
	case schema.Double:
		v := make([]float64, n)
		for i := range v {
			v[i] = get(i).(float64)
		}
		col = tablet.Doubles(c.Name, v, valid)
	case schema.String:
		v := make([]string, n)
		for i := range v {
			v[i] = get(i).(string)
		}
		col = tablet.Strings(c.Name, v, valid)
	case schema.Binary:
		v := make([][]byte, n)
		for i := range v {
			v[i] = get(i).([]byte)
		}
		col = tablet.Binaries(c.Name, v, valid)
	}
	col.Type = c.Type
	col.Offset = pad
	return col
}

// buildTablet makes a tablet of rows with columns cols.
func buildTablet(cols []Column, rows []row, pad int) *tablet.Tablet {
	t := &tablet.Tablet{Times: make([]int64, len(rows))}
	for i, r := range rows {
		t.Times[i] = r.time
	}
	for j, c := range cols {
		vals := make([]any, len(rows))
		for i, r := range rows {
			vals[i] = r.vals[j]
		}
		t.Columns = append(t.Columns, buildColumn(c, vals, pad))
	}
	return t
}

// tabletRows converts a tablet back to rows, checking its layout.
// A Cursor's batches are fresh (offset 0, Validity only with a null);
// a GroupCursor's are slices of a row group (sliced says which).
func tabletRows(t testing.TB, tb *tablet.Tablet, cols []Column, sliced bool) []row {
	require.Len(t, tb.Columns, len(cols))
	for j := range tb.Columns {
		c := &tb.Columns[j]
		require.Equal(t, cols[j].Type, c.Type)
		require.Equal(t, cols[j].Name, c.Name)
		if !sliced {
			require.Zero(t, c.Offset)
		}
		if c.Validity != nil && !sliced { // Validity is set only when there is a null
			hasNull := false
			for i := range tb.Times {
				hasNull = hasNull || !c.Valid(i)
			}
			require.True(t, hasNull, "column %s has a Validity without nulls", c.Name)
		}
	}
	require.NoError(t, tb.Validate())
	out := make([]row, len(tb.Times))
	for i, tm := range tb.Times {
		out[i] = row{time: tm, vals: make([]any, len(cols))}
		for j := range cols {
			out[i].vals[j] = tb.Columns[j].Value(i)
		}
	}
	return out
}

// readAll drains a cursor, checking the batch size bound.
// batchReader is a Cursor or a GroupCursor.
type batchReader interface {
	Next() (*tablet.Tablet, error)
}

func readAll(t testing.TB, c batchReader, cols []Column, batch int) []row {
	var out []row
	for {
		tb, err := c.Next()
		require.NoError(t, err)
		if tb == nil {
			break
		}
		require.NotEmpty(t, tb.Times, "empty batch")
		if batch > 0 {
			require.LessOrEqual(t, len(tb.Times), batch)
		}
		_, sliced := c.(*GroupCursor)
		out = append(out, tabletRows(t, tb, cols, sliced)...)
	}
	tb, err := c.Next() // stays at the end
	require.NoError(t, err)
	require.Nil(t, tb)
	return out
}

// writeFile writes devices' rows (device -> rows, appended in sorted
// device order, each device in chunks of at most per rows) and opens the
// result.
func writeFile(t testing.TB, l Layout, opts WriterOptions, data map[string][]row, per, pad int) (*File, *FileInfo) {
	path := filepath.Join(t.TempDir(), "part-0.parquet")
	w, err := Create(path, l, opts)
	require.NoError(t, err)
	for _, d := range sortedKeys(data) {
		rows := data[d]
		for from := 0; from < len(rows); from += per {
			require.NoError(t, w.Append(d, buildTablet(l.Columns, rows[from:min(from+per, len(rows))], pad)))
		}
	}
	info, err := w.Close()
	require.NoError(t, err)
	f, err := w.File()
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	opened, err := Open(path, info.Size)
	require.NoError(t, err)
	defer opened.Close()
	requireSameFile(t, opened, f)
	return f, info
}

// requireSameFile: the File a writer made of its file (Writer.File) is
// the one Open makes of it, but for the footer, read on demand.
func requireSameFile(t testing.TB, opened, written *File) {
	t.Helper()
	require.Equal(t, opened.path, written.path)
	require.Equal(t, opened.size, written.size)
	require.Equal(t, opened.layout, written.layout)
	require.Equal(t, opened.byID, written.byID)
	// (nil and empty alike: no devices, no row groups)
	require.Equal(t, len(opened.devices), len(written.devices))
	if len(opened.devices) > 0 {
		require.Equal(t, opened.devices, written.devices)
		require.Equal(t, opened.spans, written.spans)
	}
	require.Equal(t, opened.starts, written.starts)
	require.Equal(t, len(opened.groups), len(written.groups))
	if len(opened.groups) > 0 {
		require.Equal(t, opened.groups, written.groups)
	}
	require.Equal(t, opened.chunks, written.chunks)
	require.Equal(t, fmt.Sprint(opened.sums), fmt.Sprint(written.sums)) // NaN sums too
	require.Equal(t, len(opened.checked), len(written.checked))
	require.Equal(t, len(opened.headers), len(written.headers))
	require.Equal(t, opened.data != nil, written.data != nil)
	require.Nil(t, written.meta, "read on demand only")
}

func sortedKeys(m map[string][]row) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ { // insertion sort: tiny maps
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// project keeps the rows with start <= time < end and the values of the
// columns picked (-1: null).
func project(rows []row, pick []int, start, end int64) []row {
	var out []row
	for _, r := range rows {
		if r.time < start || r.time >= end {
			continue
		}
		nr := row{time: r.time, vals: make([]any, len(pick))}
		for j, p := range pick {
			if p >= 0 {
				nr.vals[j] = r.vals[p]
			}
		}
		out = append(out, nr)
	}
	return out
}
