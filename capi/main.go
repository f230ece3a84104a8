// Package main is libarcadego's C ABI: the //export arcadego_* functions
// declared in arcadego.h, built with -buildmode=c-shared. It only
// translates between C and the engine: handles, status codes and messages,
// JSON options, and the calls around the Arrow C Data Interface (releasing
// the caller's structs, C memory for results), whose structs
// internal/cdata reads and writes. It is the only package of the module
// that uses cgo, and it must hold no logic that a Go caller of the engine
// would also need, nor any Arrow logic.
//
// Rules that every export follows:
//
//   - Handles are integers from a counter that never repeats, looked up in
//     a table under a mutex (handles.go). C sees them as opaque pointers; Go
//     never holds them in a pointer-typed variable (the garbage collector
//     aborts on pointer values below 4096), which is why the exports take
//     uintptr_t where arcadego.h says arcadego_db*. Both are one machine
//     word, passed the same way on every supported platform.
//   - No Go pointer is ever stored in C memory: messages are C.CString,
//     results are written into C blocks (cglue.go, internal/cdata's
//     export.go), and imported tablets point into the caller's C buffers,
//     not the reverse.
//   - A panic never crosses the boundary: call() recovers it into
//     ARCADEGO_INTERNAL.
//   - Arrow structs passed in are moved: released on every path, after the
//     tablet that borrows their buffers (internal/cdata's import.go
//     explains the import and why arrow/cdata is not used).
package main

/*
#cgo CFLAGS: -O2 -Wall
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/gcpace"
)

// version is the library version reported by arcadego_version: the
// Python package's (python/arcadego/_version.py), set by build/lib.sh with
// -ldflags -X; "dev" in a build that did not set it.
var version = "dev"

func main() {}

// The library's Go runtime serves the engine alone, so it paces the
// collector to the memtables (package gcpace), unless the process set a
// memory limit through GOMEMLIMIT; arcadego_set_runtime's memory_limit
// turns pacing off.
func init() {
	if os.Getenv("GOMEMLIMIT") == "" {
		gcpace.Enable()
	}
}

// status is the C status code of err (errs.Code).
func status(err error) C.int { return C.int(errs.Code(err)) }

// call runs fn as the body of an export: it clears *cerr, recovers a panic
// into ARCADEGO_INTERNAL and stores the message of a failure in *cerr.
func call(cerr **C.char, fn func() error) (code C.int) {
	if cerr != nil {
		*cerr = nil
	}
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("panic in libarcadego (please report it): %v: %w", r, errs.ErrInternal)
			code = fail(cerr, err)
		}
	}()
	return fail(cerr, fn())
}

// fail stores err's message in *cerr (when both are set) and returns its code.
func fail(cerr **C.char, err error) C.int {
	if err == nil {
		return C.int(errs.CodeOK)
	}
	if cerr != nil {
		*cerr = C.CString(err.Error())
	}
	return status(err)
}

// guarded runs fn with faults on bad addresses turned into panics instead
// of killing the host process, and reports such a fault as bad input:
// Arrow buffers are read through pointers that can be checked only so far
// (a buffer shorter than its array says, or already freed). Other panics
// go on to call, which reports them as internal errors.
func guarded(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("reading the Arrow input faulted at address %#x: a buffer is shorter than its array says, or was freed: %w",
				f.Addr(), errs.ErrInvalidArgument)
		}
	}()
	return fn()
}

// goString copies a C string; what names it in the error when it is NULL.
func goString(what string, s *C.char) (string, error) {
	if s == nil {
		return "", fmt.Errorf("%s is NULL: %w", what, errs.ErrInvalidArgument)
	}
	return C.GoString(s), nil
}

// maxStringBytes bounds a string given with its length (a name, a device,
// a DDL script): a larger length is a caller's bug, not a string.
const maxStringBytes = 1 << 30

// goStringN copies the n bytes at s, which may hold any byte, NUL
// included (the checks of names refuse control characters, and name
// them); what names it in the error when s is NULL or n too large.
func goStringN(what string, s *C.char, n C.size_t) (string, error) {
	switch {
	case s == nil:
		return "", fmt.Errorf("%s is NULL: %w", what, errs.ErrInvalidArgument)
	case n > maxStringBytes:
		return "", fmt.Errorf("%s length %d is larger than %d bytes: %w", what, uint64(n), maxStringBytes, errs.ErrInvalidArgument)
	}
	return C.GoStringN(s, C.int(n)), nil
}

// optString copies a C string, "" for NULL.
func optString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

var versionString = C.CString(version) // allocated once, never freed

//export ag_go_version
func ag_go_version() *C.char { return versionString }
