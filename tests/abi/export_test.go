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
