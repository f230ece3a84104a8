package cdata

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/arcadego/arcadego/arrowbridge"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Exporting scan results through the C Data Interface.
//
// A result has few column layouts (device, the time column, one per
// property type), so its schema and batches are written here directly
// rather than built as arrow arrays and exported with arrow/cdata, which
// costs several allocations and C calls per column: for a row of 10,000
// columns, tens of milliseconds. Each export is one block of the caller's
// memory (Memory.Alloc) holding every struct, pointer array and buffer,
// carved in two passes (sizes, then contents), and starting with a header
// whose first word is a reference count that the caller's release
// callbacks drop (Memory). No Go pointer is ever stored in it.
//
// The device column is dictionary-encoded: int32 indices into a
// dictionary of the batch's device names (one, unless the batch joins the
// short runs of several devices). It costs 4 bytes a row plus each name
// once, not a copy of the name per row. The dictionary struct sits in the same
// block with a reference of its own and is released by the release of the
// device column, as the C Data Interface requires.

// Memory is what an export needs of its caller: blocks of memory that
// outlive Go's view of them, and the release callbacks of the structs
// written into them (addresses of C functions that take the struct).
//
// A block starts with a 32-byte header of four int64s. The first is the
// number of structs in the block not yet released: one for the root, one
// per child and one per dictionary, since a consumer may move a child out
// and release the root (the C Data Interface allows it). Every struct's
// PrivateData is the block's address. The root's release releases the
// children still in place, every struct's release its dictionary if not
// yet released, and each drops one reference; the block is freed at zero.
// The second is the caller's (the block's size). The third and fourth say
// which other blocks this one holds a reference on, to drop when it is
// freed: their number, and the offset in the block of the list of their
// addresses. A batch holds the blocks of the buffers it did not copy (see
// Owner).
type Memory struct {
	// Alloc returns the address of size bytes (header included), or 0
	// when out of memory. They need not be zeroed: an export writes every
	// byte a consumer reads, and leaves the big value buffers, which it
	// fills, uncleared.
	Alloc func(size uintptr) uintptr
	// Unref drops one reference to the block at addr, freeing it at zero
	// (and dropping the references it holds).
	Unref func(addr uintptr)
	// Owner, if set, returns the block holding the bytes at addr when
	// they are a buffer a result may point to instead of copying it (the
	// scan decoded them into such a block), else 0. Ref adds a reference
	// to such a block.
	Owner func(addr uintptr) uintptr
	Ref   func(addr uintptr)
	// The release callbacks of the root schema, a child or dictionary
	// schema, the root array, and a child or dictionary array.
	SchemaRelease, SchemaChildRelease, ArrayRelease, ArrayChildRelease uintptr
}

// BlockHeader is the size of a block's header; what follows is 16-byte
// aligned, as malloc's own memory.
const BlockHeader = 32

// Offsets of the header's words (int64s) of a block.
const (
	headerRefs  = 0
	headerNHeld = 16 // blocks held
	headerHeld  = 24 // offset of their addresses
)

// Result is the schema of a result stream, worked out once per
// stream: "device" (dictionary<int32, utf8>) unless left out, the time
// column, then the properties. Its Arrow types are those of
// arrowbridge.ResultSchema.
type Result struct {
	device  bool // the batches have a device column
	names   []string
	formats []string
	dicts   []string // format of the column's dictionary values, "" for none
	flags   []int64
	types   []schema.PropertyType // of the properties, columns 2...
	strings int                   // bytes of every name and format, NULs included
	ndicts  int                   // columns with a dictionary
}

// Formats of the device column: int32 indices into a utf8 dictionary.
const (
	deviceIndexFormat = "i"
	deviceValueFormat = "u"
)

// propertyFormat returns the Arrow format of property type pt ("" for an
// unknown type).
func propertyFormat(pt schema.PropertyType) string {
	switch pt {
	case schema.Boolean:
		return "b"
	case schema.Int32:
		return "i"
	case schema.Int64:
		return "l"
	case schema.Float:
		return "f"
	case schema.Double:
		return "g"
	case schema.String:
		return "u"
	case schema.Binary:
		return "z"
	case schema.Timestamp:
		return "tsn:"
	case schema.Date:
		return "tdD"
	}
	return ""
}

// timeFormats are the Arrow formats of the time units ("" is int64).
var timeFormats = map[string]string{"": "l", "s": "tss:", "ms": "tsm:", "us": "tsu:", "ns": "tsn:"}

// NewResult returns the schema of results of the given time column
// (named timeColumn, or arrowbridge's default), time unit and zone, and
// properties, with a device column first if withDevice (a scan of one
// named device may leave it out).
func NewResult(timeColumn, unit, zone string, props []schema.Property, withDevice bool) (*Result, error) {
	if timeColumn == "" {
		timeColumn = arrowbridge.DefaultTimeColumn
	}
	timeFormat, ok := timeFormats[unit]
	if !ok {
		return nil, fmt.Errorf("result schema: unknown time unit %q: %w", unit, errs.ErrInternal)
	}
	if unit != "" {
		timeFormat += zone
	}
	k := 2 + len(props)
	r := &Result{
		device:  withDevice,
		names:   make([]string, 0, k),
		formats: make([]string, 0, k),
		dicts:   make([]string, 0, k),
		flags:   make([]int64, 0, k),
		types:   make([]schema.PropertyType, 0, len(props)),
	}
	if withDevice {
		r.add(schema.DeviceColumn, deviceIndexFormat, deviceValueFormat, 0) // not ordered, not nullable
	}
	r.add(timeColumn, timeFormat, "", 0)
	for _, p := range props {
		f := propertyFormat(p.Type)
		if f == "" {
			return nil, fmt.Errorf("result schema: property %q has unknown type %s: %w", p.Name, p.Type, errs.ErrInternal)
		}
		r.add(p.Name, f, "", FlagNullable)
		r.types = append(r.types, p.Type)
	}
	return r, nil
}

// add appends a column; dict, when not "", is the format of its
// dictionary's values (format is then that of the indices).
func (r *Result) add(name, format, dict string, flags int64) {
	r.names = append(r.names, name)
	r.formats = append(r.formats, format)
	r.dicts = append(r.dicts, dict)
	r.flags = append(r.flags, flags)
	r.strings += len(name) + 1 + len(format) + 1
	if dict != "" {
		r.strings += len(dict) + 1 + 1 // its format and its name ""
		r.ndicts++
	}
}

// Layout returns a string that is equal for two Results exactly when
// their exported schemas are: each column's name, format, dictionary
// format and flags, the strings prefixed by their lengths.
func (r *Result) Layout() string {
	b := make([]byte, 0, r.strings+16*len(r.names))
	for i, name := range r.names {
		for _, str := range [...]string{name, r.formats[i], r.dicts[i]} {
			b = binary.AppendUvarint(b, uint64(len(str)))
			b = append(b, str...)
		}
		b = binary.AppendVarint(b, r.flags[i])
	}
	return string(b)
}

// block is an allocation of Memory being carved.
type block struct {
	mem              *Memory
	base, size, used uintptr
}

// newBlock allocates size bytes (plus the header), whose reference count
// is refs.
func newBlock(mem *Memory, size uintptr, refs int) (*block, error) {
	size += BlockHeader
	p := mem.Alloc(size)
	if p == 0 {
		return nil, fmt.Errorf("out of memory for a %d-byte result: %w", size, errs.ErrInternal)
	}
	b := &block{mem: mem, base: p, size: size, used: BlockHeader}
	*at[int64](b.base + headerRefs) = int64(refs)
	*at[int64](b.base + headerNHeld) = 0
	*at[int64](b.base + headerHeld) = 0
	return b, nil
}

// take returns the address of the next n bytes, 8-byte aligned, zeroed.
func (b *block) take(n uintptr) uintptr {
	p := b.takeRaw(n)
	clear(unsafe.Slice(at[byte](p), n))
	return p
}

// takeRaw is take without the zeroing, for buffers the caller fills.
func (b *block) takeRaw(n uintptr) uintptr {
	p := b.base + b.used
	if b.used += align8(n); b.used > b.size {
		panic("result block overflow") // a sizing bug of ours
	}
	return p
}

// buffer takes an n-byte buffer, not zeroed, which the caller fills
// whole, and returns its address (never NULL, as consumers may expect
// even of an empty buffer) and its bytes.
func (b *block) buffer(n int) (uintptr, []byte) {
	p := b.takeRaw(uintptr(n))
	if n == 0 {
		return p, nil
	}
	return p, unsafe.Slice(at[byte](p), n)
}

// bitmap is buffer for n bits, zeroed, so that the bits past the last row
// are 0 whatever fills the rest.
func (b *block) bitmap(n int) (uintptr, []byte) {
	p, bits := b.buffer((n + 7) / 8)
	clear(bits)
	return p, bits
}

// cstring takes a copy of s, NUL-terminated.
func (b *block) cstring(s string) uintptr {
	p := b.base + b.used
	if b.used += uintptr(len(s)) + 1; b.used > b.size {
		panic("result block overflow")
	}
	dst := unsafe.Slice(at[byte](p), len(s)+1)
	dst[copy(dst, s)] = 0
	return p
}

// free releases a block none of whose structs was handed out.
func (b *block) free() {
	*at[int64](b.base + headerRefs) = 1
	b.mem.Unref(b.base)
}

// hold makes b hold a reference on block, dropped when b is freed; held
// is b's list of such blocks, with room for every hold of the export.
func (b *block) hold(held uintptr, block uintptr) {
	b.mem.Ref(block)
	nh := at[int64](b.base + headerNHeld)
	*at[int64](b.base + headerHeld) = int64(held - b.base)
	*at[uintptr](held + uintptr(*nh)*sizeofWord) = block
	*nh++
}

func align8(n uintptr) uintptr { return (n + 7) &^ 7 }

// ExportSchema writes the stream's schema into the struct ArrowSchema at
// out (>= 4096).
func (r *Result) ExportSchema(mem *Memory, out uintptr) error {
	k := uintptr(len(r.names))
	d := uintptr(r.ndicts)
	size := k*sizeofWord + (k+d)*sizeofSchema + uintptr(r.strings) + uintptr(len("+s")+2)
	b, err := newBlock(mem, size, 1+len(r.names)+r.ndicts)
	if err != nil {
		return err
	}
	kids := b.take(k * sizeofWord)
	slots := words(kids, int64(k))
	for i := range slots {
		slots[i] = b.take(sizeofSchema)
	}
	for i, addr := range slots {
		var dict uintptr
		if r.dicts[i] != "" {
			// Unordered (flags 0); its values have no nulls.
			dict = b.take(sizeofSchema)
			*at[Schema](dict) = Schema{
				Format:      b.cstring(r.dicts[i]),
				Name:        b.cstring(""),
				Release:     mem.SchemaChildRelease,
				PrivateData: b.base,
			}
		}
		*at[Schema](addr) = Schema{
			Format:      b.cstring(r.formats[i]),
			Name:        b.cstring(r.names[i]),
			Flags:       r.flags[i],
			Dictionary:  dict,
			Release:     mem.SchemaChildRelease,
			PrivateData: b.base,
		}
	}
	*at[Schema](out) = Schema{
		Format:      b.cstring("+s"),
		Name:        b.cstring(""),
		NChildren:   int64(k),
		Children:    kids,
		Release:     mem.SchemaRelease,
		PrivateData: b.base,
	}
	return nil
}

// Part is the rows of one device in a result batch. A batch joins the
// small runs a scan yields (one device's rows in a short time range, say)
// into one, so that a scan of many small devices costs one export and one
// import per batch_rows rows, not one per device.
type Part struct {
	Device string
	Rows   *tablet.Tablet
	// Devices, when set, names the device of each row instead (a part of
	// many devices' rows, such as one row per device of a latest-values
	// result): a million one-row parts cost a million exports.
	Devices []string
}

// names returns the device names of p's rows in order: Devices, or
// Device once (a part of no rows still names it).
func (p *Part) names() []string {
	if p.Devices != nil {
		return p.Devices
	}
	return []string{p.Device}
}

// batchSize returns the bytes of the block of a batch of parts: structs,
// pointer arrays and buffers, each buffer 8-byte aligned. A property with
// a validity bitmap in any part gets room for one even if its rows turn
// out to have no nulls. The device column is its indices (4 bytes a row)
// and a dictionary holding each part's name, a name repeated by
// consecutive parts once.
func (r *Result) batchSize(parts []Part, a adoption) (uintptr, error) {
	var n, names, ndict uintptr
	prev, started := "", false
	for i := range parts {
		p := &parts[i]
		if len(p.Rows.Columns) != len(r.types) {
			return 0, fmt.Errorf("result batch has %d columns, the stream %d: %w", len(p.Rows.Columns), len(r.types), errs.ErrInternal)
		}
		m := p.Rows.Rows()
		if p.Devices != nil && len(p.Devices) != m {
			return 0, fmt.Errorf("result part names %d devices for %d rows: %w", len(p.Devices), m, errs.ErrInternal)
		}
		n += uintptr(m)
		for _, d := range p.names() {
			if !started || d != prev {
				names += uintptr(len(d))
				ndict++
				prev, started = d, true
			}
		}
	}
	if names > math.MaxInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("result batch of %d rows and %d bytes of device names exceeds the limits of utf8 and int32 indices: %w",
			n, names, errs.ErrInvalidArgument)
	}
	k := uintptr(len(r.names))
	bits := align8((n + 7) / 8)
	size := sizeofWord + k*sizeofWord + k*sizeofArray // root buffers, children, structs
	if r.device {
		size += 2*sizeofWord + align8(4*n)                                       // device: NULL validity, indices
		size += sizeofArray + 3*sizeofWord + align8(4*(ndict+1)) + align8(names) // its dictionary
	}
	size += 2 * sizeofWord // time
	if a.times == 0 {
		size += 8 * n
	}
	size += uintptr(a.holds) * sizeofWord
	for i, pt := range r.types {
		valid, data := false, uintptr(0)
		for _, p := range parts {
			c := &p.Rows.Columns[i]
			m := uintptr(p.Rows.Rows())
			if c.Type != pt {
				return 0, fmt.Errorf("result column %q is %s, the stream's %s: %w", c.Name, c.Type, pt, errs.ErrInternal)
			}
			if c.Offset < 0 {
				return 0, fmt.Errorf("result column %q has offset %d: %w", c.Name, c.Offset, errs.ErrInternal)
			}
			end := uintptr(c.Offset) + m
			if c.Validity != nil {
				if uintptr(len(c.Validity))*8 < end {
					return 0, fmt.Errorf("result column %q has %d validity bytes for %d rows: %w", c.Name, len(c.Validity), end, errs.ErrInternal)
				}
				valid = true
			}
			switch {
			case pt == schema.Boolean:
				if uintptr(len(c.Values))*8 < end {
					return 0, fmt.Errorf("result column %q has %d value bytes for %d rows: %w", c.Name, len(c.Values), end, errs.ErrInternal)
				}
			case tablet.VarWidth(pt):
				if uintptr(len(c.Offsets)) < end+1 {
					return 0, fmt.Errorf("result column %q has %d offsets for %d rows: %w", c.Name, len(c.Offsets), m, errs.ErrInternal)
				}
				lo, hi := c.Offsets[c.Offset], c.Offsets[end]
				if lo < 0 || hi < lo || int(hi) > len(c.Data) {
					return 0, fmt.Errorf("result column %q has value offsets %d..%d outside %d bytes: %w", c.Name, lo, hi, len(c.Data), errs.ErrInternal)
				}
				data += uintptr(hi - lo)
			default:
				w := uintptr(tablet.Width(pt))
				if uintptr(len(c.Values)) < end*w {
					return 0, fmt.Errorf("result column %q has %d value bytes for %d rows: %w", c.Name, len(c.Values), end, errs.ErrInternal)
				}
			}
		}
		if data > math.MaxInt32 {
			return 0, fmt.Errorf("result column %q: %d bytes in one batch exceed the int32 offsets of Arrow's utf8 and binary: %w",
				parts[0].Rows.Columns[i].Name, data, errs.ErrInvalidArgument)
		}
		if a.cols != nil && a.cols[i] != 0 {
			size += 2 * sizeofWord // the buffer pointers only
			continue
		}
		if valid {
			size += bits
		}
		switch {
		case pt == schema.Boolean:
			size += 2*sizeofWord + bits
		case tablet.VarWidth(pt):
			size += 3*sizeofWord + align8(4*(n+1)) + align8(data)
		default:
			size += 2*sizeofWord + align8(uintptr(tablet.Width(pt))*n)
		}
	}
	return size, nil
}

// ExportBatch writes the rows of parts, in order, as one struct array into
// the struct ArrowArray at out (>= 4096).
func (r *Result) ExportBatch(mem *Memory, parts []Part, out uintptr) error {
	a := r.adopt(mem, parts)
	size, err := r.batchSize(parts, a)
	if err != nil {
		return err
	}
	k := len(r.names)
	first := k - len(r.types)                   // the column of the first property
	b, err := newBlock(mem, size, 1+k+r.ndicts) // the root, the columns, the device's dictionary
	if err != nil {
		return err
	}
	n := 0
	for _, p := range parts {
		n += p.Rows.Rows()
	}
	rootBufs := b.take(sizeofWord) // the struct's validity: NULL
	kids := b.take(uintptr(k) * sizeofWord)
	slots := words(kids, int64(k))
	for i := range slots {
		slots[i] = b.take(sizeofArray)
	}
	held := b.take(uintptr(a.holds) * sizeofWord) // the blocks of the buffers not copied
	// childAt fills slot i with an array of n rows from row offset of the
	// given buffers.
	childAt := func(i, offset, nulls int, bufs ...uintptr) {
		p := b.take(uintptr(len(bufs)) * sizeofWord)
		ptrs := words(p, int64(len(bufs)))
		for j, x := range bufs { // not copy: go1.26's compiler fails on it here
			ptrs[j] = x
		}
		*at[Array](slots[i]) = Array{
			Length:      int64(n),
			NullCount:   int64(nulls),
			Offset:      int64(offset),
			NBuffers:    int64(len(bufs)),
			Buffers:     p,
			Release:     mem.ArrayChildRelease,
			PrivateData: b.base,
		}
	}
	child := func(i int, nulls int, bufs ...uintptr) { childAt(i, 0, nulls, bufs...) }

	if r.device {
		exportDevice(b, parts, n, child, mem, slots[0])
	}

	// The fixed-width buffers, most of a batch's bytes, are copied at the
	// end, several at once: the copy is bound by faulting in the fresh
	// memory, which the kernel does for threads in parallel.
	var copies [][2][]byte
	if a.times != 0 {
		b.hold(held, a.times)
		child(first-1, 0, 0, addrOf(parts[0].Rows.Times))
	} else {
		times, tb := b.buffer(8 * n)
		row := 0
		for _, p := range parts {
			m := p.Rows.Rows()
			copies = append(copies, [2][]byte{tb[8*row : 8*(row+m)], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p.Rows.Times))), 8*m)})
			row += m
		}
		child(first-1, 0, 0, times)
	}

	for i, pt := range r.types {
		if a.cols != nil && a.cols[i] != 0 {
			// Decoded into a block of the caller's: pointed to, not copied.
			c := &parts[0].Rows.Columns[i]
			b.hold(held, a.cols[i])
			valid, nulls := uintptr(0), 0
			if c.Validity != nil {
				if nulls = n - bitutil.CountSetBits(c.Validity, c.Offset, n); nulls > 0 {
					valid = addrOf(c.Validity)
				}
			}
			childAt(first+i, c.Offset, nulls, valid, addrOf(c.Values))
			continue
		}
		valid, nulls := uintptr(0), 0
		for _, p := range parts {
			if p.Rows.Columns[i].Validity != nil {
				valid = 1
			}
		}
		if valid != 0 {
			p, bits := b.bitmap(n)
			row := 0
			for _, part := range parts {
				c, m := &part.Rows.Columns[i], part.Rows.Rows()
				if c.Validity == nil {
					bitutil.SetBitsTo(bits, int64(row), int64(m), true)
				} else {
					nulls += m - bitutil.CountSetBits(c.Validity, c.Offset, m)
					bitutil.CopyBitmap(c.Validity, c.Offset, m, bits, row)
				}
				row += m
			}
			valid = 0
			if nulls > 0 {
				valid = p
			}
		}
		switch {
		case pt == schema.Boolean:
			p, v := b.bitmap(n)
			row := 0
			for _, part := range parts {
				c, m := &part.Rows.Columns[i], part.Rows.Rows()
				bitutil.CopyBitmap(c.Values, c.Offset, m, v, row)
				row += m
			}
			child(first+i, nulls, valid, p)
		case tablet.VarWidth(pt):
			o := b.take(uintptr(4 * (n + 1)))
			dst := unsafe.Slice(at[int32](o), n+1)
			var total int32
			row := 0
			for _, part := range parts {
				c, m := &part.Rows.Columns[i], part.Rows.Rows()
				lo, hi := c.Offsets[c.Offset], c.Offsets[c.Offset+m]
				for j, x := range c.Offsets[c.Offset : c.Offset+m+1] {
					if x < lo || x > hi {
						b.free()
						return fmt.Errorf("result column %q has value offset %d out of order at row %d: %w", c.Name, x, j, errs.ErrInternal)
					}
					dst[row+j] = total + x - lo
				}
				total += hi - lo
				row += m
			}
			p, d := b.buffer(int(total))
			for _, part := range parts {
				c, m := &part.Rows.Columns[i], part.Rows.Rows()
				lo, hi := c.Offsets[c.Offset], c.Offsets[c.Offset+m]
				d = d[copy(d, c.Data[lo:hi]):]
			}
			child(first+i, nulls, valid, o, p)
		default:
			w := tablet.Width(pt)
			p, v := b.buffer(w * n)
			row := 0
			for _, part := range parts {
				c, m := &part.Rows.Columns[i], part.Rows.Rows()
				copies = append(copies, [2][]byte{v[w*row : w*(row+m)], c.Values[c.Offset*w : (c.Offset+m)*w]})
				row += m
			}
			child(first+i, nulls, valid, p)
		}
	}
	copyAll(copies)
	*at[Array](out) = Array{
		Length:      int64(n),
		NBuffers:    1,
		NChildren:   int64(k),
		Buffers:     rootBufs,
		Children:    kids,
		Release:     mem.ArrayRelease,
		PrivateData: b.base,
	}
	return nil
}

// exportDevice writes the device column into slot (column 0) of batch
// block b: per row the index of its part's name in a dictionary of the
// names, a name repeated by consecutive parts once.
func exportDevice(b *block, parts []Part, n int, child func(int, int, ...uintptr), mem *Memory, slot uintptr) {
	ip, ib := b.buffer(4 * n)
	indices := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(ib))), n)
	var dictNames []string
	row := 0
	for i := range parts {
		p := &parts[i]
		m := p.Rows.Rows()
		for j, d := range p.names() {
			if len(dictNames) == 0 || d != dictNames[len(dictNames)-1] {
				dictNames = append(dictNames, d)
			}
			if p.Devices != nil {
				indices[row+j] = int32(len(dictNames) - 1)
			}
		}
		if p.Devices == nil {
			idx := int32(len(dictNames) - 1)
			for j := range m {
				indices[row+j] = idx
			}
		}
		row += m
	}
	child(0, 0, 0, ip)
	dictBufs := b.take(3 * sizeofWord)
	op := b.take(uintptr(4 * (len(dictNames) + 1)))
	offsets := unsafe.Slice(at[int32](op), len(dictNames)+1)
	nameBytes := 0
	for i, name := range dictNames {
		nameBytes += len(name)
		offsets[i+1] = int32(nameBytes)
	}
	data, nb := b.buffer(nameBytes)
	for i, name := range dictNames {
		copy(nb[offsets[i]:], name)
	}
	ptrs := words(dictBufs, 3)
	ptrs[1], ptrs[2] = op, data
	dict := b.take(sizeofArray)
	*at[Array](dict) = Array{
		Length:      int64(len(dictNames)),
		NBuffers:    3,
		Buffers:     dictBufs,
		Release:     mem.ArrayChildRelease,
		PrivateData: b.base,
	}
	at[Array](slot).Dictionary = dict
}

// adoption is which buffers of a batch an export points to instead of
// copying them: those of a batch of one part that lie in a block Owner
// knows (a scan decoded them there). Each is a hold of the batch's block.
type adoption struct {
	times uintptr   // the block holding the times, or 0: copied
	cols  []uintptr // per property, the block holding its values (and validity), or 0
	holds int
}

func (r *Result) adopt(mem *Memory, parts []Part) adoption {
	var a adoption
	if mem.Owner == nil || len(parts) != 1 || parts[0].Rows.Rows() == 0 {
		return a
	}
	t := parts[0].Rows
	if a.times = mem.Owner(addrOf(t.Times)); a.times != 0 {
		a.holds++
	}
	for i, pt := range r.types {
		if i >= len(t.Columns) {
			break // batchSize reports it
		}
		c := &t.Columns[i]
		if pt == schema.Boolean || tablet.VarWidth(pt) || c.Type != pt || len(c.Values) == 0 {
			continue
		}
		o := mem.Owner(addrOf(c.Values))
		if o == 0 || c.Validity != nil && mem.Owner(addrOf(c.Validity)) != o {
			continue
		}
		if a.cols == nil {
			a.cols = make([]uintptr, len(r.types))
		}
		a.cols[i] = o
		a.holds++
	}
	return a
}

// addrOf returns the address of the first element of s.
func addrOf[T any](s []T) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }

// parallelCopyBytes is the size of a batch from which its buffers are
// copied by several goroutines.
const parallelCopyBytes = 1 << 20

// copyAll copies each pair's second slice into its first, on up to
// GOMAXPROCS goroutines when there is enough to copy.
func copyAll(copies [][2][]byte) {
	total := 0
	for _, c := range copies {
		total += len(c[1])
	}
	workers := min(runtime.GOMAXPROCS(0), len(copies))
	if total < parallelCopyBytes || workers < 2 {
		for _, c := range copies {
			copy(c[0], c[1])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(copies); i = int(next.Add(1) - 1) {
				copy(copies[i][0], copies[i][1])
			}
		}()
	}
	wg.Wait()
}
