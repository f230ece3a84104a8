package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestAppendDeltaDecodes: DELTA_BINARY_PACKED pages of every length
// around the block and miniblock sizes, with deltas small, negative,
// constant and wrapping, decode (fastChunk's decoder) to what was encoded.
func TestAppendDeltaDecodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(i int) int64{
		"regular":   func(i int) int64 { return 1_700_000_000_000 + int64(i)*1000 },
		"constant":  func(int) int64 { return -5 },
		"jitter":    func(i int) int64 { return int64(i)*10 + rng.Int64N(7) - 3 },
		"random":    func(int) int64 { return int64(rng.Uint64()) },
		"extremes":  func(i int) int64 { return []int64{math.MinInt64, math.MaxInt64, 0, -1}[i%4] },
		"one width": func(i int) int64 { return int64(i) << 40 },
	}
	var e chunkEncoder
	for name, shape := range shapes {
		for _, n := range []int{1, 2, 31, 32, 33, 127, 128, 129, 130, 255, 256, 257, 1000, 1024} {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = shape(i)
			}
			enc := e.appendDelta(nil, vals)
			for _, need := range []int{1, n / 2, n} {
				out := make([]byte, 8*n)
				require.NoError(t, decodeDeltaInt64(enc, n, need, out), "%s, %d values", name, n)
				for i := range max(need, 1) {
					require.Equal(t, vals[i], int64(binary.LittleEndian.Uint64(out[8*i:])), "%s, %d values, value %d", name, n, i)
				}
			}
		}
	}
}

// decodeHybrid is a plain reading of the RLE/bit-packed hybrid, from the
// format's description: n values of width bits.
func decodeHybrid(t *testing.T, src []byte, n, width int) []int32 {
	var out []int32
	for len(out) < n {
		h, k := binary.Uvarint(src)
		require.Positive(t, k)
		src = src[k:]
		if h&1 == 0 {
			var v uint32
			for b := range (width + 7) / 8 {
				v |= uint32(src[b]) << (8 * b)
			}
			src = src[(width+7)/8:]
			for range h >> 1 {
				out = append(out, int32(v))
			}
			continue
		}
		count := int(h>>1) * 8
		for i := range count {
			var v uint32
			for b := range width {
				bit := i*width + b
				v |= uint32(src[bit/8]>>(bit%8)&1) << b
			}
			out = append(out, int32(v))
		}
		src = src[int(h>>1)*width:]
	}
	require.Empty(t, src, "bytes past the values")
	return out[:n]
}

// TestAppendHybridDecodes: runs long and short, at every alignment, and
// random values, at widths 1 to 24.
func TestAppendHybridDecodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for width := 1; width <= 24; width++ {
		for trial := range 20 {
			var vals []int32
			for len(vals) < 300 {
				v := rng.Int32N(1 << width)
				run := 1 + rng.IntN([]int{3, 12, 40}[trial%3])
				for range run {
					vals = append(vals, v)
				}
			}
			vals = vals[:rng.IntN(len(vals))+1]
			enc := appendHybrid(nil, vals, width)
			require.Equal(t, vals, decodeHybrid(t, enc, len(vals), width), "width %d, trial %d", width, trial)
		}
	}
	// A run of 10 per device: one RLE run each, 3 bytes at width 16.
	var runs []int32
	for d := range 100 {
		for range 10 {
			runs = append(runs, int32(d))
		}
	}
	assert.Len(t, appendHybrid(nil, runs, 16), 100*3)
}

// TestPageHeadersParse: the headers thriftOut writes read back through
// the package's own parser, for field ids near and far apart.
func TestPageHeadersParse(t *testing.T) {
	var e chunkEncoder
	e.reset(false)
	e.body = append(e.body, make([]byte, 300)...)
	e.page(false, 77, encodingPlain)
	h, n, err := parsePageHeader(e.buf)
	require.NoError(t, err)
	assert.Equal(t, pageHeader{typ: pageTypeData, uncompressed: 300, compressed: 300, numValues: 77,
		encoding: encodingPlain, defEncoding: encodingRLE, hasDataHeader: true}, h)
	assert.Equal(t, len(e.buf)-300, n)

	var long thriftOut
	long.i32(1, 7)
	long.i32(40, -9) // a gap past 15: the long field header
	long.stop()
	r := compact{b: long.b}
	var last int16
	id, typ := r.field(&last)
	assert.Equal(t, [2]int64{1, 5}, [2]int64{int64(id), int64(typ)})
	assert.Equal(t, int32(7), r.i32())
	id, typ = r.field(&last)
	assert.Equal(t, [2]int64{40, 5}, [2]int64{int64(id), int64(typ)})
	assert.Equal(t, int32(-9), r.i32())
	require.NoError(t, r.err)
}

// TestStringDictionaryLimit: a STRING chunk whose distinct values pass
// dictionaryLimit is written PLAIN, one under it with a dictionary; both
// read back whole, through this package and the Parquet library.
func TestStringDictionaryLimit(t *testing.T) {
	cols := []Column{{ID: 1, Name: "s", Type: schema.String}, {ID: 2, Name: "b", Type: schema.Boolean}}
	for _, distinct := range []bool{false, true} {
		t.Run(fmt.Sprint("distinct=", distinct), func(t *testing.T) {
			const rows = 3000
			ss, bs := make([]string, rows), make([]bool, rows)
			valid := make([]bool, rows)
			for i := range ss {
				ss[i] = fmt.Sprintf("status-%d", i%7)
				if distinct { // 3000 values of 500 bytes: past the limit
					ss[i] = fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 495))
				}
				bs[i] = i%3 == 0
				valid[i] = i%5 != 0
			}
			times := make([]int64, rows)
			for i := range times {
				times[i] = int64(i)
			}
			tb := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("s", ss, valid), tablet.Bools("b", bs, valid)}}
			path := filepath.Join(t.TempDir(), "s.parquet")
			w, err := Create(path, Layout{Columns: cols}, WriterOptions{PageBytes: 1 << 10})
			require.NoError(t, err)
			require.NoError(t, w.Append("d", tb))
			info, err := w.Close()
			require.NoError(t, err)

			f, err := Open(path, info.Size)
			require.NoError(t, err)
			defer f.Close()
			got := readAll(t, f.Read("d", cols, math.MinInt64, math.MaxInt64, 0), cols, 0)
			require.Len(t, got, rows)
			for i, r := range got {
				if !valid[i] {
					require.Equal(t, []any{nil, nil}, r.vals, "row %d", i)
					continue
				}
				require.Equal(t, []any{ss[i], bs[i]}, r.vals, "row %d", i)
			}

			pr, err := file.OpenParquetFile(path, false)
			require.NoError(t, err)
			defer pr.Close()
			cm, err := pr.MetaData().RowGroup(0).ColumnChunk(2)
			require.NoError(t, err)
			assert.Equal(t, !distinct, cm.HasDictionaryPage())
			want := parquet.Encodings.RLEDict
			if distinct {
				want = parquet.Encodings.Plain
			}
			assert.Contains(t, cm.Encodings(), want)
		})
	}
}

// TestRowGroupStatistics: the footer's device and time statistics are
// those of each row group, as the Parquet library reads them.
func TestRowGroupStatistics(t *testing.T) {
	cols := []Column{{ID: 1, Name: "x", Type: schema.Double}}
	path := filepath.Join(t.TempDir(), "st.parquet")
	w, err := Create(path, Layout{Columns: cols}, WriterOptions{RowGroupRows: 8})
	require.NoError(t, err)
	devices := []string{"a", "b", "c"}
	for k, d := range devices { // a: 8 rows, b: 8 rows, c: 8 rows; times decreasing per device
		times := make([]int64, 8)
		for i := range times {
			times[i] = int64(-100*k + i)
		}
		require.NoError(t, w.Append(d, &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("x", make([]float64, 8), nil)}}))
	}
	info, err := w.Close()
	require.NoError(t, err)
	require.Equal(t, int64(24), info.Rows)
	pr, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pr.Close()
	md := pr.MetaData()
	require.Len(t, md.RowGroups, 3)
	for g, d := range devices {
		rg := md.RowGroup(g)
		assert.Equal(t, int64(8), rg.NumRows())
		dev, err := rg.ColumnChunk(0)
		require.NoError(t, err)
		st, err := dev.Statistics()
		require.NoError(t, err)
		assert.Equal(t, [2]string{d, d}, [2]string{string(st.EncodeMin()), string(st.EncodeMax())}, "row group %d", g)
		tm, err := rg.ColumnChunk(1)
		require.NoError(t, err)
		ts, err := tm.Statistics()
		require.NoError(t, err)
		lo, hi := int64(binary.LittleEndian.Uint64(ts.EncodeMin())), int64(binary.LittleEndian.Uint64(ts.EncodeMax()))
		assert.Equal(t, [2]int64{int64(-100 * g), int64(-100*g + 7)}, [2]int64{lo, hi})
		assert.Zero(t, ts.NullCount())
	}
}

// TestTooManyRowGroups: Close refuses a file of more than 32,767 row
// groups (the footer's int16), naming the limit, and leaves nothing.
func TestTooManyRowGroups(t *testing.T) {
	cols := []Column{{ID: 1, Name: "x", Type: schema.Double}}
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "many.parquet"), Layout{Columns: cols}, WriterOptions{RowGroupRows: 1})
	require.NoError(t, err)
	n := maxRowGroups + 1
	times := make([]int64, n)
	for i := range times {
		times[i] = int64(i)
	}
	require.NoError(t, w.Append("d", &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("x", make([]float64, n), nil)}}))
	requireCloseLeavesNothing(t, w, dir, errs.ErrInvalidArgument, "32768 row groups, more than the 32767")
}

// requireCloseLeavesNothing closes w, which must fail with kind and a
// message holding msg; aborted, it leaves nothing in dir.
func requireCloseLeavesNothing(t *testing.T, w *Writer, dir string, kind error, msg string) {
	t.Helper()
	_, err := w.Close()
	require.ErrorIs(t, err, kind)
	assert.Contains(t, err.Error(), msg)
	w.Abort()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the failed file is left behind")
}

// TestLevelsPerPage: in a chunk with a null, the pages without one have a
// single run of definition levels; every row reads back.
func TestLevelsPerPage(t *testing.T) {
	var c colBuf
	c.typ = schema.Double
	col := tablet.Doubles("x", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []bool{true, true, true, true, true, true, true, false, true, true})
	c.add(&col, 0, 10, nil)
	require.NotNil(t, c.defs)
	var e chunkEncoder
	e.reset(false)
	e.encodeProperty(&c, 10, 32) // 4 rows a page: a null on the second page only
	pages := e.pages
	require.Len(t, pages, 3)
	at := 0
	var runs []byte
	for _, pg := range pages {
		_, n, err := parsePageHeader(e.buf[at:])
		require.NoError(t, err)
		body := e.buf[at+n : at+int(pg.length)]
		runs = append(runs, body[4]&1) // the first run's kind: 0 RLE, 1 bit-packed
		at += int(pg.length)
	}
	assert.Equal(t, []byte{0, 1, 0}, runs)
}
