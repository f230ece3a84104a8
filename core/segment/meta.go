package segment

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"unsafe"

	"github.com/arcadego/arcadego/core/schema"
)

// Footer key-value metadata keys. Every value is checked by the CRC-32C
// stored under keyCRC, so a flipped footer byte that still parses as
// Thrift is caught before it can make Read skip or misplace rows.
const (
	keyFormat  = "arcadego.format"
	keyLayout  = "arcadego.layout"
	keyDevices = "arcadego.devices"
	keyChunks  = "arcadego.chunks"
	keyCRC     = "arcadego.crc"
	keySums    = "arcadego.sums" // optional (files before it have none); its own CRC

	formatVersion = "1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// metaCRC is the checksum of the other arcadego values, in hex.
func metaCRC(layout, devices, chunks string) string {
	var sum uint32
	for _, s := range []string{formatVersion, layout, devices, chunks} {
		sum = crc32.Update(sum, castagnoli, stringBytes(s))
		sum = crc32.Update(sum, castagnoli, []byte{0})
	}
	return fmt.Sprintf("%08x", sum)
}

// stringBytes is s's bytes, not copied, for reading only: the device
// directory of a file of a million devices is megabytes, and each copy
// at open (of twenty such files) is page faults in fresh memory.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// The device directory ("arcadego.devices") is base64 (standard, padded)
// of: uvarint device count, then per device in sorted order uvarint name
// length, name bytes, uvarint row count, varint first time, uvarint last
// time minus first time. Device i starts at the file row that is the sum
// of the row counts before it. The time span lets a flush tell whether
// new rows of a device overlap this file without reading it.
func encodeDevices(devices []string, rows []int64, spans [][2]int64) string {
	size := binary.MaxVarintLen64 * (1 + 4*len(devices)) // room enough: grown, a million names were copied many times
	for _, d := range devices {
		size += len(d)
	}
	b := make([]byte, 0, size)
	b = binary.AppendUvarint(b, uint64(len(devices)))
	for i, d := range devices {
		b = binary.AppendUvarint(b, uint64(len(d)))
		b = append(b, d...)
		b = binary.AppendUvarint(b, uint64(rows[i]))
		b = binary.AppendVarint(b, spans[i][0])
		b = binary.AppendUvarint(b, uint64(spans[i][1]-spans[i][0]))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// decodeDevices returns the sorted distinct devices and starts, with
// starts[i] the first file row of device i and starts[len] the row count.
// Names are substrings of one string: one allocation for a million names.
func decodeDevices(v string) (devices []string, starts []int64, spans [][2]int64, err error) {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("device directory: %w", err)
	}
	// The names are substrings of raw, which nothing else holds or
	// changes: not copied into a string first.
	all := unsafe.String(unsafe.SliceData(raw), len(raw))
	r := reader{b: raw}
	n := r.uvarint()
	if n > uint64(len(raw)) { // each device takes at least two bytes
		return nil, nil, nil, errors.New("device directory: bad count")
	}
	devices = make([]string, n)
	starts = make([]int64, n+1)
	spans = make([][2]int64, n)
	for i := range devices {
		l := r.uvarint()
		if r.err != nil || l > uint64(len(raw)-r.off) {
			return nil, nil, nil, errors.New("device directory: bad name length")
		}
		devices[i] = all[r.off : r.off+int(l)]
		r.off += int(l)
		rows := r.uvarint()
		if rows == 0 || rows > 1<<62 || starts[i] > 1<<62 {
			return nil, nil, nil, errors.New("device directory: bad row count")
		}
		starts[i+1] = starts[i] + int64(rows)
		first := r.varint()
		last := first + int64(r.uvarint()) // wraps below first on overflow
		if r.err != nil || last < first {
			return nil, nil, nil, errors.New("device directory: bad time span")
		}
		spans[i] = [2]int64{first, last}
		if i > 0 && strings.Compare(devices[i-1], devices[i]) >= 0 {
			return nil, nil, nil, errors.New("device directory: devices out of order")
		}
	}
	if r.err != nil || r.off != len(raw) {
		return nil, nil, nil, errors.New("device directory: bad length")
	}
	return devices, starts, spans, nil
}

// rowGroup is what the chunk table ("arcadego.chunks") says of one row
// group: its rows, the min and max time (the reader's pruning statistics,
// under the CRC), and its column chunks' byte lengths and CRC-32C. Chunks
// are contiguous from byte 4 (after the magic), so lengths give offsets.
type rowGroup struct {
	rows             int64
	first            int64 // file row of the group's first row (not stored)
	minTime, maxTime int64
	chunks           []chunk
}

type chunk struct {
	offset, length int64 // offset is not stored
	crc            uint32
	pages          []page // the chunk's pages in order, their lengths summing to length
	plain          bool   // not compressed (the footer says; not stored): else Snappy
}

// page is what the chunk table says of one page of a column chunk: its
// bytes (header and data), its values (rows; 0 for a dictionary page) and
// the CRC-32C of its bytes, so that a read of a few pages of a chunk
// checks what it reads without reading the whole chunk.
type page struct {
	length int64
	values int64
	crc    uint32
	first  int64 // the time column only: the time of the page's first row
	seq    int   // its index among the file's pages (File.checked)
}

// encodeChunks: base64 of uvarint group count, then per group uvarint
// rows, varint min and max time, and per column uvarint length, the
// 4-byte little-endian CRC-32C of the chunk's bytes, uvarint page count
// and per page uvarint length, uvarint values and its CRC-32C, and for
// the time column (column 1) varint the time of the page's first row.
func encodeChunks(groups []rowGroup) string {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(groups)))
	for _, g := range groups {
		b = binary.AppendUvarint(b, uint64(g.rows))
		b = binary.AppendVarint(b, g.minTime)
		b = binary.AppendVarint(b, g.maxTime)
		for j, c := range g.chunks {
			b = binary.AppendUvarint(b, uint64(c.length))
			b = binary.LittleEndian.AppendUint32(b, c.crc)
			b = binary.AppendUvarint(b, uint64(len(c.pages)))
			for _, p := range c.pages {
				b = binary.AppendUvarint(b, uint64(p.length))
				b = binary.AppendUvarint(b, uint64(p.values))
				b = binary.LittleEndian.AppendUint32(b, p.crc)
				if j == 1 {
					b = binary.AppendVarint(b, p.first)
				}
			}
		}
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeChunks(v string, columns int) ([]rowGroup, error) {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("chunk table: %w", err)
	}
	r := reader{b: raw}
	n := r.uvarint()
	if n > uint64(len(raw)) {
		return nil, errors.New("chunk table: bad count")
	}
	groups := make([]rowGroup, n)
	off, first, seq := int64(4), int64(0), 0
	for i := range groups {
		g := &groups[i]
		rows := r.uvarint()
		if rows == 0 || rows > 1<<40 {
			return nil, errors.New("chunk table: bad row count")
		}
		g.rows, g.first = int64(rows), first
		first += g.rows
		g.minTime, g.maxTime = r.varint(), r.varint()
		g.chunks = make([]chunk, columns)
		for j := range g.chunks {
			l := r.uvarint()
			if l > 1<<50 {
				return nil, errors.New("chunk table: bad chunk length")
			}
			g.chunks[j] = chunk{offset: off, length: int64(l), crc: r.uint32()}
			off += int64(l)
			np := r.uvarint()
			if np == 0 || np > l {
				return nil, errors.New("chunk table: bad page count")
			}
			pages := make([]page, np)
			var sumLen, sumValues uint64
			for k := range pages {
				pl, pv := r.uvarint(), r.uvarint()
				if pl > l || pv > rows {
					return nil, errors.New("chunk table: bad page")
				}
				pages[k] = page{length: int64(pl), values: int64(pv), crc: r.uint32(), seq: seq}
				seq++
				if j == 1 { // the time column
					pages[k].first = r.varint()
				}
				sumLen, sumValues = sumLen+pl, sumValues+pv
			}
			if r.err == nil && (sumLen != l || sumValues != rows) {
				return nil, errors.New("chunk table: pages do not add up to their chunk")
			}
			g.chunks[j].pages = pages
		}
		if r.err != nil {
			break
		}
	}
	if r.err != nil || r.off != len(raw) {
		return nil, errors.New("chunk table: bad length")
	}
	return groups, nil
}

// reader decodes varints, remembering the first error.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) uint32() uint32 {
	if r.err != nil || len(r.b)-r.off < 4 {
		r.err = errors.New("short buffer")
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

// Sum is the sum of a property column's values in a file, for aggregates
// answered without reading the rows. Valid is false where the file holds
// none: a column past the first statsColumns, one that is no number, an
// INT sum that overflowed, or a file written before sums were kept.
type Sum struct {
	Valid bool
	Int   int64   // INT32 and INT64 columns
	Float float64 // FLOAT and DOUBLE columns (NaN or ±Inf if a value is)
}

// The sums ("arcadego.sums") are base64 (standard, padded) of: uvarint
// column count, then per column a kind byte (0: none, 1: an int64, 2: a
// float64) and, unless 0, 8 bytes little endian; then the CRC-32C of all
// that, 4 bytes little endian.
func encodeSums(l Layout, stats []colStats) string {
	b := binary.AppendUvarint(nil, uint64(len(stats)))
	for i := range stats {
		st := &stats[i]
		switch l.Columns[i].Type {
		case schema.Int32, schema.Int64:
			if !st.overflow {
				b = binary.LittleEndian.AppendUint64(append(b, 1), uint64(st.sumI))
				continue
			}
		case schema.Float, schema.Double:
			b = binary.LittleEndian.AppendUint64(append(b, 2), math.Float64bits(st.sumF))
			continue
		}
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return base64.StdEncoding.EncodeToString(b)
}

func decodeSums(v string, columns int) ([]Sum, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) < 4 {
		return nil, errors.New("sums: not base64 of at least a checksum")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errors.New("sums: checksum mismatch")
	}
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(columns) {
		return nil, fmt.Errorf("sums: %d columns of %d", n, columns)
	}
	body = body[k:]
	sums := make([]Sum, n)
	for i := range sums {
		if len(body) == 0 {
			return nil, errors.New("sums: truncated")
		}
		kind := body[0]
		body = body[1:]
		if kind == 0 {
			continue
		}
		if kind > 2 || len(body) < 8 {
			return nil, fmt.Errorf("sums: column %d: bad kind %d or truncated", i, kind)
		}
		x := binary.LittleEndian.Uint64(body)
		body = body[8:]
		sums[i] = Sum{Valid: true, Int: int64(x)}
		if kind == 2 {
			sums[i] = Sum{Valid: true, Float: math.Float64frombits(x)}
		}
	}
	if len(body) != 0 {
		return nil, errors.New("sums: trailing bytes")
	}
	return sums, nil
}
