package segment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// noisyCols: random doubles (Snappy cannot shrink them: written plain),
// a double of a few values and an int32 of ten values (Snappy shrinks them),
// random 4-byte floats with nulls (plain, with definition levels).
var noisyCols = []Column{
	{ID: 1, Name: "noise", Type: schema.Double},
	{ID: 2, Name: "level", Type: schema.Double},
	{ID: 3, Name: "count", Type: schema.Int32},
	{ID: 4, Name: "f", Type: schema.Float},
}

func noisyRows(rng *rand.Rand, n int, t0 int64) []row {
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{time: t0 + int64(i), vals: []any{rng.Float64(), float64(i % 4), int32(i % 10), float32(rng.Float64())}}
		if rng.IntN(5) == 0 {
			rows[i].vals[0] = nil
		}
		if rng.IntN(3) == 0 {
			rows[i].vals[3] = nil
		}
	}
	return rows
}

// TestIncompressibleColumnsAreWrittenPlain: the columns Snappy does not
// shrink are not compressed, the others are; every reader reads both:
// the scanner's pages (whole, in time ranges, at a filter's rows) and
// the Parquet library.
func TestIncompressibleColumnsAreWrittenPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	data := map[string][]row{"a": noisyRows(rng, 9000, 0), "b": noisyRows(rng, 700, 5)}
	f, info := writeFile(t, Layout{Columns: noisyCols}, WriterOptions{PageBytes: 1 << 10, RowGroupRows: 4000}, data, 1000, 0)
	require.Greater(t, len(f.groups), 2)
	for _, g := range f.groups {
		plain := []bool{g.chunks[2].plain, g.chunks[3].plain, g.chunks[4].plain, g.chunks[5].plain}
		require.Equal(t, []bool{true, false, false, true}, plain, "noise, level, count, f")
		require.False(t, g.chunks[0].plain || g.chunks[1].plain, "device and time")
	}
	mapped := f.data
	for _, r := range [][2]int64{{math.MinInt64, math.MaxInt64}, {1000, 1100}, {3990, 4020}, {8000, 9000}} {
		for _, reuse := range []bool{false, true} {
			for _, viaMap := range []bool{true, false} {
				f.data = mapped
				if !viaMap {
					f.data = nil // the pages come by ReadAt
				}
				sc := f.Scanner(noisyCols)
				sc.Reuse = reuse
				for _, d := range []string{"a", "b"} {
					got := readAll(t, sc.Read(d, r[0], r[1], 300), noisyCols, 300)
					require.Equal(t, project(data[d], pickAll(noisyCols), r[0], r[1]), got, "%s %v reuse %v mapped %v", d, r, reuse, viaMap)
				}
			}
		}
	}
	f.data = mapped
	// The Parquet library (what Delta readers use) reads the plain chunks.
	osf, err := os.Open(f.f.Name())
	require.NoError(t, err)
	defer osf.Close()
	pr, err := file.NewParquetReader(osf)
	require.NoError(t, err)
	require.Equal(t, info.Rows, pr.NumRows())
	var want []any
	for _, d := range []string{"a", "b"} {
		for _, r := range data[d] {
			want = append(want, r.vals[0])
		}
	}
	var got []any
	for g := range pr.NumRowGroups() {
		cr, err := pr.RowGroup(g).Column(2)
		require.NoError(t, err)
		n := int(pr.RowGroup(g).NumRows())
		vals, defs := make([]float64, n), make([]int16, n)
		_, read, err := cr.(*file.Float64ColumnChunkReader).ReadBatch(int64(n), vals, defs, nil)
		require.NoError(t, err)
		k := 0
		for _, d := range defs[:n] {
			if d == 0 {
				got = append(got, nil)
				continue
			}
			got = append(got, vals[k])
			k++
		}
		require.Equal(t, read, k)
	}
	require.Equal(t, want, got)
}

// TestReadIndexFilteredReadsTheKeptRows: a device with filterMinRows rows
// or more comes filtered, each column read at the kept rows only (plain
// and Snappy pages, with nulls, pages skipped); a smaller device comes
// whole, for the caller to filter.
func TestReadIndexFilteredReadsTheKeptRows(t *testing.T) {
	defer func(v int64, s int) { filterMinRows, splitRows = v, s }(filterMinRows, splitRows)
	filterMinRows = 5000
	rng := rand.New(rand.NewPCG(5, 5))
	// a's first row group is wide enough for its columns to be read in
	// parallel (windowParallel values).
	// c's noise has nulls in its last rows only: in the second half of a
	// window alone.
	data := map[string][]row{"a": noisyRows(rng, 25000, 0), "b": noisyRows(rng, 700, 5), "c": noisyRows(rng, 25000, 0)}
	for i, r := range data["c"] {
		if i < 22000 && r.vals[0] == nil {
			r.vals[0] = 0.5
		}
	}
	f, _ := writeFile(t, Layout{Columns: noisyCols}, WriterOptions{PageBytes: 1 << 10, RowGroupRows: 18000}, data, 1000, 0)
	mapped := f.data
	type pred struct {
		name string
		col  int
		keep func(v any) bool
	}
	for _, p := range []pred{
		{"noise > 0.97 (few rows, most pages skipped)", 0, func(v any) bool { return v != nil && v.(float64) > 0.97 }},
		{"noise is null", 0, func(v any) bool { return v == nil }},
		{"f < 0.5 (half)", 3, func(v any) bool { return v != nil && v.(float32) < 0.5 }},
		{"count = 3", 2, func(v any) bool { return v.(int32) == 3 }},
		{"every row", 1, func(any) bool { return true }},
		{"no row", 1, func(any) bool { return false }},
	} {
		// splitRows: 1<<30, windows read as they come; 1000 and 4099, the
		// filter's columns (a second one too) read in halves with the times.
		for _, split := range []int{1 << 30, 1000, 4099} {
			splitRows = split
			calls := 0
			cols := []int{p.col}
			if split < 1<<30 {
				cols = append(cols, (p.col+2)%len(noisyCols))
			}
			rf := &RowFilter{Cols: cols, Keep: func(tb *tablet.Tablet) []bool {
				calls++
				keep := make([]bool, tb.Rows())
				for i := range keep {
					keep[i] = p.keep(tb.Columns[p.col].Value(i))
				}
				return keep
			}}
			for _, r := range [][2]int64{{math.MinInt64, math.MaxInt64}, {3990, 19100}} {
				for _, mode := range []string{"fresh", "reuse", "buffers", "read, not mapped"} {
					f.data = mapped
					if mode == "read, not mapped" {
						f.data = nil // the pages come by ReadAt
					}
					sc := f.Scanner(noisyCols)
					sc.Reuse = mode == "reuse"
					bufs := &junkBuffers{out: map[*byte]bool{}}
					if mode == "buffers" {
						sc.Reuse, sc.Buffers = true, bufs
					}
					for _, d := range []string{"a", "b", "c"} {
						i, _ := f.Index(d)
						got := readAll(t, sc.ReadIndexFiltered(i, r[0], r[1], 3000, rf), noisyCols, 3000)
						var want []row
						for _, w := range project(data[d], pickAll(noisyCols), r[0], r[1]) {
							if d == "b" || p.keep(w.vals[p.col]) { // b is too small to be filtered
								want = append(want, w)
							}
						}
						require.Equal(t, want, got, "%s: %s %v %s, split %d", p.name, d, r, mode, split)
					}
					sc.Release()
					require.Empty(t, bufs.out, "every Get is Put back by Release")
				}
			}
			f.data = mapped
			require.Positive(t, calls, "%s: the filter was asked", p.name)
		}
	}
}

// TestKeptRowsListsTheTrueValues: the word-at-a-time walk finds every
// true value, at any density, length and position.
func TestKeptRowsListsTheTrueValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000} {
		for _, density := range []float64{0, 0.01, 0.3, 1} {
			keep := make([]bool, n)
			var want []int32
			for i := range keep {
				if keep[i] = rng.Float64() < density; keep[i] {
					want = append(want, int32(i))
				}
			}
			require.Equal(t, want, keptRows(keep), "n=%d density %v", n, density)
			require.Equal(t, want, keptRows(keep[:n:n]), "no room after")
		}
	}
}

// TestSetByteBitsSetsTheRange: bits [from, to) are set, and no other,
// for ranges shorter and longer than a byte and than the block of ones.
func TestSetByteBitsSetsTheRange(t *testing.T) {
	for _, from := range []int{0, 1, 7, 8, 9, 100} {
		for _, n := range []int{0, 1, 7, 8, 9, 64, 2047, 2048, 2049, 5000} {
			b := make([]byte, (from+n+7)/8+2)
			setByteBits(b, from, from+n)
			for i := range 8 * len(b) {
				want := i >= from && i < from+n
				require.Equal(t, want, b[i>>3]&(1<<(i&7)) != 0, "from %d n %d bit %d", from, n, i)
			}
		}
	}
}

// TestPointReadsReadPagesWithReadAt: a sparse scanner reads a small
// device's pages with ReadAt, not from the mapping, and gives the rows
// the mapping gives: with the mapping replaced by garbage, it still reads
// them, while a scan of every device, which reads the mapping, fails.
func TestPointReadsReadPagesWithReadAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	data := map[string][]row{}
	for d := range 40 {
		data[fmt.Sprintf("d%02d", d)] = noisyRows(rng, 20+d, 0)
	}
	f, _ := writeFile(t, Layout{Columns: noisyCols}, WriterOptions{PageBytes: 1 << 10}, data, 1000, 0)
	require.NotNil(t, f.data)
	mapped := f.data
	want := map[string][]row{}
	sc := f.Scanner(noisyCols)
	for d, rows := range data {
		want[d] = readAll(t, sc.Read(d, math.MinInt64, math.MaxInt64, 100), noisyCols, 100)
		require.Equal(t, project(rows, pickAll(noisyCols), math.MinInt64, math.MaxInt64), want[d])
	}
	sc.Release()
	f.data = make([]byte, len(mapped)) // zeros where the pages were
	defer func() { f.data = mapped }()
	sparse := f.Scanner(noisyCols)
	sparse.Sparse = true
	for d := range data {
		require.Equal(t, want[d], readAll(t, sparse.Read(d, math.MinInt64, math.MaxInt64, 100), noisyCols, 100), d)
	}
	sparse.Release()
	whole := f.Scanner(noisyCols)
	defer whole.Release()
	_, err := whole.Read("d07", math.MinInt64, math.MaxInt64, 100).Next()
	require.Error(t, err, "the mapping's garbage is read by a scan of every device")
}

// TestSplitWindowsEdgeCases: a window read whole with a filter (the
// filter's columns in halves, with the times) reads a column named twice
// by the filter once, and a row at the largest time (past any range: end
// is exclusive) leaves the filter's columns as long as the times.
func TestSplitWindowsEdgeCases(t *testing.T) {
	defer func(v int64, s int) { filterMinRows, splitRows = v, s }(filterMinRows, splitRows)
	filterMinRows, splitRows = 100, 100
	cols := []Column{{ID: 1, Name: "x", Type: schema.Double}, {ID: 2, Name: "y", Type: schema.Double}}
	rows := make([]row, 1000)
	for i := range rows {
		rows[i] = row{time: int64(i), vals: []any{float64(i), float64(-i)}}
	}
	rows[999].time = math.MaxInt64
	f, _ := writeFile(t, Layout{Columns: cols}, WriterOptions{}, map[string][]row{"a": rows}, 1000, 0)
	for _, filterCols := range [][]int{{0, 0}, {0}, {1, 0, 1}} {
		rf := &RowFilter{Cols: filterCols, Keep: func(tb *tablet.Tablet) []bool {
			for _, j := range filterCols {
				require.NoError(t, tb.Columns[j].Validate(tb.Rows()))
				require.Len(t, tb.Columns[j].Values, 8*tb.Rows(), "Keep's tablet: column %d as long as the times", j)
			}
			keep := make([]bool, tb.Rows())
			for i := range keep {
				keep[i] = tb.Columns[0].Value(i).(float64) >= 500
			}
			return keep
		}}
		sc := f.Scanner(cols)
		i, _ := f.Index("a")
		got := readAll(t, sc.ReadIndexFiltered(i, math.MinInt64, math.MaxInt64, 0, rf), cols, 0)
		require.Equal(t, project(rows[500:999], pickAll(cols), math.MinInt64, math.MaxInt64), got, "filter columns %v", filterCols)
		sc.Release()
	}
}

// TestDecodeAfterAPointReadReadsTheMapping: a sparse scanner that read a
// small device's window with ReadAt decodes a large device's row group
// from the mapping, as a fresh scanner does (its readers do not keep the
// point read's flag).
func TestDecodeAfterAPointReadReadsTheMapping(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	data := map[string][]row{"a": noisyRows(rng, 30, 0), "big": noisyRows(rng, 20_000, 0)}
	f, _ := writeFile(t, Layout{Columns: noisyCols}, WriterOptions{PageBytes: 1 << 10}, data, 1000, 0)
	sc := f.Scanner(noisyCols)
	sc.Sparse = true
	defer sc.Release()
	readAll(t, sc.Read("a", math.MinInt64, math.MaxInt64, 100), noisyCols, 100)
	require.True(t, sc.pread, "the small device's window is read with ReadAt")
	readAll(t, sc.Read("big", math.MinInt64, math.MaxInt64, 0), noisyCols, 0)
	require.False(t, sc.pread || sc.reader.pread)
	for w, r := range sc.readers {
		require.False(t, r.pread, "reader %d decodes whole chunks from the mapping", w)
	}
}

// TestPointReadsOfCheckedPagesReadValuesAlone: a point read of a device
// whose rows lie in a page this process has found whole before (checked
// against its CRC, plain, uncompressed, a value in every row) reads their
// values alone, and they are the page's. Pages with a null, compressed
// chunks and the delta-encoded times are read whole: were they read as
// values alone, the nulls and values below would come back wrong.
func TestPointReadsOfCheckedPagesReadValuesAlone(t *testing.T) {
	cols := []Column{
		{ID: 1, Name: "x", Type: schema.Double},     // random: stored plain
		{ID: 2, Name: "k", Type: schema.Int32},      // a sequence: compressed
		{ID: 3, Name: "gappy", Type: schema.Double}, // random, a null in some pages
	}
	rng := rand.New(rand.NewPCG(8, 9))
	data := map[string][]row{}
	var names []string
	for d := range 300 {
		rows := make([]row, 10)
		for i := range rows {
			rows[i] = row{time: int64(i), vals: []any{rng.Float64(), int32(d % 3), rng.Float64()}}
		}
		if d%40 == 7 {
			rows[3].vals[2] = nil
		}
		name := fmt.Sprintf("d%03d", d)
		data[name], names = rows, append(names, name)
	}
	f, _ := writeFile(t, Layout{Columns: cols}, WriterOptions{PageBytes: 1 << 10}, data, 10, 0)
	require.NotNil(t, f.data, "the file is mapped: pages are checked once per process")
	plain := map[bool]int{}
	for _, c := range f.groups[0].chunks {
		plain[c.plain]++
	}
	require.Equal(t, map[bool]int{true: 2, false: 3}, plain, "x and gappy plain; the devices, times and k compressed")
	valueReads := func(sc *Scanner) int {
		n := sc.reader.valueReads
		for _, r := range sc.readers {
			n += r.valueReads
		}
		return n
	}
	for pass := range 2 {
		reads := 0
		for _, i := range rng.Perm(len(names)) {
			sc := f.Scanner(cols)
			sc.Sparse = true
			got := readAll(t, sc.Read(names[i], math.MinInt64, math.MaxInt64, 100), cols, 100)
			require.Equal(t, project(data[names[i]], pickAll(cols), math.MinInt64, math.MaxInt64), got, "pass %d, %s", pass, names[i])
			reads += valueReads(sc)
			sc.Release()
		}
		if pass == 1 {
			// Every window of x inside one page, and of gappy in a page
			// without a null; never k (compressed) nor the times.
			require.Greater(t, reads, len(names)/2, "values read alone in the second pass")
			require.Less(t, reads, 2*len(names))
		}
	}
}

// TestValuesAloneFromAShrunkFile: a point read's values of a page already
// checked come from the file's mapping; a file cut short after Open
// (never by us) makes that copy fault, which must be a panic its callers
// turn into an error (as every read of the mapping), not a crash.
func TestValuesAloneFromAShrunkFile(t *testing.T) {
	cols := []Column{{ID: 1, Name: "x", Type: schema.Double}}
	rng := rand.New(rand.NewPCG(3, 4))
	data := map[string][]row{}
	for d := range 300 {
		rows := make([]row, 10)
		for i := range rows {
			rows[i] = row{time: int64(i), vals: []any{rng.Float64()}}
		}
		data[fmt.Sprintf("d%03d", d)] = rows
	}
	f, _ := writeFile(t, Layout{Columns: cols}, WriterOptions{PageBytes: 1 << 10}, data, 10, 0)
	require.NotNil(t, f.data, "the file is mapped")
	for range 2 { // the first pass checks the pages, the second reads values alone
		for name := range data {
			sc := f.Scanner(cols)
			sc.Sparse = true
			readAll(t, sc.Read(name, math.MinInt64, math.MaxInt64, 100), cols, 100)
			sc.Release()
		}
	}
	// A page of x whose values a point read takes alone, and where it starts.
	var pg *page
	var off int64
	for _, c := range f.groups[0].chunks {
		at := c.offset
		for i := range c.pages {
			if pg == nil && f.valuesAt[c.pages[i].seq].Load() != 0 {
				pg, off = &c.pages[i], at
			}
			at += c.pages[i].length
		}
	}
	require.NotNil(t, pg, "a page read as values alone")
	vals, valid := make([]byte, 8), make([]byte, 1)
	done, err := f.readValues(&chunkReader{}, pg, off, 8, 0, 1, vals, valid)
	require.True(t, done)
	require.NoError(t, err)

	require.NoError(t, os.Truncate(f.Path(), 0))
	fault := func() (r any) {
		defer func() { r = recover() }()
		_, _ = f.readValues(&chunkReader{}, pg, off, 8, 0, 1, vals, valid)
		return nil
	}()
	require.NotNil(t, fault, "the copy from the mapping faults")
	_, atAddress := fault.(interface{ Addr() uintptr }) // a fault, recoverable (debug.SetPanicOnFault)
	require.True(t, atAddress, "%v", fault)
}
