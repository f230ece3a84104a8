package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
)

// TestDeltaTimesDecodeFast: the time column is DELTA_BINARY_PACKED, and
// each page holds at most timePageRows times (however few bytes they
// take), and the fast page path decodes it (not the library's reader) to the times
// written: regular series, random gaps, devices whose times start over,
// the int64 extremes, pages of every size, any window.
func TestDeltaTimesDecodeFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	cols := []Column{{ID: 1, Name: "v", Type: schema.Double}}
	for _, pageBytes := range []int64{64, 256, 8 << 10} {
		data := map[string][]row{}
		var want []int64 // in file order: devices sorted, times increasing
		for d, kind := range []string{"a-regular", "b-gaps", "c-extremes", "d-one"} {
			var times []int64
			switch kind {
			case "a-regular":
				for i := range 3000 {
					times = append(times, 1_700_000_000_000+int64(i)*1000)
				}
			case "b-gaps":
				tm := int64(-5000)
				for range 2000 {
					tm += 1 + rng.Int64N(1<<uint(rng.IntN(40)))
					times = append(times, tm)
				}
			case "c-extremes":
				times = []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 2, math.MaxInt64 - 1}
			case "d-one":
				times = []int64{int64(d)}
			}
			for _, tm := range times {
				data[kind] = append(data[kind], row{time: tm, vals: []any{float64(tm)}})
			}
			want = append(want, times...)
		}
		f, _ := writeFile(t, Layout{Columns: cols}, WriterOptions{PageBytes: pageBytes, RowGroupRows: 2500}, data, 700, 0)
		meta, err := f.metadata()
		require.NoError(t, err)
		cc, err := meta.RowGroup(0).ColumnChunk(1)
		require.NoError(t, err)
		require.Contains(t, cc.Encodings(), parquet.Encodings.DeltaBinaryPacked, "the time column's encodings")
		var got []int64
		var r chunkReader
		for gi := range f.groups {
			g := &f.groups[gi]
			n := int(g.rows)
			for _, pg := range g.chunks[1].pages { // small pages, none empty
				require.Positive(t, pg.values)
				require.LessOrEqual(t, pg.values, int64(timePageRows(pageBytes)))
			}
			vals, valid := make([]byte, 8*n), make([]byte, (n+7)/8)
			_, err := f.fastChunk(&r, g, 1, 8, false, n, 0, n, vals, valid)
			require.NoError(t, err, "the fast path took the time column (page %d bytes)", pageBytes)
			for i := range n {
				got = append(got, int64(binary.LittleEndian.Uint64(vals[8*i:])))
			}
			// A window inside the group.
			lo := rng.IntN(n)
			hi := lo + 1 + rng.IntN(n-lo)
			w := make([]byte, 8*(hi-lo))
			_, err = f.fastChunk(&r, g, 1, 8, false, n, lo, hi, w, make([]byte, (hi-lo+7)/8))
			require.NoError(t, err)
			for i := lo; i < hi; i++ {
				require.Equal(t, got[len(got)-n+i], int64(binary.LittleEndian.Uint64(w[8*(i-lo):])))
			}
		}
		require.Equal(t, want, got, "page %d bytes", pageBytes)
	}
}

// TestDeltaDecodeRejectsGarbage: a malformed delta page is an error, never
// a panic or a short read.
func TestDeltaDecodeRejectsGarbage(t *testing.T) {
	out := make([]byte, 8*300)
	good := binary.AppendUvarint(nil, 128)
	good = binary.AppendUvarint(good, 4)
	good = binary.AppendUvarint(good, 300)
	good = binary.AppendUvarint(good, 10) // first: 5
	good = binary.AppendUvarint(good, 2)  // min delta 1
	good = append(good, 0, 0, 0, 0)
	good = binary.AppendUvarint(good, 2)
	good = append(good, 0, 0, 0, 0)
	good = binary.AppendUvarint(good, 2)
	good = append(good, 0, 0, 0, 0)
	require.NoError(t, decodeDeltaInt64(good, 300, 300, out))
	require.Equal(t, uint64(5+299), binary.LittleEndian.Uint64(out[8*299:]))
	for n := range len(good) - 1 {
		require.Error(t, decodeDeltaInt64(good[:n], 300, 300, out), "truncated to %d bytes", n)
	}
	require.Error(t, decodeDeltaInt64(good, 299, 299, out), "a count that is not the page's")
	bad := append([]byte(nil), good...)
	bad[len(bad)-4] = 65 // a bit width past 64
	require.Error(t, decodeDeltaInt64(bad, 300, 300, out))
	rng := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		junk := make([]byte, rng.IntN(64))
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		k := 1 + rng.IntN(300)
		_ = decodeDeltaInt64(junk, k, rng.IntN(k+2), out) // must not panic
	}
}

// encodeDeltaPage writes vals as a DELTA_BINARY_PACKED page of blocks of
// blockSize values in miniblocks each, as another writer might: some
// bit widths wider than needed (up to 64), random bits padding the last
// miniblock, random widths for the miniblocks past the values.
func encodeDeltaPage(rng *rand.Rand, vals []int64, blockSize, miniblocks int) []byte {
	zigzag := func(x int64) uint64 { return uint64(x<<1) ^ uint64(x>>63) }
	per := blockSize / miniblocks
	out := binary.AppendUvarint(nil, uint64(blockSize))
	out = binary.AppendUvarint(out, uint64(miniblocks))
	out = binary.AppendUvarint(out, uint64(len(vals)))
	out = binary.AppendUvarint(out, zigzag(vals[0]))
	deltas := make([]uint64, 0, len(vals))
	for i := 1; i < len(vals); i++ {
		deltas = append(deltas, uint64(vals[i])-uint64(vals[i-1]))
	}
	for b := 0; b < len(deltas); b += blockSize {
		blk := deltas[b:min(b+blockSize, len(deltas))]
		minDelta := int64(blk[0])
		for _, d := range blk {
			minDelta = min(minDelta, int64(d))
		}
		out = binary.AppendUvarint(out, zigzag(minDelta))
		used := (len(blk) + per - 1) / per
		widths := make([]byte, miniblocks)
		for m := range widths {
			if m >= used {
				widths[m] = byte(rng.IntN(256)) // no body follows: any width
				continue
			}
			var most uint64
			for _, d := range blk[m*per : min((m+1)*per, len(blk))] {
				most = max(most, d-uint64(minDelta))
			}
			w := bits.Len64(most)
			if rng.IntN(3) == 0 {
				w += rng.IntN(65 - w)
			}
			widths[m] = byte(w)
		}
		out = append(out, widths...)
		for m := range used {
			w := int(widths[m])
			body := make([]byte, per*w/8)
			for j := range per {
				x := rng.Uint64() // padding past the values
				if m*per+j < len(blk) {
					x = blk[m*per+j] - uint64(minDelta)
				}
				for bit := range w {
					if x>>bit&1 != 0 {
						p := j*w + bit
						body[p>>3] |= 1 << (p & 7)
					}
				}
			}
			out = append(out, body...)
		}
	}
	return out
}

// TestDeltaDecodeAnyLayoutAnyPrefix: pages of any block and miniblock
// size the format allows (miniblocks of 32 to 512 values, not only this
// writer's 32), widths up to 64, ending exactly at the page's end or
// followed by other bytes, decode to their values, whatever prefix is
// asked for; a truncated page is an error or, if only bytes past the
// prefix are gone, the right values.
func TestDeltaDecodeAnyLayoutAnyPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	for iter := range 1500 {
		k := 1 + rng.IntN(700)
		vals := make([]int64, k)
		x := int64(rng.Uint64())
		for i := range vals {
			switch iter % 3 {
			case 0:
				x = int64(rng.Uint64()) // any deltas, wrapping
			case 1:
				x += rng.Int64N(1 << uint(1+rng.IntN(62)))
			default:
				x += int64(rng.IntN(3)) - 1
			}
			vals[i] = x
		}
		blockSize := 128 * (1 + rng.IntN(4))
		var choices []int
		for m := 1; m <= blockSize/32; m++ {
			if blockSize%m == 0 && blockSize/m%32 == 0 {
				choices = append(choices, m)
			}
		}
		miniblocks := choices[rng.IntN(len(choices))]
		page := encodeDeltaPage(rng, vals, blockSize, miniblocks)
		if rng.IntN(2) == 0 {
			for range rng.IntN(20) {
				page = append(page, byte(rng.Uint32()))
			}
		}
		page = page[:len(page):len(page)]
		check := func(src []byte, need int) {
			got := make([]byte, 8*k)
			err := decodeDeltaInt64(src, k, need, got)
			if len(src) == len(page) {
				require.NoError(t, err, "iter %d: k %d, need %d, blocks of %d in %d", iter, k, need, blockSize, miniblocks)
			} else if err != nil {
				return // truncated
			}
			for i := range min(max(need, 1), k) {
				if v := int64(binary.LittleEndian.Uint64(got[8*i:])); v != vals[i] {
					t.Fatalf("iter %d: value %d of k %d is %d, want %d (need %d, blocks of %d in %d, %d of %d bytes)",
						iter, i, k, v, vals[i], need, blockSize, miniblocks, len(src), len(page))
				}
			}
		}
		for range 3 {
			check(page, rng.IntN(k+3))
		}
		check(page, k)
		cut := page[:rng.IntN(len(page)+1)]
		check(cut[:len(cut):len(cut)], rng.IntN(k+1))
	}
}

// BenchmarkDecodeDeltaTimes: a time page of 1,024 rows as a point read
// decodes it, 100 devices of 10 rows each a second apart, up to the middle
// of the page (the rows a read wants are at a random place in it) and
// whole.
func BenchmarkDecodeDeltaTimes(b *testing.B) {
	times := make([]int64, 1024)
	for i := range times {
		times[i] = int64(1_700_000_000_000 + (i%10)*1000)
	}
	var e chunkEncoder
	page := e.appendDelta(nil, times)
	out := make([]byte, 8*len(times))
	for _, need := range []int{512, 1024} {
		b.Run(fmt.Sprintf("need=%d", need), func(b *testing.B) {
			for range b.N {
				if err := decodeDeltaInt64(page, len(times), need, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*need), "ns/value")
		})
	}
}
