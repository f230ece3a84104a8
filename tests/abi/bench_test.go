package abi_test

import (
	"fmt"
	"testing"
)

// BenchmarkInsert measures arcadego_insert of one batch through the C ABI:
// the checks and shadow copy of the Arrow structs, the import, the
// conversion to a tablet and the engine's insert (memory database, so no
// fsync). The same C batch is re-armed each time (its release callback
// only marks it released).
func BenchmarkInsert(b *testing.B) {
	for _, rows := range []int{1024, 65536} {
		for _, withStrings := range []bool{false, true} {
			b.Run(fmt.Sprintf("rows=%d/cols=10/strings=%v", rows, withStrings), func(b *testing.B) {
				db := openDB(b, "", `{"auto_create": true}`)
				cols := []column{int64Col("time", seq(rows), nil)}
				for c := 0; c < 10; c++ {
					if withStrings && c%2 == 1 {
						s := make([]string, rows)
						for i := range s {
							s[i] = fmt.Sprintf("value %d", i)
						}
						cols = append(cols, stringCol(fmt.Sprintf("c%d", c), s, nil))
						continue
					}
					cols = append(cols, int64Col(fmt.Sprintf("c%d", c), seq(rows), nil))
				}
				batch := exportBatch(b, int64(rows), cols...)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					batch.schema().release = callbacks.childSchema // marks released, frees nothing
					batch.array().release = callbacks.childArray
					code, msg := insert(b, db, "T", fmt.Sprintf("d%d", i), batch)
					if code != codeOK {
						b.Fatal(msg)
					}
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

func seq(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(i)
	}
	return v
}
