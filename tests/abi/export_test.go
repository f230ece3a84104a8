package abi_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perturbFreedMemory makes glibc's free fill freed memory with a pattern
// for the rest of the test (mallopt M_PERTURB), so that reading exported
// memory after the library freed it gives garbage instead of old values.
func perturbFreedMemory(t *testing.T) {
	c, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	var mallopt func(param, value int32) int32
	purego.RegisterLibFunc(&mallopt, c, "mallopt")
	const mPerturb = -6
	require.Equal(t, int32(1), mallopt(mPerturb, 0xa5))
	t.Cleanup(func() { mallopt(mPerturb, 0) })
}

// TestMovedResultChildrenOutliveTheirParent moves a child out of an
// exported schema and batch, as the C Data Interface allows, releases the
// parent, and reads the child: its memory must live until its own release.
func TestMovedResultChildrenOutliveTheirParent(t *testing.T) {
	perturbFreedMemory(t)
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	// Enough rows that the blocks are too large for glibc's thread cache,
	// whose frees do not perturb.
	const rows = 200
	var want []any
	strs := make([]string, rows)
	valid := make([]bool, rows)
	for i := range strs {
		strs[i], valid[i] = fmt.Sprintf("value %d", i), i%3 != 1
		if valid[i] {
			want = append(want, strs[i])
		} else {
			want = append(want, nil)
		}
	}
	code, msg := insert(t, db, "A", "dev", exportBatch(t, rows,
		int64Col("time", seq(rows), nil), int64Col("k", seq(rows), nil), stringCol("s", strs, valid)))
	requireOK(t, code, msg, "insert")

	for _, childFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("child released first=%v", childFirst), func(t *testing.T) {
			stream := libc.calloc(1, unsafe.Sizeof(cStream{}))
			defer libc.free(stream)
			code, msg := callErr(t, func(e *uintptr) int32 { return lib.scan(db, cstr(`{"type": "A"}`), stream, e) })
			requireOK(t, code, msg, "scan")
			s := at[cStream](stream)
			defer purego.SyscallN(s.release, stream)

			sch := libc.calloc(1, unsafe.Sizeof(cSchema{}))
			defer libc.free(sch)
			rc, _, _ := purego.SyscallN(s.getSchema, stream, sch)
			require.Zero(t, rc)
			moved := libc.calloc(1, unsafe.Sizeof(cSchema{}))
			defer libc.free(moved)
			orig := at[cSchema](words(at[cSchema](sch).children, 4)[3])
			*at[cSchema](moved) = *orig
			orig.release = 0

			arr := libc.calloc(1, unsafe.Sizeof(cArray{}))
			defer libc.free(arr)
			rc, _, _ = purego.SyscallN(s.getNext, stream, arr)
			require.Zero(t, rc)
			movedArr := libc.calloc(1, unsafe.Sizeof(cArray{}))
			defer libc.free(movedArr)
			origArr := at[cArray](words(at[cArray](arr).children, 4)[3])
			*at[cArray](movedArr) = *origArr
			origArr.release = 0

			if childFirst {
				releaseMoved(t, moved, movedArr)
			}
			releaseSchema(sch)
			purego.SyscallN(at[cArray](arr).release, arr)
			assert.Zero(t, at[cArray](arr).release)
			if childFirst {
				return
			}
			c := at[cSchema](moved)
			assert.Equal(t, "s", goString(c.name))
			assert.Equal(t, "u", goString(c.format))
			var values []any
			for i := int64(0); i < rows; i++ {
				values = append(values, value("u", at[cArray](movedArr), i))
			}
			assert.Equal(t, want, values)
			releaseMoved(t, moved, movedArr)
		})
	}
}

func releaseMoved(t *testing.T, schema, array uintptr) {
	purego.SyscallN(at[cSchema](schema).release, schema)
	assert.Zero(t, at[cSchema](schema).release, "moved schema marked released")
	purego.SyscallN(at[cArray](array).release, array)
	assert.Zero(t, at[cArray](array).release, "moved array marked released")
}

// TestResultBuffers checks the layout of exported batches: every buffer
// is 8-byte aligned and non-NULL, but the validity bitmap of a column
// without nulls, which is NULL.
func TestResultBuffers(t *testing.T) {
	db := openDB(t, "", `{"auto_create": true}`)
	valid := []bool{true, false, true}
	code, msg := insert(t, db, "A", "", exportBatch(t, 3,
		timeCol(1, 2, 3),
		boolCol("b", []bool{true, false, true}, nil),
		fixedCol("i", "i", []int32{1, 2, 3}, valid),
		stringCol("empty", []string{"", "", ""}, nil),
		varCol("bin", "z", []string{"x", "", "yz"}, valid)))
	requireOK(t, code, msg, "insert")

	stream := libc.calloc(1, unsafe.Sizeof(cStream{}))
	defer libc.free(stream)
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.scan(db, cstr(`{"type": "A"}`), stream, e) })
	requireOK(t, code, msg, "scan")
	s := at[cStream](stream)
	defer purego.SyscallN(s.release, stream)
	arr := libc.calloc(1, unsafe.Sizeof(cArray{}))
	defer libc.free(arr)
	rc, _, _ := purego.SyscallN(s.getNext, stream, arr)
	require.Zero(t, rc)
	defer purego.SyscallN(at[cArray](arr).release, arr)

	root := at[cArray](arr)
	require.Equal(t, int64(6), root.nChildren)
	names := []string{"device", "time", "b", "i", "empty", "bin"}
	nulls := []int64{0, 0, 0, 1, 0, 1}
	for i, name := range names {
		c := at[cArray](words(root.children, root.nChildren)[i])
		assert.Equal(t, int64(3), c.length, name)
		assert.Equal(t, nulls[i], c.nullCount, name)
		assert.Zero(t, c.offset, name)
		for j, p := range words(c.buffers, c.nBuffers) {
			if j == 0 && nulls[i] == 0 {
				assert.Zero(t, p, "%s: validity of a column without nulls", name)
				continue
			}
			assert.NotZero(t, p, "%s: buffer %d", name, j)
			assert.Zero(t, p%8, "%s: buffer %d is not 8-byte aligned", name, j)
		}
	}
}

// openResult runs a scan and returns the stream, its schema and its first
// batch (all C memory, freed at the end of the test; the caller releases).
func openResult(t *testing.T, db uintptr, request string) (stream, sch, arr uintptr) {
	t.Helper()
	stream = libc.calloc(1, unsafe.Sizeof(cStream{}))
	t.Cleanup(func() { libc.free(stream) })
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.scan(db, cstr(request), stream, e) })
	requireOK(t, code, msg, "scan")
	s := at[cStream](stream)
	t.Cleanup(func() { purego.SyscallN(s.release, stream) })
	sch = libc.calloc(1, unsafe.Sizeof(cSchema{}))
	t.Cleanup(func() { libc.free(sch) })
	rc, _, _ := purego.SyscallN(s.getSchema, stream, sch)
	require.Zero(t, rc)
	arr = libc.calloc(1, unsafe.Sizeof(cArray{}))
	t.Cleanup(func() { libc.free(arr) })
	rc, _, _ = purego.SyscallN(s.getNext, stream, arr)
	require.Zero(t, rc)
	require.NotZero(t, at[cArray](arr).release, "a first batch")
	return stream, sch, arr
}

// TestResultDeviceIsDictionaryEncoded checks the layout of the device
// column: format "i" (int32 indices, not nullable, not ordered) with a
// dictionary of format "u"; a batch of one device has every index 0 and
// a dictionary of one value, its device; a batch joining several small
// devices has a dictionary of their names in order.
func TestResultDeviceIsDictionaryEncoded(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	devices := []string{"", "dev-ü", "a device name that is rather long"}
	for i, dev := range devices {
		code, msg := insert(t, db, "A", dev, exportBatch(t, 3,
			timeCol(1, 2, 3), int64Col("k", []int64{int64(i), 2, 3}, nil)))
		requireOK(t, code, msg, "insert")
	}

	_, sch, first := openResult(t, db, `{"type": "A"}`)
	purego.SyscallN(at[cArray](first).release, first)
	root := at[cSchema](sch)
	kids := words(root.children, root.nChildren)
	require.Len(t, kids, 4)
	dev := at[cSchema](kids[0])
	assert.Equal(t, "device", goString(dev.name))
	assert.Equal(t, "i", goString(dev.format))
	assert.Zero(t, dev.flags, "device: not nullable, dictionary not ordered")
	require.NotZero(t, dev.dictionary)
	d := at[cSchema](dev.dictionary)
	assert.Equal(t, "u", goString(d.format))
	assert.Zero(t, d.nChildren)
	assert.Zero(t, d.dictionary)
	assert.NotZero(t, d.release)
	for _, c := range kids[1:] {
		assert.Zero(t, at[cSchema](c).dictionary, "%s: no dictionary", goString(at[cSchema](c).name))
	}
	releaseSchema(sch)

	r := scanResult(t, db, `{"type": "A", "batch_rows": 3}`)
	assert.Equal(t, []string{"i", "l", "l", "u"}, r.formats)
	assert.Equal(t, []string{"u", "", "", ""}, r.dicts)
	assert.Equal(t, []int64{0, 0, flagNullable, flagNullable}, r.flags)
	assert.Equal(t, len(devices), r.batches)
	var got []any
	for _, row := range r.rows {
		got = append(got, row[0])
	}
	assert.Equal(t, []any{"", "", "", "a device name that is rather long", "a device name that is rather long",
		"a device name that is rather long", "dev-ü", "dev-ü", "dev-ü"}, got)

	// Each batch of one device, as laid out.
	stream, _, arr := openResult(t, db, `{"type": "A", "batch_rows": 3}`)
	s := at[cStream](stream)
	for _, want := range []string{"", "a device name that is rather long", "dev-ü"} {
		a := at[cArray](arr)
		require.NotZero(t, a.release, "batch of %q", want)
		c := at[cArray](words(a.children, a.nChildren)[0])
		assert.Equal(t, int64(3), c.length)
		assert.Zero(t, c.nullCount)
		assert.Zero(t, c.offset)
		require.Equal(t, int64(2), c.nBuffers)
		bufs := words(c.buffers, 2)
		assert.Zero(t, bufs[0], "no validity bitmap")
		assert.Equal(t, []int32{0, 0, 0}, unsafe.Slice(at[int32](bufs[1]), 3))
		require.NotZero(t, c.dictionary)
		dict := at[cArray](c.dictionary)
		assert.Equal(t, int64(1), dict.length)
		assert.Zero(t, dict.nullCount)
		assert.Zero(t, dict.offset)
		assert.Zero(t, dict.nChildren)
		assert.Zero(t, dict.dictionary)
		assert.NotZero(t, dict.release)
		require.Equal(t, int64(3), dict.nBuffers)
		dbufs := words(dict.buffers, 3)
		assert.Zero(t, dbufs[0])
		assert.Equal(t, []int32{0, int32(len(want))}, unsafe.Slice(at[int32](dbufs[1]), 2))
		assert.Equal(t, want, string(unsafe.Slice(at[byte](dbufs[2]), len(want))))
		for _, k := range words(a.children, a.nChildren)[1:] {
			assert.Zero(t, at[cArray](k).dictionary)
		}
		purego.SyscallN(a.release, arr)
		require.Zero(t, a.release)
		rc, _, _ := purego.SyscallN(s.getNext, stream, arr)
		require.Zero(t, rc)
	}
	assert.Zero(t, at[cArray](arr).release, "end of stream")

	// By default the three small devices share one batch: indices into a
	// dictionary of the three names.
	stream, _, arr = openResult(t, db, `{"type": "A"}`)
	s = at[cStream](stream)
	a := at[cArray](arr)
	require.Equal(t, int64(9), a.length)
	c := at[cArray](words(a.children, a.nChildren)[0])
	assert.Equal(t, []int32{0, 0, 0, 1, 1, 1, 2, 2, 2}, unsafe.Slice(at[int32](words(c.buffers, 2)[1]), 9))
	dict := at[cArray](c.dictionary)
	require.Equal(t, int64(3), dict.length)
	dbufs := words(dict.buffers, 3)
	names := []string{"", "a device name that is rather long", "dev-ü"}
	offs := unsafe.Slice(at[int32](dbufs[1]), 4)
	assert.Equal(t, []int32{0, 0, int32(len(names[1])), int32(len(names[1]) + len(names[2]))}, offs)
	assert.Equal(t, names[1]+names[2], string(unsafe.Slice(at[byte](dbufs[2]), offs[3])))
	purego.SyscallN(a.release, arr)
	rc, _, _ := purego.SyscallN(s.getNext, stream, arr)
	require.Zero(t, rc)
	assert.Zero(t, at[cArray](arr).release, "one batch")
}

// TestResultDeviceColumnSize checks that a large batch's device column
// costs 4 bytes a row and the name once: the whole block of a batch of
// 1M rows (time and device only) is the 8 MB of times, the 4 MB of
// indices and a little more, where a copy of a 20-byte name per row would
// add 20 MB.
func TestResultDeviceColumnSize(t *testing.T) {
	const rows = 1 << 20
	const name = "device-0123456789abc" // 20 bytes
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	code, msg := insert(t, db, "A", name, exportBatch(t, rows, timeCol(seq(rows)...)))
	requireOK(t, code, msg, "insert")

	_, sch, arr := openResult(t, db, fmt.Sprintf(`{"type": "A", "properties": [], "batch_rows": %d}`, rows))
	releaseSchema(sch)
	a := at[cArray](arr)
	defer purego.SyscallN(a.release, arr)
	require.Equal(t, int64(rows), a.length)
	kids := words(a.children, a.nChildren)
	require.Len(t, kids, 2)
	dev := at[cArray](kids[0])
	dict := at[cArray](dev.dictionary)
	require.Equal(t, int64(1), dict.length)
	assert.Equal(t, name, value("u", dict, 0))
	idx := unsafe.Slice(at[int32](words(dev.buffers, 2)[1]), rows)
	for i, x := range idx {
		if x != 0 {
			t.Fatalf("index of row %d is %d", i, x)
		}
	}

	// Every struct and buffer of a batch is in one malloc'ed block, which
	// private_data points to (an implementation detail this test relies on).
	block := a.privateData
	size := libc.mallocUsableSize(block)
	for _, p := range []uintptr{words(dev.buffers, 2)[1], words(dict.buffers, 3)[2], dev.dictionary} {
		assert.True(t, p >= block && p < block+size, "buffer %#x outside the batch's block", p)
	}
	assert.Less(t, size, uintptr(rows*(8+4)+64<<10), "block of %d bytes for %d rows", size, rows)
	t.Logf("block of %d bytes for %d rows: %.2f bytes a row beyond the times", size, rows, float64(size)/rows-8)
}

// TestResultDeviceDictionaryRelease moves the device column (with its
// dictionary) out of a result schema and batch, as the C Data Interface
// allows. The moved column's release releases its dictionary, exactly
// once, whether the parent is released before or after it; the parent's
// release does not release the dictionary again.
func TestResultDeviceDictionaryRelease(t *testing.T) {
	perturbFreedMemory(t)
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	const rows = 300 // blocks too large for glibc's thread cache, whose frees do not perturb
	code, msg := insert(t, db, "A", "the-device", exportBatch(t, rows, timeCol(seq(rows)...)))
	requireOK(t, code, msg, "insert")

	for _, parentFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("parent released first=%v", parentFirst), func(t *testing.T) {
			_, sch, arr := openResult(t, db, `{"type": "A"}`)
			moved := libc.calloc(1, unsafe.Sizeof(cSchema{}))
			defer libc.free(moved)
			orig := at[cSchema](words(at[cSchema](sch).children, 4)[0])
			*at[cSchema](moved) = *orig
			orig.release = 0
			movedArr := libc.calloc(1, unsafe.Sizeof(cArray{}))
			defer libc.free(movedArr)
			origArr := at[cArray](words(at[cArray](arr).children, 4)[0])
			*at[cArray](movedArr) = *origArr
			origArr.release = 0

			ms, ma := at[cSchema](moved), at[cArray](movedArr)
			if parentFirst {
				releaseSchema(sch)
				purego.SyscallN(at[cArray](arr).release, arr)
				require.Zero(t, at[cArray](arr).release)
				// The moved column and its dictionary outlive the parent.
				assert.Equal(t, "i", goString(ms.format))
				assert.Equal(t, "u", goString(at[cSchema](ms.dictionary).format))
				assert.NotZero(t, at[cSchema](ms.dictionary).release)
				assert.NotZero(t, at[cArray](ma.dictionary).release)
				for i := int64(0); i < rows; i += 37 {
					assert.Equal(t, "the-device", columnValue("i", "u", ma, i))
				}
				releaseMoved(t, moved, movedArr)
				return
			}
			// The parents hold the blocks: the dictionaries can be seen
			// marked released by the release of the moved column.
			dictSchema, dictArray := at[cSchema](ms.dictionary), at[cArray](ma.dictionary)
			releaseMoved(t, moved, movedArr)
			assert.Zero(t, dictSchema.release, "dictionary schema released with its column")
			assert.Zero(t, dictArray.release, "dictionary array released with its column")
			releaseSchema(sch)
			purego.SyscallN(at[cArray](arr).release, arr)
			assert.Zero(t, at[cArray](arr).release)
		})
	}
}

// TestInsertLongSplitsByDevice: a batch of many devices' rows, each row's
// device in a utf8 column, is split by the library: the rows land per
// device, the device column is no property, and a null device refuses the
// whole batch (its structs released all the same).
func TestInsertLongSplitsByDevice(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	b := exportBatch(t, 4, stringCol("dev", []string{"y", "x", "y", "x"}, nil), timeCol(1, 1, 2, 2),
		int64Col("k", []int64{1, 2, 3, 4}, nil))
	code, msg := callErr(t, func(e *uintptr) int32 {
		return lib.insertLong(db, cstr("A"), cstr("dev"), b.schemaAddr, b.arrayAddr, e)
	})
	requireOK(t, code, msg, "insert_long")
	r := scanResult(t, db, `{"type": "A", "properties": ["k"]}`)
	assert.Equal(t, []any{"x", "x", "y", "y"}, r.column("device"))
	assert.Equal(t, []any{int64(2), int64(4), int64(1), int64(3)}, r.column("k"))

	bad := exportBatch(t, 2, stringCol("dev", []string{"z", ""}, []bool{true, false}), timeCol(5, 6),
		int64Col("k", []int64{5, 6}, nil))
	tx := begin(t, db)
	code, msg = callErr(t, func(e *uintptr) int32 {
		return lib.txInsertLong(tx, cstr("A"), cstr("dev"), bad.schemaAddr, bad.arrayAddr, e)
	})
	assert.Equal(t, codeInvalidArgument, code, msg)
	assert.Contains(t, msg, "no device")
	assert.Zero(t, at[cArray](bad.arrayAddr).release, "the refused batch is released")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.commit(tx, e) })
	requireOK(t, code, msg, "commit")
	assert.Len(t, scanResult(t, db, `{"type": "A"}`).rows, 4)
}

// TestConversionRuleThroughCStructs: the conversion rule seen from a C
// caller: an int32 column goes into an INT64 property and an exact int64
// into a DOUBLE one; a float64 column into an INT64 property is refused,
// naming the column, and writes nothing.
func TestConversionRuleThroughCStructs(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, "CREATE DOCUMENT TYPE C; CREATE PROPERTY C.n INT64; CREATE PROPERTY C.x DOUBLE")
	code, msg := insert(t, db, "C", "d", exportBatch(t, 2, timeCol(1, 2),
		fixedCol("n", "i", []int32{-7, 8}, []bool{true, false}), int64Col("x", []int64{3, 1 << 53}, nil)))
	requireOK(t, code, msg, "insert")
	r := scanResult(t, db, `{"type": "C"}`)
	assert.Equal(t, []any{int64(-7), nil}, r.column("n"))
	assert.Equal(t, []any{float64(3), float64(1 << 53)}, r.column("x"))

	code, msg = insert(t, db, "C", "d", exportBatch(t, 1, timeCol(3), fixedCol("n", "g", []float64{1.5}, nil)))
	assert.Equal(t, codeInvalidArgument, code, msg)
	assert.Contains(t, msg, `column "n"`)
	assert.Len(t, scanResult(t, db, `{"type": "C"}`).rows, 2)
}

// TestMarkReleasedCallbacks: a caller that keeps the memory of its structs
// until the call returns may pass arcadego_mark_*_released as their
// release callbacks; the library's release of the top-level structs marks
// them and every child released, and frees nothing (the test frees the
// memory afterwards). Called directly, they take NULL and a released
// struct as no-ops.
func TestMarkReleasedCallbacks(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	b := goodBatch(t)
	b.schema().release, b.array().release = lib.markSchemaAddr, lib.markArrayAddr
	n := int(b.schema().nChildren)
	for i := range n {
		b.colSchema(i).release, b.colArray(i).release = lib.markSchemaAddr, lib.markArrayAddr
	}
	code, msg := insert(t, db, "A", "d", b)
	requireOK(t, code, msg, "insert")
	assert.Zero(t, b.schema().release)
	assert.Zero(t, b.array().release)
	for i := range n {
		assert.Zero(t, b.colSchema(i).release, "column %d's schema", i)
		assert.Zero(t, b.colArray(i).release, "column %d's array", i)
	}
	r := scanResult(t, db, `{"type": "A"}`)
	assert.Len(t, r.rows, 3, "the rows went in")

	// A parent whose first child is released already: the other children
	// are marked, the released one is left alone.
	c := goodBatch(t)
	c.schema().release = lib.markSchemaAddr
	for i := range n {
		c.colSchema(i).release = lib.markSchemaAddr
	}
	c.colSchema(0).release = 0
	lib.markSchemaReleased(c.schemaAddr)
	assert.Zero(t, c.schema().release)
	for i := range n {
		assert.Zero(t, c.colSchema(i).release, "column %d", i)
	}
	lib.markSchemaReleased(c.schemaAddr) // released: a no-op
	lib.markSchemaReleased(0)
	lib.markArrayReleased(0)
	assert.Zero(t, c.schema().release)
}
