package cdata

import (
	"fmt"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
)

// Schema, Array and Stream are struct ArrowSchema, struct ArrowArray and
// struct ArrowArrayStream with every pointer read as an integer: Go never
// holds a pointer of the caller in a pointer-typed variable before
// checking it (see minAddr). Their sizes are those of the C structs on
// 64-bit platforms; capi checks them against its C headers at compile
// time.
type Schema struct {
	Format, Name, Metadata uintptr
	Flags, NChildren       int64
	Children, Dictionary   uintptr
	Release, PrivateData   uintptr
}

type Array struct {
	Length, NullCount, Offset, NBuffers, NChildren int64
	Buffers, Children, Dictionary                  uintptr
	Release, PrivateData                           uintptr
}

type Stream struct {
	GetSchema, GetNext, GetLastError, Release, PrivateData uintptr
}

// Flags of ArrowSchema.
const (
	FlagDictionaryOrdered = 1
	FlagNullable          = 2
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
	// maxBuffer bounds the bytes of one buffer (a 47-bit user address
	// space), so that sizes never overflow and a Go slice can span them.
	maxBuffer = 1 << 47
)

var (
	sizeofSchema = unsafe.Sizeof(Schema{})
	sizeofArray  = unsafe.Sizeof(Array{})
	sizeofWord   = unsafe.Sizeof(uintptr(0))
	errInvalid   = errs.ErrInvalidArgument
)

// zeros stand in for the few bytes an empty array still has (the one
// offset of a zero-length string array) when its buffer pointer is NULL or
// dangling. Never written.
var zeros [64]uint64

// at reinterprets an address, already checked to be >= minAddr, as a
// pointer (the conversion goes through memory, so vet's uintptr rule does
// not apply: the address is the caller's and does not move).
func at[T any](addr uintptr) *T { return *(**T)(unsafe.Pointer(&addr)) }

// Addr returns the address of p, for the callers that hold the C structs.
func Addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// ArrayReleased reports whether the struct ArrowArray at addr (>= minAddr)
// is released.
func ArrayReleased(addr uintptr) bool { return at[Array](addr).Release == 0 }

// words returns the n pointer-sized words at addr (>= minAddr unless n is 0).
func words(addr uintptr, n int64) []uintptr {
	if n == 0 {
		return nil
	}
	return unsafe.Slice(at[uintptr](addr), n)
}

// bytesAt returns the n bytes at addr (0 when n is 0) as a slice over the
// caller's memory.
func bytesAt(addr uintptr, n int64) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice(at[byte](addr), n)
}

// cView returns the C string at addr (>= minAddr) without copying: valid
// while the caller's struct is, and never kept.
func cView(addr uintptr) string {
	p := at[byte](addr)
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return unsafe.String(p, n)
}

// cEqual reports whether the C string at addr (>= minAddr) is s, which
// holds no NUL: it reads no further than the string's end or s's.
func cEqual(addr uintptr, s string) bool {
	p := unsafe.Pointer(at[byte](addr))
	for i := range len(s) {
		if *(*byte)(unsafe.Add(p, i)) != s[i] {
			return false
		}
	}
	return *(*byte)(unsafe.Add(p, len(s))) == 0
}

// cString copies the C string at addr (0 or >= minAddr).
func cString(addr uintptr) string {
	if addr == 0 {
		return ""
	}
	return string([]byte(cView(addr)))
}

// CheckStream checks the caller's struct ArrowArrayStream at addr before
// its callbacks are called.
func CheckStream(addr uintptr) error {
	if addr < minAddr {
		return fmt.Errorf("stream: ArrowArrayStream pointer %#x is not valid: %w", addr, errInvalid)
	}
	s := at[Stream](addr)
	switch {
	case s.Release == 0:
		return fmt.Errorf("stream: ArrowArrayStream is already released: %w", errInvalid)
	case s.GetSchema < minAddr || s.GetNext < minAddr:
		return fmt.Errorf("stream: get_schema or get_next callback is missing: %w", errInvalid)
	case s.GetLastError != 0 && s.GetLastError < minAddr:
		return fmt.Errorf("stream: get_last_error callback pointer %#x is not valid: %w", s.GetLastError, errInvalid)
	}
	return nil
}
