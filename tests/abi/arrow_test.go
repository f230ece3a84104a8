package abi_test

import (
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/arcadego/arcadego/internal/cdata/cdatatest"
	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Arrow C Data Interface structs, every pointer as uintptr.
type cSchema struct {
	format, name, metadata uintptr
	flags, nChildren       int64
	children, dictionary   uintptr
	release, privateData   uintptr
}

type cArray struct {
	length, nullCount, offset, nBuffers, nChildren int64
	buffers, children, dictionary                  uintptr
	release, privateData                           uintptr
}

type cStream struct {
	getSchema, getNext, getLastError, release, privateData uintptr
}

const flagNullable = 2

// ---- a producer of Arrow structs in C memory ----

// The producer keeps, per exported tree (keyed by the root's private_data),
// the C allocations its release callback frees and how often that
// callback ran: the library must call it exactly once.
var producer = struct {
	mu       sync.Mutex
	next     uintptr
	allocs   map[uintptr][]uintptr
	released map[uintptr]int
	streams  map[uintptr]*streamState
}{allocs: map[uintptr][]uintptr{}, released: map[uintptr]int{}, streams: map[uintptr]*streamState{}}

// Release callbacks, made once (purego callbacks are never freed).
var callbacks struct {
	once                                sync.Once
	schema, childSchema                 uintptr
	array, childArray                   uintptr
	getSchema, getNext, lastError, strm uintptr
}

func initCallbacks() {
	callbacks.once.Do(func() {
		callbacks.schema = purego.NewCallback(func(addr uintptr) {
			s := at[cSchema](addr)
			releaseTree(s.privateData)
			s.release = 0
		})
		callbacks.childSchema = purego.NewCallback(func(addr uintptr) { at[cSchema](addr).release = 0 })
		callbacks.array = purego.NewCallback(func(addr uintptr) {
			a := at[cArray](addr)
			releaseTree(a.privateData)
			a.release = 0
		})
		callbacks.childArray = purego.NewCallback(func(addr uintptr) { at[cArray](addr).release = 0 })
		callbacks.getSchema = purego.NewCallback(streamGetSchema)
		callbacks.getNext = purego.NewCallback(streamGetNext)
		callbacks.lastError = purego.NewCallback(streamGetLastError)
		callbacks.strm = purego.NewCallback(streamRelease)
	})
}

// tree collects the C allocations of one exported tree.
type tree struct {
	id     uintptr
	allocs []uintptr
}

func newTree() *tree {
	initCallbacks()
	producer.mu.Lock()
	defer producer.mu.Unlock()
	producer.next++
	return &tree{id: producer.next}
}

func (tr *tree) alloc(n uintptr) uintptr {
	p := libc.calloc(1, max(n, 1))
	tr.allocs = append(tr.allocs, p)
	return p
}

func (tr *tree) bytes(b []byte) uintptr {
	p := tr.alloc(uintptr(len(b)))
	copy(unsafe.Slice(at[byte](p), len(b)), b)
	return p
}

func (tr *tree) cstring(s string) uintptr { return tr.bytes(append([]byte(s), 0)) }

// commit registers the allocations; the tree's release frees them.
func (tr *tree) commit() {
	producer.mu.Lock()
	defer producer.mu.Unlock()
	producer.allocs[tr.id] = tr.allocs
}

func releaseTree(id uintptr) {
	producer.mu.Lock()
	allocs := producer.allocs[id]
	delete(producer.allocs, id)
	producer.released[id]++
	producer.mu.Unlock()
	for _, p := range allocs {
		libc.free(p)
	}
}

func releaseCount(id uintptr) int {
	producer.mu.Lock()
	defer producer.mu.Unlock()
	return producer.released[id]
}

// column describes one exported column. bufs holds, per buffer, []byte
// (copied to C memory; a nil slice is a NULL pointer) or a uintptr (the
// pointer value itself, e.g. 0x1).
type column struct {
	name, format  string
	flags         int64
	length, nulls int64
	offset        int64
	bufs          []any
	dict          *column
	children      []column
}

// batch is an exported (schema, array) pair: root structs in C memory
// owned by the test, trees freed by their release callbacks.
type batch struct {
	schemaAddr, arrayAddr uintptr
	schemaID, arrayID     uintptr
}

func (b *batch) schema() *cSchema { return at[cSchema](b.schemaAddr) }
func (b *batch) array() *cArray   { return at[cArray](b.arrayAddr) }

// colSchema and colArray return column i's structs, for mutation.
func (b *batch) colSchema(i int) *cSchema {
	return at[cSchema](words(b.schema().children, b.schema().nChildren)[i])
}
func (b *batch) colArray(i int) *cArray {
	return at[cArray](words(b.array().children, b.array().nChildren)[i])
}

// releases returns how often the schema's and the array's release ran.
func (b *batch) releases() (int, int) { return releaseCount(b.schemaID), releaseCount(b.arrayID) }

// exportBatch exports cols as a record batch of length rows. The root
// structs are freed at the end of the test (after a release check by the
// caller, if any); trees not released by then are freed too.
func exportBatch(t testing.TB, length int64, cols ...column) *batch {
	st, ar := newTree(), newTree()
	b := &batch{schemaID: st.id, arrayID: ar.id}
	b.schemaAddr = libc.calloc(1, unsafe.Sizeof(cSchema{}))
	b.arrayAddr = libc.calloc(1, unsafe.Sizeof(cArray{}))
	fillSchema(st, b.schemaAddr, column{name: "", format: "+s", children: cols}, true)
	fillArray(ar, b.arrayAddr, column{length: length, bufs: []any{[]byte(nil)}, children: cols}, true)
	st.commit()
	ar.commit()
	t.Cleanup(func() {
		releaseTree(b.schemaID) // frees what a release did not
		releaseTree(b.arrayID)
		libc.free(b.schemaAddr)
		libc.free(b.arrayAddr)
	})
	return b
}

func fillSchema(tr *tree, addr uintptr, c column, root bool) {
	s := at[cSchema](addr)
	*s = cSchema{format: tr.cstring(c.format), name: tr.cstring(c.name), flags: c.flags, nChildren: int64(len(c.children))}
	if root {
		s.release, s.privateData = callbacks.schema, tr.id
	} else {
		s.release = callbacks.childSchema
	}
	if len(c.children) > 0 {
		s.children = tr.alloc(uintptr(len(c.children)) * 8)
		kids := words(s.children, s.nChildren)
		for i, k := range c.children {
			kids[i] = tr.alloc(unsafe.Sizeof(cSchema{}))
			fillSchema(tr, kids[i], k, false)
		}
	}
	if c.dict != nil {
		s.dictionary = tr.alloc(unsafe.Sizeof(cSchema{}))
		fillSchema(tr, s.dictionary, *c.dict, false)
	}
}

func fillArray(tr *tree, addr uintptr, c column, root bool) {
	a := at[cArray](addr)
	*a = cArray{length: c.length, nullCount: c.nulls, offset: c.offset, nBuffers: int64(len(c.bufs)), nChildren: int64(len(c.children))}
	if root {
		a.release, a.privateData = callbacks.array, tr.id
	} else {
		a.release = callbacks.childArray
	}
	if len(c.bufs) > 0 {
		a.buffers = tr.alloc(uintptr(len(c.bufs)) * 8)
		ptrs := words(a.buffers, a.nBuffers)
		for i, b := range c.bufs {
			switch v := b.(type) {
			case []byte:
				if v != nil {
					ptrs[i] = tr.bytes(v)
				}
			case uintptr:
				ptrs[i] = v
			default:
				panic("buffer must be []byte or uintptr")
			}
		}
	}
	if len(c.children) > 0 {
		a.children = tr.alloc(uintptr(len(c.children)) * 8)
		kids := words(a.children, a.nChildren)
		for i, k := range c.children {
			kids[i] = tr.alloc(unsafe.Sizeof(cArray{}))
			fillArray(tr, kids[i], k, false)
		}
	}
	if c.dict != nil {
		a.dictionary = tr.alloc(unsafe.Sizeof(cArray{}))
		fillArray(tr, a.dictionary, *c.dict, false)
	}
}

// ---- column builders ----

// The column builders are cdatatest's (shared with internal/cdata's
// tests), converted.

// specCol converts a shared column description to this package's column.
func specCol(s cdatatest.Col) column {
	c := column{name: s.Name, format: s.Format, flags: s.Flags, length: s.Length, nulls: s.Nulls, offset: s.Offset, bufs: s.Bufs}
	if s.Dict != nil {
		d := specCol(*s.Dict)
		c.dict = &d
	}
	for _, k := range s.Children {
		c.children = append(c.children, specCol(k))
	}
	return c
}

func fixedCol[T cdatatest.Fixed](name, format string, v []T, valid []bool) column {
	return specCol(cdatatest.FixedCol(name, format, v, valid))
}
func int64Col(name string, v []int64, valid []bool) column {
	return specCol(cdatatest.Int64Col(name, v, valid))
}
func boolCol(name string, v []bool, valid []bool) column {
	return specCol(cdatatest.BoolCol(name, v, valid))
}
func varCol(name, format string, v []string, valid []bool) column {
	return specCol(cdatatest.VarCol(name, format, v, valid))
}
func stringCol(name string, v []string, valid []bool) column {
	return specCol(cdatatest.StringCol(name, v, valid))
}
func timeCol(v ...int64) column { return specCol(cdatatest.TimeCol(v...)) }

// ---- reading results ----

// result is a scan result read back from its stream.
type result struct {
	names, formats []string
	dicts          []string // format of each column's dictionary values, "" for none
	flags          []int64
	rows           [][]any // nil for null; int64, int32, float64, float32, bool, string, []byte
	batches        int
}

// column returns the values of the named column.
func (r *result) column(name string) []any {
	for i, n := range r.names {
		if n == name {
			out := make([]any, len(r.rows))
			for j, row := range r.rows {
				out[j] = row[i]
			}
			return out
		}
	}
	return nil
}

// scanResult runs arcadego_scan and reads the whole stream, and checks
// that arcadego_scan_first returns the same schema, rows and batches.
func scanResult(t testing.TB, db uintptr, request string) *result {
	t.Helper()
	r := streamResult(t, lib.scan, db, request)
	first := scanFirstResult(t, db, request)
	assert.Equal(t, r, first.result, "arcadego_scan_first of %s", request)
	assert.NotZero(t, first.schemaID)
	return r
}

// firstResult is what arcadego_scan_first returned, read whole.
type firstResult struct {
	*result
	firstReleased, restReleased bool // as the call returned them
	schemaID                    uint64
}

// scanFirstResult runs arcadego_scan_first and reads the schema, the first
// batch and the rest of the stream.
func scanFirstResult(t testing.TB, db uintptr, request string) firstResult {
	t.Helper()
	sch := libc.calloc(1, unsafe.Sizeof(cSchema{}))
	defer libc.free(sch)
	arr := libc.calloc(1, unsafe.Sizeof(cArray{}))
	defer libc.free(arr)
	stream := libc.calloc(1, unsafe.Sizeof(cStream{}))
	defer libc.free(stream)
	var id uint64
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.scanFirst(db, cstr(request), sch, arr, stream, &id, e) })
	require.Equal(t, codeOK, code, "%s: %s", request, msg)
	out := firstResult{result: &result{}, firstReleased: at[cArray](arr).release == 0, restReleased: at[cStream](stream).release == 0,
		schemaID: id}
	readSchema(out.result, sch)
	if !out.firstReleased {
		appendBatch(out.result, arr)
	}
	if !out.restReleased {
		rest, err := readStream(stream)
		require.NoError(t, err)
		assert.Equal(t, out.names, rest.names, "the rest's schema is the first's")
		out.rows = append(out.rows, rest.rows...)
		out.batches += rest.batches
	}
	return out
}

// streamResult calls fn (arcadego_scan, _aggregate or _last) with request
// and reads its stream whole.
func streamResult(t testing.TB, fn func(db uintptr, request *byte, out uintptr, err *uintptr) int32, db uintptr, request string) *result {
	t.Helper()
	stream := libc.calloc(1, unsafe.Sizeof(cStream{}))
	defer libc.free(stream)
	code, msg := callErr(t, func(e *uintptr) int32 { return fn(db, cstr(request), stream, e) })
	require.Equal(t, codeOK, code, "%s: %s", request, msg)
	r, err := readStream(stream)
	require.NoError(t, err)
	return r
}

// streamError is a failed get_next: errno and get_last_error's message.
type streamError struct {
	errno int
	msg   string
}

func (e *streamError) Error() string { return e.msg }

// readStream reads the stream at addr to its end (or first error) and
// releases it, checking that every release marks its struct released.
func readStream(addr uintptr) (*result, error) {
	s := at[cStream](addr)
	defer func() {
		purego.SyscallN(s.release, addr)
		if s.release != 0 {
			panic("stream release did not mark the stream released")
		}
	}()
	r := &result{}
	sch := libc.calloc(1, unsafe.Sizeof(cSchema{}))
	defer libc.free(sch)
	if rc, _, _ := purego.SyscallN(s.getSchema, addr, sch); int32(rc) != 0 {
		return nil, &streamError{int(int32(rc)), goString(callRet(s.getLastError, addr))}
	}
	readSchema(r, sch)
	arr := libc.calloc(1, unsafe.Sizeof(cArray{}))
	defer libc.free(arr)
	for {
		if rc, _, _ := purego.SyscallN(s.getNext, addr, arr); int32(rc) != 0 {
			return r, &streamError{int(int32(rc)), goString(callRet(s.getLastError, addr))}
		}
		if at[cArray](arr).release == 0 {
			return r, nil
		}
		appendBatch(r, arr)
	}
}

// readSchema takes r's columns from the result schema at sch and releases it.
func readSchema(r *result, sch uintptr) {
	root := at[cSchema](sch)
	for _, c := range words(root.children, root.nChildren) {
		cs := at[cSchema](c)
		r.names = append(r.names, goString(cs.name))
		r.formats = append(r.formats, goString(cs.format))
		r.flags = append(r.flags, cs.flags)
		dict := ""
		if cs.dictionary != 0 {
			dict = goString(at[cSchema](cs.dictionary).format)
		}
		r.dicts = append(r.dicts, dict)
	}
	releaseSchema(sch)
}

// appendBatch appends the rows of the result batch at arr and releases it.
func appendBatch(r *result, arr uintptr) {
	a := at[cArray](arr)
	r.batches++
	kids := words(a.children, a.nChildren)
	for i := int64(0); i < a.length; i++ {
		row := make([]any, len(kids))
		for j, k := range kids {
			row[j] = columnValue(r.formats[j], r.dicts[j], at[cArray](k), a.offset+i)
		}
		r.rows = append(r.rows, row)
	}
	purego.SyscallN(a.release, arr)
	if a.release != 0 {
		panic("result batch release did not mark it released")
	}
}

func callRet(fn, arg uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, arg)
	return r
}

func releaseSchema(addr uintptr) {
	s := at[cSchema](addr)
	purego.SyscallN(s.release, addr)
	if s.release != 0 {
		panic("schema release did not mark it released")
	}
}

// columnValue decodes row i (before the array's own offset) of a result
// column of the given format, dictionary-encoded when dict (the format of
// the dictionary's values) is not "".
func columnValue(format, dict string, a *cArray, i int64) any {
	if dict == "" {
		return value(format, a, i)
	}
	if a.dictionary == 0 {
		panic("dictionary-encoded column without a dictionary array")
	}
	var idx int64
	switch x := value(format, a, i).(type) {
	case nil:
		return nil
	case int32:
		idx = int64(x)
	case int64:
		idx = x
	default:
		panic("unexpected index format " + format)
	}
	d := at[cArray](a.dictionary)
	if idx < 0 || idx >= d.length {
		panic("dictionary index out of range")
	}
	return value(dict, d, idx)
}

// value decodes row i (before the array's own offset) of a result column.
func value(format string, a *cArray, i int64) any {
	bufs := words(a.buffers, a.nBuffers)
	i += a.offset
	if bufs[0] != 0 && *at[byte](bufs[0] + uintptr(i/8))&(1<<(i%8)) == 0 {
		return nil
	}
	switch {
	case format == "u" || format == "z":
		off := unsafe.Slice(at[int32](bufs[1]), i+2)
		b := unsafe.Slice(at[byte](bufs[2]+uintptr(off[i])), off[i+1]-off[i])
		if format == "u" {
			return string(b)
		}
		return append([]byte{}, b...)
	case format == "l" || strings.HasPrefix(format, "ts"):
		return *at[int64](bufs[1] + uintptr(8*i))
	case format == "i" || format == "tdD":
		return *at[int32](bufs[1] + uintptr(4*i))
	case format == "g":
		return *at[float64](bufs[1] + uintptr(8*i))
	case format == "f":
		return *at[float32](bufs[1] + uintptr(4*i))
	case format == "b":
		return *at[byte](bufs[1] + uintptr(i/8))&(1<<(i%8)) != 0
	}
	panic("unexpected result format " + format)
}

// ---- a producer of streams ----

// streamState drives one exported stream: get_schema exports schema(),
// get_next exports next(i) for i = 0, 1, ... until it returns nil; fail,
// when set, makes get_next(i == failAt) return EIO.
type streamState struct {
	schema   func() *batch
	next     func(i int) *batch
	failAt   int
	calls    int
	released int
	errMsg   uintptr
}

// exportStream returns a stream (C memory, freed at the end of the test).
func exportStream(t testing.TB, st *streamState) (uintptr, *streamState) {
	initCallbacks()
	producer.mu.Lock()
	producer.next++
	id := producer.next
	producer.streams[id] = st
	producer.mu.Unlock()
	addr := libc.calloc(1, unsafe.Sizeof(cStream{}))
	*at[cStream](addr) = cStream{
		getSchema: callbacks.getSchema, getNext: callbacks.getNext, getLastError: callbacks.lastError,
		release: callbacks.strm, privateData: id,
	}
	t.Cleanup(func() {
		if at[cStream](addr).release != 0 {
			streamRelease(addr)
		}
		libc.free(addr)
	})
	return addr, st
}

func streamOf(addr uintptr) *streamState {
	producer.mu.Lock()
	defer producer.mu.Unlock()
	return producer.streams[at[cStream](addr).privateData]
}

func streamGetSchema(stream, out uintptr) int32 {
	b := streamOf(stream).schema()
	*at[cSchema](out) = *b.schema() // move: the source is now released
	*b.schema() = cSchema{}
	return 0
}

func streamGetNext(stream, out uintptr) int32 {
	st := streamOf(stream)
	i := st.calls
	st.calls++
	if st.failAt >= 0 && i == st.failAt {
		if st.errMsg == 0 {
			st.errMsg = cbytes([]byte("producer failed on purpose\x00"))
		}
		*at[cArray](out) = cArray{}
		return 5 // EIO
	}
	b := st.next(i)
	if b == nil {
		*at[cArray](out) = cArray{}
		return 0
	}
	*at[cArray](out) = *b.array()
	*b.array() = cArray{}
	return 0
}

func streamGetLastError(stream uintptr) uintptr { return streamOf(stream).errMsg }

func streamRelease(stream uintptr) {
	st := streamOf(stream)
	st.released++
	if st.errMsg != 0 {
		libc.free(st.errMsg)
		st.errMsg = 0
	}
	at[cStream](stream).release = 0
}
