package abi_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// BenchmarkInsert measures arcadego_insert of one batch through the C ABI:
// the checks of the Arrow structs, the import, the
// conversion to a tablet and the engine's insert (memory database, so no
// fsync). The same C batch is re-armed each time (its release callback
// only marks it released).
func BenchmarkInsert(b *testing.B) {
	for _, rows := range []int{1, 10, 1024, 65536} { // 1 and 10: the fixed cost of a tablet
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

// wideBatch exports one row of cols int64 properties c0..c{cols-1} at time t.
func wideBatch(b *testing.B, cols int, t int64) *batch {
	cs := make([]column, 0, cols+1)
	cs = append(cs, int64Col("time", []int64{t}, nil))
	for c := 0; c < cols; c++ {
		cs = append(cs, int64Col(fmt.Sprintf("c%d", c), []int64{int64(c)}, nil))
	}
	return exportBatch(b, 1, cs...)
}

// BenchmarkWideInsert measures arcadego_insert of a 1-row batch of many
// int64 columns whose properties exist (created by an untimed first insert),
// each time for a new device, into a memory database.
func BenchmarkWideInsert(b *testing.B) {
	for _, cols := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("cols=%d", cols), func(b *testing.B) {
			db := openDB(b, "", `{"auto_create": true}`)
			batch := wideBatch(b, cols, 1)
			rearm := func() {
				batch.schema().release = callbacks.childSchema // marks released, frees nothing
				batch.array().release = callbacks.childArray
			}
			rearm()
			code, msg := insert(b, db, "W", "first", batch)
			if code != codeOK {
				b.Fatal(msg)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rearm()
				if code, msg := insert(b, db, "W", fmt.Sprintf("d%d", i), batch); code != codeOK {
					b.Fatal(msg)
				}
			}
		})
	}
}

// BenchmarkWideInsertStream is BenchmarkWideInsert through
// arcadego_insert_stream: a stream of one batch.
func BenchmarkWideInsertStream(b *testing.B) {
	for _, cols := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("cols=%d", cols), func(b *testing.B) {
			db := openDB(b, "", `{"auto_create": true}`)
			wide := wideBatch(b, cols, 1)
			schema, array := *wide.schema(), *wide.array()
			schema.release, array.release = callbacks.childSchema, callbacks.childArray // mark released, free nothing
			run := func(device string) {
				*wide.schema(), *wide.array() = schema, array // the stream moves them out
				addr, _ := exportStream(b, &streamState{
					failAt: -1,
					schema: func() *batch { return wide },
					next: func(i int) *batch {
						if i == 0 {
							return wide
						}
						return nil
					},
				})
				var e uintptr
				if code := lib.insertStream(db, cstr("W"), cstr(device), addr, &e); code != codeOK {
					b.Fatal(goString(e))
				}
			}
			run("first")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run(fmt.Sprintf("d%d", i))
			}
		})
	}
}

// BenchmarkWideScan measures a scan of one device holding one row of many
// int64 columns: arcadego_scan, get_schema, get_next (the row, then the
// end), releasing everything.
func BenchmarkWideScan(b *testing.B) {
	for _, cols := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("cols=%d", cols), func(b *testing.B) {
			db := openDB(b, "", `{"auto_create": true}`)
			code, msg := insert(b, db, "W", "d", wideBatch(b, cols, 1))
			if code != codeOK {
				b.Fatal(msg)
			}
			stream := libc.calloc(1, unsafe.Sizeof(cStream{}))
			sch := libc.calloc(1, unsafe.Sizeof(cSchema{}))
			arr := libc.calloc(1, unsafe.Sizeof(cArray{}))
			b.Cleanup(func() { libc.free(stream); libc.free(sch); libc.free(arr) })
			req := cstr(`{"type": "W", "devices": ["d"]}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var e uintptr
				if code := lib.scan(db, req, stream, &e); code != codeOK {
					b.Fatal(goString(e))
				}
				s := at[cStream](stream)
				if rc, _, _ := purego.SyscallN(s.getSchema, stream, sch); rc != 0 {
					b.Fatal("get_schema failed")
				}
				releaseSchema(sch)
				rows := int64(0)
				for {
					if rc, _, _ := purego.SyscallN(s.getNext, stream, arr); rc != 0 {
						b.Fatal("get_next failed")
					}
					a := at[cArray](arr)
					if a.release == 0 {
						break
					}
					if a.nChildren != int64(cols+2) {
						b.Fatalf("%d columns, want %d", a.nChildren, cols+2)
					}
					rows += a.length
					purego.SyscallN(a.release, arr)
				}
				purego.SyscallN(s.release, stream)
				if rows != 1 {
					b.Fatalf("%d rows, want 1", rows)
				}
			}
		})
	}
}
