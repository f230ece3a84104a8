package abi_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A batch whose columns all have simple types (bool, int32, int64, float32,
// float64, date32, timestamp[ns], utf8, binary; an int64 or timestamp time
// column) is read straight from its C buffers; any other column sends the
// whole batch through arrow arrays and arrowbridge. These tests insert each
// batch both ways (the second time with an extra uint8 column, which forces
// the arrow path) and require the same result.

// directCase is a batch of simple columns: length rows from row offset of
// the struct array.
type directCase struct {
	name   string
	length int64
	offset int64
	cols   []column
}

func directCases() []directCase {
	valid := []bool{true, false, true, true}
	sliced := func(c column, offset, length int64) column {
		c.offset, c.length = offset, length
		return c
	}
	unknownNulls := func(c column) column {
		c.nulls = -1
		return c
	}
	bits := func(c column, b byte) column { // a validity bitmap, null count 0
		c.bufs[0] = []byte{b}
		return c
	}
	return []directCase{
		{name: "every type with nulls", length: 4, cols: []column{
			timeCol(1, 2, 3, 4),
			boolCol("b", []bool{true, true, false, true}, valid),
			fixedCol("i", "i", []int32{-1, 0, 1 << 30, 5}, valid),
			int64Col("l", []int64{-1 << 62, 0, 7, 8}, valid),
			fixedCol("f", "f", []float32{1.5, 0, -2.25, 3}, valid),
			fixedCol("d", "g", []float64{3.25, 0, -1e300, 4}, valid),
			stringCol("s", []string{"héllo", "x", "", "end"}, valid),
			varCol("bin", "z", []string{"\x00\xff", "", "x", "yz"}, valid),
			fixedCol("ts", "tsn:UTC", []int64{1_700_000_000_000_000_000, 0, -5, 6}, valid),
			fixedCol("dt", "tdD", []int32{19000, 0, -3, 4}, valid),
		}},
		{name: "sliced columns at bit offsets", length: 3, cols: []column{
			timeCol(1, 2, 3),
			sliced(boolCol("b", []bool{false, true, false, true, true, false, true, false, true, true, false, true},
				[]bool{true, true, true, true, true, true, true, true, true, false, true, true}), 9, 3),
			sliced(int64Col("l", []int64{9, 9, 9, 9, 9, 1, 2, 3}, []bool{true, true, true, true, true, true, false, true}), 5, 3),
			sliced(stringCol("s", []string{"a", "bc", "def", "", "gh"}, []bool{true, true, false, true, true}), 2, 3),
			sliced(fixedCol("f", "f", []float32{1, 2, 3, 4}, nil), 1, 3),
		}},
		{name: "offset of the struct array", length: 2, offset: 1, cols: []column{
			timeCol(0, 10, 20),
			boolCol("b", []bool{true, false, true}, []bool{true, true, false}),
			int64Col("l", []int64{1, 2, 3, 4}, []bool{false, true, true, true}), // longer than the batch
			sliced(stringCol("s", []string{"skip", "p", "q", "r"}, nil), 1, 3),
		}},
		{name: "nulls outside the rows of the batch", length: 2, offset: 1, cols: []column{
			timeCol(0, 10, 20),
			int64Col("l", []int64{1, 2, 3}, []bool{false, true, true}),
			int64Col("time2", []int64{1, 2, 3, 4}, []bool{true, true, true, false}),
		}},
		{name: "unknown null counts", length: 4, cols: []column{
			unknownNulls(timeCol(1, 2, 3, 4)),
			unknownNulls(int64Col("l", []int64{1, 2, 3, 4}, valid)),
			unknownNulls(int64Col("full", []int64{1, 2, 3, 4}, []bool{true, true, true, true})),
			unknownNulls(stringCol("s", []string{"a", "b", "c", "d"}, valid)),
		}},
		{name: "bitmap ignored when the null count is 0", length: 4, cols: []column{
			bits(timeCol(1, 2, 3, 4), 0),
			bits(int64Col("l", []int64{1, 2, 3, 4}, nil), 0b0101),
		}},
		{name: "timestamp time column in seconds with a zone", length: 2, cols: []column{
			fixedCol("time", "tss:Europe/Paris", []int64{1_700_000_000, 1_700_000_001}, nil),
			fixedCol("ts", "tsn:", []int64{1, 2}, nil),
		}},
		{name: "timestamp time column in microseconds", length: 1, cols: []column{
			fixedCol("time", "tsu:", []int64{5}, nil),
			int64Col("l", []int64{1}, nil),
		}},
		{name: "zero rows with dangling buffers", length: 0, cols: []column{
			{name: "time", format: "l", bufs: []any{uintptr(1), uintptr(8)}},
			{name: "l", format: "l", bufs: []any{uintptr(0x40), uintptr(1)}},
			{name: "s", format: "u", bufs: []any{uintptr(1), uintptr(4), uintptr(1)}},
			{name: "b", format: "b", bufs: []any{uintptr(0), uintptr(1)}},
		}},
		{name: "empty strings with a dangling data buffer", length: 2, cols: []column{
			timeCol(1, 2),
			func() column {
				c := stringCol("s", []string{"", ""}, nil)
				c.bufs[0], c.bufs[2] = uintptr(1), uintptr(1)
				return c
			}(),
		}},
		{name: "only the time column", length: 2, cols: []column{timeCol(7, 8)}},
	}
}

// forceArrowPath returns cols with a uint8 column, which the direct import
// does not take.
func forceArrowPath(c directCase) []column {
	n := c.offset + c.length
	for _, col := range c.cols {
		n = max(n, col.offset+col.length)
	}
	return append(append([]column{}, c.cols...), column{name: "zz", format: "C", length: n,
		bufs: []any{[]byte(nil), make([]byte, n)}})
}

func TestDirectImportMatchesArrowPath(t *testing.T) {
	direct := openDB(t, "", `{"auto_create": true}`)
	arrow := openDB(t, "", `{"auto_create": true}`)
	for i, c := range directCases() {
		t.Run(c.name, func(t *testing.T) {
			typ := fmt.Sprintf("T%d", i)
			var props []string
			for _, col := range c.cols[1:] {
				props = append(props, fmt.Sprintf("%q", col.name))
			}
			request := fmt.Sprintf(`{"type": %q, "properties": [%s]}`, typ, joinComma(props))
			var results [2]*result
			var described [2]description
			for j, db := range []uintptr{direct, arrow} {
				cols := c.cols
				if db == arrow {
					cols = forceArrowPath(c)
				}
				b := exportBatch(t, c.length+c.offset, cols...)
				b.array().offset, b.array().length = c.offset, c.length
				code, msg := insert(t, db, typ, "dev", b)
				requireOK(t, code, msg, "insert")
				assertReleasedOnce(t, b)
				results[j] = scanResult(t, db, request)
				described[j] = describe(t, db, typ)
			}
			assert.Equal(t, results[1].names, results[0].names)
			assert.Equal(t, results[1].formats, results[0].formats)
			assert.Equal(t, results[1].rows, results[0].rows)
			require.Len(t, described[1].Types, 1)
			arrowProps := described[1].Types[0].Properties
			assert.Equal(t, described[1].Types[0].Time, described[0].Types[0].Time)
			assert.Equal(t, arrowProps[:len(arrowProps)-1], described[0].Types[0].Properties, "the same properties, zz aside")
		})
	}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// TestDirectPlanIsNotReusedForAnotherSchema inserts batches whose schemas
// differ from the one before in one detail each: the plan of the last
// schema (kept to skip re-planning the same one) must not be reused.
func TestDirectPlanIsNotReusedForAnotherSchema(t *testing.T) {
	db := openDB(t, "", `{"auto_create": true}`)
	propType := func(typ, prop string) string {
		for _, p := range describe(t, db, typ).Types[0].Properties {
			if p.Name == prop {
				return p.Type
			}
		}
		return ""
	}
	steps := []struct {
		name, typ string
		batch     func(t testing.TB) *batch
		check     func(t *testing.T)
	}{
		{"k as int64", "P1", func(t testing.TB) *batch {
			return exportBatch(t, 1, timeCol(1), int64Col("k", []int64{1}, nil))
		}, func(t *testing.T) { assert.Equal(t, "INT64", propType("P1", "k")) }},
		{"k as utf8", "P2", func(t testing.TB) *batch {
			return exportBatch(t, 1, timeCol(1), stringCol("k", []string{"x"}, nil))
		}, func(t *testing.T) { assert.Equal(t, "STRING", propType("P2", "k")) }},
		{"another name", "P3", func(t testing.TB) *batch {
			return exportBatch(t, 1, timeCol(1), stringCol("j", []string{"x"}, nil))
		}, func(t *testing.T) { assert.Equal(t, "STRING", propType("P3", "j")) }},
		{"j as int32", "P4", func(t testing.TB) *batch {
			return exportBatch(t, 1, timeCol(1), fixedCol("j", "i", []int32{1}, nil))
		}, func(t *testing.T) { assert.Equal(t, "INT32", propType("P4", "j")) }},
		{"j as int32 indices of a dictionary", "P5", func(t testing.TB) *batch {
			dict := stringCol("", []string{"p", "q"}, nil)
			return exportBatch(t, 1, timeCol(1), column{name: "j", format: "i", length: 1,
				bufs: []any{[]byte(nil), le32(1)}, dict: &dict})
		}, func(t *testing.T) {
			assert.Equal(t, "STRING", propType("P5", "j"))
			assert.Equal(t, []any{"q"}, scanResult(t, db, `{"type": "P5"}`).column("j"))
		}},
		{"time column in milliseconds", "P6", func(t testing.TB) *batch {
			return exportBatch(t, 1, fixedCol("time", "tsm:", []int64{1}, nil), stringCol("j", []string{"x"}, nil))
		}, func(t *testing.T) { assert.Equal(t, "ms", describe(t, db, "P6").Types[0].Time.Unit) }},
		{"time column in seconds", "P7", func(t testing.TB) *batch {
			return exportBatch(t, 1, fixedCol("time", "tss:", []int64{1}, nil), stringCol("j", []string{"x"}, nil))
		}, func(t *testing.T) { assert.Equal(t, "s", describe(t, db, "P7").Types[0].Time.Unit) }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			code, msg := insert(t, db, s.typ, "d", s.batch(t))
			requireOK(t, code, msg, "insert")
			s.check(t)
		})
	}

	t.Run("a dictionary in the schema only", func(t *testing.T) {
		for _, dictInSchema := range []bool{false, true} {
			dict := stringCol("", []string{"p", "q"}, nil)
			b := exportBatch(t, 1, timeCol(1), column{name: "j", format: "i", length: 1,
				bufs: []any{[]byte(nil), le32(1)}, dict: &dict})
			if !dictInSchema {
				b.colSchema(1).dictionary = 0 // the plain int32 schema, planned again
				b.colArray(1).dictionary = 0
			} else {
				b.colArray(1).dictionary = 0
			}
			code, msg := insert(t, db, "P8", "d", b)
			if !dictInSchema {
				requireOK(t, code, msg, "insert")
				continue
			}
			assert.Equal(t, codeInvalidArgument, code, msg)
			assert.Contains(t, msg, "dictionary pointer")
		}
	})

	t.Run("the same schema with another time column option", func(t *testing.T) {
		byA := openDB(t, "", `{"auto_create": true, "time_column": "a"}`)
		byB := openDB(t, "", `{"auto_create": true, "time_column": "b"}`)
		for _, c := range []struct {
			db         uintptr
			prop, time string
		}{{byA, "b", "a"}, {byB, "a", "b"}} {
			b := exportBatch(t, 1, int64Col("a", []int64{1}, nil), int64Col("b", []int64{2}, nil))
			code, msg := insert(t, c.db, "T", "", b)
			requireOK(t, code, msg, "insert")
			r := scanResult(t, c.db, `{"type": "T"}`)
			assert.Equal(t, []string{"device", c.time, c.prop}, r.names)
		}
	})
}
