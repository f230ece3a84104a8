package main

/*
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/cdata"

	"github.com/arcadego/arcadego/core/errs"
)

// Importing Arrow through the C Data Interface.
//
// arrow/cdata (v17) trusts its input: a malformed struct makes it panic or
// read wild memory, its error paths free structs they do not own, and it
// turns every non-NULL buffer pointer into a Go slice, so a zero-length
// buffer exported as the dangling pointer 0x1 (polars, arrow-rs) becomes a
// Go pointer below 4096 and the garbage collector aborts the process.
//
// So the caller's structs never reach cdata. For each struct tree we
//
//  1. walk it reading every pointer as an integer (rawSchema, rawArray), and
//     check it against the Arrow layout of its type: buffer and child
//     counts, lengths, offsets, null counts, offsets and view bounds,
//     dictionary indices;
//  2. build a shadow copy in one C allocation: same data buffers, but NULL
//     or the static zero block (ag_zeros) in place of NULL and dangling
//     pointers where the layout allows it, metadata dropped, and release
//     callbacks that only mark the copy released;
//  3. import the shadow with cdata, and after the record is released free
//     the shadow and release the caller's struct, once, ourselves.
//
// The caller's memory is thus never written except by its own release
// callback, cdata's failures cannot touch it, and the release happens at a
// point we choose rather than when Go buffers are garbage collected.
//
// Only flat Arrow types are imported (everything arrowbridge may accept,
// and the flat types it rejects with a message of its own): nested types
// are refused here, naming the column.
//
// This is the arrow path. Batches whose columns all have the tablet's own
// layouts skip cdata and arrowbridge: tabletin.go reads them directly after
// the same checks, and hands anything it refuses back to this path.

// rawSchema and rawArray are struct ArrowSchema and struct ArrowArray with
// every pointer read as an integer: Go never holds a pointer of the caller
// in a pointer-typed variable before checking it (see minAddr).
type rawSchema struct {
	format, name, metadata uintptr
	flags, nChildren       int64
	children, dictionary   uintptr
	release, privateData   uintptr
}

type rawArray struct {
	length, nullCount, offset, nBuffers, nChildren int64
	buffers, children, dictionary                  uintptr
	release, privateData                           uintptr
}

type rawStream struct {
	getSchema, getNext, getLastError, release, privateData uintptr
}

// The mirrors must match the C layouts exactly (checked at compile time).
var (
	_ [unsafe.Sizeof(rawSchema{}) - C.sizeof_struct_ArrowSchema]byte
	_ [C.sizeof_struct_ArrowSchema - unsafe.Sizeof(rawSchema{})]byte
	_ [unsafe.Sizeof(rawArray{}) - C.sizeof_struct_ArrowArray]byte
	_ [C.sizeof_struct_ArrowArray - unsafe.Sizeof(rawArray{})]byte
	_ [unsafe.Sizeof(rawStream{}) - C.sizeof_struct_ArrowArrayStream]byte
	_ [C.sizeof_struct_ArrowArrayStream - unsafe.Sizeof(rawStream{})]byte
)

const (
	// minAddr: addresses below it are NULL or dangling (0x1, alignment
	// values) and are never dereferenced nor turned into Go pointers.
	minAddr = 4096
	// maxDepth bounds schema nesting (and so the recursion on a cyclic tree).
	maxDepth = 64
	// maxNodes bounds the structs of one schema or array tree.
	maxNodes = 1 << 22
	// maxLength bounds offset+length of one array, so sizes never overflow.
	maxLength = 1 << 40
)

var (
	zerosAddr            = uintptr(unsafe.Pointer(&C.ag_zeros[0]))
	shadowSchemaRelease  = uintptr(unsafe.Pointer(C.ag_shadow_schema_release))
	shadowArrayRelease   = uintptr(unsafe.Pointer(C.ag_shadow_array_release))
	sizeofRawSchema      = unsafe.Sizeof(rawSchema{})
	sizeofRawArray       = unsafe.Sizeof(rawArray{})
	sizeofWord           = unsafe.Sizeof(uintptr(0))
	errInvalid           = errs.ErrInvalidArgument
	errShadowOutOfBounds = fmt.Errorf("shadow arena overflow: the input changed while it was read: %w", errs.ErrInvalidArgument)
)

// at reinterprets a C address, already checked to be >= minAddr, as a
// pointer (the conversion goes through memory, so vet's uintptr rule does
// not apply: the address is not a Go object and never moves).
func at[T any](addr uintptr) *T { return *(**T)(unsafe.Pointer(&addr)) }

// words returns the n pointer-sized words at addr (>= minAddr unless n is 0).
func words(addr uintptr, n int64) []uintptr {
	if n == 0 {
		return nil
	}
	return unsafe.Slice(at[uintptr](addr), n)
}

// arena is one C allocation carved into shadow structs and pointer arrays.
type arena struct {
	base, size, used uintptr
}

func newArena(size uintptr) (*arena, error) {
	if size == 0 {
		size = 1
	}
	p := C.calloc(1, C.size_t(size))
	if p == nil {
		return nil, fmt.Errorf("out of memory for %d bytes of Arrow structs: %w", size, errs.ErrInternal)
	}
	return &arena{base: uintptr(p), size: size}, nil
}

func (a *arena) alloc(n uintptr) uintptr {
	if a.used+n > a.size {
		panic(errShadowOutOfBounds)
	}
	p := a.base + a.used
	a.used += n
	return p
}

func (a *arena) free() { C.free(unsafe.Pointer(at[byte](a.base))) }

// cString reads the C string at addr (0 or >= minAddr).
func cString(addr uintptr) string {
	if addr == 0 {
		return ""
	}
	return C.GoString(at[C.char](addr))
}

// ---- schemas ----

// schemaWalk checks a schema tree and counts what its shadow needs.
type schemaWalk struct {
	nodes, slots int64
}

// place names a node of a schema tree in errors, built only then (a
// closure per node would cost an allocation per column of a wide batch).
type place struct {
	parent *place  // nil: the root
	addr   uintptr // the node
	index  int     // index among the parent's children; -1: its dictionary
}

func (p *place) String() string {
	switch {
	case p.parent == nil:
		return "schema"
	case p.index < 0:
		return p.parent.String() + ", dictionary"
	case p.parent.parent == nil:
		return columnName(p.parent.addr, p.index)
	}
	return fmt.Sprintf("%s, child %d", p.parent.String(), p.index)
}

// visit checks the node (its address >= minAddr) at depth depth.
func (w *schemaWalk) visit(node *place, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: schema nests deeper than %d levels: %w", node.String(), maxDepth, errInvalid)
	}
	if w.nodes++; w.nodes > maxNodes {
		return fmt.Errorf("schema has more than %d nodes: %w", maxNodes, errInvalid)
	}
	s := at[rawSchema](node.addr)
	switch {
	case s.format == 0:
		return fmt.Errorf("%s: format is NULL: %w", node.String(), errInvalid)
	case s.format < minAddr:
		return fmt.Errorf("%s: format pointer %#x is not valid: %w", node.String(), s.format, errInvalid)
	case s.name != 0 && s.name < minAddr:
		return fmt.Errorf("%s: name pointer %#x is not valid: %w", node.String(), s.name, errInvalid)
	case s.nChildren < 0 || s.nChildren > maxNodes:
		return fmt.Errorf("%s: n_children %d is out of range: %w", node.String(), s.nChildren, errInvalid)
	case s.nChildren > 0 && s.children < minAddr:
		return fmt.Errorf("%s: %d children but children pointer %#x: %w", node.String(), s.nChildren, s.children, errInvalid)
	case s.dictionary != 0 && s.dictionary < minAddr:
		return fmt.Errorf("%s: dictionary pointer %#x is not valid: %w", node.String(), s.dictionary, errInvalid)
	}
	w.slots += s.nChildren
	if s.nChildren > 0 {
		sub := &place{parent: node} // one for all children: a place is used only while visited
		for i, c := range words(s.children, s.nChildren) {
			sub.addr, sub.index = c, i
			if c < minAddr {
				return fmt.Errorf("%s: schema pointer %#x is not valid: %w", sub.String(), c, errInvalid)
			}
			if err := w.visit(sub, depth+1); err != nil {
				return err
			}
		}
	}
	if s.dictionary != 0 {
		return w.visit(&place{parent: node, addr: s.dictionary, index: -1}, depth+1)
	}
	return nil
}

// columnName describes column i of the record schema at addr for errors.
func columnName(addr uintptr, i int) string {
	s := at[rawSchema](addr)
	c := words(s.children, s.nChildren)[i]
	if c >= minAddr {
		if n := at[rawSchema](c).name; n >= minAddr {
			return fmt.Sprintf("column %d %q", i, cString(n))
		}
	}
	return fmt.Sprintf("column %d", i)
}

// copySchema writes the shadow of the (checked) node at src into ar.
func copySchema(ar *arena, src uintptr) uintptr {
	s := at[rawSchema](src)
	dst := ar.alloc(sizeofRawSchema)
	d := at[rawSchema](dst)
	*d = rawSchema{
		format:    s.format,
		name:      s.name,
		flags:     s.flags,
		nChildren: s.nChildren,
		release:   shadowSchemaRelease,
	}
	if s.nChildren > 0 {
		slots := ar.alloc(uintptr(s.nChildren) * sizeofWord)
		d.children = slots
		out := words(slots, s.nChildren)
		for i, c := range words(s.children, s.nChildren) {
			out[i] = copySchema(ar, c)
		}
	}
	if s.dictionary != 0 {
		d.dictionary = copySchema(ar, s.dictionary)
	}
	return dst
}

// checkSchema checks the caller's record schema cs (a struct, "+s") and
// its whole tree, which it neither imports nor releases. The walk counts
// what importSchema needs.
func checkSchema(cs *C.struct_ArrowSchema) (schemaWalk, error) {
	var w schemaWalk
	if cs == nil {
		return w, fmt.Errorf("schema: ArrowSchema is NULL: %w", errInvalid)
	}
	addr := uintptr(unsafe.Pointer(cs))
	root := at[rawSchema](addr)
	if root.release == 0 {
		return w, fmt.Errorf("schema: ArrowSchema is already released: %w", errInvalid)
	}
	if err := w.visit(&place{addr: addr}, 0); err != nil {
		return w, err
	}
	if f := cString(root.format); f != "+s" {
		return w, fmt.Errorf("schema: format %q is not a struct (\"+s\"): a batch is a struct array of columns: %w", f, errInvalid)
	}
	return w, nil
}

// importSchema imports the record schema at addr, checked by checkSchema
// (walk w), through a shadow copy. The caller releases the original.
func importSchema(addr uintptr, w schemaWalk) (*arrow.Schema, error) {
	ar, err := newArena(uintptr(w.nodes)*sizeofRawSchema + uintptr(w.slots)*sizeofWord)
	if err != nil {
		return nil, err
	}
	defer ar.free()
	shadow := at[rawSchema](copySchema(ar, addr))

	fields := make([]arrow.Field, shadow.nChildren)
	for i, c := range words(shadow.children, shadow.nChildren) {
		f, err := importField(c)
		if err != nil {
			return nil, fmt.Errorf("%s (Arrow format %q): %v: %w", columnName(addr, i), cString(at[rawSchema](c).format), err, errInvalid)
		}
		if err := importable(f.Type); err != nil {
			return nil, fmt.Errorf("column %q has unsupported Arrow type %s: %v: %w", f.Name, f.Type, err, errInvalid)
		}
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil), nil
}

// importField imports one shadow schema node with cdata, turning its panics
// (on format strings it does not parse) into errors.
func importField(addr uintptr) (f arrow.Field, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed format: %v", r)
		}
	}()
	return cdata.ImportCArrowField((*cdata.CArrowSchema)(unsafe.Pointer(at[C.struct_ArrowSchema](addr))))
}

// importable reports whether arrays of dt can be checked and imported here:
// flat types, and dictionaries of flat types with integer indices.
func importable(dt arrow.DataType) error {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		if !arrow.IsInteger(t.IndexType.ID()) {
			return fmt.Errorf("dictionary index type %s is not an integer", t.IndexType)
		}
		if _, nested := t.ValueType.(*arrow.DictionaryType); nested {
			return fmt.Errorf("dictionary of dictionaries")
		}
		return importable(t.ValueType)
	case arrow.NestedType, *arrow.RunEndEncodedType:
		return fmt.Errorf("nested types are not supported")
	case *arrow.NullType, *arrow.BooleanType, arrow.BinaryDataType:
		return nil
	case arrow.FixedWidthDataType:
		if b := t.BitWidth(); b%8 != 0 || b <= 0 {
			return fmt.Errorf("bit width %d", b)
		}
		return nil
	}
	return fmt.Errorf("no known layout")
}

// ---- arrays ----

// arrayNode is one checked array struct and what its shadow holds.
type arrayNode struct {
	raw  rawArray  // counts as the shadow holds them
	bufs []uintptr // buffer pointers as the shadow holds them
	kids []int     // indices of the children in arrayPlan.nodes
	dict int       // index of the dictionary, or -1
}

// arrayPlan checks an array tree against its Arrow type and collects its
// shadow.
type arrayPlan struct {
	nodes []arrayNode
}

func (p *arrayPlan) add(n arrayNode) int {
	p.nodes = append(p.nodes, n)
	return len(p.nodes) - 1
}

// counts checks the counts of a and returns offset+length.
func counts(a *rawArray, what string) (int64, error) {
	switch {
	case a.length < 0:
		return 0, fmt.Errorf("%s: negative length %d: %w", what, a.length, errInvalid)
	case a.offset < 0:
		return 0, fmt.Errorf("%s: negative offset %d: %w", what, a.offset, errInvalid)
	case a.length > maxLength || a.offset > maxLength:
		return 0, fmt.Errorf("%s: offset %d + length %d is too large: %w", what, a.offset, a.length, errInvalid)
	case a.nullCount < -1:
		return 0, fmt.Errorf("%s: null_count %d is negative: %w", what, a.nullCount, errInvalid)
	case a.nullCount > a.length:
		return 0, fmt.Errorf("%s: null_count %d exceeds length %d: %w", what, a.nullCount, a.length, errInvalid)
	}
	return a.offset + a.length, nil
}

// root checks the struct array at addr (a record batch of sch).
func (p *arrayPlan) root(sch *arrow.Schema, addr uintptr) error {
	a := *at[rawArray](addr)
	if _, err := counts(&a, "batch"); err != nil {
		return err
	}
	switch {
	case a.nBuffers != 1:
		return fmt.Errorf("batch: struct array has %d buffers, want 1: %w", a.nBuffers, errInvalid)
	case a.nChildren != int64(sch.NumFields()):
		return fmt.Errorf("batch has %d columns but its schema has %d: %w", a.nChildren, sch.NumFields(), errInvalid)
	case a.nChildren > 0 && a.children < minAddr:
		return fmt.Errorf("batch: %d columns but children pointer %#x: %w", a.nChildren, a.children, errInvalid)
	case a.nullCount > 0:
		return fmt.Errorf("batch: %d rows are null at the top level: %w", a.nullCount, errInvalid)
	case a.dictionary != 0:
		return fmt.Errorf("batch: struct array has a dictionary: %w", errInvalid)
	}
	// A record batch has no top-level validity: its bitmap is not read.
	a.nullCount = 0
	n := arrayNode{raw: a, bufs: []uintptr{0}, dict: -1}
	idx := p.add(n)
	need := a.offset + a.length
	kids := make([]int, a.nChildren)
	for i, c := range words(a.children, a.nChildren) {
		f := sch.Field(i)
		what := fmt.Sprintf("column %q", f.Name)
		if c < minAddr {
			return fmt.Errorf("%s: array pointer %#x is not valid: %w", what, c, errInvalid)
		}
		if l := at[rawArray](c).length; l < need {
			return fmt.Errorf("%s has %d rows but the batch has %d (offset %d + length %d): %w",
				what, l, need, a.offset, a.length, errInvalid)
		}
		k, err := p.node(f.Type, c, what)
		if err != nil {
			return err
		}
		kids[i] = k
	}
	p.nodes[idx].kids = kids
	return nil
}

// node checks the array at addr (>= minAddr) against dt (importable).
func (p *arrayPlan) node(dt arrow.DataType, addr uintptr, what string) (int, error) {
	if len(p.nodes) >= maxNodes {
		return 0, fmt.Errorf("array has more than %d nodes: %w", maxNodes, errInvalid)
	}
	a := *at[rawArray](addr)
	end, err := counts(&a, what)
	if err != nil {
		return 0, err
	}
	if a.nChildren != 0 {
		return 0, fmt.Errorf("%s: %d children, Arrow type %s has none: %w", what, a.nChildren, dt, errInvalid)
	}
	dictType, isDict := dt.(*arrow.DictionaryType)
	if !isDict && a.dictionary != 0 {
		return 0, fmt.Errorf("%s: dictionary set, but Arrow type %s is not dictionary-encoded: %w", what, dt, errInvalid)
	}
	n := arrayNode{dict: -1}

	if _, ok := dt.(*arrow.NullType); ok {
		// The null type has no buffers; cdata reads none.
		a.nBuffers, a.nullCount = 0, a.length
		n.raw = a
		return p.add(n), nil
	}

	want := int64(2)
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		want = 3
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		want = max(a.nBuffers, 3)
		if a.nBuffers > maxNodes {
			want = 3 // reported below
		}
	}
	if a.nBuffers != want {
		return 0, fmt.Errorf("%s: %d buffers, Arrow type %s has %d: %w", what, a.nBuffers, dt, want, errInvalid)
	}
	if a.buffers < minAddr {
		return 0, fmt.Errorf("%s: buffers pointer %#x is not valid: %w", what, a.buffers, errInvalid)
	}
	bufs := append([]uintptr(nil), words(a.buffers, want)...)

	// Buffer 0: validity. NULL is allowed when there are no nulls.
	if bufs[0] < minAddr {
		if a.nullCount > 0 {
			return 0, fmt.Errorf("%s: %d nulls but no validity bitmap (pointer %#x): %w", what, a.nullCount, bufs[0], errInvalid)
		}
		bufs[0], a.nullCount = 0, 0
	}
	fix := func(i int, need int64) error {
		b, ok := bufferAt(bufs[i], need, a.length)
		if !ok {
			return fmt.Errorf("%s: buffer %d is %#x but must hold %d bytes: %w", what, i, bufs[i], need, errInvalid)
		}
		bufs[i] = b
		return nil
	}

	switch dt.ID() {
	case arrow.BOOL:
		err = fix(1, (end+7)/8)
	case arrow.STRING, arrow.BINARY:
		if err = fix(1, 4*(end+1)); err == nil {
			var size int64
			if size, err = checkOffsets(unsafe.Slice(at[int32](bufs[1]), end+1)[a.offset:], what); err == nil {
				err = fix(2, size)
			}
		}
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		if err = fix(1, 8*(end+1)); err == nil {
			var size int64
			if size, err = checkOffsets(unsafe.Slice(at[int64](bufs[1]), end+1)[a.offset:], what); err == nil {
				err = fix(2, size)
			}
		}
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		err = p.views(&a, bufs, end, fix, what)
	default: // fixed width, dictionary indices included
		width := int64(dt.(arrow.FixedWidthDataType).BitWidth() / 8)
		err = fix(1, width*end)
	}
	if err != nil {
		return 0, err
	}
	n.raw, n.bufs = a, bufs
	idx := p.add(n)

	if isDict {
		if a.dictionary < minAddr {
			return 0, fmt.Errorf("%s: dictionary-encoded but dictionary pointer %#x: %w", what, a.dictionary, errInvalid)
		}
		d, err := p.node(dictType.ValueType, a.dictionary, what+" dictionary")
		if err != nil {
			return 0, err
		}
		p.nodes[idx].dict = d
		if err := checkIndices(dictType.IndexType, &a, bufs, at[rawArray](a.dictionary).length, what); err != nil {
			return 0, err
		}
	}
	return idx, nil
}

// bufferAt returns where to read the need bytes of buffer pointer p of an
// array of the given length: p itself when it is a real pointer; for NULL
// or dangling pointers, NULL when nothing is read, or the zero block for
// the few bytes an empty array still has (the one offset of a zero-length
// string array). ok is false when p cannot stand for need bytes.
func bufferAt(p uintptr, need, length int64) (addr uintptr, ok bool) {
	switch {
	case p >= minAddr:
		return p, true
	case need == 0:
		return 0, true
	case length == 0 && need <= C.AG_ZEROS:
		return zerosAddr, true
	}
	return 0, false
}

// checkOffsets checks the offsets of one var-width array (length+1 of
// them, from its offset on): non-negative and non-decreasing. It returns
// the size of the data buffer that cdata will map (the last offset).
func checkOffsets[T int32 | int64](offs []T, what string) (int64, error) {
	if offs[0] < 0 {
		return 0, fmt.Errorf("%s: first value offset %d is negative: %w", what, offs[0], errInvalid)
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return 0, fmt.Errorf("%s: value offsets decrease at row %d (%d after %d): %w", what, i-1, offs[i], offs[i-1], errInvalid)
		}
	}
	last := int64(offs[len(offs)-1])
	if last > maxLength {
		return 0, fmt.Errorf("%s: %d bytes of values is too large: %w", what, last, errInvalid)
	}
	return last, nil
}

// views checks a string_view or binary_view array: buffers are validity,
// views (16 bytes each), the data buffers, and their int64 sizes.
func (p *arrayPlan) views(a *rawArray, bufs []uintptr, end int64, fix func(int, int64) error, what string) error {
	k := a.nBuffers - 3 // data buffers
	if err := fix(1, 16*end); err != nil {
		return err
	}
	if err := fix(int(a.nBuffers-1), 8*k); err != nil {
		return err
	}
	var sizes []int64
	if k > 0 {
		sizes = unsafe.Slice(at[int64](bufs[a.nBuffers-1]), k)
	}
	for j, s := range sizes {
		if s < 0 || s > maxLength {
			return fmt.Errorf("%s: data buffer %d has size %d: %w", what, j, s, errInvalid)
		}
		if err := fix(2+j, s); err != nil {
			return err
		}
	}
	if a.length == 0 {
		return nil
	}
	views := unsafe.Slice(at[[4]int32](bufs[1]), end)
	valid := validBits(bufs[0], end)
	for i := a.offset; i < end; i++ {
		if !valid(i) {
			continue
		}
		v := views[i] // length, prefix, buffer index, offset
		switch {
		case v[0] < 0:
			return fmt.Errorf("%s: row %d has negative length %d: %w", what, i-a.offset, v[0], errInvalid)
		case v[0] > 12 && (int64(v[2]) < 0 || int64(v[2]) >= k || v[3] < 0 || int64(v[3])+int64(v[0]) > sizes[v[2]]):
			return fmt.Errorf("%s: row %d points outside the data buffers (buffer %d, offset %d, length %d): %w",
				what, i-a.offset, v[2], v[3], v[0], errInvalid)
		}
	}
	return nil
}

// validBits returns a test for bit i of the bitmap at addr (0: all valid).
func validBits(addr uintptr, end int64) func(int64) bool {
	if addr == 0 {
		return func(int64) bool { return true }
	}
	bits := unsafe.Slice(at[byte](addr), (end+7)/8)
	return func(i int64) bool { return bits[i>>3]&(1<<(i&7)) != 0 }
}

// checkIndices checks that every valid index of a dictionary array is
// within the dictionary's length.
func checkIndices(idx arrow.DataType, a *rawArray, bufs []uintptr, dictLen int64, what string) error {
	end := a.offset + a.length
	if a.length == 0 {
		return nil
	}
	valid := validBits(bufs[0], end)
	var bad func(i int64) (int64, bool)
	switch idx.ID() {
	case arrow.INT8:
		bad = indexCheck[int8](bufs[1], end, dictLen)
	case arrow.UINT8:
		bad = indexCheck[uint8](bufs[1], end, dictLen)
	case arrow.INT16:
		bad = indexCheck[int16](bufs[1], end, dictLen)
	case arrow.UINT16:
		bad = indexCheck[uint16](bufs[1], end, dictLen)
	case arrow.INT32:
		bad = indexCheck[int32](bufs[1], end, dictLen)
	case arrow.UINT32:
		bad = indexCheck[uint32](bufs[1], end, dictLen)
	case arrow.INT64:
		bad = indexCheck[int64](bufs[1], end, dictLen)
	case arrow.UINT64:
		bad = indexCheck[uint64](bufs[1], end, dictLen)
	default:
		return fmt.Errorf("%s: dictionary index type %s: %w", what, idx, errInvalid)
	}
	for i := a.offset; i < end; i++ {
		if v, out := bad(i); out && valid(i) {
			return fmt.Errorf("%s: row %d has dictionary index %d, dictionary has %d values: %w",
				what, i-a.offset, v, dictLen, errInvalid)
		}
	}
	return nil
}

func indexCheck[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64](addr uintptr, end, dictLen int64) func(int64) (int64, bool) {
	v := unsafe.Slice(at[T](addr), end)
	return func(i int64) (int64, bool) {
		x := v[i]
		if x < 0 || uint64(x) >= uint64(dictLen) {
			return int64(x), true
		}
		return 0, false
	}
}

// build writes the shadow of the plan into one C allocation and returns
// it with the address of the root.
func (p *arrayPlan) build() (*arena, uintptr, error) {
	slots := 0
	for i := range p.nodes {
		slots += len(p.nodes[i].bufs) + len(p.nodes[i].kids)
	}
	ar, err := newArena(uintptr(len(p.nodes))*sizeofRawArray + uintptr(slots)*sizeofWord)
	if err != nil {
		return nil, 0, err
	}
	addrs := make([]uintptr, len(p.nodes))
	for i := range p.nodes {
		addrs[i] = ar.alloc(sizeofRawArray)
	}
	for i := range p.nodes {
		n := &p.nodes[i]
		d := at[rawArray](addrs[i])
		*d = n.raw
		d.nBuffers = int64(len(n.bufs))
		d.nChildren = int64(len(n.kids))
		d.buffers, d.children, d.dictionary, d.privateData = 0, 0, 0, 0
		d.release = shadowArrayRelease
		if len(n.bufs) > 0 {
			d.buffers = ar.alloc(uintptr(len(n.bufs)) * sizeofWord)
			copy(words(d.buffers, d.nBuffers), n.bufs)
		}
		if len(n.kids) > 0 {
			d.children = ar.alloc(uintptr(len(n.kids)) * sizeofWord)
			out := words(d.children, d.nChildren)
			for j, k := range n.kids {
				out[j] = addrs[k]
			}
		}
		if n.dict >= 0 {
			d.dictionary = addrs[n.dict]
		}
	}
	return ar, addrs[0], nil
}

// importRecord checks the caller's array ca against sch and imports a
// shadow of it. The record borrows ca's buffers: the caller releases the
// record, then calls done (which frees the shadow), then releases ca.
func importRecord(sch *arrow.Schema, ca *C.struct_ArrowArray) (rec arrow.Record, done func(), err error) {
	addr := uintptr(unsafe.Pointer(ca))
	var p arrayPlan
	if err := p.root(sch, addr); err != nil {
		return nil, nil, err
	}
	ar, root, err := p.build()
	if err != nil {
		return nil, nil, err
	}
	// The checks above make every step of cdata's import succeed. That
	// matters: a failing child import frees the child struct it was given,
	// which inside our arena would abort the process. Should it fail or
	// panic anyway (a bug of ours), the shadow is leaked, not freed, since
	// cdata may still reference it.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("arrow import panicked: %v: %w", r, errs.ErrInternal)
		}
	}()
	rec, err = cdata.ImportCRecordBatchWithSchema((*cdata.CArrowArray)(unsafe.Pointer(at[C.struct_ArrowArray](root))), sch)
	if err != nil {
		return nil, nil, fmt.Errorf("arrow import: %v: %w", err, errs.ErrInternal)
	}
	return rec, ar.free, nil
}
