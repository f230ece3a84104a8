package segment

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

func doubleLayout(cols int) Layout {
	l := Layout{Columns: make([]Column, cols)}
	for i := range l.Columns {
		l.Columns[i] = Column{ID: schema.PropertyID(i + 1), Name: fmt.Sprintf("c%d", i), Type: schema.Double}
	}
	return l
}

// doubleTablet is rows rows of cols DOUBLE columns at times t0, t0+1, ...
func doubleTablet(cols, rows int, t0 int64) *tablet.Tablet {
	tb := &tablet.Tablet{Times: make([]int64, rows)}
	for i := range tb.Times {
		tb.Times[i] = t0 + int64(i)
	}
	for j := 0; j < cols; j++ {
		v := make([]float64, rows)
		for i := range v {
			v[i] = float64(i%1000) * 0.25 * float64(j+1)
		}
		tb.Columns = append(tb.Columns, tablet.Doubles(fmt.Sprintf("c%d", j), v, nil))
	}
	return tb
}

// BenchmarkWrite writes 1M rows x 10 DOUBLE columns, as one device or as
// 1000 devices of 1000 rows.
func BenchmarkWrite(b *testing.B) {
	const rows, cols = 1_000_000, 10
	for _, devices := range []int{1, 1000} {
		b.Run(fmt.Sprintf("devices=%d", devices), func(b *testing.B) {
			per := rows / devices
			tb := doubleTablet(cols, per, 0)
			l := doubleLayout(cols)
			dir := b.TempDir()
			b.ReportAllocs()
			b.SetBytes(rows * (cols*8 + 8))
			var size int64
			for i := 0; i < b.N; i++ {
				w, err := Create(filepath.Join(dir, "bench.parquet"), l, WriterOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for d := 0; d < devices; d++ {
					if err := w.Append(fmt.Sprintf("dev-%06d", d), tb); err != nil {
						b.Fatal(err)
					}
				}
				info, err := w.Close()
				if err != nil {
					b.Fatal(err)
				}
				size = info.Size
			}
			b.ReportMetric(float64(size), "file-bytes")
		})
	}
}

// BenchmarkWriteWide writes 10 rows of 10,000 DOUBLE columns.
func BenchmarkWriteWide(b *testing.B) {
	const cols = 10_000
	tb := doubleTablet(cols, 10, 0)
	l := doubleLayout(cols)
	dir := b.TempDir()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w, err := Create(filepath.Join(dir, "wide.parquet"), l, WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Append("d", tb); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadDevice reads one device (10 rows x 4 DOUBLE columns) of a
// file of 100,000 devices, the file already open.
func BenchmarkReadDevice(b *testing.B) {
	const devices, per, cols = 100_000, 10, 4
	l := doubleLayout(cols)
	path := filepath.Join(b.TempDir(), "many.parquet")
	w, err := Create(path, l, WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tb := doubleTablet(cols, per, 0)
	for d := 0; d < devices; d++ {
		if err := w.Append(fmt.Sprintf("dev-%06d", d), tb); err != nil {
			b.Fatal(err)
		}
	}
	info, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	f, err := Open(path, info.Size)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := f.Read(fmt.Sprintf("dev-%06d", (i*7919)%devices), l.Columns, math.MinInt64, math.MaxInt64, 0)
		n := 0
		for {
			t, err := c.Next()
			if err != nil {
				b.Fatal(err)
			}
			if t == nil {
				break
			}
			n += len(t.Times)
		}
		if n != per {
			b.Fatalf("read %d rows", n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(info.Size), "file-bytes")
}

// BenchmarkOpen parses the footer of a file of 100,000 devices.
func BenchmarkOpen(b *testing.B) {
	const devices = 100_000
	l := doubleLayout(1)
	path := filepath.Join(b.TempDir(), "many.parquet")
	w, err := Create(path, l, WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tb := doubleTablet(1, 1, 0)
	for d := 0; d < devices; d++ {
		if err := w.Append(fmt.Sprintf("dev-%06d", d), tb); err != nil {
			b.Fatal(err)
		}
	}
	info, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := Open(path, info.Size)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	_ = os.Remove(path)
}
