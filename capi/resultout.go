package main

/*
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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
// columns, tens of milliseconds. Each export is one C block (ag_export_alloc)
// holding every struct, pointer array and buffer, carved in two passes
// (sizes, then contents); its release callbacks are in bridge.c (see
// struct ag_export). No Go pointer is ever stored in it.
//
// The device column is dictionary-encoded: int32 indices into a
// dictionary of the batch's device names (one, unless the batch joins the
// short runs of several devices). It costs 4 bytes a row plus each name
// once, not a copy of the name per row. The dictionary struct sits in the same
// block with a reference of its own and is released by the release of the
// device column, as the C Data Interface requires.

var (
	exportSchemaRelease      = uintptr(unsafe.Pointer(C.ag_export_schema_release))
	exportSchemaChildRelease = uintptr(unsafe.Pointer(C.ag_export_schema_child_release))
	exportArrayRelease       = uintptr(unsafe.Pointer(C.ag_export_array_release))
	exportArrayChildRelease  = uintptr(unsafe.Pointer(C.ag_export_array_child_release))
)

const (
	flagNullable = C.ARROW_FLAG_NULLABLE
	// blockHeader is the size of struct ag_export, padded so that what
	// follows is 16-byte aligned, as malloc's own memory.
	blockHeader = 16
)

// poolMaxAge is how long a released result block is kept for reuse (see
// AG_POOL_MIN in bridge.h): long enough for the next scan of a loop, short
// enough that an idle process gives the memory back.
const poolMaxAge = time.Second

// The kept blocks are trimmed by a goroutine that wakes once per
// poolMaxAge.
func init() {
	go func() {
		for range time.Tick(poolMaxAge) {
			C.ag_pool_trim(C.int64_t(poolMaxAge))
		}
	}()
}

// resultColumns is the schema of a result stream, worked out once per
// stream: "device" (dictionary<int32, utf8>), the time column, then the
// properties. Its Arrow types are those of arrowbridge.ResultSchema.
type resultColumns struct {
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

// newResultColumns returns the schema of results of the given time column
// (named timeColumn, or arrowbridge's default), time unit and zone, and
// properties.
func newResultColumns(timeColumn, unit, zone string, props []schema.Property) (*resultColumns, error) {
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
	r := &resultColumns{
		names:   make([]string, 0, k),
		formats: make([]string, 0, k),
		dicts:   make([]string, 0, k),
		flags:   make([]int64, 0, k),
		types:   make([]schema.PropertyType, 0, len(props)),
	}
	r.add(schema.DeviceColumn, deviceIndexFormat, deviceValueFormat, 0) // not ordered, not nullable
	r.add(timeColumn, timeFormat, "", 0)
	for _, p := range props {
		f := propertyFormat(p.Type)
		if f == "" {
			return nil, fmt.Errorf("result schema: property %q has unknown type %s: %w", p.Name, p.Type, errs.ErrInternal)
		}
		r.add(p.Name, f, "", flagNullable)
		r.types = append(r.types, p.Type)
	}
	return r, nil
}

// add appends a column; dict, when not "", is the format of its
// dictionary's values (format is then that of the indices).
func (r *resultColumns) add(name, format, dict string, flags int64) {
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

// block is a C allocation being carved.
type block struct {
	base, size, used uintptr
}

// newBlock allocates size bytes (plus the header) of zeroed C memory,
// whose reference count is refs.
func newBlock(size uintptr, refs int) (*block, error) {
	size += blockHeader
	p := C.ag_export_alloc(C.size_t(size))
	if p == nil {
		return nil, fmt.Errorf("out of memory for a %d-byte result: %w", size, errs.ErrInternal)
	}
	b := &block{base: uintptr(p), size: size, used: blockHeader}
	at[C.struct_ag_export](b.base).refs = C.int64_t(refs)
	return b, nil
}

// take returns the address of the next n bytes, 8-byte aligned.
func (b *block) take(n uintptr) uintptr {
	p := b.base + b.used
	if b.used += align8(n); b.used > b.size {
		panic("result block overflow") // a sizing bug of ours
	}
	return p
}

// buffer takes an n-byte buffer and returns its address (never NULL, as
// consumers may expect even of an empty buffer) and its bytes.
func (b *block) buffer(n int) (uintptr, []byte) {
	p := b.take(uintptr(n))
	if n == 0 {
		return p, nil
	}
	return p, unsafe.Slice(at[byte](p), n)
}

// cstring takes a copy of s, NUL-terminated (the block is zeroed).
func (b *block) cstring(s string) uintptr {
	p := b.base + b.used
	if b.used += uintptr(len(s)) + 1; b.used > b.size {
		panic("result block overflow")
	}
	copy(unsafe.Slice(at[byte](p), len(s)), s)
	return p
}

// free releases a block none of whose structs was handed out.
func (b *block) free() {
	at[C.struct_ag_export](b.base).refs = 1
	C.ag_export_unref(unsafe.Pointer(at[byte](b.base)))
}

func align8(n uintptr) uintptr { return (n + 7) &^ 7 }

// exportSchema writes the stream's schema into out.
func (r *resultColumns) exportSchema(out *C.struct_ArrowSchema) error {
	k := uintptr(len(r.names))
	d := uintptr(r.ndicts)
	size := k*sizeofWord + (k+d)*sizeofRawSchema + uintptr(r.strings) + uintptr(len("+s")+2)
	b, err := newBlock(size, 1+len(r.names)+r.ndicts)
	if err != nil {
		return err
	}
	kids := b.take(k * sizeofWord)
	slots := words(kids, int64(k))
	for i := range slots {
		slots[i] = b.take(sizeofRawSchema)
	}
	for i, addr := range slots {
		var dict uintptr
		if r.dicts[i] != "" {
			// Unordered (flags 0); its values have no nulls.
			dict = b.take(sizeofRawSchema)
			*at[rawSchema](dict) = rawSchema{
				format:      b.cstring(r.dicts[i]),
				name:        b.cstring(""),
				release:     exportSchemaChildRelease,
				privateData: b.base,
			}
		}
		*at[rawSchema](addr) = rawSchema{
			format:      b.cstring(r.formats[i]),
			name:        b.cstring(r.names[i]),
			flags:       r.flags[i],
			dictionary:  dict,
			release:     exportSchemaChildRelease,
			privateData: b.base,
		}
	}
	*at[rawSchema](uintptr(unsafe.Pointer(out))) = rawSchema{
		format:      b.cstring("+s"),
		name:        b.cstring(""),
		nChildren:   int64(k),
		children:    kids,
		release:     exportSchemaRelease,
		privateData: b.base,
	}
	return nil
}

// part is the rows of one device in a result batch. A batch joins the
// small runs a scan yields (one device's rows in a short time range, say)
// into one, so that a scan of many small devices costs one export and one
// import per batch_rows rows, not one per device.
type part struct {
	device string
	rows   *tablet.Tablet
}

// batchSize returns the bytes of the block of a batch of parts: structs,
// pointer arrays and buffers, each buffer 8-byte aligned. A property with
// a validity bitmap in any part gets room for one even if its rows turn
// out to have no nulls. The device column is its indices (4 bytes a row)
// and a dictionary holding each part's name, a name repeated by
// consecutive parts once.
func (r *resultColumns) batchSize(parts []part) (uintptr, error) {
	var n, names, ndict uintptr
	for i, p := range parts {
		if len(p.rows.Columns) != len(r.types) {
			return 0, fmt.Errorf("result batch has %d columns, the stream %d: %w", len(p.rows.Columns), len(r.types), errs.ErrInternal)
		}
		n += uintptr(p.rows.Rows())
		if i == 0 || p.device != parts[i-1].device {
			names += uintptr(len(p.device))
			ndict++
		}
	}
	if names > math.MaxInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("result batch of %d rows and %d bytes of device names exceeds the limits of utf8 and int32 indices: %w",
			n, names, errs.ErrInvalidArgument)
	}
	k := uintptr(2 + len(r.types))
	bits := align8((n + 7) / 8)
	size := sizeofWord + k*sizeofWord + k*sizeofRawArray                        // root buffers, children, structs
	size += 2*sizeofWord + align8(4*n)                                          // device: NULL validity, indices
	size += sizeofRawArray + 3*sizeofWord + align8(4*(ndict+1)) + align8(names) // its dictionary
	size += 2*sizeofWord + 8*n                                                  // time
	for i, pt := range r.types {
		valid, data := false, uintptr(0)
		for _, p := range parts {
			c := &p.rows.Columns[i]
			m := uintptr(p.rows.Rows())
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
				parts[0].rows.Columns[i].Name, data, errs.ErrInvalidArgument)
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

// exportBatch writes the rows of parts, in order, as one struct array into
// out.
func (r *resultColumns) exportBatch(parts []part, out *C.struct_ArrowArray) error {
	size, err := r.batchSize(parts)
	if err != nil {
		return err
	}
	k := 2 + len(r.types)
	b, err := newBlock(size, 1+k+1) // the root, the columns, the device's dictionary
	if err != nil {
		return err
	}
	n := 0
	for _, p := range parts {
		n += p.rows.Rows()
	}
	rootBufs := b.take(sizeofWord) // the struct's validity: NULL
	kids := b.take(uintptr(k) * sizeofWord)
	slots := words(kids, int64(k))
	for i := range slots {
		slots[i] = b.take(sizeofRawArray)
	}
	// child fills slot i with an array of n rows and the given buffers.
	child := func(i int, nulls int, bufs ...uintptr) {
		p := b.take(uintptr(len(bufs)) * sizeofWord)
		ptrs := words(p, int64(len(bufs)))
		for j, x := range bufs { // not copy: go1.26's compiler fails on it here
			ptrs[j] = x
		}
		*at[rawArray](slots[i]) = rawArray{
			length:      int64(n),
			nullCount:   int64(nulls),
			nBuffers:    int64(len(bufs)),
			buffers:     p,
			release:     exportArrayChildRelease,
			privateData: b.base,
		}
	}

	// The device: per row the index of its part's name in the dictionary.
	ip, ib := b.buffer(4 * n)
	indices := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(ib))), n)
	var dictNames []string
	row := 0
	for i, p := range parts {
		if i == 0 || p.device != parts[i-1].device {
			dictNames = append(dictNames, p.device)
		}
		idx := int32(len(dictNames) - 1)
		for j := range p.rows.Rows() {
			indices[row+j] = idx
		}
		row += p.rows.Rows()
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
	dict := b.take(sizeofRawArray)
	*at[rawArray](dict) = rawArray{
		length:      int64(len(dictNames)),
		nBuffers:    3,
		buffers:     dictBufs,
		release:     exportArrayChildRelease,
		privateData: b.base,
	}
	at[rawArray](slots[0]).dictionary = dict

	// The fixed-width buffers, most of a batch's bytes, are copied at the
	// end, several at once: the copy is bound by faulting in the fresh
	// memory, which the kernel does for threads in parallel.
	var copies [][2][]byte
	times, tb := b.buffer(8 * n)
	row = 0
	for _, p := range parts {
		m := p.rows.Rows()
		copies = append(copies, [2][]byte{tb[8*row : 8*(row+m)], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p.rows.Times))), 8*m)})
		row += m
	}
	child(1, 0, 0, times)

	for i, pt := range r.types {
		valid, nulls := uintptr(0), 0
		for _, p := range parts {
			if p.rows.Columns[i].Validity != nil {
				valid = 1
			}
		}
		if valid != 0 {
			p, bits := b.buffer((n + 7) / 8)
			row := 0
			for _, part := range parts {
				c, m := &part.rows.Columns[i], part.rows.Rows()
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
			p, v := b.buffer((n + 7) / 8)
			row := 0
			for _, part := range parts {
				c, m := &part.rows.Columns[i], part.rows.Rows()
				bitutil.CopyBitmap(c.Values, c.Offset, m, v, row)
				row += m
			}
			child(2+i, nulls, valid, p)
		case tablet.VarWidth(pt):
			o := b.take(uintptr(4 * (n + 1)))
			dst := unsafe.Slice(at[int32](o), n+1)
			var total int32
			row := 0
			for _, part := range parts {
				c, m := &part.rows.Columns[i], part.rows.Rows()
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
				c, m := &part.rows.Columns[i], part.rows.Rows()
				lo, hi := c.Offsets[c.Offset], c.Offsets[c.Offset+m]
				d = d[copy(d, c.Data[lo:hi]):]
			}
			child(2+i, nulls, valid, o, p)
		default:
			w := tablet.Width(pt)
			p, v := b.buffer(w * n)
			row := 0
			for _, part := range parts {
				c, m := &part.rows.Columns[i], part.rows.Rows()
				copies = append(copies, [2][]byte{v[w*row : w*(row+m)], c.Values[c.Offset*w : (c.Offset+m)*w]})
				row += m
			}
			child(2+i, nulls, valid, p)
		}
	}
	copyAll(copies)
	*at[rawArray](uintptr(unsafe.Pointer(out))) = rawArray{
		length:      int64(n),
		nBuffers:    1,
		nChildren:   int64(k),
		buffers:     rootBufs,
		children:    kids,
		release:     exportArrayRelease,
		privateData: b.base,
	}
	return nil
}

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
