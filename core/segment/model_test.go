package segment

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
)

// TestRandomAgainstModel writes random devices, times, values and nulls
// with random options, then checks random reads against a plain model:
// device -> rows in time order.
func TestRandomAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			cols := make([]Column, rng.Intn(6))
			for i := range cols {
				cols[i] = Column{ID: schema.PropertyID(100 + i), Name: fmt.Sprintf("c%d", i), Type: schema.PropertyType(1 + rng.Intn(9))}
			}
			l := Layout{TimeUnit: []string{"", "s", "ms", "us", "ns"}[rng.Intn(5)], Columns: cols}
			opts := WriterOptions{RowGroupRows: 1 + rng.Intn(40), RowGroupBytes: int64(50 + rng.Intn(3000)), PageBytes: int64(8 + rng.Intn(200))}
			model := map[string][]row{}
			for d := rng.Intn(8); d > 0; d-- {
				dev := fmt.Sprintf("dev-%d", rng.Intn(20))
				if _, dup := model[dev]; dup {
					continue
				}
				tm := rng.Int63n(1000) - 500
				var rows []row
				for n := rng.Intn(120); n > 0; n-- {
					tm += 1 + rng.Int63n(10)
					r := row{time: tm, vals: make([]any, len(cols))}
					for j, c := range cols {
						if rng.Intn(4) > 0 {
							r.vals[j] = sample(c.Type, rng.Intn(1000))
						}
					}
					rows = append(rows, r)
				}
				if len(rows) > 0 {
					model[dev] = rows
				}
			}
			f, info := writeFile(t, l, opts, model, 1+rng.Intn(50), rng.Intn(9))
			require.Equal(t, sortedKeys(model), nonNil(f.Devices()))
			var total int64
			for _, rows := range model {
				total += int64(len(rows))
			}
			require.Equal(t, total, f.Rows())
			require.Equal(t, total, info.Rows)
			for q := 0; q < 30; q++ {
				dev := fmt.Sprintf("dev-%d", rng.Intn(20))
				start, end := rng.Int63n(1400)-600, rng.Int63n(1400)-600
				if rng.Intn(5) == 0 {
					start, end = math.MinInt64, math.MaxInt64
				}
				// A random projection: existing columns, unknown ids, wrong types.
				var want []Column
				var pick []int
				for k := rng.Intn(4); k > 0 && len(cols) > 0; k-- {
					j := rng.Intn(len(cols))
					c := cols[j]
					switch rng.Intn(4) {
					case 0:
						c.ID += 1000
						j = -1
					case 1:
						if nt := schema.PropertyType(1 + rng.Intn(9)); nt != c.Type {
							c.Type, j = nt, -1
						}
					}
					c.Name = fmt.Sprintf("q%d", k)
					want, pick = append(want, c), append(pick, j)
				}
				batch := rng.Intn(30)
				got := readAll(t, f.Read(dev, want, start, end, batch), want, batch)
				require.Equal(t, project(model[dev], pick, start, end), got, "query %d: %s [%d, %d) batch %d", q, dev, start, end, batch)

				// A scanner visiting devices in order reads the same,
				// reusing its buffers or not.
				sc := f.Scanner(want)
				sc.Reuse = q%2 == 1
				sc.Sparse = q%3 == 0
				var bufs *junkBuffers
				if q%4 == 3 {
					bufs = &junkBuffers{out: map[*byte]bool{}}
					sc.Buffers = bufs
				}
				for _, d := range append(sortedKeys(model), "zz") {
					got := readAll(t, sc.Read(d, start, end, batch), want, batch)
					require.Equal(t, project(model[d], pick, start, end), got, "scanner, query %d: %s [%d, %d) batch %d", q, d, start, end, batch)
				}
				sc.Release()
				if bufs != nil {
					require.Empty(t, bufs.out, "every Get is Put back by Release")
				}
			}
		})
	}
}

// junkBuffers is a segment.Buffers of Go memory filled with junk (as a
// reused C block is), which tracks what the scanner has not put back.
type junkBuffers struct{ out map[*byte]bool }

func (b *junkBuffers) Get(n int) []byte {
	w := make([]uint64, (n+7)/8+1) // 8-byte aligned, never empty
	for i := range w {
		w[i] = 0xA5A5_A5A5_A5A5_A5A5
	}
	p := (*byte)(unsafe.Pointer(&w[0]))
	b.out[p] = true
	return unsafe.Slice(p, n)
}

func (b *junkBuffers) Put(s []byte) {
	p := unsafe.SliceData(s)
	if !b.out[p] {
		panic("Put of memory not from Get, or twice")
	}
	delete(b.out, p)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestSmallPagesAreSkipped: with small pages, a chunk has many, and a
// time range in the middle reads through fastChunk's page skipping the
// same rows as a whole-group read.
func TestSmallPagesAreSkipped(t *testing.T) {
	cols := []Column{{ID: 1, Name: "v", Type: schema.Double}, {ID: 2, Name: "w", Type: schema.Int32}}
	data := map[string][]row{"a": makeRows(cols, 3000, 0, 2, patterns["between"]), "b": makeRows(cols, 500, 0, 1, patterns["none"])}
	f, _ := writeFile(t, Layout{Columns: cols}, WriterOptions{PageBytes: 256}, data, 3000, 0)
	g := &f.groups[0]
	pages, buf := 0, make([]byte, g.chunks[2].length)
	_, err := f.f.ReadAt(buf, g.chunks[2].offset)
	require.NoError(t, err)
	for len(buf) > 0 {
		h, n, err := parsePageHeader(buf)
		require.NoError(t, err)
		buf = buf[n+int(h.compressed):]
		pages++
	}
	require.Greater(t, pages, 10, "pages in the chunk")
	for _, r := range [][2]int64{{1000, 1100}, {0, 7}, {5990, 6000}, {2001, 2003}, {3000, 9000}} {
		for _, reuse := range []bool{false, true} {
			sc := f.Scanner(cols)
			sc.Reuse = reuse
			for _, d := range []string{"a", "b"} {
				got := readAll(t, sc.Read(d, r[0], r[1], 50), cols, 50)
				require.Equal(t, project(data[d], []int{0, 1}, r[0], r[1]), got, "%s [%d, %d) reuse %v", d, r[0], r[1], reuse)
			}
		}
	}
}
