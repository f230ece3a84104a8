package memtable

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// int64Tablet returns a tablet of rows rows with one Int64 column per id,
// all sharing one value buffer. valid, when not nil, says which columns
// hold values; the others are present but all null.
func int64Tablet(times []int64, idv []schema.PropertyID, valid func(i int) bool) *tablet.Tablet {
	vals := make([]int64, len(times))
	for i := range vals {
		vals[i] = int64(i) + 1
	}
	shared := tablet.Int64s("", vals, nil)
	allNull := make([]byte, (len(times)+7)/8)
	cols := make([]tablet.Column, len(idv))
	for i, id := range idv {
		cols[i] = shared
		cols[i].Name = fmt.Sprint("c", id)
		if valid != nil && !valid(i) {
			cols[i].Validity = allNull
		}
	}
	return &tablet.Tablet{Times: times, Columns: cols}
}

func idRange(from, n int) []schema.PropertyID {
	v := make([]schema.PropertyID, n)
	for i := range v {
		v[i] = schema.PropertyID(from + i)
	}
	return v
}

// BenchmarkExpansion: a chunk with one populated Int64 column and history
// rows gets one row carrying new Int64 columns. Sparse: every new column
// is in the tablet but only the first and last hold a value; dense: all
// do. Only the Write is timed. As in the harness of the IoTDB pull request
// on aligned memtable expansion (#18816), each measured write starts
// after a collection (in the untimed setup), so that the
// figure is the write's own cost rather than a share of collections
// brought on by the fixtures' garbage; B/op still shows what the write
// leaves for the collector.
func BenchmarkExpansion(b *testing.B) {
	for _, history := range []int{1, 10000} {
		for _, n := range []int{10, 100, 1000, 10000} {
			for _, kind := range []string{"sparse", "dense"} {
				b.Run(fmt.Sprintf("history=%d/new=%d/%s", history, n, kind), func(b *testing.B) {
					hist := int64Tablet(seq(0, history), idRange(0, 1), nil)
					var valid func(int) bool
					if kind == "sparse" {
						valid = func(i int) bool { return i == 0 || i == n-1 }
					}
					wide := int64Tablet(seq(history, 1), idRange(1, n), valid)
					b.ReportAllocs()
					for range b.N {
						b.StopTimer()
						c := New(Options{}).Chunk(1, "d")
						if err := c.Write(hist, idRange(0, 1)); err != nil {
							b.Fatal(err)
						}
						runtime.GC()
						b.StartTimer()
						if err := c.Write(wide, idRange(1, n)); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkTabletWrite: every column exists and the tablet lists them in
// reverse chunk order; rows are appended to a long-lived chunk (steady
// state, including the amortized cost of new blocks, which a streaming
// column gets at full size). The memtable is replaced, untimed, every 4Ki
// rows. With pool=off the values land in memory the memtable has just
// allocated, so with many columns the figure is bound by page faults and
// memory bandwidth; with pool=on the replaced memtable is released to a
// block pool first, as the engine's flusher does, and the next one takes
// its slabs (the harness of IoTDB's measurement likewise cleared its
// memtable before each call and drew arrays from a warm pool).
func BenchmarkTabletWrite(b *testing.B) {
	for _, pooled := range []bool{false, true} {
		for _, cols := range []int{10, 100, 1000} {
			for _, rows := range []int{1, 32} {
				name := fmt.Sprintf("pool=%s/cols=%d/rows=%d", map[bool]string{false: "off", true: "on"}[pooled], cols, rows)
				b.Run(name, func(b *testing.B) { benchTabletWrite(b, pooled, cols, rows) })
			}
		}
	}
}

func benchTabletWrite(b *testing.B, pooled bool, cols, rows int) {
	fwd := idRange(0, cols)
	rev := make([]schema.PropertyID, cols)
	for i := range rev {
		rev[i] = fwd[cols-1-i]
	}
	opts := Options{}
	if pooled {
		opts.Pool = NewPool(64 << 20)
	}
	var m *Memtable
	fresh := func() *Chunk {
		if m != nil {
			m.Release()
			opts.Pool.Settle()
		}
		m = New(opts)
		c := m.Chunk(1, "d")
		if err := c.Write(int64Tablet(seq(0, 1), fwd, nil), fwd); err != nil {
			b.Fatal(err)
		}
		return c
	}
	c := fresh()
	t := int64Tablet(seq(1, rows), rev, nil)
	next := int64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if c.Snapshot().Rows() >= 4<<10 {
			b.StopTimer()
			c, next = fresh(), 1
			b.StartTimer()
		}
		for r := range t.Times {
			t.Times[r] = next + int64(r)
		}
		next += int64(rows)
		if err := c.Write(t, rev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotRead reads one column of a small chunk, as a scan of a
// quiet device does.
func BenchmarkSnapshotRead(b *testing.B) {
	for _, rows := range []int{1, 1000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			c := New(Options{}).Chunk(1, "d")
			if err := c.Write(int64Tablet(seq(0, rows), idRange(0, 1), nil), idRange(0, 1)); err != nil {
				b.Fatal(err)
			}
			refs := []ColumnRef{{ID: 0, Name: "s0", Type: schema.Int64}}
			b.ReportAllocs()
			for range b.N {
				if c.Snapshot().Read(refs, math.MinInt64, math.MaxInt64).Rows() != rows {
					b.Fatal("rows")
				}
			}
		})
	}
}

// BenchmarkCursorFirstBatch: the first 65,536-row batch of a chunk of 1M
// rows × 10 INT64 columns in time order costs that batch, not the chunk.
func BenchmarkCursorFirstBatch(b *testing.B) {
	const rows = 1 << 20
	times := make([]int64, rows)
	vals := make([]int64, rows)
	for i := range times {
		times[i], vals[i] = int64(i), int64(3*i)
	}
	t := &tablet.Tablet{Times: times}
	var idv []schema.PropertyID
	var refs []ColumnRef
	for j := range 10 {
		t.Columns = append(t.Columns, tablet.Int64s(fmt.Sprint("c", j), vals, nil))
		idv = append(idv, schema.PropertyID(j+1))
		refs = append(refs, ColumnRef{ID: schema.PropertyID(j + 1), Name: fmt.Sprint("c", j), Type: schema.Int64})
	}
	c := New(Options{}).Chunk(1, "d")
	if err := c.Write(t, idv); err != nil {
		b.Fatal(err)
	}
	s := c.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if got := s.Cursor(refs, math.MinInt64, math.MaxInt64, 65536).Next(); got.Rows() != 65536 {
			b.Fatal(got.Rows())
		}
	}
}

// BenchmarkDeviceMemory: the Go heap that 100,000 devices of 10 rows × 5
// Double hold in a memtable, beyond their 480 bytes of values, and the
// memtable's own estimate; each device written in one 10-row write, or in
// two of 5 rows (its blocks then grow once, to 16 rows).
func BenchmarkDeviceMemory(b *testing.B) {
	for _, writes := range []int{1, 2} {
		b.Run(fmt.Sprintf("writes=%d", writes), func(b *testing.B) { benchDeviceMemory(b, writes) })
	}
}

func benchDeviceMemory(b *testing.B, writes int) {
	const devices, rows, cols = 100_000, 10, 5
	idv := idRange(0, cols)
	per := rows / writes
	tabs := make([]*tablet.Tablet, writes)
	for w := range tabs {
		tabs[w] = int64Tablet(seq(w*per, per), idv, nil)
		for i := range tabs[w].Columns {
			tabs[w].Columns[i].Type = schema.Double
		}
	}
	var heap, est float64
	for range b.N {
		b.StopTimer()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		m := New(Options{})
		for d := range devices {
			c := m.Chunk(1, fmt.Sprintf("dev-%06d", d))
			for _, t := range tabs {
				if err := c.Write(t, idv); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		names := float64(devices * (len("dev-000000") + 16)) // the map's keys: the caller's strings
		heap = (float64(after.HeapAlloc-before.HeapAlloc)-names)/devices - rows*(cols+1)*8
		est = float64(m.MemoryUsage())/devices - rows*(cols+1)*8
		runtime.KeepAlive(m)
		b.StartTimer()
	}
	b.ReportMetric(heap, "heapB/device")
	b.ReportMetric(est, "estB/device")
}
