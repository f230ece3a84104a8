package main

/*
#include <errno.h>
#include "bridge.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/arcadego/arcadego/core/engine"
	"github.com/arcadego/arcadego/core/errs"
)

// Scan results leave as an ArrowArrayStream whose callbacks (bridge.c) call
// agResultSchema, agResultNext and agResultRelease with a token of the
// result table. We do not use cdata.ExportRecordReader: its get_last_error
// leaks a C string per call (it stores the string in a copy of its reader),
// and it reports every error as EIO, where a canceled scan should say
// ECANCELED. The schema and batches are written by resultout.go, all in C
// memory.

// result is one open result stream. mu serializes its callbacks, which
// the consumer may call from any thread.
type result struct {
	mu   sync.Mutex
	db   *dbHandle
	rows *engine.Rows
	cols *resultColumns
}

// scanRequest is the request_json of arcadego_scan.
type scanRequest struct {
	Type       *string  `json:"type"`
	Devices    []string `json:"devices"`
	Properties []string `json:"properties"`
	Start      *int64   `json:"start"`
	End        *int64   `json:"end"`
	BatchRows  *int     `json:"batch_rows"`
}

func parseScanRequest(cjson *C.char) (engine.ScanRequest, error) {
	src, err := goString("scan request", cjson)
	if err != nil {
		return engine.ScanRequest{}, err
	}
	var r scanRequest
	if err := decodeJSON("scan request", src, &r); err != nil {
		return engine.ScanRequest{}, err
	}
	if r.Type == nil {
		return engine.ScanRequest{}, fmt.Errorf("scan request: \"type\" is required: %w", errInvalid)
	}
	req := engine.ScanRequest{Type: *r.Type, Devices: r.Devices, Properties: r.Properties, Start: r.Start, End: r.End}
	if r.BatchRows != nil {
		if *r.BatchRows <= 0 {
			return req, fmt.Errorf("scan request: batch_rows %d must be > 0: %w", *r.BatchRows, errInvalid)
		}
		req.BatchRows = *r.BatchRows
	}
	return req, nil
}

//export arcadego_scan
func arcadego_scan(db C.uintptr_t, requestJSON *C.char, out *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		if out == nil {
			return fmt.Errorf("scan: out is NULL: %w", errInvalid)
		}
		C.memset(unsafe.Pointer(out), 0, C.sizeof_struct_ArrowArrayStream)
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		req, err := parseScanRequest(requestJSON)
		if err != nil {
			return err
		}
		rows, err := d.db.Scan(d.context(), req)
		if err != nil {
			return err
		}
		var unit, zone string
		if t := rows.Type(); t.TimeSet {
			unit, zone = t.TimeUnit, t.TimeZone
		}
		cols, err := newResultColumns(d.timeColumn, unit, zone, rows.Properties())
		if err != nil {
			rows.Close()
			return err
		}
		r := &result{db: d, rows: rows, cols: cols}
		table.mu.Lock()
		token := newToken()
		table.results[token] = r
		table.mu.Unlock()
		if rc := C.ag_result_init(out, C.uintptr_t(token)); rc != 0 {
			dropResult(token)
			return fmt.Errorf("scan: out of memory for the result stream: %w", errs.ErrInternal)
		}
		return nil
	})
}

func lookupResult(token uintptr) *result {
	table.mu.Lock()
	defer table.mu.Unlock()
	return table.results[token]
}

func dropResult(token uintptr) {
	table.mu.Lock()
	r := table.results[token]
	delete(table.results, token)
	table.mu.Unlock()
	if r != nil {
		r.mu.Lock()
		r.rows.Close()
		r.mu.Unlock()
	}
}

// setError stores err as the stream's last error and returns its errno.
func setError(cr *C.struct_ag_result, err error) C.int {
	C.free(unsafe.Pointer(cr.last_error))
	cr.last_error = C.CString(err.Error())
	switch {
	case errors.Is(err, errs.ErrCanceled):
		return C.ECANCELED
	case errors.Is(err, errs.ErrInvalidArgument):
		return C.EINVAL
	case errors.Is(err, errs.ErrNotFound):
		return C.ENOENT
	}
	return C.EIO
}

// resultCall runs a stream callback body, turning a panic into EIO.
func resultCall(cr *C.struct_ag_result, fn func(*result) error) (rc C.int) {
	defer func() {
		if p := recover(); p != nil {
			rc = setError(cr, fmt.Errorf("panic in libarcadego (please report it): %v: %w", p, errs.ErrInternal))
		}
	}()
	r := lookupResult(uintptr(cr.id))
	if r == nil {
		return setError(cr, fmt.Errorf("result stream is released: %w", errInvalid))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := fn(r); err != nil {
		return setError(cr, err)
	}
	return 0
}

//export agResultSchema
func agResultSchema(cr *C.struct_ag_result, out *C.struct_ArrowSchema) C.int {
	return resultCall(cr, func(r *result) error {
		return r.cols.exportSchema(out)
	})
}

//export agResultNext
func agResultNext(cr *C.struct_ag_result, out *C.struct_ArrowArray) C.int {
	return resultCall(cr, func(r *result) error {
		b, ok := r.rows.Next()
		if !ok {
			err := r.rows.Err() // nil: end of stream, out stays released
			if errors.Is(err, errs.ErrCanceled) && r.db.isClosed() {
				// arcadego_close canceled the scan: say so.
				return fmt.Errorf("%v: the database was closed: %w", err, errs.ErrCanceled)
			}
			return err
		}
		return r.cols.exportBatch(b.Device, b.Rows, out)
	})
}

//export agResultRelease
func agResultRelease(token C.uintptr_t) {
	defer func() { _ = recover() }() // nothing to report to: release returns void
	dropResult(uintptr(token))
}
