package arrowbridge

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// benchRecord builds a record of a time column and cols columns cycling
// through float64, int64, utf8, bool and timestamp[ns], every 7th row null.
func benchRecord(b *testing.B, cols, rows int) arrow.Record {
	b.Helper()
	mem := memory.DefaultAllocator
	fields := []arrow.Field{{Name: "time", Type: arrow.PrimitiveTypes.Int64}}
	kinds := []arrow.DataType{
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String,
		arrow.FixedWidthTypes.Boolean, &arrow.TimestampType{Unit: arrow.Nanosecond},
	}
	for i := 0; i < cols; i++ {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: kinds[i%len(kinds)], Nullable: true})
	}
	rb := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer rb.Release()
	for r := 0; r < rows; r++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(r))
		for i := 0; i < cols; i++ {
			fb := rb.Field(1 + i)
			if r%7 == 3 {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Float64Builder:
				fb.Append(float64(r) * 0.5)
			case *array.Int64Builder:
				fb.Append(int64(r * i))
			case *array.StringBuilder:
				fb.Append("value")
			case *array.BooleanBuilder:
				fb.Append(r%2 == 0)
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(r))
			}
		}
	}
	return rb.NewRecord()
}

func BenchmarkToTablet(b *testing.B) {
	for _, cols := range []int{10, 1000} {
		for _, rows := range []int{1, 1024} {
			b.Run(fmt.Sprintf("cols=%d/rows=%d", cols, rows), func(b *testing.B) {
				rec := benchRecord(b, cols, rows)
				defer rec.Release()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := ToTablet(rec, ""); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkToRecord(b *testing.B) {
	for _, cols := range []int{10, 1000} {
		for _, rows := range []int{1, 1024} {
			b.Run(fmt.Sprintf("cols=%d/rows=%d", cols, rows), func(b *testing.B) {
				rec := benchRecord(b, cols, rows)
				defer rec.Release()
				tb, err := ToTablet(rec, "")
				if err != nil {
					b.Fatal(err)
				}
				sch := ResultSchema("time", "", "", propsOf(tb))
				mem := memory.NewGoAllocator()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					out, err := ToRecord(mem, sch, "device-1", tb)
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
			})
		}
	}
}
