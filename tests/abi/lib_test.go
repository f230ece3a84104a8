// Package abi_test drives libarcadego.so through its C ABI from Go, without
// cgo: purego loads the library (and libc, for C memory) at run time. The
// library is $ARCADEGO_LIB, or ../../build/out/libarcadego.so as build/lib.sh
// leaves it. It is never unloaded: a Go runtime cannot be.
//
// Everything handed to the library lives in C memory (libc malloc) and
// holds no Go pointer, as the cgo rules require of memory passed to C;
// only out-parameters (*uintptr) and NUL-terminated byte strings are Go
// memory, which C may use for the duration of a call.
package abi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Status codes of arcadego.h.
const (
	codeOK              = 0
	codeInvalidArgument = 1
	codeNotFound        = 2
	codeAlreadyExists   = 3
	codeConflict        = 4
	codeIO              = 5
	codeClosed          = 6
	codeCorrupt         = 7
	codeCanceled        = 8
	codeInternal        = 9
)

// lib holds the exports of arcadego.h. Strings are *byte (nil for NULL,
// see cstr), handles and Arrow struct addresses are uintptr. The exports
// that take names and scripts with their length are in abiN; lib's fields
// of the same name call them with the length of the C string (see
// withLengths), and the tests of the lengths themselves call abiN.
var lib struct {
	version        func() uintptr
	open           func(path, options *byte, out *uintptr, err *uintptr) int32
	close          func(db uintptr, err *uintptr) int32
	begin          func(db uintptr, out *uintptr, err *uintptr) int32
	txExec         func(tx uintptr, script *byte, err *uintptr) int32
	txInsert       func(tx uintptr, typ, device *byte, schema, array uintptr, err *uintptr) int32
	txInsertStream func(tx uintptr, typ, device *byte, stream uintptr, err *uintptr) int32
	commit         func(tx uintptr, err *uintptr) int32
	rollback       func(tx uintptr) int32
	exec           func(db uintptr, script *byte, err *uintptr) int32
	insert         func(db uintptr, typ, device *byte, schema, array uintptr, err *uintptr) int32
	insertStream   func(db uintptr, typ, device *byte, stream uintptr, err *uintptr) int32
	insertLong     func(db uintptr, typ, deviceColumn *byte, schema, array uintptr, err *uintptr) int32
	txInsertLong   func(tx uintptr, typ, deviceColumn *byte, schema, array uintptr, err *uintptr) int32
	scan           func(db uintptr, request *byte, out uintptr, err *uintptr) int32
	scanFirst      func(db uintptr, request *byte, schema, first, rest uintptr, schemaID *uint64, err *uintptr) int32
	aggregate      func(db uintptr, request *byte, out uintptr, err *uintptr) int32
	last           func(db uintptr, request *byte, out uintptr, err *uintptr) int32
	describe       func(db uintptr, typ *byte, json *uintptr, err *uintptr) int32
	setRuntime     func(options *byte, err *uintptr) int32
	cancel         func(db uintptr) int32
	flush          func(db uintptr, err *uintptr) int32
	checkpoint     func(db uintptr, err *uintptr) int32
	compact        func(db uintptr, typ *byte, typN uintptr, err *uintptr) int32
	delete         func(db uintptr, request *byte, err *uintptr) int32
	txDelete       func(tx uintptr, request *byte, err *uintptr) int32
	clone          func(db uintptr, dest *byte, err *uintptr) int32
	stats          func(db uintptr, json *uintptr, err *uintptr) int32
	devices        func(db uintptr, request *byte, json *uintptr, err *uintptr) int32
	deviceList     func(db uintptr, request *byte, schema, array uintptr, err *uintptr) int32
	free           func(p uintptr)
	// The marking release callbacks, to call and as addresses to pass.
	markSchemaReleased, markArrayReleased func(p uintptr)
	markSchemaAddr, markArrayAddr         uintptr
}

// abiN holds the exports that take (pointer, length) pairs.
var abiN struct {
	txExec         func(tx uintptr, script *byte, n uintptr, err *uintptr) int32
	txInsert       func(tx uintptr, typ *byte, typN uintptr, device *byte, deviceN uintptr, schema, array uintptr, err *uintptr) int32
	txInsertStream func(tx uintptr, typ *byte, typN uintptr, device *byte, deviceN uintptr, stream uintptr, err *uintptr) int32
	exec           func(db uintptr, script *byte, n uintptr, err *uintptr) int32
	insert         func(db uintptr, typ *byte, typN uintptr, device *byte, deviceN uintptr, schema, array uintptr, err *uintptr) int32
	insertStream   func(db uintptr, typ *byte, typN uintptr, device *byte, deviceN uintptr, stream uintptr, err *uintptr) int32
	insertLong     func(db uintptr, typ *byte, typN uintptr, col *byte, colN uintptr, schema, array uintptr, err *uintptr) int32
	txInsertLong   func(tx uintptr, typ *byte, typN uintptr, col *byte, colN uintptr, schema, array uintptr, err *uintptr) int32
	describe       func(db uintptr, typ *byte, typN uintptr, json *uintptr, err *uintptr) int32
}

// strlen is the length of the C string s (0 for nil).
func strlen(s *byte) uintptr {
	if s == nil {
		return 0
	}
	n := uintptr(0)
	for *(*byte)(unsafe.Add(unsafe.Pointer(s), n)) != 0 {
		n++
	}
	return n
}

// withLengths makes lib's string-taking functions call abiN with the
// lengths of their C strings.
func withLengths() {
	lib.txExec = func(tx uintptr, script *byte, err *uintptr) int32 {
		return abiN.txExec(tx, script, strlen(script), err)
	}
	lib.exec = func(db uintptr, script *byte, err *uintptr) int32 {
		return abiN.exec(db, script, strlen(script), err)
	}
	lib.txInsert = func(tx uintptr, typ, device *byte, schema, array uintptr, err *uintptr) int32 {
		return abiN.txInsert(tx, typ, strlen(typ), device, strlen(device), schema, array, err)
	}
	lib.insert = func(db uintptr, typ, device *byte, schema, array uintptr, err *uintptr) int32 {
		return abiN.insert(db, typ, strlen(typ), device, strlen(device), schema, array, err)
	}
	lib.txInsertStream = func(tx uintptr, typ, device *byte, stream uintptr, err *uintptr) int32 {
		return abiN.txInsertStream(tx, typ, strlen(typ), device, strlen(device), stream, err)
	}
	lib.insertStream = func(db uintptr, typ, device *byte, stream uintptr, err *uintptr) int32 {
		return abiN.insertStream(db, typ, strlen(typ), device, strlen(device), stream, err)
	}
	lib.insertLong = func(db uintptr, typ, col *byte, schema, array uintptr, err *uintptr) int32 {
		return abiN.insertLong(db, typ, strlen(typ), col, strlen(col), schema, array, err)
	}
	lib.txInsertLong = func(tx uintptr, typ, col *byte, schema, array uintptr, err *uintptr) int32 {
		return abiN.txInsertLong(tx, typ, strlen(typ), col, strlen(col), schema, array, err)
	}
	lib.describe = func(db uintptr, typ *byte, json *uintptr, err *uintptr) int32 {
		return abiN.describe(db, typ, strlen(typ), json, err)
	}
}

// libc is the C allocator the tests build Arrow structs with.
var libc struct {
	calloc           func(n, size uintptr) uintptr
	free             func(p uintptr)
	mallocUsableSize func(p uintptr) uintptr
}

func TestMain(m *testing.M) {
	if err := load(); err != nil {
		fmt.Fprintln(os.Stderr, "abi tests:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func load() error {
	path := os.Getenv("ARCADEGO_LIB")
	if path == "" {
		path = filepath.Join("..", "..", "build", "out", "libarcadego.so")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("%v (build the library first: build/lib.sh, or set ARCADEGO_LIB)", err)
	}
	h, err := purego.Dlopen(abs, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return fmt.Errorf("load %s: %w", abs, err)
	}
	for name, fn := range map[string]any{
		"arcadego_version":              &lib.version,
		"arcadego_open":                 &lib.open,
		"arcadego_close":                &lib.close,
		"arcadego_begin":                &lib.begin,
		"arcadego_tx_exec":              &abiN.txExec,
		"arcadego_tx_insert":            &abiN.txInsert,
		"arcadego_tx_insert_stream":     &abiN.txInsertStream,
		"arcadego_commit":               &lib.commit,
		"arcadego_rollback":             &lib.rollback,
		"arcadego_exec":                 &abiN.exec,
		"arcadego_insert":               &abiN.insert,
		"arcadego_insert_stream":        &abiN.insertStream,
		"arcadego_insert_long":          &abiN.insertLong,
		"arcadego_tx_insert_long":       &abiN.txInsertLong,
		"arcadego_scan":                 &lib.scan,
		"arcadego_scan_first":           &lib.scanFirst,
		"arcadego_aggregate":            &lib.aggregate,
		"arcadego_last":                 &lib.last,
		"arcadego_describe":             &abiN.describe,
		"arcadego_set_runtime":          &lib.setRuntime,
		"arcadego_cancel":               &lib.cancel,
		"arcadego_flush":                &lib.flush,
		"arcadego_checkpoint":           &lib.checkpoint,
		"arcadego_compact":              &lib.compact,
		"arcadego_delete":               &lib.delete,
		"arcadego_tx_delete":            &lib.txDelete,
		"arcadego_clone":                &lib.clone,
		"arcadego_stats":                &lib.stats,
		"arcadego_devices":              &lib.devices,
		"arcadego_device_list":          &lib.deviceList,
		"arcadego_free":                 &lib.free,
		"arcadego_mark_schema_released": &lib.markSchemaReleased,
		"arcadego_mark_array_released":  &lib.markArrayReleased,
	} {
		purego.RegisterLibFunc(fn, h, name)
	}
	if lib.markSchemaAddr, err = purego.Dlsym(h, "arcadego_mark_schema_released"); err != nil {
		return err
	}
	if lib.markArrayAddr, err = purego.Dlsym(h, "arcadego_mark_array_released"); err != nil {
		return err
	}
	withLengths()
	c, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("load libc: %w", err)
	}
	purego.RegisterLibFunc(&libc.calloc, c, "calloc")
	purego.RegisterLibFunc(&libc.free, c, "free")
	purego.RegisterLibFunc(&libc.mallocUsableSize, c, "malloc_usable_size")
	return nil
}

// cstr returns s as a NUL-terminated C string in Go memory (valid during
// the call it is passed to). s may hold any bytes, invalid UTF-8 included.
func cstr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// at reinterprets a C address as a pointer (through memory, so that vet's
// uintptr rule does not apply: C memory never moves).
func at[T any](addr uintptr) *T { return *(**T)(unsafe.Pointer(&addr)) }

// goString copies the C string at addr ("" for NULL).
func goString(addr uintptr) string {
	if addr == 0 {
		return ""
	}
	n := 0
	for *at[byte](addr + uintptr(n)) != 0 {
		n++
	}
	return string(unsafe.Slice(at[byte](addr), n))
}

// words returns n pointer-sized words at addr.
func words(addr uintptr, n int64) []uintptr {
	if n == 0 {
		return nil
	}
	return unsafe.Slice(at[uintptr](addr), n)
}

// cbytes copies b into fresh C memory.
func cbytes(b []byte) uintptr {
	p := libc.calloc(1, uintptr(max(len(b), 1)))
	copy(unsafe.Slice(at[byte](p), len(b)), b)
	return p
}

// callErr runs a call that takes a char **err and returns its status and
// message, freeing the message with arcadego_free. It checks the
// convention: a message on failure, none on success.
func callErr(t testing.TB, fn func(err *uintptr) int32) (int, string) {
	t.Helper()
	errp := uintptr(0xdead) // must be overwritten
	code := int(fn(&errp))
	msg := goString(errp)
	if errp != 0 {
		lib.free(errp)
	}
	if code == codeOK && errp != 0 {
		t.Errorf("status OK with message %q", msg)
	}
	if code != codeOK && msg == "" {
		t.Errorf("status %d without a message", code)
	}
	return code, msg
}
