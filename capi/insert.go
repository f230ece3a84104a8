package main

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/arcadego/arcadego/core/engine"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/internal/cdata"
	"github.com/arcadego/arcadego/internal/unlocked"
)

// batch is one imported record batch and the caller's array it borrows.
type batch struct {
	*cdata.Batch
	arr *C.struct_ArrowArray // the caller's array, released last
	own bool                 // arr is our C.calloc'ed struct (stream batches)
}

// release drops the tablet, then releases the caller's array (the tablet
// reads its buffers).
func (b *batch) release() {
	if b.Batch != nil {
		b.Batch.Release()
		b.Batch = nil // a direct batch is reused by the next import
	}
	C.ag_release_array(b.arr)
	if b.own {
		C.free(unsafe.Pointer(b.arr))
	}
}

// importBatch converts the array ca of input in to a batch. It takes ca:
// on error, ca is released (and freed when own).
func importBatch(in *cdata.Input, ca *C.struct_ArrowArray, own bool) (*batch, error) {
	b := &batch{arr: ca, own: own}
	cb, err := in.Batch(cdata.Addr(ca))
	if err != nil {
		b.release()
		return nil, err
	}
	b.Batch = cb
	return b, nil
}

// typeName returns the type name of an insert, given with its length:
// the last insert's string when the bytes are the same (a loop of small
// inserts into one type then copies none), else a copy.
func (d *dbHandle) typeName(p *C.char, n C.size_t) (string, error) {
	if last := d.lastType.Load(); last != nil && p != nil && uint64(n) == uint64(len(*last)) &&
		unsafe.String((*byte)(unsafe.Pointer(p)), int(n)) == *last {
		return *last, nil
	}
	name, err := goStringN("type", p, n)
	if err == nil && len(name) <= schema.MaxNameLen { // a name too long to be a type's is not kept
		d.lastType.Store(&name)
	}
	return name, err
}

// insertArgs copies the type and device names of an insert, given with
// their lengths (long: the name of the device column, which is required).
func insertArgs(typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, long bool) (string, string, error) {
	name, err := goStringN("type", typ, typLen)
	if err != nil {
		return "", "", err
	}
	dev, err := deviceArg(device, deviceLen, long)
	return name, dev, err
}

// deviceArg copies the device name of an insert, given with its length
// (long: the name of the device column, which is required).
func deviceArg(device *C.char, deviceLen C.size_t, long bool) (string, error) {
	if long {
		return goStringN("device column", device, deviceLen)
	}
	if device == nil {
		return "", nil
	}
	return goStringN("device", device, deviceLen)
}

//export ag_go_tx_insert
func ag_go_tx_insert(tx C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return txInsert(tx, typ, typLen, device, deviceLen, false, cs, ca, cerr)
}

//export ag_go_tx_insert_long
func ag_go_tx_insert_long(tx C.uintptr_t, typ *C.char, typLen C.size_t, deviceColumn *C.char, deviceColumnLen C.size_t, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return txInsert(tx, typ, typLen, deviceColumn, deviceColumnLen, true, cs, ca, cerr)
}

func txInsert(tx C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, long bool, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return insertOne(cerr, typ, typLen, device, deviceLen, long, cs, ca, func() (*dbHandle, *txHandle, error) {
		t, err := lookupTx(uintptr(tx))
		return nil, t, err
	})
}

//export ag_go_insert
func ag_go_insert(db C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return dbInsert(db, typ, typLen, device, deviceLen, false, cs, ca, cerr)
}

//export ag_go_insert_long
func ag_go_insert_long(db C.uintptr_t, typ *C.char, typLen C.size_t, deviceColumn *C.char, deviceColumnLen C.size_t, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return dbInsert(db, typ, typLen, deviceColumn, deviceColumnLen, true, cs, ca, cerr)
}

func dbInsert(db C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, long bool, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return insertOne(cerr, typ, typLen, device, deviceLen, long, cs, ca, func() (*dbHandle, *txHandle, error) {
		d, err := lookupDB(uintptr(db))
		return d, nil, err
	})
}

// insertOne is the body of arcadego_insert, arcadego_tx_insert and their
// _long forms (long: device names the device column): target looks up the
// database (the insert is its own commit) or the transaction the tablet
// goes to; the structs are released on every path. A small insert makes
// no closure and no method value on the heap: at a few microseconds an
// insert, each allocation shows.
func insertOne(cerr **C.char, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, long bool, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray,
	target func() (*dbHandle, *txHandle, error)) C.int {
	return call(cerr, func() error {
		return guarded(func() error {
			defer releaseInput(cs, ca)
			d, t, err := target()
			if err != nil {
				return err
			}
			if t != nil {
				d = t.db
			}
			name, err := d.typeName(typ, typLen)
			if err != nil {
				return err
			}
			dev, err := deviceArg(device, deviceLen, long)
			if err != nil {
				return err
			}
			b, err := importOne(cs, ca, d.timeColumn)
			if err != nil {
				return err
			}
			defer b.Release() // before releaseInput releases the array
			if t != nil {
				// The batch is released when the call returns: the transaction copies it.
				add := func() error {
					return t.use(func(tx *engine.Tx) error {
						t.cells += cells(b.Tablet)
						if long {
							return tx.InsertLong(name, dev, b.Tablet)
						}
						return tx.Insert(name, dev, b.Tablet)
					})
				}
				return unlocked.If(cells(b.Tablet) >= unlockedCells, add)
			}
			if cells(b.Tablet) >= unlockedCells {
				return unlocked.Run(func() error { return commitTablet(d.db, long, name, dev, b.Tablet) })
			}
			return commitTablet(d.db, long, name, dev, b.Tablet)
		})
	})
}

// commitTablet inserts tab into db as a commit of its own.
func commitTablet(db *engine.DB, long bool, name, dev string, tab *tablet.Tablet) error {
	if long {
		return db.InsertLong(name, dev, tab)
	}
	return db.Insert(name, dev, tab)
}

// releaseInput releases an insert's Arrow structs (released ones are left
// as they are), in one call into C: each call costs about as much as
// importing a small batch's column.
func releaseInput(cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray) {
	C.ag_release_input(cs, ca)
}

// unlockedCells is the fewest cells (rows x columns) of an insert that
// runs unlocked: a commit that large writes a file with goroutines
// encoding row groups behind it, and waits for them.
const unlockedCells = 1 << 16

func cells(t *tablet.Tablet) int { return t.Rows() * (1 + len(t.Columns)) }

// importOne imports a (schema, array) pair into a batch. The caller
// releases both (releaseInput), after the batch.
func importOne(cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, timeColumn string) (*cdata.Batch, error) {
	if ca == nil {
		return nil, fmt.Errorf("batch: ArrowArray is NULL: %w", errInvalid)
	}
	if cdata.ArrayReleased(cdata.Addr(ca)) {
		return nil, fmt.Errorf("batch: ArrowArray is already released: %w", errInvalid)
	}
	return cdata.ImportBatch(cdata.Addr(cs), cdata.Addr(ca), timeColumn)
}

// readStream reads the caller's stream batch by batch and hands each to fn,
// which owns it (and must release it). It stops at the end of the stream,
// on the first error, and when ctx is canceled. The stream is released on
// every path.
func readStream(ctx context.Context, cs *C.struct_ArrowArrayStream, timeColumn string, fn func(*batch) error) error {
	if cs == nil {
		return fmt.Errorf("stream: ArrowArrayStream is NULL: %w", errInvalid)
	}
	defer C.ag_release_stream(cs)
	if err := cdata.CheckStream(cdata.Addr(cs)); err != nil {
		return err
	}

	schema := (*C.struct_ArrowSchema)(C.calloc(1, C.sizeof_struct_ArrowSchema))
	defer C.free(unsafe.Pointer(schema))
	// Kept until the stream is read: a batch may need the arrow path's
	// import of it.
	defer C.ag_release_schema(schema)
	if rc := C.ag_stream_get_schema(cs, schema); rc != 0 {
		return streamError(cs, "get_schema", rc)
	}
	in, err := cdata.NewInput(cdata.Addr(schema), timeColumn)
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}

	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stream insert stopped at batch %d, before its commit (nothing of it is written): %w", i, errs.ErrCanceled)
		}
		ca := (*C.struct_ArrowArray)(C.calloc(1, C.sizeof_struct_ArrowArray))
		if rc := C.ag_stream_get_next(cs, ca); rc != 0 {
			C.ag_release_array(ca)
			C.free(unsafe.Pointer(ca))
			return streamError(cs, "get_next", rc)
		}
		if cdata.ArrayReleased(cdata.Addr(ca)) {
			C.free(unsafe.Pointer(ca))
			return nil
		}
		b, err := importBatch(in, ca, true)
		if err != nil {
			return fmt.Errorf("stream batch %d: %w", i, err)
		}
		if err := fn(b); err != nil {
			return fmt.Errorf("stream batch %d: %w", i, err)
		}
	}
}

// streamError reports a failed stream callback with the producer's message.
func streamError(cs *C.struct_ArrowArrayStream, what string, rc C.int) error {
	msg := "(no message)"
	if p := C.ag_stream_get_last_error(cs); p != nil {
		msg = C.GoString(p)
	}
	return fmt.Errorf("stream: %s failed with error %d: %s: %w", what, int(rc), msg, errInvalid)
}

//export ag_go_tx_insert_stream
func ag_go_tx_insert_stream(tx C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return txInsertStream(tx, typ, typLen, device, deviceLen, false, cs, cerr)
}

//export ag_go_tx_insert_stream_long
func ag_go_tx_insert_stream_long(tx C.uintptr_t, typ *C.char, typLen C.size_t, deviceColumn *C.char, deviceColumnLen C.size_t, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return txInsertStream(tx, typ, typLen, deviceColumn, deviceColumnLen, true, cs, cerr)
}

func txInsertStream(tx C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, long bool, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		return guarded(func() error {
			defer C.ag_release_stream(cs)
			t, err := lookupTx(uintptr(tx))
			if err != nil {
				return err
			}
			name, dev, err := insertArgs(typ, typLen, device, deviceLen, long)
			if err != nil {
				return err
			}
			// The engine cannot take back part of a transaction, so the
			// whole stream is read and checked before the first batch goes
			// in: then a batch fails only on what the first one would too
			// (the catalog), and the transaction is left as it was.
			var batches []*batch
			defer func() {
				for _, b := range batches {
					b.release()
				}
			}()
			err = readStream(t.db.context(), cs, t.db.timeColumn, func(b *batch) error {
				batches = append(batches, b)
				if long {
					return nil // below: InsertLong checks a lone batch itself before it adds anything
				}
				return b.Tablet.Validate()
			})
			if err != nil {
				return err
			}
			if long && len(batches) > 1 {
				for i, b := range batches {
					if err := engine.ValidateLong(dev, b.Tablet); err != nil {
						return fmt.Errorf("stream batch %d: %w", i, err)
					}
				}
			}
			return t.use(func(tx *engine.Tx) error {
				for i, b := range batches {
					t.cells += cells(b.Tablet)
					insert := tx.Insert
					if long {
						insert = tx.InsertLong
					}
					if err := insert(name, dev, b.Tablet); err != nil {
						return fmt.Errorf("stream batch %d: %w", i, err)
					}
				}
				return nil
			})
		})
	})
}

//export ag_go_insert_stream
func ag_go_insert_stream(db C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return dbInsertStream(db, typ, typLen, device, deviceLen, false, cs, cerr)
}

//export ag_go_insert_stream_long
func ag_go_insert_stream_long(db C.uintptr_t, typ *C.char, typLen C.size_t, deviceColumn *C.char, deviceColumnLen C.size_t, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return dbInsertStream(db, typ, typLen, deviceColumn, deviceColumnLen, true, cs, cerr)
}

func dbInsertStream(db C.uintptr_t, typ *C.char, typLen C.size_t, device *C.char, deviceLen C.size_t, long bool, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		return guarded(func() error {
			defer C.ag_release_stream(cs)
			d, err := lookupDB(uintptr(db))
			if err != nil {
				return err
			}
			name, dev, err := insertArgs(typ, typLen, device, deviceLen, long)
			if err != nil {
				return err
			}
			tx, err := d.db.Begin()
			if err != nil {
				return err
			}
			// The batches are held until the commit has returned, so the
			// transaction borrows their buffers instead of copying them:
			// the data is copied once, into the memtable.
			var batches []*batch
			defer func() {
				tx.Rollback() // a no-op after Commit
				for _, b := range batches {
					b.release()
				}
			}()
			err = readStream(d.context(), cs, d.timeColumn, func(b *batch) error {
				batches = append(batches, b)
				if long {
					return tx.InsertLongBorrowed(name, dev, b.Tablet)
				}
				return tx.InsertBorrowed(name, dev, b.Tablet)
			})
			if err != nil {
				return err
			}
			total := 0
			for _, b := range batches {
				total += cells(b.Tablet)
			}
			return unlocked.If(total >= unlockedCells, tx.Commit)
		})
	})
}
