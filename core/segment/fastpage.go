package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"runtime/debug"
	"sync"

	"github.com/golang/snappy"
)

// A fast path for reading the column chunks this package writes most: a
// fixed-width column (INT32, INT64, FLOAT, DOUBLE, DATE, TIMESTAMP and the
// time column) in PLAIN-encoded version 1 data pages. The Parquet
// library's reader copies each chunk twice and each page into a fresh
// buffer before decompressing it into another, and expands definition
// levels into an int16 a row; here the pages needed are read in place from
// the file's mapping (or once into a reused buffer) and checked against
// their CRCs, each decompressed into a reused buffer, the levels decoded
// straight into a validity bitmap and the values copied into place.
// Anything else (a dictionary page, another encoding, version 2 pages) is
// left to the library: fastChunk reports it
// cannot, and the caller falls back.

// pageHeader is what fastChunk needs of a Parquet PageHeader.
type pageHeader struct {
	typ                      int32 // 0: DATA_PAGE
	uncompressed, compressed int32
	numValues                int32
	encoding                 int32 // 0: PLAIN
	defEncoding              int32 // 3: RLE
	hasDataHeader            bool
}

// errNotFast: the chunk needs the Parquet library's reader.
var errNotFast = errors.New("not a plain fixed-width chunk")

// chunkReader holds a goroutine's reusable buffers.
type chunkReader struct {
	chunk, page, levels, values []byte
	// pread: read pages with ReadAt, not from the mapping. A point read
	// touches a page or two per column in pages of the file it has not
	// touched before: a fault each on the mapping, which costs more than
	// a read(2) of them (one device of a million, from Python: p50 67-74
	// to 60-63 µs, p99 156-202 to 140-180 µs).
	pread bool
	// valueReads counts the windows read as values alone (readValues).
	valueReads int
}

// spareReaders keeps the buffers of released scanners for the next: a
// point read's scanner lives for one read, and allocating (and zeroing) a
// page buffer per column per read was most of its garbage.
var spareReaders sync.Pool // of *chunkReader

// reuse takes a spare reader's buffers if r has none yet.
func (r *chunkReader) reuse() {
	if r.chunk == nil && r.page == nil && r.levels == nil && r.values == nil {
		if spare, ok := spareReaders.Get().(*chunkReader); ok {
			r.chunk, r.page, r.levels, r.values = spare.chunk, spare.page, spare.levels, spare.values // the buffers only
		}
	}
}

// free gives r's buffers to the next reader; r may be used again after.
func (r *chunkReader) free() {
	if r.chunk != nil || r.page != nil || r.levels != nil || r.values != nil {
		spareReaders.Put(&chunkReader{chunk: r.chunk, page: r.page, levels: r.levels, values: r.values})
		r.chunk, r.page, r.levels, r.values = nil, nil, nil, nil
	}
}

// decodeDeltaInt64 decodes a DELTA_BINARY_PACKED page of k INT64 values
// into out (k × 8 bytes, little endian). The format: a header of block
// size, miniblocks per block, value count and first value (zigzag), then
// blocks of a min delta (zigzag), one bit width per miniblock and the
// miniblocks, each the deltas less the min delta, bit-packed LSB first.
// Sums wrap, as the format says. Only the first need values are decoded:
// a point read wants a few rows of a page, and each value is the sum of
// the deltas before it, so decoding stops after the last one wanted.
func decodeDeltaInt64(src []byte, k, need int, out []byte) error {
	bad := func(what string) error { return fmt.Errorf("delta-encoded page: %s", what) }
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(src)
		if n <= 0 {
			return 0, false
		}
		src = src[n:]
		return v, true
	}
	zigzag := func(v uint64) uint64 { return v>>1 ^ -(v & 1) }
	blockSize, ok1 := uvarint()
	miniblocks, ok2 := uvarint()
	total, ok3 := uvarint()
	first, ok4 := uvarint()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return bad("truncated header")
	}
	if blockSize == 0 || blockSize%128 != 0 || miniblocks == 0 || blockSize%miniblocks != 0 || blockSize/miniblocks%32 != 0 || blockSize > 1<<20 {
		return bad(fmt.Sprintf("block of %d values in %d miniblocks", blockSize, miniblocks))
	}
	if total != uint64(k) || k == 0 {
		return bad(fmt.Sprintf("%d values for a page of %d", total, k))
	}
	per := int(blockSize / miniblocks)
	v := zigzag(first)
	binary.LittleEndian.PutUint64(out, v)
	need = min(max(need, 1), k)
	var last [32*8 + 8]byte // a page's last miniblocks (of 32 values), padded
	for i := 1; i < need; {
		md, ok := uvarint()
		if !ok || uint64(len(src)) < miniblocks {
			return bad("truncated block")
		}
		minDelta := zigzag(md)
		widths := src[:miniblocks]
		src = src[miniblocks:]
		for _, w := range widths {
			if i >= need {
				break // unneeded, or absent past the page's values
			}
			if w > 64 {
				return bad(fmt.Sprintf("bit width %d", w))
			}
			size := per * int(w) / 8
			if len(src) < size {
				return bad("truncated miniblock")
			}
			// Each value is read as 8 (or 9) bytes from its first, and
			// the bits past it masked off: so the miniblock is read where
			// it is when 8 bytes follow it, else from a padded copy.
			mb := src
			if len(src) < size+8 {
				if size+8 <= len(last) {
					mb = last[:size+8]
				} else {
					mb = make([]byte, size+8) // miniblocks of over 32 values: not this writer's
				}
				copy(mb, src[:size])
			}
			src = src[size:]
			n := min(per, need-i)
			dst := out[i*8 : (i+n)*8]
			if w == 0 {
				for j := 0; j+8 <= len(dst); j += 8 {
					v += minDelta
					binary.LittleEndian.PutUint64(dst[j:j+8], v)
				}
				i += n
				continue
			}
			mask := ^uint64(0) >> (64 - w)
			if w <= 56 {
				// The 8 bytes from a value's first hold all its bits: one
				// load a value, no branch (a point read decodes half a
				// page of times on average: 6.0-7.1 to 2.4-3.4 ns a value,
				// BenchmarkDecodeDeltaTimes).
				mb = mb[:size+8]
				for j := range n {
					bit := uint(j) * uint(w)
					d := binary.LittleEndian.Uint64(mb[bit>>3:bit>>3+8]) >> (bit & 7)
					v += minDelta + d&mask
					binary.LittleEndian.PutUint64(dst[8*j:8*j+8], v)
				}
				i += n
				continue
			}
			for j := range n {
				bit := j * int(w)
				d := binary.LittleEndian.Uint64(mb[bit>>3:]) >> (bit & 7)
				if bit&7+int(w) > 64 {
					d |= uint64(mb[bit>>3+8]) << (64 - bit&7)
				}
				v += minDelta + d&mask
				binary.LittleEndian.PutUint64(dst[8*j:], v)
			}
			i += n
		}
	}
	return nil
}

// fastChunk decodes rows [lo, hi) of column j of row group g (rows rows)
// into vals ((hi-lo) × width bytes, little endian, nulls as zeros) and
// valid (a bitmap of hi-lo bits, all zero on entry); optional says whether
// the column has definition levels. Only the pages holding [lo, hi) are read, by the
// chunk table's page index, and each is checked against its CRC (when the
// file is mapped, once per process: see File.checked). It returns the
// number of nulls. errNotFast means nothing was decoded.
func (f *File) fastChunk(r *chunkReader, g *rowGroup, j, width int, optional bool, rows, lo, hi int, vals, valid []byte) (int, error) {
	return f.fastChunkRows(r, g, j, width, optional, rows, lo, hi, nil, vals, valid)
}

// fastChunkRows is fastChunk of the rows lo+sel[i] only (sel increasing,
// each < hi-lo), written densely: vals and valid hold len(sel) rows. A
// page that holds none of them is not decompressed. A nil sel is every
// row of [lo, hi).
func (f *File) fastChunkRows(r *chunkReader, g *rowGroup, j, width int, optional bool, rows, lo, hi int, sel []int32, vals, valid []byte) (int, error) {
	r.reuse()
	c := g.chunks[j]
	// The pages holding [lo, hi), by the page index: read and check only
	// those (a dictionary page means the library's reader, below).
	p0, p1, row0, off := 0, len(c.pages), 0, c.offset
	for p0 < len(c.pages) && row0+int(c.pages[p0].values) <= lo {
		if c.pages[p0].values == 0 {
			return 0, errNotFast
		}
		row0 += int(c.pages[p0].values)
		off += c.pages[p0].length
		p0++
	}
	p1 = p0
	for end := row0; p1 < len(c.pages) && end < hi; p1++ {
		if c.pages[p1].values == 0 {
			return 0, errNotFast
		}
		end += int(c.pages[p1].values)
	}
	if f.data != nil && r.pread && c.plain && sel == nil && p1 == p0+1 && lo >= row0 {
		if done, err := f.readValues(r, &c.pages[p0], off, width, lo-row0, hi-row0, vals, valid); done {
			return 0, err
		}
	}
	var n int64
	for _, pg := range c.pages[p0:p1] {
		n += pg.length
	}
	var pages []byte
	if f.data != nil && !r.pread {
		if off < 0 || off+n > int64(len(f.data)) {
			return 0, fmt.Errorf("column chunk pages at %d..%d past the file's %d bytes", off, off+n, len(f.data))
		}
		// A fault on the mapping (the file shrank under us) panics
		// instead of killing the process; callers recover it.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		pages = f.data[off : off+n : off+n]
	} else {
		if int64(cap(r.chunk)) < n {
			r.chunk = make([]byte, n)
		}
		pages = r.chunk[:n]
		if _, err := f.f.ReadAt(pages, off); err != nil {
			return 0, fmt.Errorf("read column chunk pages at %d: %w", off, err)
		}
	}
	buf := pages
	for at, pg := range c.pages[p0:p1] {
		b := buf[:pg.length]
		if f.data == nil || !f.pageChecked(pg.seq) { // once a page per process, mapped or pread: File.checked
			if crc32.Checksum(b, castagnoli) != pg.crc {
				return 0, fmt.Errorf("column chunk at %d, page %d: checksum mismatch", c.offset, p0+at)
			}
			f.markChecked(pg.seq)
		}
		buf = buf[pg.length:]
	}
	buf = pages
	row, nulls := row0, 0
	next := 0 // sel[next] is the first selected row not yet read
	parsed := 0
	for p := p0; row < rows && row < hi; p++ {
		pg := &c.pages[p]
		k := int(pg.values)
		// This page's rows [a, b) are in the window; sel[s0:s1] among them.
		a, b := max(lo, row)-row, min(hi, row+k)-row
		s0 := next
		if sel != nil {
			for next < len(sel) && lo+int(sel[next]) < row+b {
				next++
			}
		}
		if row+k <= lo || sel != nil && next == s0 { // nothing to read here: not even its header
			buf = buf[pg.length:]
			row += k
			continue
		}
		h, n, err := f.pageHeaderAt(pg, buf)
		if err != nil {
			return 0, err
		}
		delta := h.encoding == encodingDeltaBinary && width == 8 && !optional // the time column
		if !h.hasDataHeader || h.typ != pageTypeData || h.encoding != encodingPlain && !delta || optional && h.defEncoding != encodingRLE {
			if parsed == 0 {
				return 0, errNotFast
			}
			return 0, fmt.Errorf("page of type %d, encoding %d after plain pages", h.typ, h.encoding)
		}
		parsed++
		buf = buf[n:]
		if h.compressed < 0 || int(h.compressed) > len(buf) || h.uncompressed < 0 || int(h.numValues) != k || k <= 0 || k > rows-row {
			return 0, fmt.Errorf("bad page sizes (%d, %d, %d values)", h.compressed, h.uncompressed, h.numValues)
		}
		page := buf[:h.compressed:h.compressed] // a plain chunk's page, read where it is
		if !c.plain {
			if cap(r.page) < int(h.uncompressed) {
				r.page = make([]byte, h.uncompressed)
			}
			page, err = snappy.Decode(r.page[:cap(r.page)], page)
			if err != nil {
				return 0, fmt.Errorf("snappy: %w", err)
			}
		}
		if len(page) != int(h.uncompressed) {
			return 0, fmt.Errorf("page decompressed to %d bytes, header says %d", len(page), h.uncompressed)
		}
		buf = buf[h.compressed:]
		if delta {
			r.values = grow(r.values, k*8)
			if err := decodeDeltaInt64(page, k, b, r.values); err != nil {
				return 0, err
			}
			page = r.values
		}
		// A plain, uncompressed page whose rows all have values: a later
		// point read may read them alone (readValues).
		whole := c.plain && h.encoding == encodingPlain
		if !optional {
			if len(page) < k*width {
				return 0, fmt.Errorf("page holds %d bytes for %d values", len(page), k)
			}
			if whole {
				f.valuesAt[pg.seq].Store(1)
			}
			if sel != nil {
				copySelected(vals, valid, page, sel[s0:next], s0, lo-row, width)
			} else {
				copy(vals[(row+a-lo)*width:], page[a*width:b*width])
				setByteBits(valid, row+a-lo, row+b-lo)
			}
			row += k
			continue
		}
		if len(page) < 4 {
			return 0, errors.New("page too short for its levels")
		}
		l := int(binary.LittleEndian.Uint32(page))
		if l > len(page)-4 {
			return 0, errors.New("definition levels past the page")
		}
		r.levels = grow(r.levels, (k+7)/8)
		clear(r.levels)
		present, err := decodeLevels(page[4:4+l], r.levels, 0, k)
		if err != nil {
			return 0, err
		}
		page = page[4+l:]
		if len(page) < present*width {
			return 0, fmt.Errorf("page holds %d bytes for %d values", len(page), present)
		}
		if whole && present == k {
			f.valuesAt[pg.seq].Store(uint32(1 + 4 + l))
		}
		switch {
		case sel != nil && present == k:
			copySelected(vals, valid, page, sel[s0:next], s0, lo-row, width)
		case sel != nil:
			// Walk the page's rows to count the values before each
			// selected one (nulls take no place among them).
			dense := onesBefore(r.levels, a)
			at := s0
			for i := a; i < b && at < next; i++ {
				set := r.levels[i>>3]&(1<<(i&7)) != 0
				if lo-row+int(sel[at]) == i {
					if set {
						copy(vals[at*width:(at+1)*width], page[dense*width:(dense+1)*width])
						valid[at>>3] |= 1 << (at & 7)
					} else {
						clear(vals[at*width : (at+1)*width]) // vals may be reused memory
						nulls++
					}
					at++
				}
				if set {
					dense++
				}
			}
		case present == k:
			copy(vals[(row+a-lo)*width:], page[a*width:b*width])
			setByteBits(valid, row+a-lo, row+b-lo)
		default:
			dense := onesBefore(r.levels, a)
			for i := a; i < b; i++ {
				out := row + i - lo
				if r.levels[i>>3]&(1<<(i&7)) == 0 {
					clear(vals[out*width : (out+1)*width]) // vals may be reused memory
					nulls++
					continue
				}
				copy(vals[out*width:(out+1)*width], page[dense*width:(dense+1)*width])
				valid[out>>3] |= 1 << (out & 7)
				dense++
			}
		}
		row += k
	}
	if row < min(hi, rows) {
		return 0, fmt.Errorf("chunk ends at row %d of %d", row, rows)
	}
	return nulls, nil
}

// readValues reads page rows [a, b) into vals and marks them in valid,
// reading their values alone (the page starts at off), when this process
// has found the page whole before: its CRC matched (a page is checked
// once per process, as when it is read from the mapping), and it is
// plain, uncompressed, with a value in every row (valuesAt). A point read
// of a device among a million then reads 80 bytes a column, not the 8 KiB
// page, and copies them from the mapping instead of calling read(2): at
// most a fault the first time, nothing after (over a million devices,
// Go's steady reads went from p50 37.5–43.5 to 26.5–31.2 µs). A whole
// page is still read with pread (see chunkReader.pread). A file cut short
// makes the copy fault, which panics as every read of the mapping does,
// and the caller recovers it. done is false when the page is not known so.
func (f *File) readValues(r *chunkReader, pg *page, off int64, width, a, b int, vals, valid []byte) (done bool, err error) {
	at, hv := int64(f.valuesAt[pg.seq].Load()), f.headers[pg.seq].Load()
	if at == 0 || hv == 0 || !f.pageChecked(pg.seq) || b > int(pg.values) || a >= b {
		return false, nil
	}
	start := off + int64(hv&0xffff) + at - 1 + int64(a*width)
	end := start + int64((b-a)*width)
	if start < 0 || end > int64(len(f.data)) {
		return true, fmt.Errorf("page values at %d..%d past the file's %d bytes", start, end, len(f.data))
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	copy(vals[:(b-a)*width], f.data[start:end])
	setByteBits(valid, 0, b-a)
	r.valueReads++
	return true, nil
}

// copySelected copies the values (4 or 8 bytes wide) of a page without
// nulls at rows shift+sel[i] to output rows first+i, and marks them valid.
func copySelected(vals, valid, page []byte, sel []int32, first, shift, width int) {
	// A load and a store per value: copy's call costs more than 8 bytes.
	if width == 8 {
		for i, s := range sel {
			out, in := first+i, shift+int(s)
			binary.LittleEndian.PutUint64(vals[out*8:], binary.LittleEndian.Uint64(page[in*8:]))
		}
	} else {
		for i, s := range sel {
			out, in := first+i, shift+int(s)
			binary.LittleEndian.PutUint32(vals[out*4:], binary.LittleEndian.Uint32(page[in*4:]))
		}
	}
	setByteBits(valid, first, first+len(sel))
}

// onesBefore counts the set bits of bitmap b before bit n.
func onesBefore(b []byte, n int) int {
	c := 0
	for _, v := range b[:n>>3] {
		c += bits.OnesCount8(v)
	}
	if n&7 != 0 {
		c += bits.OnesCount8(b[n>>3] & byte(1<<(n&7)-1))
	}
	return c
}

// allOnes is 256 set bytes, for setByteBits.
var allOnes = func() (b [256]byte) {
	for i := range b {
		b[i] = 0xff
	}
	return b
}()

// setByteBits sets bits [from, to) of an LSB-first bitmap.
func setByteBits(b []byte, from, to int) {
	for ; from < to && from&7 != 0; from++ {
		b[from>>3] |= 1 << (from & 7)
	}
	if whole := (to - from) >> 3; whole > 0 {
		ones := b[from>>3 : from>>3+whole]
		for len(ones) > 0 { // a copy per 256 bytes, not a store per byte
			ones = ones[copy(ones, allOnes[:]):]
		}
		from += whole << 3
	}
	for ; from < to; from++ {
		b[from>>3] |= 1 << (from & 7)
	}
}

// decodeLevels decodes n definition levels of bit width 1 (the
// RLE/bit-packed hybrid) into valid from bit at on, and returns how many
// are 1.
func decodeLevels(src, valid []byte, at, n int) (int, error) {
	present, done := 0, 0
	for done < n {
		h, k := binary.Uvarint(src)
		if k <= 0 {
			return 0, errors.New("bad definition level run header")
		}
		src = src[k:]
		if h&1 == 0 { // a run of one value
			count := int(min(h>>1, uint64(n-done)))
			if len(src) < 1 || src[0] > 1 {
				return 0, errors.New("bad definition level run")
			}
			if src[0] == 1 {
				setByteBits(valid, at+done, at+done+count)
				present += count
			}
			src = src[1:]
			done += count
			continue
		}
		groups := int(h >> 1) // of 8 values, one byte each at bit width 1
		if groups > len(src) {
			return 0, errors.New("definition levels past the page")
		}
		for _, v := range src[:groups] {
			take := min(8, n-done)
			v &= byte(1<<take - 1)
			present += bits.OnesCount8(v)
			pos := at + done
			valid[pos>>3] |= v << (pos & 7)
			if pos&7 != 0 && pos>>3+1 < len(valid) {
				valid[pos>>3+1] |= v >> (8 - pos&7)
			}
			done += take
			if done == n {
				break
			}
		}
		src = src[groups:]
	}
	return present, nil
}

// pageHeaderAt returns the header at the start of b, that of page pg of
// the file: decoded from its Thrift bytes once, then from what the File
// keeps of it (headers, by page), as a scan over many pages spent a tenth
// of its time decoding them again.
func (f *File) pageHeaderAt(pg *page, b []byte) (pageHeader, int, error) {
	if v := f.headers[pg.seq].Load(); v != 0 {
		n := int(v & 0xffff)
		return pageHeader{
			uncompressed:  int32(uint32(v >> 16)),
			compressed:    int32(pg.length - int64(n)),
			numValues:     int32(pg.values),
			encoding:      int32(v >> 48 & 0xf),
			defEncoding:   int32(v >> 52 & 0xf),
			hasDataHeader: true,
		}, n, nil
	}
	h, n, err := parsePageHeader(b)
	// Kept only what fits, and what the chunk table agrees with: a data
	// page, its sizes and its values.
	if err == nil && h.typ == pageTypeData && h.hasDataHeader && n < 1<<16 && h.uncompressed >= 0 &&
		int64(h.compressed) == pg.length-int64(n) && int64(h.numValues) == pg.values &&
		h.encoding >= 0 && h.encoding < 16 && h.defEncoding >= 0 && h.defEncoding < 16 {
		f.headers[pg.seq].Store(1<<63 | uint64(h.defEncoding)<<52 | uint64(h.encoding)<<48 | uint64(uint32(h.uncompressed))<<16 | uint64(n))
	}
	return h, n, err
}

// parsePageHeader reads a Thrift compact-protocol PageHeader: the fields
// fastChunk needs, skipping the rest. It returns the header's length.
func parsePageHeader(b []byte) (pageHeader, int, error) {
	r := compact{b: b}
	var h pageHeader
	var last int16
	for {
		id, typ := r.field(&last)
		if typ == 0 || r.err != nil {
			break
		}
		switch {
		case id == 1 && typ == 5:
			h.typ = r.i32()
		case id == 2 && typ == 5:
			h.uncompressed = r.i32()
		case id == 3 && typ == 5:
			h.compressed = r.i32()
		case id == 5 && typ == 12: // DataPageHeader
			h.hasDataHeader = true
			var last2 int16
			for {
				id2, typ2 := r.field(&last2)
				if typ2 == 0 || r.err != nil {
					break
				}
				switch {
				case id2 == 1 && typ2 == 5:
					h.numValues = r.i32()
				case id2 == 2 && typ2 == 5:
					h.encoding = r.i32()
				case id2 == 3 && typ2 == 5:
					h.defEncoding = r.i32()
				default:
					r.skip(typ2, 0)
				}
			}
		default:
			r.skip(typ, 0)
		}
	}
	if r.err != nil {
		return h, 0, fmt.Errorf("page header: %w", r.err)
	}
	return h, r.off, nil
}

// compact reads the Thrift compact protocol.
type compact struct {
	b   []byte
	off int
	err error
}

var errThrift = errors.New("bad Thrift encoding")

func (r *compact) byte() byte {
	if r.off >= len(r.b) {
		r.err = errThrift
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *compact) uvarint() uint64 {
	v, n := binary.Uvarint(r.b[min(r.off, len(r.b)):])
	if n <= 0 {
		r.err = errThrift
		return 0
	}
	r.off += n
	return v
}

func (r *compact) i32() int32 {
	v := r.uvarint()
	return int32(uint32(v>>1) ^ -uint32(v&1))
}

// field reads a field header: its id (from the previous one, *last) and
// type; type 0 is the end of the struct.
func (r *compact) field(last *int16) (int16, byte) {
	h := r.byte()
	typ := h & 0x0f
	if typ == 0 {
		return 0, 0
	}
	if d := int16(h >> 4); d != 0 {
		*last += d
	} else {
		v := r.uvarint()
		*last = int16(uint16(v>>1) ^ -uint16(v&1))
	}
	return *last, typ
}

// skip skips a value of compact type typ.
func (r *compact) skip(typ byte, depth int) {
	if depth > 16 {
		r.err = errThrift
		return
	}
	switch typ {
	case 1, 2: // booleans live in the type
	case 3:
		r.byte()
	case 4, 5, 6:
		r.uvarint()
	case 7:
		r.off += 8
	case 8:
		n := r.uvarint()
		if n > uint64(len(r.b)-min(r.off, len(r.b))) {
			r.err = errThrift
			return
		}
		r.off += int(n)
	case 9, 10:
		h := r.byte()
		n := uint64(h >> 4)
		if n == 15 {
			n = r.uvarint()
		}
		for i := uint64(0); i < n && r.err == nil; i++ {
			r.skip(h&0x0f, depth+1)
		}
	case 11:
		n := r.uvarint()
		if n == 0 {
			return
		}
		kv := r.byte()
		for i := uint64(0); i < n && r.err == nil; i++ {
			r.skip(kv>>4, depth+1)
			r.skip(kv&0x0f, depth+1)
		}
	case 12:
		var last int16
		for r.err == nil {
			_, t := r.field(&last)
			if t == 0 {
				return
			}
			r.skip(t, depth+1)
		}
	default:
		r.err = errThrift
	}
	if r.off > len(r.b) {
		r.err = errThrift
	}
}
