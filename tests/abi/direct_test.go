package abi_test

import (
	"fmt"
	"testing"

	"github.com/arcadego/arcadego/internal/cdata/cdatatest"
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
	var out []directCase
	for _, c := range cdatatest.DirectCases() {
		dc := directCase{name: c.Name, length: c.Length, offset: c.Offset}
		for _, k := range c.Cols {
			dc.cols = append(dc.cols, specCol(k))
		}
		out = append(out, dc)
	}
	return out
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
