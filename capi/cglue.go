package main

/*
#include "bridge.h"
*/
import "C"

import (
	"time"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/internal/cdata"
)

// The C half of the Arrow boundary: internal/cdata reads and writes the
// structs, capi gives it memory and release callbacks.

// internal/cdata's mirrors must match the C layouts exactly (checked at
// compile time), as must the export block header.
var (
	_ [unsafe.Sizeof(cdata.Schema{}) - C.sizeof_struct_ArrowSchema]byte
	_ [C.sizeof_struct_ArrowSchema - unsafe.Sizeof(cdata.Schema{})]byte
	_ [unsafe.Sizeof(cdata.Array{}) - C.sizeof_struct_ArrowArray]byte
	_ [C.sizeof_struct_ArrowArray - unsafe.Sizeof(cdata.Array{})]byte
	_ [unsafe.Sizeof(cdata.Stream{}) - C.sizeof_struct_ArrowArrayStream]byte
	_ [C.sizeof_struct_ArrowArrayStream - unsafe.Sizeof(cdata.Stream{})]byte
	_ [cdata.BlockHeader - C.sizeof_struct_ag_export]byte
	_ [C.sizeof_struct_ag_export - cdata.BlockHeader]byte
	_ [cdata.FlagNullable - C.ARROW_FLAG_NULLABLE]byte
	_ [C.ARROW_FLAG_NULLABLE - cdata.FlagNullable]byte
)

var errInvalid = errs.ErrInvalidArgument

// exportMemory: result blocks come from bridge.c's pool (ag_export_alloc),
// and the structs in them are released by its callbacks.
var exportMemory = cdata.Memory{
	Alloc: func(size uintptr) uintptr { return uintptr(C.ag_export_alloc(C.size_t(size))) },
	Unref: func(addr uintptr) {
		C.ag_export_unref(*(*unsafe.Pointer)(unsafe.Pointer(&addr)))
	},
	SchemaRelease:      uintptr(unsafe.Pointer(C.ag_export_schema_release)),
	SchemaChildRelease: uintptr(unsafe.Pointer(C.ag_export_schema_child_release)),
	ArrayRelease:       uintptr(unsafe.Pointer(C.ag_export_array_release)),
	ArrayChildRelease:  uintptr(unsafe.Pointer(C.ag_export_array_child_release)),
}

// poolMaxAge is how long a released result block is kept for reuse (see
// AG_POOL_MIN in bridge.h): long enough for the next scan of a loop, short
// enough that an idle process gives the memory back.
const poolMaxAge = time.Second

// The kept blocks are trimmed by a goroutine that wakes once per
// poolMaxAge.
func init() {
	go func() {
		for range time.Tick(poolMaxAge) {
			C.ag_pool_trim(C.int64_t(poolMaxAge))
		}
	}()
}
