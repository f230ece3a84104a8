package segment

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/golang/snappy"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Column chunks are encoded here, page by page, not through the Parquet
// library's column writers: those copied each value four times on its way
// to the file (into the writer's batch, its encoder, the page, the page
// with its levels), encoded each row's definition level one call at a
// time, and hashed and boxed every dictionary entry. For a 1 M-row batch
// of five DOUBLE columns that was 40 % of the time of writing it. Only
// what this package writes is encoded: version 1 data pages; PLAIN
// values; RLE_DICTIONARY for the device and STRING columns (PLAIN when a
// chunk's dictionary would pass dictionaryLimit); DELTA_BINARY_PACKED for
// the time column; definition levels (bit width 1) in the RLE/bit-packed
// hybrid. The footer is still the library's (metadata.FileMetaDataBuilder).

// Parquet's Thrift enum values this package writes (and fastChunk reads).
const (
	pageTypeData       = 0
	pageTypeDictionary = 2

	encodingPlain         = 0
	encodingRLE           = 3
	encodingDeltaBinary   = 5
	encodingRLEDictionary = 8
)

// dictionaryLimit is the most bytes a STRING chunk's dictionary may hold
// (the Parquet library's default limit): past it, the chunk is PLAIN.
const dictionaryLimit = 1 << 20

// chunkMeta is what the footer needs of a written column chunk; offsets
// are from the chunk's start.
type chunkMeta struct {
	values         int64 // rows
	dictOffset     int64 // -1: no dictionary page
	dataOffset     int64
	compressed     int64 // headers and page bodies as written
	uncompressed   int64 // headers and page bodies before compression
	dataPages      int32
	dataEncoding   parquet.Encoding
	stats          metadata.EncodedStatistics
	hasStats       bool
	hasDictionary  bool
	dictionaryKind parquet.Encoding // of the dictionary page
}

// chunkEncoder builds one column chunk, page by page, in buf. Its buffers
// are reused from chunk to chunk.
type chunkEncoder struct {
	buf      []byte // the chunk so far
	body     []byte // the page being built, uncompressed
	zbody    []byte // its Snappy form
	header   []byte
	compress bool
	meta     chunkMeta
	pages    []page   // the chunk's pages so far: for its File (a fresh slice a chunk)
	ints     []int32  // scratch: dictionary indices
	deltas   []uint64 // scratch: a block's deltas
}

// reset starts a chunk.
func (e *chunkEncoder) reset(compress bool) {
	e.buf, e.body = e.buf[:0], e.body[:0]
	e.compress = compress
	e.meta = chunkMeta{dictOffset: -1}
	e.pages = nil
}

// page appends the page whose body is e.body: a dictionary page
// (dictionary true) of values entries, or a data page of values rows.
func (e *chunkEncoder) page(dictionary bool, values int, encoding int32) {
	data := e.body
	if e.compress {
		e.zbody = snappy.Encode(e.zbody[:cap(e.zbody)], e.body)
		data = e.zbody
	}
	t := thriftOut{b: e.header[:0]}
	if dictionary {
		t.i32(1, pageTypeDictionary)
	} else {
		t.i32(1, pageTypeData)
	}
	t.i32(2, int32(len(e.body)))
	t.i32(3, int32(len(data)))
	if dictionary {
		t.begin(7) // DictionaryPageHeader
		t.i32(1, int32(values))
		t.i32(2, encoding)
		t.end()
	} else {
		t.begin(5) // DataPageHeader
		t.i32(1, int32(values))
		t.i32(2, encoding)
		t.i32(3, encodingRLE) // definition levels
		t.i32(4, encodingRLE) // repetition levels (none)
		t.end()
	}
	t.stop()
	e.header = t.b
	if dictionary {
		e.meta.dictOffset = int64(len(e.buf))
	} else {
		if e.meta.dataPages == 0 {
			e.meta.dataOffset = int64(len(e.buf))
		}
		e.meta.dataPages++
		e.meta.values += int64(values)
	}
	start := len(e.buf)
	e.buf = append(e.buf, e.header...)
	e.buf = append(e.buf, data...)
	pg := page{length: int64(len(e.buf) - start), crc: crc32.Checksum(e.buf[start:], castagnoli)}
	if !dictionary {
		pg.values = int64(values)
	}
	e.pages = append(e.pages, pg)
	e.meta.compressed += int64(len(e.header) + len(data))
	e.meta.uncompressed += int64(len(e.header) + len(e.body))
	e.body = e.body[:0]
}

// levels appends the definition levels of rows [a, b) (defs nil: every
// row has a value) to the page body, with their 4-byte length first.
func (e *chunkEncoder) levels(defs []int16, a, b int) {
	at := len(e.body)
	e.body = append(e.body, 0, 0, 0, 0)
	if defs == nil || !slices.Contains(defs[a:b], 0) { // one run of ones
		e.body = binary.AppendUvarint(e.body, uint64(b-a)<<1)
		e.body = append(e.body, 1)
	} else { // bit-packed, 8 levels a byte
		n := b - a
		e.body = binary.AppendUvarint(e.body, uint64((n+7)/8)<<1|1)
		for k := a; k < b; k += 8 {
			var v byte
			for j := k; j < min(k+8, b); j++ {
				v |= byte(defs[j]) << (j - k)
			}
			e.body = append(e.body, v)
		}
	}
	binary.LittleEndian.PutUint32(e.body[at:], uint32(len(e.body)-at-4))
}

// valuesIn returns how many of rows [a, b) hold a value.
func valuesIn(defs []int16, a, b int) int {
	if defs == nil {
		return b - a
	}
	n := 0
	for _, d := range defs[a:b] {
		n += int(d)
	}
	return n
}

// encodeProperty encodes a property column of rows rows (at least one;
// OPTIONAL: with definition levels) into pages of about pageBytes.
func (e *chunkEncoder) encodeProperty(c *colBuf, rows int, pageBytes int64) {
	e.meta.dataEncoding = parquet.Encodings.Plain
	switch c.typ {
	case schema.String:
		if e.encodeDictionary(c, rows, pageBytes) {
			return
		}
		fallthrough
	case schema.Binary:
		e.encodePlainBytes(c, rows, pageBytes)
		return
	}
	width, per := tablet.Width(c.typ), 0
	var vals []byte
	switch c.typ {
	case schema.Boolean:
		per = int(max(8, pageBytes*8))
	default:
		per = int(max(1, pageBytes/int64(width)))
		vals = c.fixedBytes(math.MaxInt)
	}
	v := 0 // values before the page
	for a := 0; a < rows; a += per {
		b := min(a+per, rows)
		e.levels(c.defs, a, b)
		n := valuesIn(c.defs, a, b)
		if c.typ == schema.Boolean {
			e.body = appendBools(e.body, c.bools[v:v+n])
		} else {
			e.body = append(e.body, vals[v*width:(v+n)*width]...)
		}
		v += n
		e.page(false, b-a, encodingPlain)
	}
}

// appendBools appends PLAIN booleans: bit-packed, least significant first.
func appendBools(dst []byte, vals []bool) []byte {
	for k := 0; k < len(vals); k += 8 {
		var v byte
		for j, b := range vals[k:min(k+8, len(vals))] {
			if b {
				v |= 1 << j
			}
		}
		dst = append(dst, v)
	}
	return dst
}

// encodePlainBytes encodes a String or Binary column as PLAIN byte
// arrays (a 4-byte length, then the bytes), a page once a page's values
// pass pageBytes.
func (e *chunkEncoder) encodePlainBytes(c *colBuf, rows int, pageBytes int64) {
	e.meta.dataEncoding = parquet.Encodings.Plain
	v, a := 0, 0
	var vals []byte
	for r := 0; r < rows; r++ {
		if c.defs == nil || c.defs[r] == 1 {
			prev := 0
			if v > 0 {
				prev = c.ends[v-1]
			}
			vals = binary.LittleEndian.AppendUint32(vals, uint32(c.ends[v]-prev))
			vals = append(vals, c.data[prev:c.ends[v]]...)
			v++
		}
		if int64(len(vals)) >= pageBytes || r == rows-1 {
			e.levels(c.defs, a, r+1)
			e.body = append(e.body, vals...)
			e.page(false, r+1-a, encodingPlain)
			vals, a = vals[:0], r+1
		}
	}
}

// encodeDictionary encodes a String column with a dictionary of its
// distinct values, in order of first appearance, unless the dictionary
// would pass dictionaryLimit (then it returns false, having written
// nothing).
func (e *chunkEncoder) encodeDictionary(c *colBuf, rows int, pageBytes int64) bool {
	index := make(map[string]int32)
	var dict []string
	size := 0
	e.ints = e.ints[:0]
	prev := 0
	for _, end := range c.ends {
		s := unsafe.String(unsafe.SliceData(c.data[prev:end]), end-prev) // lives as long as c.data
		prev = end
		k, ok := index[s]
		if !ok {
			if size += 4 + len(s); size > dictionaryLimit {
				return false
			}
			k = int32(len(dict))
			index[s] = k
			dict = append(dict, s)
		}
		e.ints = append(e.ints, k)
	}
	e.dictionaryChunk(dict, e.ints, rows, true, c.defs, pageBytes)
	return true
}

// dictionaryChunk writes dict as the chunk's dictionary page (PLAIN), then
// the indices into it in RLE_DICTIONARY pages of about pageBytes: one a
// row, or, for an optional column, definition levels (defs) and one index
// a row with a value.
func (e *chunkEncoder) dictionaryChunk(dict []string, idx []int32, rows int, optional bool, defs []int16, pageBytes int64) {
	for _, s := range dict {
		e.body = binary.LittleEndian.AppendUint32(e.body, uint32(len(s)))
		e.body = append(e.body, s...)
	}
	e.page(true, len(dict), encodingPlain)
	e.meta.hasDictionary = true
	e.meta.dictionaryKind = parquet.Encodings.Plain
	e.meta.dataEncoding = parquet.Encodings.RLEDict
	width := max(1, bits.Len32(uint32(max(len(dict)-1, 0))))
	per := int(max(8, pageBytes*8/int64(width)))
	v := 0
	for a := 0; a < rows; a += per {
		b := min(a+per, rows)
		n := b - a
		if optional {
			e.levels(defs, a, b)
			n = valuesIn(defs, a, b)
		}
		e.body = append(e.body, byte(width))
		e.body = appendHybrid(e.body, idx[v:v+n], width)
		v += n
		e.page(false, b-a, encodingRLEDictionary)
	}
}

// encodeDevices encodes the device column (REQUIRED): dict, the row
// group's devices in order, as the dictionary, and each row's index into
// it, a run per device.
func (e *chunkEncoder) encodeDevices(dict []string, idx []int32, pageBytes int64) {
	e.dictionaryChunk(dict, idx, len(idx), false, nil, pageBytes)
	// Statistics: every row valid; the dictionary holds no device twice
	// and is in order.
	e.meta.hasStats = true
	e.meta.stats = metadata.EncodedStatistics{HasNullCount: true}
	if len(dict) > 0 {
		e.meta.stats.Min, e.meta.stats.Max = []byte(dict[0]), []byte(dict[len(dict)-1])
		e.meta.stats.HasMin, e.meta.stats.HasMax = true, true
	}
}

// encodeTimes encodes the time column (REQUIRED) in DELTA_BINARY_PACKED
// pages of perPage rows.
func (e *chunkEncoder) encodeTimes(times []int64, perPage int) {
	e.meta.dataEncoding = parquet.Encodings.DeltaBinaryPacked
	for a := 0; a < len(times); a += perPage {
		b := min(a+perPage, len(times))
		e.body = e.appendDelta(e.body, times[a:b])
		e.page(false, b-a, encodingDeltaBinary)
	}
	e.meta.hasStats = true
	e.meta.stats = metadata.EncodedStatistics{HasNullCount: true, Signed: true}
	if len(times) > 0 {
		lo, hi := times[0], times[0]
		for _, t := range times {
			lo, hi = min(lo, t), max(hi, t)
		}
		e.meta.stats.Min = binary.LittleEndian.AppendUint64(nil, uint64(lo))
		e.meta.stats.Max = binary.LittleEndian.AppendUint64(nil, uint64(hi))
		e.meta.stats.HasMin, e.meta.stats.HasMax = true, true
	}
}

// Blocks of DELTA_BINARY_PACKED as the Parquet library writes them: 128
// values in 4 miniblocks of 32.
const (
	deltaBlock      = 128
	deltaMiniblocks = 4
	deltaMini       = deltaBlock / deltaMiniblocks
)

// appendDelta appends vals in DELTA_BINARY_PACKED: a header (block size,
// miniblocks per block, value count, first value), then per block of 128
// deltas their minimum, each miniblock's bit width, and each miniblock's
// deltas less the minimum, bit-packed (a last miniblock padded to 32
// values; miniblocks past the last value have width 0 and no bytes).
// Deltas wrap, as the format says.
func (e *chunkEncoder) appendDelta(dst []byte, vals []int64) []byte {
	dst = binary.AppendUvarint(dst, deltaBlock)
	dst = binary.AppendUvarint(dst, deltaMiniblocks)
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	var first int64
	if len(vals) > 0 {
		first = vals[0]
	}
	dst = binary.AppendVarint(dst, first)
	if cap(e.deltas) < deltaBlock {
		e.deltas = make([]uint64, deltaBlock)
	}
	d := e.deltas[:deltaBlock]
	for i := 1; i < len(vals); i += deltaBlock {
		n := min(deltaBlock, len(vals)-i)
		lo := vals[i] - vals[i-1]
		for k := range n {
			delta := vals[i+k] - vals[i+k-1]
			lo = min(lo, delta)
			d[k] = uint64(delta)
		}
		dst = binary.AppendVarint(dst, lo)
		widths := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for m := 0; m*deltaMini < n; m++ {
			mini := d[m*deltaMini : (m+1)*deltaMini]
			var or uint64
			for k := range mini {
				if m*deltaMini+k < n {
					mini[k] -= uint64(lo)
				} else {
					mini[k] = 0 // padding
				}
				or |= mini[k]
			}
			w := bits.Len64(or)
			dst[widths+m] = byte(w)
			dst = appendPacked(dst, mini, w)
		}
	}
	return dst
}

// appendPacked appends vals bit-packed at width bits each, least
// significant bit first; len(vals) × width must be a multiple of 8.
func appendPacked(dst []byte, vals []uint64, width int) []byte {
	var acc uint64
	n := 0 // bits in acc, fewer than 8 between values
	for _, v := range vals {
		for left := width; left > 0; {
			take := min(left, 56)
			acc |= (v & (1<<take - 1)) << n
			n += take
			v >>= take
			left -= take
			for n >= 8 {
				dst = append(dst, byte(acc))
				acc >>= 8
				n -= 8
			}
		}
	}
	return dst
}

// appendHybrid appends vals (each below 1<<width) in the RLE/bit-packed
// hybrid, without a length: a run of 8 or more equal values as one RLE
// run, the others in bit-packed groups of 8 (the last group padded).
func appendHybrid(dst []byte, vals []int32, width int) []byte {
	valueBytes := (width + 7) / 8
	var group [8]uint64
	for i := 0; i < len(vals); {
		run := 1
		for i+run < len(vals) && vals[i+run] == vals[i] {
			run++
		}
		if run >= 8 {
			dst = binary.AppendUvarint(dst, uint64(run)<<1)
			for b := range valueBytes {
				dst = append(dst, byte(uint32(vals[i])>>(8*b)))
			}
			i += run
			continue
		}
		// Groups of 8 up to the next run of 8 equal values.
		end := i
		for end < len(vals) {
			next := end + 8
			if next >= len(vals) {
				end = len(vals)
				break
			}
			end = next
			if sameRun(vals[end:], 8) {
				break
			}
		}
		groups := (end - i + 7) / 8
		dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
		for g := range groups {
			for k := range group {
				group[k] = 0
				if at := i + g*8 + k; at < end {
					group[k] = uint64(uint32(vals[at]))
				}
			}
			dst = appendPacked(dst, group[:], width)
		}
		i = end
	}
	return dst
}

// sameRun reports whether vals starts with n equal values.
func sameRun(vals []int32, n int) bool {
	if len(vals) < n {
		return false
	}
	for _, v := range vals[1:n] {
		if v != vals[0] {
			return false
		}
	}
	return true
}

// thriftOut appends a Thrift compact-protocol struct, with structs in it
// one level deep.
type thriftOut struct {
	b     []byte
	last  int16 // the previous field id at this depth
	outer int16 // the enclosing struct's, inside a struct
}

func (t *thriftOut) field(id int16, typ byte) {
	if d := id - t.last; d > 0 && d <= 15 {
		t.b = append(t.b, byte(d)<<4|typ)
	} else {
		t.b = append(t.b, typ)
		t.b = binary.AppendVarint(t.b, int64(id))
	}
	t.last = id
}

// i32 appends field id, an i32 (type 5, zigzag varint).
func (t *thriftOut) i32(id int16, v int32) {
	t.field(id, 5)
	t.b = binary.AppendVarint(t.b, int64(v))
}

// begin starts field id, a struct (type 12); end ends it.
func (t *thriftOut) begin(id int16) {
	t.field(id, 12)
	t.outer, t.last = t.last, 0
}

func (t *thriftOut) end() {
	t.stop()
	t.last = t.outer
}

// stop ends a struct's fields.
func (t *thriftOut) stop() { t.b = append(t.b, 0) }
