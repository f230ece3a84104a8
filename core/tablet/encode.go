package tablet

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
)

// The encoding of a tablet in a log record, all integers little endian:
//
//	uvarint rows, uvarint columns, string time unit, string time zone,
//	pad to 8, rows × int64 times,
//	per column: string name, byte type, byte flags (1 = has validity),
//	  [validity: (rows+7)/8 bytes],
//	  fixed width: pad to 8, rows × width bytes; Boolean: (rows+7)/8 bytes;
//	  String/Binary: pad to 4, (rows+1) × int32 offsets from 0, data.
//
// Strings are uvarint length + bytes. Buffers are normalized to offset 0,
// and padding is relative to the start of the buffer given to Decode, so a
// decoder over an 8-aligned buffer can use the times and offsets in place.

// Append appends the encoding of t to dst. t must be valid (Validate).
func Append(dst []byte, t *Tablet) []byte {
	e := encoder{buf: dst, pos: len(dst)}
	e.tablet(t)
	return e.buf
}

// AppendParts appends the encoding of t to parts as a list of byte slices
// to be written one after the other, starting at position pos of the
// record (padding is relative to the record's start), and returns the new
// parts and position. Large buffers of t are referenced, not copied: t
// must stay alive and unmodified until the parts are written. t must be
// valid (Validate).
func AppendParts(parts [][]byte, pos int, t *Tablet) ([][]byte, int) {
	e := encoder{parts: parts, gather: true, pos: pos}
	e.tablet(t)
	e.flush()
	return e.parts, e.pos
}

// borrowMin is the size from which a gathering encoder references a
// buffer instead of copying it.
const borrowMin = 4096

// encoder writes a tablet's encoding into buf, or, when gather is set,
// as parts that reference the tablet's large buffers.
type encoder struct {
	buf    []byte
	parts  [][]byte
	gather bool
	pos    int // position in the record, for padding
}

func (e *encoder) flush() {
	if len(e.buf) > 0 {
		e.parts = append(e.parts, e.buf)
		e.buf = nil
	}
}

func (e *encoder) raw(b []byte) {
	if e.gather && len(b) >= borrowMin {
		e.flush()
		e.parts = append(e.parts, b)
	} else {
		e.buf = append(e.buf, b...)
	}
	e.pos += len(b)
}

func (e *encoder) small(b []byte) { e.buf = append(e.buf, b...); e.pos += len(b) }

func (e *encoder) uvarint(v uint64) {
	if v < 0x80 { // the usual length of a name
		e.buf = append(e.buf, byte(v))
		e.pos++
		return
	}
	var tmp [binary.MaxVarintLen64]byte
	e.small(tmp[:binary.PutUvarint(tmp[:], v)])
}

func (e *encoder) string(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.pos += len(s)
}

// pad writes zeros up to the next multiple of align, a power of two.
func (e *encoder) pad(align int) {
	if n := -e.pos & (align - 1); n > 0 {
		e.small(zeroPad[:n])
	}
}

var zeroPad [8]byte

// bits writes n bits of src from bit off, realigned to bit 0 (a copy
// only when off is not a multiple of 8).
func (e *encoder) bits(src []byte, off, n int) {
	if off%8 == 0 {
		e.raw(src[off/8 : off/8+(n+7)/8])
		return
	}
	e.small(appendBits(nil, src, off, n))
}

func (e *encoder) tablet(t *Tablet) {
	n := t.Rows()
	e.uvarint(uint64(n))
	e.uvarint(uint64(len(t.Columns)))
	e.string(t.TimeUnit)
	e.string(t.TimeZone)
	e.pad(8)
	e.raw(bytesOf(t.Times))
	for i := range t.Columns {
		c := &t.Columns[i]
		e.string(c.Name)
		var flags byte
		if c.Validity != nil {
			flags = 1
		}
		e.buf = append(e.buf, byte(c.Type), flags)
		e.pos += 2
		if c.Validity != nil {
			e.bits(c.Validity, c.Offset, n)
		}
		switch {
		case c.Type == schema.Boolean:
			e.bits(c.Values, c.Offset, n)
		case VarWidth(c.Type):
			e.pad(4)
			offs := c.Offsets[c.Offset : c.Offset+n+1]
			if base := offs[0]; base == 0 {
				e.raw(bytesOf(offs))
			} else {
				rebased := make([]int32, len(offs))
				for j, o := range offs {
					rebased[j] = o - base
				}
				e.raw(bytesOf(rebased))
			}
			e.raw(c.Data[offs[0]:offs[n]])
		default:
			w := Width(c.Type)
			e.pad(8)
			e.raw(c.Values[c.Offset*w : (c.Offset+n)*w])
		}
	}
}

// AppendSize returns an upper bound of the bytes Append adds for t (the
// padding depends on where dst ends), so that a caller can size dst once:
// a guess from rows × columns is 64 times too much for Boolean columns.
// t must be valid.
func AppendSize(t *Tablet) int {
	n := t.Rows()
	bits := (n + 7) / 8
	size := uvarintLen(uint64(n)) + uvarintLen(uint64(len(t.Columns))) +
		uvarintLen(uint64(len(t.TimeUnit))) + len(t.TimeUnit) +
		uvarintLen(uint64(len(t.TimeZone))) + len(t.TimeZone) + 7 + 8*n
	for i := range t.Columns {
		c := &t.Columns[i]
		size += uvarintLen(uint64(len(c.Name))) + len(c.Name) + 2
		if c.Validity != nil {
			size += bits
		}
		switch {
		case c.Type == schema.Boolean:
			size += bits
		case VarWidth(c.Type):
			size += 3 + 4*(n+1) + int(c.Offsets[c.Offset+n]-c.Offsets[c.Offset])
		default:
			size += 7 + n*Width(c.Type)
		}
	}
	return size
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// Decode decodes one tablet from buf[pos:] and returns it with the
// position after it. The tablet shares buf's memory where alignment allows.
// The result is valid (Validate); anything else is an error of kind
// errs.ErrCorrupt.
func Decode(buf []byte, pos int) (*Tablet, int, error) {
	t, end, err := decodeTrusted(buf, pos)
	if err != nil {
		return nil, pos, err
	}
	if err := t.Validate(); err != nil {
		return nil, pos, fmt.Errorf("decoded tablet: %v: %w", err, errs.ErrCorrupt)
	}
	return t, end, nil
}

// decodeTrusted is Decode without Validate: it checks that every buffer
// lies inside buf, not names, value offsets or UTF-8. Decode runs it, then
// Validate; anything read back from storage goes through Decode.
func decodeTrusted(buf []byte, pos int) (*Tablet, int, error) {
	d := decoder{buf: buf, pos: pos}
	t := new(Tablet)
	d.tablet(t, nil)
	if d.err != nil {
		return nil, pos, d.err
	}
	return t, d.pos, nil
}

// EncodedWidth returns the column count of the tablet encoded at buf[pos:]:
// the length of the cols DecodeView needs.
func EncodedWidth(buf []byte, pos int) (int, error) {
	d := decoder{buf: buf, pos: pos}
	d.uvarint()
	n := d.uvarint()
	if d.err == nil && n > uint64(len(buf)-d.pos)/4 {
		d.fail("column count %d exceeds the %d bytes left", n, len(buf)-d.pos)
	}
	return int(n), d.err
}

// DecodeView decodes the tablet encoded at buf[pos:] into t, with cols
// (EncodedWidth long) as its columns, and returns the position after it.
// Unlike Decode it allocates nothing: t shares all of buf's memory, its
// names included, so buf must not change while t or a name taken from it
// is in use, and it does not Validate: it is for encodings of valid
// tablets made in this process (a transaction's copies of its inserts,
// read back at commit). buf's array must be 8-aligned for the times and
// values to be read in place (else they are copied).
func DecodeView(buf []byte, pos int, t *Tablet, cols []Column) (int, error) {
	d := decoder{buf: buf, pos: pos, view: true}
	*t = Tablet{}
	d.tablet(t, cols)
	if d.err != nil {
		return pos, d.err
	}
	return d.pos, nil
}

// tablet decodes one tablet into t, its columns into cols (nil: a new
// slice; else the encoded count, or an error).
func (d *decoder) tablet(t *Tablet, cols []Column) {
	n := d.uvarint()
	ncols := d.uvarint()
	// A row takes 8 bytes of times, a column at least 4 (name length, a
	// one-byte name, type, flags): a count the bytes left cannot hold is
	// corrupt, refused before allocating for it.
	if left := uint64(len(d.buf) - d.pos); d.err == nil && (n > left/8 || ncols > left/4) {
		d.fail("row count %d or column count %d exceeds the %d bytes left", n, ncols, left)
	}
	if cols != nil && d.err == nil && uint64(len(cols)) != ncols {
		d.fail("%d columns, room for %d", ncols, len(cols))
	}
	t.TimeUnit, t.TimeZone = d.string(), d.string()
	rows := int(n)
	d.align(8)
	t.Times = int64s(d.bytes(rows * 8))
	if d.err != nil {
		return
	}
	if cols == nil {
		cols = make([]Column, ncols)
	}
	t.Columns = cols
	for i := 0; d.err == nil && i < int(ncols); i++ {
		c := &t.Columns[i]
		*c = Column{Name: d.string(), Type: schema.PropertyType(d.byte())}
		flags := d.byte()
		if flags&1 != 0 {
			c.Validity = d.bytes((rows + 7) / 8)
		}
		switch {
		case c.Type == schema.Boolean:
			c.Values = d.bytes((rows + 7) / 8)
		case VarWidth(c.Type):
			d.align(4)
			c.Offsets = int32s(d.bytes((rows + 1) * 4))
			if d.err == nil {
				c.Data = d.bytes(int(c.Offsets[rows]))
			}
		case Width(c.Type) > 0:
			d.align(8)
			c.Values = d.bytes(rows * Width(c.Type))
		default:
			d.fail("column %q has unknown type %d", c.Name, c.Type)
		}
	}
}

// Slice returns rows [from, to) of t, sharing its memory.
func (t *Tablet) Slice(from, to int) *Tablet {
	s := &Tablet{}
	t.SliceInto(s, make([]Column, len(t.Columns)), from, to)
	return s
}

// SliceRuns returns, for each i < n, rows [lo, hi) = bound(i) of t, as
// Slice does, in two allocations rather than two a slice: a long-format
// batch of a million devices is cut into a million tablets.
func (t *Tablet) SliceRuns(n int, bound func(i int) (lo, hi int)) []Tablet {
	out := make([]Tablet, n)
	w := len(t.Columns)
	cols := make([]Column, n*w)
	for i := range out {
		lo, hi := bound(i)
		t.SliceInto(&out[i], cols[i*w:(i+1)*w:(i+1)*w], lo, hi)
	}
	return out
}

// SliceInto makes s rows [from, to) of t, as Slice does, with cols
// (len(t.Columns) long) as its columns: a caller that copies slice after
// slice reuses one s and cols.
func (t *Tablet) SliceInto(s *Tablet, cols []Column, from, to int) {
	*s = Tablet{Times: t.Times[from:to], Columns: cols, TimeUnit: t.TimeUnit, TimeZone: t.TimeZone}
	for i, c := range t.Columns {
		c.Offset += from
		cols[i] = c
	}
}

// Clone returns a copy of t that owns its memory, each column's rows
// realigned to Offset 0.
func (t *Tablet) Clone() *Tablet {
	n := t.Rows()
	c := &Tablet{Times: append([]int64(nil), t.Times...), Columns: make([]Column, len(t.Columns)), TimeUnit: t.TimeUnit, TimeZone: t.TimeZone}
	for i := range t.Columns {
		src := &t.Columns[i]
		dst := Column{Name: src.Name, Type: src.Type}
		if src.Validity != nil {
			dst.Validity = appendBits(nil, src.Validity, src.Offset, n)
		}
		switch {
		case src.Type == schema.Boolean:
			dst.Values = appendBits(nil, src.Values, src.Offset, n)
		case VarWidth(src.Type):
			lo, hi := src.Offsets[src.Offset], src.Offsets[src.Offset+n]
			dst.Offsets = make([]int32, n+1)
			for j, x := range src.Offsets[src.Offset : src.Offset+n+1] {
				dst.Offsets[j] = x - lo
			}
			dst.Data = append([]byte{}, src.Data[lo:hi]...)
		default:
			w := Width(src.Type)
			dst.Values = append([]byte{}, src.Values[src.Offset*w:(src.Offset+n)*w]...)
		}
		c.Columns[i] = dst
	}
	return c
}

// appendBits appends n bits of src starting at bit off, realigned to bit 0.
func appendBits(dst, src []byte, off, n int) []byte {
	if off%8 == 0 {
		return append(dst, src[off/8:off/8+(n+7)/8]...)
	}
	start := len(dst)
	dst = append(dst, make([]byte, (n+7)/8)...)
	out := dst[start:]
	for i := 0; i < n; i++ {
		b := off + i
		if src[b>>3]&(1<<(b&7)) != 0 {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	return dst
}

type decoder struct {
	buf  []byte
	pos  int
	err  error
	view bool // strings share buf's memory (DecodeView)
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("tablet at byte %d: %s: %w", d.pos, fmt.Sprintf(format, args...), errs.ErrCorrupt)
	}
}

// The methods below take the usual case (a one-byte length, bytes that
// are there) in a few instructions, as a decode reads several values a
// column, and leave the rest to other methods. After an error they may
// go on reading, within buf: the caller stops at the next check of err
// and returns nothing of it.

func (d *decoder) uvarint() uint64 {
	if uint(d.pos) < uint(len(d.buf)) {
		if b := d.buf[d.pos]; b < 0x80 {
			d.pos++
			return uint64(b)
		}
	}
	return d.longUvarint()
}

func (d *decoder) longUvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.buf[d.pos:])
	if k <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.pos += k
	return v
}

func (d *decoder) bytes(n int) []byte {
	if uint(n) > uint(len(d.buf)-d.pos) {
		return d.short(n)
	}
	d.pos += n
	return d.buf[d.pos-n : d.pos : d.pos]
}

//go:noinline
func (d *decoder) short(n int) []byte {
	d.fail("%d bytes needed, %d left", n, len(d.buf)-d.pos)
	return nil
}

func (d *decoder) byte() byte {
	if uint(d.pos) < uint(len(d.buf)) {
		d.pos++
		return d.buf[d.pos-1]
	}
	d.short(1)
	return 0
}

func (d *decoder) string() string {
	if d.view && uint(d.pos) < uint(len(d.buf)) {
		// A name shorter than 128 bytes, shared with buf.
		if n := int(d.buf[d.pos]); n > 0 && n < 0x80 && n < len(d.buf)-d.pos {
			d.pos += 1 + n
			return unsafe.String(&d.buf[d.pos-n], n)
		}
	}
	return d.longString()
}

func (d *decoder) longString() string {
	n := d.uvarint()
	if n > uint64(len(d.buf)) {
		d.fail("string length %d", n)
		return ""
	}
	b := d.bytes(int(n))
	if d.view && len(b) > 0 {
		return unsafe.String(&b[0], len(b))
	}
	return string(b)
}

// align skips to the next multiple of a, a power of two.
func (d *decoder) align(a int) {
	if pad := -d.pos & (a - 1); pad > 0 {
		d.bytes(pad)
	}
}

// int64s views b as int64s, copying only when b is not 8-byte aligned.
func int64s(b []byte) []int64 {
	if len(b) == 0 {
		return []int64{}
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 == 0 {
		return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
	}
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[i*8:]))
	}
	return v
}

// int32s views b as int32s, copying only when b is not 4-byte aligned.
func int32s(b []byte) []int32 {
	if len(b) == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[i*4:]))
	}
	return v
}
