package cdata

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arcadego/arcadego/arrowbridge"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// Importing record batches.
//
// arrow/cdata (v17) trusts its input: a malformed struct makes it panic or
// read wild memory, its error paths free structs they do not own, and it
// turns every non-NULL buffer pointer into a Go slice, so a zero-length
// buffer exported as the dangling pointer 0x1 (polars, arrow-rs) becomes a
// Go pointer below 4096 and the garbage collector aborts the process. It
// also needs cgo. So it is not used. For each struct tree we
//
//  1. walk it reading every pointer as an integer (Schema, Array), and
//     check it against the Arrow layout of its type: buffer and child
//     counts, lengths, offsets, null counts, offsets and view bounds,
//     dictionary indices;
//  2. build arrow array data over the caller's buffers, with nil or a
//     static zero block in place of NULL and dangling pointers where the
//     layout allows it (metadata is not read);
//  3. convert the record to a tablet with arrowbridge.
//
// The caller's memory is never written, and the caller releases its
// structs after the batch, at a point it chooses.
//
// Only flat Arrow types are imported (everything arrowbridge may accept,
// and the flat types it rejects with a message of its own): nested types
// are refused here, naming the column.
//
// This is the arrow path. Batches whose columns all have the tablet's own
// layouts skip arrow arrays and arrowbridge: tablet.go reads them directly
// after the same checks, and hands anything it refuses back to this path.

// Input is the checked schema of an insert (one batch, or every batch of
// a stream), which the caller keeps alive and unreleased while the input
// is used.
type Input struct {
	addr       uintptr // the caller's ArrowSchema
	timeColumn string
	direct     *directSchema // nil: batches take the arrow path
	sch        *arrow.Schema // the arrow path's schema, made on first use
}

// NewInput checks the caller's record schema at schemaAddr (a struct
// ArrowSchema of format "+s") and plans its import. timeColumn "" is
// arrowbridge's default.
func NewInput(schemaAddr uintptr, timeColumn string) (*Input, error) {
	in := new(Input)
	if err := in.init(schemaAddr, timeColumn); err != nil {
		return nil, err
	}
	return in, nil
}

// ImportBatch imports one record batch, the struct array at arrayAddr of
// the schema at schemaAddr: NewInput, then Input.Batch, without keeping
// the Input (nor allocating it).
func ImportBatch(schemaAddr, arrayAddr uintptr, timeColumn string) (*Batch, error) {
	var in Input
	if err := in.init(schemaAddr, timeColumn); err != nil {
		return nil, err
	}
	return in.Batch(arrayAddr)
}

func (in *Input) init(schemaAddr uintptr, timeColumn string) error {
	if timeColumn == "" {
		timeColumn = arrowbridge.DefaultTimeColumn
	}
	if d := lastPlan.Load(); d != nil && d.sameAs(schemaAddr, timeColumn) {
		*in = Input{addr: schemaAddr, timeColumn: timeColumn, direct: d} // checked as checkSchema checks
		return nil
	}
	if err := checkSchema(schemaAddr); err != nil {
		return err
	}
	*in = Input{addr: schemaAddr, timeColumn: timeColumn}
	if in.direct = planDirect(schemaAddr, timeColumn); in.direct == nil {
		// The arrow path reads the schema first, so that its errors come
		// before those of any batch.
		sch, err := importSchema(schemaAddr)
		if err != nil {
			return err
		}
		in.sch = sch
	}
	return nil
}

// Batch is one imported record batch as a tablet, which borrows the
// caller's buffers until Release.
type Batch struct {
	Tablet *tablet.Tablet
	rec    arrow.Record // set when the batch took the arrow path
	home   *directBatch // set when it took the direct path: what holds it
}

// Release drops what borrows the caller's buffers; the caller releases
// its ArrowArray after it. Call it once: neither the batch nor its tablet
// may be used afterwards, as a direct batch is reused by the next import
// (a second Release is harmless only until then).
func (b *Batch) Release() {
	if b.rec != nil {
		b.rec.Release()
		b.rec = nil
	}
	if b.home != nil {
		if b.Tablet != nil {
			putDirectBatch(b.home)
		}
		return
	}
	b.Tablet = nil
}

// Batch checks the caller's struct array at arrayAddr (a record batch of
// the input's schema) and converts it to a tablet: directly when the
// schema allows and the direct path accepts the array, else through the
// arrow path (which reports the error for anything the direct path
// refused).
func (in *Input) Batch(arrayAddr uintptr) (*Batch, error) {
	if arrayAddr < minAddr {
		return nil, fmt.Errorf("batch: ArrowArray pointer %#x is not valid: %w", arrayAddr, errInvalid)
	}
	if in.direct != nil {
		b := getDirectBatch()
		if b.Tablet = in.direct.tablet(arrayAddr, b); b.Tablet != nil {
			return &b.Batch, nil
		}
		putDirectBatch(b)
	}
	if in.sch == nil {
		sch, err := importSchema(in.addr)
		if err != nil {
			return nil, err
		}
		in.sch = sch
	}
	rec, err := importRecord(in.sch, arrayAddr)
	if err != nil {
		return nil, err
	}
	t, err := arrowbridge.ToTablet(rec, in.timeColumn)
	if err != nil {
		rec.Release()
		return nil, err
	}
	return &Batch{Tablet: t, rec: rec}, nil
}

// ---- schemas ----

// schemaWalk checks a schema tree.
type schemaWalk struct {
	nodes int64
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
	s := at[Schema](node.addr)
	switch {
	case s.Format == 0:
		return fmt.Errorf("%s: format is NULL: %w", node.String(), errInvalid)
	case s.Format < minAddr:
		return fmt.Errorf("%s: format pointer %#x is not valid: %w", node.String(), s.Format, errInvalid)
	case s.Name != 0 && s.Name < minAddr:
		return fmt.Errorf("%s: name pointer %#x is not valid: %w", node.String(), s.Name, errInvalid)
	case s.NChildren < 0 || s.NChildren > maxNodes:
		return fmt.Errorf("%s: n_children %d is out of range: %w", node.String(), s.NChildren, errInvalid)
	case s.NChildren > 0 && s.Children < minAddr:
		return fmt.Errorf("%s: %d children but children pointer %#x: %w", node.String(), s.NChildren, s.Children, errInvalid)
	case s.Dictionary != 0 && s.Dictionary < minAddr:
		return fmt.Errorf("%s: dictionary pointer %#x is not valid: %w", node.String(), s.Dictionary, errInvalid)
	}
	if s.NChildren > 0 {
		sub := &place{parent: node} // one for all children: a place is used only while visited
		for i, c := range words(s.Children, s.NChildren) {
			sub.addr, sub.index = c, i
			if c < minAddr {
				return fmt.Errorf("%s: schema pointer %#x is not valid: %w", sub.String(), c, errInvalid)
			}
			if err := w.visit(sub, depth+1); err != nil {
				return err
			}
		}
	}
	if s.Dictionary != 0 {
		return w.visit(&place{parent: node, addr: s.Dictionary, index: -1}, depth+1)
	}
	return nil
}

// columnName describes column i of the record schema at addr for errors.
func columnName(addr uintptr, i int) string {
	s := at[Schema](addr)
	c := words(s.Children, s.NChildren)[i]
	if c >= minAddr {
		if n := at[Schema](c).Name; n >= minAddr {
			return fmt.Sprintf("column %d %q", i, cString(n))
		}
	}
	return fmt.Sprintf("column %d", i)
}

// checkSchema checks the caller's record schema at addr (a struct, "+s")
// and its whole tree.
func checkSchema(addr uintptr) error {
	if addr == 0 {
		return fmt.Errorf("schema: ArrowSchema is NULL: %w", errInvalid)
	}
	if addr < minAddr {
		return fmt.Errorf("schema: ArrowSchema pointer %#x is not valid: %w", addr, errInvalid)
	}
	root := at[Schema](addr)
	if root.Release == 0 {
		return fmt.Errorf("schema: ArrowSchema is already released: %w", errInvalid)
	}
	var w schemaWalk
	if err := w.visit(&place{addr: addr}, 0); err != nil {
		return err
	}
	if f := cView(root.Format); f != "+s" {
		return fmt.Errorf("schema: format %q is not a struct (\"+s\"): a batch is a struct array of columns: %w", f, errInvalid)
	}
	return nil
}

// importSchema reads the record schema at addr, checked by checkSchema.
func importSchema(addr uintptr) (*arrow.Schema, error) {
	root := at[Schema](addr)
	fields := make([]arrow.Field, root.NChildren)
	for i, c := range words(root.Children, root.NChildren) {
		s := at[Schema](c)
		dt, err := fieldType(c)
		if err != nil {
			return nil, fmt.Errorf("%s (Arrow format %q): %v: %w", columnName(addr, i), cString(s.Format), err, errInvalid)
		}
		f := arrow.Field{Name: cString(s.Name), Type: dt, Nullable: s.Flags&FlagNullable != 0}
		if err := importable(f.Type); err != nil {
			return nil, fmt.Errorf("column %q has unsupported Arrow type %s: %v: %w", f.Name, f.Type, err, errInvalid)
		}
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil), nil
}

// simpleTypes are the Arrow types of the formats without parameters.
var simpleTypes = map[string]arrow.DataType{
	"n": arrow.Null, "b": arrow.FixedWidthTypes.Boolean,
	"c": arrow.PrimitiveTypes.Int8, "C": arrow.PrimitiveTypes.Uint8,
	"s": arrow.PrimitiveTypes.Int16, "S": arrow.PrimitiveTypes.Uint16,
	"i": arrow.PrimitiveTypes.Int32, "I": arrow.PrimitiveTypes.Uint32,
	"l": arrow.PrimitiveTypes.Int64, "L": arrow.PrimitiveTypes.Uint64,
	"e": arrow.FixedWidthTypes.Float16, "f": arrow.PrimitiveTypes.Float32, "g": arrow.PrimitiveTypes.Float64,
	"z": arrow.BinaryTypes.Binary, "Z": arrow.BinaryTypes.LargeBinary,
	"u": arrow.BinaryTypes.String, "U": arrow.BinaryTypes.LargeString,
	"vz": arrow.BinaryTypes.BinaryView, "vu": arrow.BinaryTypes.StringView,
	"tdD": arrow.FixedWidthTypes.Date32, "tdm": arrow.FixedWidthTypes.Date64,
	"tts": arrow.FixedWidthTypes.Time32s, "ttm": arrow.FixedWidthTypes.Time32ms,
	"ttu": arrow.FixedWidthTypes.Time64us, "ttn": arrow.FixedWidthTypes.Time64ns,
	"tDs": arrow.FixedWidthTypes.Duration_s, "tDm": arrow.FixedWidthTypes.Duration_ms,
	"tDu": arrow.FixedWidthTypes.Duration_us, "tDn": arrow.FixedWidthTypes.Duration_ns,
	"tiM": arrow.FixedWidthTypes.MonthInterval, "tiD": arrow.FixedWidthTypes.DayTimeInterval,
	"tin": arrow.FixedWidthTypes.MonthDayNanoInterval,
}

// timeUnits are the unit letters of timestamp formats.
var timeUnits = map[byte]arrow.TimeUnit{'s': arrow.Second, 'm': arrow.Millisecond, 'u': arrow.Microsecond, 'n': arrow.Nanosecond}

// fieldType parses the format of the (checked) schema node at addr, and
// its dictionary's, into an Arrow type. Nested formats ("+...") are
// refused.
func fieldType(addr uintptr) (arrow.DataType, error) {
	s := at[Schema](addr)
	format := cString(s.Format) // a copy: a timestamp type keeps its zone
	dt, err := parseFormat(format)
	if err != nil {
		return nil, err
	}
	if s.NChildren != 0 { // dictionary indices included
		return nil, fmt.Errorf("format %q has no children, the schema has %d", format, s.NChildren)
	}
	if s.Dictionary == 0 {
		return dt, nil
	}
	if !arrow.IsInteger(dt.ID()) {
		return nil, fmt.Errorf("dictionary index type %s is not an integer", dt)
	}
	value, err := fieldType(s.Dictionary)
	if err != nil {
		return nil, fmt.Errorf("dictionary: %v", err)
	}
	return &arrow.DictionaryType{IndexType: dt, ValueType: value, Ordered: s.Flags&FlagDictionaryOrdered != 0}, nil
}

// parseFormat parses a format string of a flat Arrow type.
func parseFormat(f string) (arrow.DataType, error) {
	if dt, ok := simpleTypes[f]; ok {
		return dt, nil
	}
	switch {
	case strings.HasPrefix(f, "+"):
		return nil, fmt.Errorf("nested types are not supported")
	case len(f) >= 4 && f[:2] == "ts" && f[3] == ':':
		if unit, ok := timeUnits[f[2]]; ok {
			return &arrow.TimestampType{Unit: unit, TimeZone: f[4:]}, nil
		}
	case strings.HasPrefix(f, "w:"):
		if n, err := strconv.ParseInt(f[2:], 10, 32); err == nil && n > 0 {
			return &arrow.FixedSizeBinaryType{ByteWidth: int(n)}, nil
		}
	case strings.HasPrefix(f, "d:"):
		parts := strings.Split(f[2:], ",")
		if len(parts) < 2 || len(parts) > 3 {
			break
		}
		var v [3]int64
		v[2] = 128
		ok := true
		for i, p := range parts {
			n, err := strconv.ParseInt(p, 10, 32)
			ok = ok && err == nil
			v[i] = n
		}
		switch {
		case ok && v[2] == 128:
			return &arrow.Decimal128Type{Precision: int32(v[0]), Scale: int32(v[1])}, nil
		case ok && v[2] == 256:
			return &arrow.Decimal256Type{Precision: int32(v[0]), Scale: int32(v[1])}, nil
		}
	}
	return nil, fmt.Errorf("malformed or unknown format")
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

// arrayNode is one checked array struct and what its arrow data holds.
type arrayNode struct {
	dt   arrow.DataType // nil for the root
	raw  Array          // counts as the data holds them
	bufs []uintptr      // buffer addresses as the data holds them (0: none)
	lens []int64        // bytes of each buffer
	kids []int          // indices of the children in arrayPlan.nodes
	dict int            // index of the dictionary, or -1
}

// arrayPlan checks an array tree against its Arrow type and collects what
// its arrow data holds.
type arrayPlan struct {
	nodes []arrayNode
}

func (p *arrayPlan) add(n arrayNode) int {
	p.nodes = append(p.nodes, n)
	return len(p.nodes) - 1
}

// counts checks the counts of a and returns offset+length.
func counts(a *Array, what string) (int64, error) {
	switch {
	case a.Length < 0:
		return 0, fmt.Errorf("%s: negative length %d: %w", what, a.Length, errInvalid)
	case a.Offset < 0:
		return 0, fmt.Errorf("%s: negative offset %d: %w", what, a.Offset, errInvalid)
	case a.Length > maxLength || a.Offset > maxLength:
		return 0, fmt.Errorf("%s: offset %d + length %d is too large: %w", what, a.Offset, a.Length, errInvalid)
	case a.NullCount < -1:
		return 0, fmt.Errorf("%s: null_count %d is negative: %w", what, a.NullCount, errInvalid)
	case a.NullCount > a.Length:
		return 0, fmt.Errorf("%s: null_count %d exceeds length %d: %w", what, a.NullCount, a.Length, errInvalid)
	}
	return a.Offset + a.Length, nil
}

// root checks the struct array at addr (a record batch of sch).
func (p *arrayPlan) root(sch *arrow.Schema, addr uintptr) error {
	a := *at[Array](addr)
	if _, err := counts(&a, "batch"); err != nil {
		return err
	}
	switch {
	case a.NBuffers != 1:
		return fmt.Errorf("batch: struct array has %d buffers, want 1: %w", a.NBuffers, errInvalid)
	case a.NChildren != int64(sch.NumFields()):
		return fmt.Errorf("batch has %d columns but its schema has %d: %w", a.NChildren, sch.NumFields(), errInvalid)
	case a.NChildren > 0 && a.Children < minAddr:
		return fmt.Errorf("batch: %d columns but children pointer %#x: %w", a.NChildren, a.Children, errInvalid)
	case a.NullCount > 0:
		return fmt.Errorf("batch: %d rows are null at the top level: %w", a.NullCount, errInvalid)
	case a.Dictionary != 0:
		return fmt.Errorf("batch: struct array has a dictionary: %w", errInvalid)
	}
	// A record batch has no top-level validity: its bitmap is not read.
	a.NullCount = 0
	n := arrayNode{raw: a, bufs: []uintptr{0}, dict: -1}
	idx := p.add(n)
	need := a.Offset + a.Length
	kids := make([]int, a.NChildren)
	for i, c := range words(a.Children, a.NChildren) {
		f := sch.Field(i)
		what := fmt.Sprintf("column %q", f.Name)
		if c < minAddr {
			return fmt.Errorf("%s: array pointer %#x is not valid: %w", what, c, errInvalid)
		}
		if l := at[Array](c).Length; l < need {
			return fmt.Errorf("%s has %d rows but the batch has %d (offset %d + length %d): %w",
				what, l, need, a.Offset, a.Length, errInvalid)
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
	a := *at[Array](addr)
	end, err := counts(&a, what)
	if err != nil {
		return 0, err
	}
	if a.NChildren != 0 {
		return 0, fmt.Errorf("%s: %d children, Arrow type %s has none: %w", what, a.NChildren, dt, errInvalid)
	}
	dictType, isDict := dt.(*arrow.DictionaryType)
	if !isDict && a.Dictionary != 0 {
		return 0, fmt.Errorf("%s: dictionary set, but Arrow type %s is not dictionary-encoded: %w", what, dt, errInvalid)
	}
	n := arrayNode{dt: dt, dict: -1}

	if _, ok := dt.(*arrow.NullType); ok {
		// The null type has no buffers; none is read.
		a.NBuffers, a.NullCount = 0, a.Length
		n.raw = a
		return p.add(n), nil
	}

	want := int64(2)
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		want = 3
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		want = max(a.NBuffers, 3)
		if a.NBuffers > maxNodes {
			want = 3 // reported below
		}
	}
	if a.NBuffers != want {
		return 0, fmt.Errorf("%s: %d buffers, Arrow type %s has %d: %w", what, a.NBuffers, dt, want, errInvalid)
	}
	if a.Buffers < minAddr {
		return 0, fmt.Errorf("%s: buffers pointer %#x is not valid: %w", what, a.Buffers, errInvalid)
	}
	bufs := append([]uintptr(nil), words(a.Buffers, want)...)
	lens := make([]int64, len(bufs))

	// Buffer 0: validity. NULL is allowed when there are no nulls. With a
	// null count of 0 the bitmap is not read either, as arrowbridge and
	// the direct path ignore it: the view and index checks below must
	// cover the rows it marks null.
	switch {
	case bufs[0] < minAddr:
		if a.NullCount > 0 {
			return 0, fmt.Errorf("%s: %d nulls but no validity bitmap (pointer %#x): %w", what, a.NullCount, bufs[0], errInvalid)
		}
		bufs[0], a.NullCount = 0, 0
	case a.NullCount == 0:
		bufs[0] = 0
	default:
		lens[0] = (end + 7) / 8
	}
	fix := func(i int, need int64) error {
		b, ok := bufferAt(bufs[i], need, a.Length)
		if !ok {
			return fmt.Errorf("%s: buffer %d is %#x but must hold %d bytes: %w", what, i, bufs[i], need, errInvalid)
		}
		bufs[i], lens[i] = b, need
		return nil
	}

	switch dt.ID() {
	case arrow.BOOL:
		err = fix(1, (end+7)/8)
	case arrow.STRING, arrow.BINARY:
		if err = fix(1, 4*(end+1)); err == nil {
			var size int64
			if size, err = checkOffsets(unsafe.Slice(at[int32](bufs[1]), end+1)[a.Offset:], what); err == nil {
				err = fix(2, size)
			}
		}
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		if err = fix(1, 8*(end+1)); err == nil {
			var size int64
			if size, err = checkOffsets(unsafe.Slice(at[int64](bufs[1]), end+1)[a.Offset:], what); err == nil {
				err = fix(2, size)
			}
		}
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		err = p.views(&a, bufs, end, fix, what)
	default: // fixed width, dictionary indices included
		width := int64(dt.(arrow.FixedWidthDataType).BitWidth() / 8)
		if end > maxBuffer/width { // a wide fixed_size_binary: width*end would overflow
			err = fmt.Errorf("%s: %d values of %d bytes are too large: %w", what, end, width, errInvalid)
		} else {
			err = fix(1, width*end)
		}
	}
	if err != nil {
		return 0, err
	}
	n.raw, n.bufs, n.lens = a, bufs, lens
	idx := p.add(n)

	if isDict {
		if a.Dictionary < minAddr {
			return 0, fmt.Errorf("%s: dictionary-encoded but dictionary pointer %#x: %w", what, a.Dictionary, errInvalid)
		}
		d, err := p.node(dictType.ValueType, a.Dictionary, what+" dictionary")
		if err != nil {
			return 0, err
		}
		p.nodes[idx].dict = d
		if err := checkIndices(dictType.IndexType, &a, bufs, at[Array](a.Dictionary).Length, what); err != nil {
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
	case length == 0 && need <= int64(unsafe.Sizeof(zeros)):
		return uintptr(unsafe.Pointer(&zeros)), true
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
func (p *arrayPlan) views(a *Array, bufs []uintptr, end int64, fix func(int, int64) error, what string) error {
	k := a.NBuffers - 3 // data buffers
	if err := fix(1, 16*end); err != nil {
		return err
	}
	if err := fix(int(a.NBuffers-1), 8*k); err != nil {
		return err
	}
	var sizes []int64
	if k > 0 {
		sizes = unsafe.Slice(at[int64](bufs[a.NBuffers-1]), k)
	}
	for j, s := range sizes {
		if s < 0 || s > maxLength {
			return fmt.Errorf("%s: data buffer %d has size %d: %w", what, j, s, errInvalid)
		}
		if err := fix(2+j, s); err != nil {
			return err
		}
	}
	if a.Length == 0 {
		return nil
	}
	views := unsafe.Slice(at[[4]int32](bufs[1]), end)
	valid := validBits(bufs[0], end)
	for i := a.Offset; i < end; i++ {
		if !valid(i) {
			continue
		}
		v := views[i] // length, prefix, buffer index, offset
		switch {
		case v[0] < 0:
			return fmt.Errorf("%s: row %d has negative length %d: %w", what, i-a.Offset, v[0], errInvalid)
		case v[0] > 12 && (int64(v[2]) < 0 || int64(v[2]) >= k || v[3] < 0 || int64(v[3])+int64(v[0]) > sizes[v[2]]):
			return fmt.Errorf("%s: row %d points outside the data buffers (buffer %d, offset %d, length %d): %w",
				what, i-a.Offset, v[2], v[3], v[0], errInvalid)
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
func checkIndices(idx arrow.DataType, a *Array, bufs []uintptr, dictLen int64, what string) error {
	end := a.Offset + a.Length
	if a.Length == 0 {
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
	for i := a.Offset; i < end; i++ {
		if v, out := bad(i); out && valid(i) {
			return fmt.Errorf("%s: row %d has dictionary index %d, dictionary has %d values: %w",
				what, i-a.Offset, v, dictLen, errInvalid)
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

// data returns the arrow data of node i, over the caller's buffers.
func (p *arrayPlan) data(i int) arrow.ArrayData {
	n := &p.nodes[i]
	bufs := make([]*memory.Buffer, len(n.bufs), max(len(n.bufs), 1))
	for j, addr := range n.bufs {
		if addr != 0 {
			bufs[j] = memory.NewBufferBytes(bytesAt(addr, n.lens[j]))
		}
	}
	switch n.dt.ID() {
	case arrow.NULL:
		bufs = bufs[:1] // arrow's null arrays hold one nil buffer
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		bufs = bufs[:len(bufs)-1] // arrow keeps the data buffers' sizes itself
	}
	length, nulls, offset := int(n.raw.Length), int(n.raw.NullCount), int(n.raw.Offset)
	if n.dict < 0 {
		return array.NewData(n.dt, length, bufs, nil, nulls, offset)
	}
	dict := p.data(n.dict)
	defer dict.Release()
	return array.NewDataWithDictionary(n.dt, length, bufs, nulls, offset, dict.(*array.Data))
}

// importRecord checks the caller's struct array at addr against sch and
// returns it as a record over its buffers, which the caller keeps until
// the record is released.
func importRecord(sch *arrow.Schema, addr uintptr) (rec arrow.Record, err error) {
	var p arrayPlan
	if err := p.root(sch, addr); err != nil {
		return nil, err
	}
	// The checks above make every step below succeed; a panic would be a
	// bug of ours.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("arrow import panicked: %v: %w", r, errs.ErrInternal)
		}
	}()
	root := &p.nodes[0]
	off, n := root.raw.Offset, root.raw.Length
	cols := make([]arrow.Array, len(root.kids))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	// A record batch's rows are rows off..off+n of each column.
	for i, k := range root.kids {
		d := p.data(k)
		rows := array.NewSliceData(d, off, off+n)
		cols[i] = array.MakeFromData(rows)
		rows.Release()
		d.Release()
	}
	return array.NewRecord(sch, cols, n), nil
}
