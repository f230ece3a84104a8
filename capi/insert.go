package main

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arcadego/arcadego/arrowbridge"
	"github.com/arcadego/arcadego/core/engine"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// batch is one imported record batch and its tablet, which borrows the
// caller's buffers until release. rec and done are set when the batch took
// the arrow path.
type batch struct {
	rec  arrow.Record
	tab  *tablet.Tablet
	done func()
	arr  *C.struct_ArrowArray // the caller's array, released last
	own  bool                 // arr is our C.calloc'ed struct (stream batches)
}

// release drops the record, frees the shadow and releases the caller's
// array, in that order (the record reads the array's buffers).
func (b *batch) release() {
	if b.rec != nil {
		b.rec.Release()
	}
	if b.done != nil {
		b.done()
	}
	if b.rec == nil && b.tab != nil {
		putColumns(b.tab.Columns) // a direct tablet's own slice
		b.tab = nil
	}
	C.ag_release_array(b.arr)
	if b.own {
		C.free(unsafe.Pointer(b.arr))
	}
}

// input is the checked schema of an insert (one batch, or every batch of a
// stream), which the caller keeps alive while the input is used and
// releases afterwards.
type input struct {
	addr       uintptr    // the caller's ArrowSchema
	walk       schemaWalk // what importSchema needs
	timeColumn string
	direct     *directSchema // nil: batches take the arrow path
	sch        *arrow.Schema // the arrow path's schema, imported on first use
}

// newInput checks the caller's schema cs and plans its import.
func newInput(cs *C.struct_ArrowSchema, timeColumn string) (*input, error) {
	w, err := checkSchema(cs)
	if err != nil {
		return nil, err
	}
	in := &input{addr: uintptr(unsafe.Pointer(cs)), walk: w, timeColumn: timeColumn}
	if in.direct = planDirect(in.addr, timeColumn); in.direct == nil {
		// The arrow path imports the schema first, as it always did, so
		// that its errors come in the same order.
		if in.sch, err = importSchema(in.addr, w); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// batch imports the array ca and converts it to a tablet: directly when
// the schema allows and the direct path accepts the array, else through
// the arrow path (which reports the error for anything the direct path
// refused). It takes ca: on error, ca is released (and freed when own).
func (in *input) batch(ca *C.struct_ArrowArray, own bool) (*batch, error) {
	if in.direct != nil {
		if t := in.direct.tablet(uintptr(unsafe.Pointer(ca))); t != nil {
			return &batch{tab: t, arr: ca, own: own}, nil
		}
	}
	if in.sch == nil {
		sch, err := importSchema(in.addr, in.walk)
		if err != nil {
			b := &batch{arr: ca, own: own}
			b.release()
			return nil, err
		}
		in.sch = sch
	}
	return toBatch(in.sch, ca, own, in.timeColumn)
}

// toBatch imports the array ca of schema sch through arrow/cdata and
// converts it to a tablet with arrowbridge. It takes ca: on error, ca is
// released (and freed when own).
func toBatch(sch *arrow.Schema, ca *C.struct_ArrowArray, own bool, timeColumn string) (*batch, error) {
	b := &batch{arr: ca, own: own}
	rec, done, err := importRecord(sch, ca)
	if err != nil {
		b.release()
		return nil, err
	}
	b.rec, b.done = rec, done
	if b.tab, err = arrowbridge.ToTablet(rec, timeColumn); err != nil {
		b.release()
		return nil, err
	}
	return b, nil
}

// insertArgs copies the type and device names of an insert (long: the
// name of the device column, which is required).
func insertArgs(typ, device *C.char, long bool) (string, string, error) {
	name, err := goString("type", typ)
	if err != nil {
		return "", "", err
	}
	if long {
		col, err := goString("device column", device)
		return name, col, err
	}
	return name, optString(device), nil
}

//export ag_go_tx_insert
func ag_go_tx_insert(tx C.uintptr_t, typ, device *C.char, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return txInsert(tx, typ, device, false, cs, ca, cerr)
}

//export ag_go_tx_insert_long
func ag_go_tx_insert_long(tx C.uintptr_t, typ, deviceColumn *C.char, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return txInsert(tx, typ, deviceColumn, true, cs, ca, cerr)
}

func txInsert(tx C.uintptr_t, typ, device *C.char, long bool, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return insertOne(cerr, typ, device, long, cs, ca, func() (string, func(name, dev string, tab *tablet.Tablet) error, error) {
		t, err := lookupTx(uintptr(tx))
		if err != nil {
			return "", nil, err
		}
		// The batch is released when the call returns: the transaction copies it.
		return t.db.timeColumn, func(name, dev string, tab *tablet.Tablet) error {
			return t.use(func(tx *engine.Tx) error {
				if long {
					return tx.InsertLong(name, dev, tab)
				}
				return tx.Insert(name, dev, tab)
			})
		}, nil
	})
}

//export ag_go_insert
func ag_go_insert(db C.uintptr_t, typ, device *C.char, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return dbInsert(db, typ, device, false, cs, ca, cerr)
}

//export ag_go_insert_long
func ag_go_insert_long(db C.uintptr_t, typ, deviceColumn *C.char, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return dbInsert(db, typ, deviceColumn, true, cs, ca, cerr)
}

func dbInsert(db C.uintptr_t, typ, device *C.char, long bool, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, cerr **C.char) C.int {
	return insertOne(cerr, typ, device, long, cs, ca, func() (string, func(name, dev string, tab *tablet.Tablet) error, error) {
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return "", nil, err
		}
		if long {
			return d.timeColumn, d.db.InsertLong, nil
		}
		return d.timeColumn, d.db.Insert, nil
	})
}

// insertOne is the body of arcadego_insert, arcadego_tx_insert and their
// _long forms (long: device names the device column): target looks up the
// handle and says where the tablet goes; the structs are released on every
// path.
func insertOne(cerr **C.char, typ, device *C.char, long bool, cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray,
	target func() (timeColumn string, insert func(name, dev string, tab *tablet.Tablet) error, err error)) C.int {
	return call(cerr, func() error {
		return guarded(func() error {
			defer C.ag_release_array(ca)
			defer C.ag_release_schema(cs)
			timeColumn, insert, err := target()
			if err != nil {
				return err
			}
			name, dev, err := insertArgs(typ, device, long)
			if err != nil {
				return err
			}
			b, err := importOne(cs, ca, timeColumn)
			if err != nil {
				return err
			}
			defer b.release()
			return insert(name, dev, b.tab)
		})
	})
}

// importOne imports a (schema, array) pair into a batch.
func importOne(cs *C.struct_ArrowSchema, ca *C.struct_ArrowArray, timeColumn string) (*batch, error) {
	if ca == nil {
		return nil, fmt.Errorf("batch: ArrowArray is NULL: %w", errInvalid)
	}
	if at[rawArray](uintptr(unsafe.Pointer(ca))).release == 0 {
		return nil, fmt.Errorf("batch: ArrowArray is already released: %w", errInvalid)
	}
	defer C.ag_release_schema(cs)
	in, err := newInput(cs, timeColumn)
	if err != nil {
		return nil, err
	}
	return in.batch(ca, false)
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
	raw := at[rawStream](uintptr(unsafe.Pointer(cs)))
	switch {
	case raw.release == 0:
		return fmt.Errorf("stream: ArrowArrayStream is already released: %w", errInvalid)
	case raw.getSchema < minAddr || raw.getNext < minAddr:
		return fmt.Errorf("stream: get_schema or get_next callback is missing: %w", errInvalid)
	case raw.getLastError != 0 && raw.getLastError < minAddr:
		return fmt.Errorf("stream: get_last_error callback pointer %#x is not valid: %w", raw.getLastError, errInvalid)
	}

	schema := (*C.struct_ArrowSchema)(C.calloc(1, C.sizeof_struct_ArrowSchema))
	defer C.free(unsafe.Pointer(schema))
	// Kept until the stream is read: a batch may need the arrow path's
	// import of it.
	defer C.ag_release_schema(schema)
	if rc := C.ag_stream_get_schema(cs, schema); rc != 0 {
		return streamError(cs, "get_schema", rc)
	}
	in, err := newInput(schema, timeColumn)
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
		if at[rawArray](uintptr(unsafe.Pointer(ca))).release == 0 {
			C.free(unsafe.Pointer(ca))
			return nil
		}
		b, err := in.batch(ca, true)
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
func ag_go_tx_insert_stream(tx C.uintptr_t, typ, device *C.char, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return txInsertStream(tx, typ, device, false, cs, cerr)
}

//export ag_go_tx_insert_stream_long
func ag_go_tx_insert_stream_long(tx C.uintptr_t, typ, deviceColumn *C.char, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return txInsertStream(tx, typ, deviceColumn, true, cs, cerr)
}

func txInsertStream(tx C.uintptr_t, typ, device *C.char, long bool, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		return guarded(func() error {
			defer C.ag_release_stream(cs)
			t, err := lookupTx(uintptr(tx))
			if err != nil {
				return err
			}
			name, dev, err := insertArgs(typ, device, long)
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
				return b.tab.Validate()
			})
			if err != nil {
				return err
			}
			return t.use(func(tx *engine.Tx) error {
				for i, b := range batches {
					insert := tx.Insert
					if long {
						insert = tx.InsertLong
					}
					if err := insert(name, dev, b.tab); err != nil {
						return fmt.Errorf("stream batch %d: %w", i, err)
					}
				}
				return nil
			})
		})
	})
}

//export ag_go_insert_stream
func ag_go_insert_stream(db C.uintptr_t, typ, device *C.char, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return dbInsertStream(db, typ, device, false, cs, cerr)
}

//export ag_go_insert_stream_long
func ag_go_insert_stream_long(db C.uintptr_t, typ, deviceColumn *C.char, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return dbInsertStream(db, typ, deviceColumn, true, cs, cerr)
}

func dbInsertStream(db C.uintptr_t, typ, device *C.char, long bool, cs *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		return guarded(func() error {
			defer C.ag_release_stream(cs)
			d, err := lookupDB(uintptr(db))
			if err != nil {
				return err
			}
			name, dev, err := insertArgs(typ, device, long)
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
					return tx.InsertLongBorrowed(name, dev, b.tab)
				}
				return tx.InsertBorrowed(name, dev, b.tab)
			})
			if err != nil {
				return err
			}
			return tx.Commit()
		})
	})
}
