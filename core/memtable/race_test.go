package memtable

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// In the concurrency test every value is a function of its time and column
// id, so a reader can check any cell it sees, whichever duplicate won.
func raceType(id schema.PropertyID) schema.PropertyType {
	return [...]schema.PropertyType{schema.Int64, schema.String, schema.Boolean}[id%3]
}

func raceValue(tm int64, id schema.PropertyID) any {
	switch raceType(id) {
	case schema.Int64:
		return tm*1000 + int64(id)
	case schema.String:
		return fmt.Sprint(tm, ":", id)
	}
	return (tm+int64(id))%2 == 0
}

// othersUsage sums the memory of the chunks of type 1 other than dev.
func othersUsage(m *Memtable, dev string) int64 {
	var sum int64
	for _, d := range m.Devices(1) {
		if d != dev {
			c, _ := m.Lookup(1, d)
			sum += c.MemoryUsage()
		}
	}
	return sum
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	const (
		devices   = 4
		writes    = 120
		maxWidth  = 400
		readers   = 3
		staticDev = "static"
	)
	m := New(Options{BlockRows: 16})
	require.NoError(t, m.Chunk(1, staticDev).Write(tab([]int64{1}, i64("a", int64(1000+0))), ids(0)))
	refs := make([]ColumnRef, maxWidth)
	for i := range refs {
		id := schema.PropertyID(i)
		refs[i] = ref(id, fmt.Sprint("c", i), raceType(id))
	}

	var done atomic.Bool
	var writers, rd sync.WaitGroup
	for d := range devices {
		writers.Go(func() {
			c := m.Chunk(1, fmt.Sprint("d", d))
			width := 1
			for w := range writes {
				if w%10 == 9 && width < maxWidth { // expand by up to 40 columns
					width = min(maxWidth, width+40)
				}
				rows := 1 + w%3
				times := make([]int64, rows)
				for r := range times {
					times[r] = int64(w*2 + r)
					if w%7 == 3 && d > 0 {
						times[r] = int64(w) // out of order, equal times (d0 stays in order: views)
					}
				}
				var cols []tablet.Column
				var idv []schema.PropertyID
				for p := (w * 13) % 5; p < width; p += 1 + (w+p)%4 {
					id := schema.PropertyID(p)
					cells := make([]any, rows)
					for r, tm := range times {
						if (r+p+w)%5 != 0 {
							cells[r] = raceValue(tm, id)
						}
					}
					cols = append(cols, mkCol(refs[p].Name, raceType(id), (w+p)%9, cells...))
					idv = append(idv, id)
				}
				if !assert.NoError(t, c.Write(tab(times, cols...), idv)) {
					return
				}
			}
		})
	}
	for r := range readers {
		rd.Go(func() {
			for i := 0; !done.Load(); i++ {
				dev := staticDev
				if (i+r)%3 != 0 {
					dev = fmt.Sprint("d", (i+r)%devices)
				}
				c, ok := m.Lookup(1, dev)
				if !ok {
					continue
				}
				s := c.Snapshot()
				got := s.Read(refs[:min(maxWidth, 1+i%maxWidth)], math.MinInt64, math.MaxInt64)
				if i%2 == 0 { // the same through a cursor of views, batch by batch
					cur := s.Cursor(refs[:min(maxWidth, 1+i%maxWidth)], math.MinInt64, math.MaxInt64, 7)
					cur.Views()
					got = &tablet.Tablet{Columns: make([]tablet.Column, len(got.Columns))}
					var cells [][]any = make([][]any, len(got.Columns))
					for b := cur.Next(); b != nil; b = cur.Next() {
						got.Times = append(got.Times, b.Times...)
						for ci := range b.Columns {
							cells[ci] = append(cells[ci], cellsOf(b.Columns[ci], b.Rows())...)
						}
					}
					for ci := range got.Columns {
						got.Columns[ci] = mkCol(refs[ci].Name, refs[ci].Type, 0, cells[ci]...)
					}
				}
				if !assert.LessOrEqual(t, got.Rows(), s.Rows()) {
					return
				}
				for k := 1; k < got.Rows(); k++ {
					if !assert.Less(t, got.Times[k-1], got.Times[k], dev) {
						return
					}
				}
				for ci, col := range got.Columns {
					id := refs[ci].ID
					for k, v := range cellsOf(col, got.Rows()) {
						if v != nil && !assert.Equal(t, raceValue(got.Times[k], id), v, "%s column %d time %d", dev, id, got.Times[k]) {
							return
						}
					}
				}
				if i%50 == 49 { // a clone taken mid-write reads consistently too
					cl := m.Clone()
					cc, ok := cl.Lookup(1, dev)
					if assert.True(t, ok) {
						cs := cc.Snapshot()
						assert.GreaterOrEqual(t, cs.Rows(), s.Rows())
						assert.Equal(t, cc.MemoryUsage(), cl.MemoryUsage()-othersUsage(cl, dev))
					}
				}
				_ = m.MemoryUsage()
				names, chunks := m.Directory(1)
				sums := Summarize(chunks)
				for j, d := range names {
					if d == dev {
						assert.GreaterOrEqual(t, chunks[j].Snapshot().Rows(), s.Rows(), d)
						assert.GreaterOrEqual(t, sums[j].Rows, s.Rows(), d)
						assert.LessOrEqual(t, sums[j].First, sums[j].Last, d)
					}
				}
			}
		})
	}
	writers.Wait()
	done.Store(true)
	rd.Wait()

	var sum int64
	for _, d := range m.Devices(1) {
		c, _ := m.Lookup(1, d)
		sum += c.MemoryUsage()
		if d != staticDev {
			assert.Equal(t, 240, c.Snapshot().Rows(), d) // 40 writes each of 1, 2 and 3 rows
		}
	}
	assert.Equal(t, sum, m.MemoryUsage())
}
