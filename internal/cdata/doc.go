// Package cdata owns the Arrow C Data Interface of the library, in both
// directions, without cgo: it reads a caller's struct ArrowSchema and
// struct ArrowArray trees through unsafe, by address, checks every count,
// pointer, offset and bound against the Arrow layout of their types, and
// turns a record batch into a tablet that borrows its buffers (import.go,
// tablet.go); and it writes scan results as Arrow structs and buffers into
// blocks of foreign memory (export.go).
//
// It never calls a C function: releasing a caller's struct, allocating
// and freeing export blocks and the release callbacks of exported structs
// belong to the caller (capi), which passes them in as addresses and
// functions. So the package is tested and fuzzed with structs built in Go
// memory, in plain go test.
//
// It must not hold a caller's pointer in a pointer-typed Go variable
// before checking it (dangling pointers such as 0x1 abort the garbage
// collector), nor write to the caller's memory.
package cdata
