package main

/*
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"math"
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
// columns, tens of milliseconds. Each export is one C block (C.calloc)
// holding every struct, pointer array and buffer, carved in two passes
// (sizes, then contents); its release callbacks are in bridge.c (see
// struct ag_export). No Go pointer is ever stored in it.
//
// Every batch holds the rows of one device, so the device column is
// dictionary-encoded: int32 indices, all 0, into a dictionary of one utf8
// value, the device's name. It costs 4 bytes a row plus the name once,
// not a copy of the name per row. The dictionary struct sits in the same
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
	r.add("device", deviceIndexFormat, deviceValueFormat, 0) // not ordered, not nullable
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
	p := C.calloc(1, C.size_t(size))
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

func (b *block) free() { C.free(unsafe.Pointer(at[byte](b.base))) }

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

// batchSize returns the bytes of the block of a batch of t for device:
// structs, pointer arrays and buffers, each buffer 8-byte aligned. A
// property with a validity bitmap gets room for one even if its rows turn
// out to have no nulls. The device column is its indices (4 bytes a row)
// and a dictionary of one value: the name once.
func (r *resultColumns) batchSize(device string, t *tablet.Tablet) (uintptr, error) {
	if len(t.Columns) != len(r.types) {
		return 0, fmt.Errorf("result batch has %d columns, the stream %d: %w", len(t.Columns), len(r.types), errs.ErrInternal)
	}
	n := uintptr(t.Rows())
	if len(device) > math.MaxInt32 {
		return 0, fmt.Errorf("device name of %d bytes exceeds the %d-byte limit of utf8: %w",
			len(device), math.MaxInt32, errs.ErrInvalidArgument)
	}
	k := uintptr(2 + len(t.Columns))
	bits := align8((n + 7) / 8)
	size := sizeofWord + k*sizeofWord + k*sizeofRawArray                     // root buffers, children, structs
	size += 2*sizeofWord + align8(4*n)                                       // device: NULL validity, indices
	size += sizeofRawArray + 3*sizeofWord + 8 + align8(uintptr(len(device))) // its dictionary
	size += 2*sizeofWord + 8*n
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Type != r.types[i] {
			return 0, fmt.Errorf("result column %q is %s, the stream's %s: %w", c.Name, c.Type, r.types[i], errs.ErrInternal)
		}
		if c.Offset < 0 {
			return 0, fmt.Errorf("result column %q has offset %d: %w", c.Name, c.Offset, errs.ErrInternal)
		}
		end := uintptr(c.Offset) + n
		if c.Validity != nil {
			if uintptr(len(c.Validity))*8 < end {
				return 0, fmt.Errorf("result column %q has %d validity bytes for %d rows: %w", c.Name, len(c.Validity), end, errs.ErrInternal)
			}
			size += bits
		}
		switch {
		case c.Type == schema.Boolean:
			if uintptr(len(c.Values))*8 < end {
				return 0, fmt.Errorf("result column %q has %d value bytes for %d rows: %w", c.Name, len(c.Values), end, errs.ErrInternal)
			}
			size += 2*sizeofWord + bits
		case tablet.VarWidth(c.Type):
			if uintptr(len(c.Offsets)) < end+1 {
				return 0, fmt.Errorf("result column %q has %d offsets for %d rows: %w", c.Name, len(c.Offsets), n, errs.ErrInternal)
			}
			lo, hi := c.Offsets[c.Offset], c.Offsets[c.Offset+int(n)]
			if lo < 0 || hi < lo || int(hi) > len(c.Data) {
				return 0, fmt.Errorf("result column %q has value offsets %d..%d outside %d bytes: %w", c.Name, lo, hi, len(c.Data), errs.ErrInternal)
			}
			size += 3*sizeofWord + align8(4*(n+1)) + align8(uintptr(hi-lo))
		default:
			w := uintptr(tablet.Width(c.Type))
			if uintptr(len(c.Values)) < end*w {
				return 0, fmt.Errorf("result column %q has %d value bytes for %d rows: %w", c.Name, len(c.Values), end, errs.ErrInternal)
			}
			size += 2*sizeofWord + align8(w*n)
		}
	}
	return size, nil
}

// exportBatch writes the rows of t, for device, as a struct array into out.
func (r *resultColumns) exportBatch(device string, t *tablet.Tablet, out *C.struct_ArrowArray) error {
	size, err := r.batchSize(device, t)
	if err != nil {
		return err
	}
	k := 2 + len(t.Columns)
	b, err := newBlock(size, 1+k+1) // the root, the columns, the device's dictionary
	if err != nil {
		return err
	}
	n := t.Rows()
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

	// The device: every index 0 (the block is zeroed) into a dictionary
	// holding the name once.
	indices, _ := b.buffer(4 * n)
	child(0, 0, 0, indices)
	dictBufs := b.take(3 * sizeofWord)
	offsets := b.take(8)
	unsafe.Slice(at[int32](offsets), 2)[1] = int32(len(device))
	data, name := b.buffer(len(device))
	copy(name, device)
	ptrs := words(dictBufs, 3)
	ptrs[1], ptrs[2] = offsets, data
	dict := b.take(sizeofRawArray)
	*at[rawArray](dict) = rawArray{
		length:      1,
		nBuffers:    3,
		buffers:     dictBufs,
		release:     exportArrayChildRelease,
		privateData: b.base,
	}
	at[rawArray](slots[0]).dictionary = dict

	times, tb := b.buffer(8 * n)
	copy(tb, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t.Times))), 8*n))
	child(1, 0, 0, times)

	for i := range t.Columns {
		c := &t.Columns[i]
		off := c.Offset
		valid, nulls := uintptr(0), 0
		if c.Validity != nil {
			p, bits := b.buffer((n + 7) / 8)
			if nulls = n - bitutil.CountSetBits(c.Validity, off, n); nulls > 0 {
				bitutil.CopyBitmap(c.Validity, off, n, bits, 0)
				valid = p
			}
		}
		switch {
		case c.Type == schema.Boolean:
			p, v := b.buffer((n + 7) / 8)
			bitutil.CopyBitmap(c.Values, off, n, v, 0)
			child(2+i, nulls, valid, p)
		case tablet.VarWidth(c.Type):
			lo, hi := c.Offsets[off], c.Offsets[off+n]
			o := b.take(uintptr(4 * (n + 1)))
			dst := unsafe.Slice(at[int32](o), n+1)
			for j, x := range c.Offsets[off : off+n+1] {
				if x < lo || x > hi {
					b.free()
					return fmt.Errorf("result column %q has value offset %d out of order at row %d: %w", c.Name, x, j, errs.ErrInternal)
				}
				dst[j] = x - lo
			}
			p, d := b.buffer(int(hi - lo))
			copy(d, c.Data[lo:hi])
			child(2+i, nulls, valid, o, p)
		default:
			w := tablet.Width(c.Type)
			p, v := b.buffer(w * n)
			copy(v, c.Values[off*w:(off+n)*w])
			child(2+i, nulls, valid, p)
		}
	}
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
