package main

/*
#include <errno.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/arcadego/arcadego/core/engine"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/internal/cdata"
	"github.com/arcadego/arcadego/internal/flatjson"
	"github.com/arcadego/arcadego/internal/unlocked"
)

// Scan results leave as an ArrowArrayStream whose callbacks (bridge.c) call
// agResultSchema, agResultNext and agResultRelease with a token of the
// result table. We do not use cdata.ExportRecordReader: its get_last_error
// leaks a C string per call (it stores the string in a copy of its reader),
// and it reports every error as EIO, where a canceled scan should say
// ECANCELED. The schema and batches are written by internal/cdata's
// export.go, all in C memory.

// result is one open result stream. mu serializes its callbacks, which
// the consumer may call from any thread.
type result struct {
	mu        sync.Mutex
	db        *dbHandle
	rows      batchSource
	typeName  string
	bufs      *decodeBuffers
	mem       cdata.Memory // exportMemory, with bufs' blocks to point to
	cols      *cdata.Result
	plan      *resultPlan     // cols and their layout id
	batchRows int             // the most rows of a batch
	held      *engine.Batch   // read from rows, not yet exported
	ended     bool            // rows has no more batches
	wait      bool            // reading rows may wait for other goroutines: read it unlocked
	ctx       context.Context // a scan's: canceled by arcadego_cancel and _close (nil: none)
}

// batchSource is what a result stream reads: a scan (*engine.Rows) or the
// batches of an aggregate.
type batchSource interface {
	Next() (engine.Batch, bool)
	Err() error
	Close()
}

// batchList is a batchSource of batches in hand.
type batchList struct{ batches []engine.Batch }

func (l *batchList) Next() (engine.Batch, bool) {
	if len(l.batches) == 0 {
		return engine.Batch{}, false
	}
	b := l.batches[0]
	l.batches = l.batches[1:]
	return b, true
}

func (l *batchList) Err() error { return nil }
func (l *batchList) Close()     { l.batches = nil }

// joinBelow is the size under which a scan's batches (a device's rows, or
// the part of them in one row group) are joined with the next ones into
// one result batch of up to batchRows rows.
const joinBelow = 8192

// nextParts returns the parts of the next result batch, none at the end
// of the stream: the scan's batches in order, those of fewer than
// joinBelow rows joined up to batchRows rows. The scan may reuse a
// batch's memory at its next Next, so a batch kept across it is cloned,
// unless it is stable (memtable rows, often views of the memtable's
// blocks: copied once, into the result).
func (r *result) nextParts() ([]cdata.Part, error) {
	var parts []cdata.Part
	rows := 0
	for rows < r.batchRows {
		if r.held == nil {
			if r.ended {
				break
			}
			b, ok := r.rows.Next()
			if !ok {
				r.ended = true
				if err := r.rows.Err(); err != nil {
					return nil, err
				}
				break
			}
			r.held = &b
		}
		m := r.held.Rows.Rows()
		if len(parts) > 0 && (m >= joinBelow || rows+m > r.batchRows) {
			break // it starts the next batch
		}
		if m >= joinBelow {
			parts = append(parts, cdata.Part{Device: r.held.Device, Devices: r.held.Devices, Rows: r.held.Rows})
			r.held = nil
			break
		}
		part := r.held.Rows
		if !r.held.Stable {
			part = part.Clone()
		}
		parts = append(parts, cdata.Part{Device: r.held.Device, Devices: r.held.Devices, Rows: part})
		rows += m
		r.held = nil
	}
	return parts, nil
}

// hold reads the scan's next batch into r.held (nextParts takes it from
// there), or marks the end.
func (r *result) hold() error {
	b, ok := r.rows.Next()
	if !ok {
		r.ended = true
		return r.rows.Err()
	}
	r.held = &b
	return nil
}

// decodeBuffers is a scan's segment.Buffers: blocks of bridge.c's
// (ag_export_alloc) that the scan decodes flushed rows into, and that the
// result's batches point to instead of copying them (cdata.Memory.Owner),
// each holding a reference on its block. The scan holds one reference on
// each block it is decoding into, dropped by Put.
type decodeBuffers struct {
	mu     sync.Mutex
	blocks map[uintptr]int // the data address of each block the scan holds, and its size
}

func newDecodeBuffers() *decodeBuffers { return &decodeBuffers{blocks: map[uintptr]int{}} }

func (d *decodeBuffers) Get(n int) []byte {
	p := C.ag_export_alloc(C.size_t(cdata.BlockHeader + n))
	if p == nil {
		return make([]byte, n) // the Go heap: batches copy it
	}
	h := (*C.struct_ag_export)(p)
	h.refs, h.nheld, h.held = 1, 0, 0
	data := uintptr(p) + cdata.BlockHeader
	d.mu.Lock()
	d.blocks[data] = n
	d.mu.Unlock()
	return unsafe.Slice((*byte)(unsafe.Add(p, cdata.BlockHeader)), n)
}

func (d *decodeBuffers) Put(b []byte) {
	data := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	d.mu.Lock()
	_, ok := d.blocks[data]
	delete(d.blocks, data)
	d.mu.Unlock()
	if ok {
		C.ag_export_unref(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), -cdata.BlockHeader))
	}
}

// owner returns the block whose data holds addr, if the scan holds it.
func (d *decodeBuffers) owner(addr uintptr) uintptr {
	d.mu.Lock()
	defer d.mu.Unlock()
	for data, n := range d.blocks {
		if addr >= data && addr < data+uintptr(n) {
			return data - cdata.BlockHeader
		}
	}
	return 0
}

// scanRequest is the request_json of arcadego_scan.
type scanRequest struct {
	Type       *string         `json:"type"`
	Devices    []string        `json:"devices"`
	Prefix     string          `json:"device_prefix"`
	Properties []string        `json:"properties"`
	Start      *int64          `json:"start"`
	End        *int64          `json:"end"`
	BatchRows  *int            `json:"batch_rows"`
	WithDevice *bool           `json:"with_device"`
	Where      json.RawMessage `json:"where"`
}

// readFlat reads the common requests (no "where", no escapes) through
// flatjson rather than encoding/json, whose reflection was a tenth of a
// point read's time in the library; false leaves the request to
// decodeJSON, which reads it whole and reports what is wrong.
func (r *scanRequest) readFlat(src string) bool {
	return flatjson.Parse(src, func(key string, v flatjson.Value) bool {
		switch {
		case key == "type" && v.Kind == flatjson.String:
			r.Type = &v.Str
		case key == "devices" && v.Kind == flatjson.Strings:
			r.Devices = v.Strs
		case key == "device_prefix" && v.Kind == flatjson.String:
			r.Prefix = v.Str
		case key == "properties" && v.Kind == flatjson.Strings:
			r.Properties = v.Strs
		case key == "start" && v.Kind == flatjson.Int:
			r.Start = &v.Int
		case key == "end" && v.Kind == flatjson.Int:
			r.End = &v.Int
		case key == "batch_rows" && v.Kind == flatjson.Int && int64(int(v.Int)) == v.Int:
			n := int(v.Int)
			r.BatchRows = &n
		case key == "with_device" && v.Kind == flatjson.Bool:
			r.WithDevice = &v.Bool
		default:
			return false
		}
		return true
	})
}

// parseWhere decodes the "where" of a request, nil when absent.
func parseWhere(raw json.RawMessage) (*engine.Where, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	return engine.ParseWhere(raw)
}

// parseScanRequest returns the engine's request and whether the result
// has a device column.
func parseScanRequest(cjson *C.char) (engine.ScanRequest, bool, error) {
	src, err := goString("scan request", cjson)
	if err != nil {
		return engine.ScanRequest{}, false, err
	}
	var r scanRequest
	if !r.readFlat(src) {
		r = scanRequest{}
		if err := decodeJSON("scan request", src, &r); err != nil {
			return engine.ScanRequest{}, false, err
		}
	}
	if r.Type == nil {
		return engine.ScanRequest{}, false, fmt.Errorf("scan request: \"type\" is required: %w", errInvalid)
	}
	withDevice := r.WithDevice == nil || *r.WithDevice
	if !withDevice && (r.Devices == nil || len(r.Devices) > 1) {
		// Rows of several devices without their names would be ambiguous.
		return engine.ScanRequest{}, false, fmt.Errorf("scan request: \"with_device\": false needs \"devices\" naming one device, got %d: %w",
			len(r.Devices), errInvalid)
	}
	// Each batch is copied into C memory by exportBatch before the next is
	// read, so the scan may reuse its decode buffers.
	req := engine.ScanRequest{Type: *r.Type, Devices: r.Devices, DevicePrefix: r.Prefix, Properties: r.Properties,
		Start: r.Start, End: r.End, ReuseBatches: true}
	if r.BatchRows != nil {
		if *r.BatchRows <= 0 {
			return req, false, fmt.Errorf("scan request: batch_rows %d must be > 0: %w", *r.BatchRows, errInvalid)
		}
		req.BatchRows = *r.BatchRows
	}
	where, err := parseWhere(r.Where)
	if err != nil {
		return req, false, fmt.Errorf("scan request: %w", err)
	}
	req.Where = where
	return req, withDevice, nil
}

//export ag_go_scan
func ag_go_scan(db C.uintptr_t, requestJSON *C.char, out *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		if out == nil {
			return fmt.Errorf("scan: out is NULL: %w", errInvalid)
		}
		r, err := startScan(db, requestJSON)
		if err != nil {
			return err
		}
		return openResult(r, out)
	})
}

// ag_go_scan_first starts a scan and reads its first batch in the same
// call (its outputs cleared by the C wrapper, as ag_go_scan's): a result
// that fits in one batch (a point read) costs one call from C into Go
// instead of five (scan, get_schema, two get_next, release), each of
// which wakes the Go runtime from where the caller's own work left it.
//
//export ag_go_scan_first
func ag_go_scan_first(db C.uintptr_t, requestJSON *C.char, schemaOut *C.struct_ArrowSchema, firstOut *C.struct_ArrowArray,
	restOut *C.struct_ArrowArrayStream, schemaID *C.uint64_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		if schemaOut == nil || firstOut == nil || restOut == nil {
			return fmt.Errorf("scan_first: schema_out, first_out and rest_out must not be NULL: %w", errInvalid)
		}
		r, err := startScan(db, requestJSON)
		if err != nil {
			return err
		}
		done := false
		defer func() { // a failure (or panic) leaves nothing to release
			if !done {
				r.rows.Close()
				C.ag_release_array(firstOut)
				C.ag_release_schema(schemaOut)
			}
		}()
		if err := r.cols.ExportSchema(&exportMemory, cdata.Addr(schemaOut)); err != nil {
			return err
		}
		if err := r.exportNext(firstOut); err != nil {
			return err
		}
		// Whether more follows: the next batch is read now (the first is
		// exported, so the scan may reuse its memory) and held for the
		// stream. A failure here fails the call, as it would the read.
		if !r.ended && r.held == nil {
			if err := unlocked.If(r.wait, r.hold); err != nil {
				return r.scanError(err)
			}
		}
		if schemaID != nil {
			*schemaID = C.uint64_t(r.plan.schemaID())
		}
		if r.ended && r.held == nil {
			r.rows.Close()
		} else if err := openResult(r, restOut); err != nil {
			return err
		}
		done = true // nothing may fail after the rest stream is made
		return nil
	})
}

// resultSchemas numbers the distinct result schemas arcadego_scan_first
// returns, so that a caller may import a schema once and reuse it for
// later results of the same id: importing a schema cost pyarrow more than
// importing the batch (15 of a point read's 24 µs of imports).
var resultSchemas = schemaIDs{ids: map[string]uint64{}}

// maxSchemaBytes bounds the layouts the table keeps: past it, the table
// starts over, and a layout seen before gets a new id. Ids are never
// given twice, so a caller's schema of an old id is never taken for a
// new layout.
const maxSchemaBytes = 4 << 20

type schemaIDs struct {
	mu    sync.Mutex
	ids   map[string]uint64 // by cdata.Result.Layout
	bytes int               // of the layouts in ids
	last  uint64            // the last id given
}

// id returns the id of the schema of the given layout, numbering it if it
// is new.
func (t *schemaIDs) id(layout string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[layout]; ok {
		return id
	}
	if t.bytes+len(layout) > maxSchemaBytes {
		clear(t.ids)
		t.bytes = 0
	}
	t.last++
	t.ids[layout] = t.last
	t.bytes += len(layout)
	return t.last
}

// resultPlan is the result schema of a scan of every property of a type
// (as the type was: a DDL makes a new *schema.Type), and its layout id.
type resultPlan struct {
	typ        *schema.Type
	withDevice bool
	cols       *cdata.Result
	idOnce     sync.Once
	id         uint64 // the layout id of cols, taken by the first scan_first that wants it
}

// schemaID returns the layout id of p's schema.
func (p *resultPlan) schemaID() uint64 {
	p.idOnce.Do(func() { p.id = resultSchemas.id(p.cols.Layout()) })
	return p.id
}

// resultPlan returns the result schema of a scan of typ's props: the last
// scan's when it read all of the same type the same way (a loop of point
// reads builds it once; it was nine allocations and a hash of its layout
// a read), else a new one, kept when all is true. Its layout id is taken
// when first asked for (arcadego_scan asks none).
func (d *dbHandle) resultPlan(typ *schema.Type, props []schema.Property, withDevice, all bool) (*resultPlan, error) {
	if p := d.lastPlan.Load(); all && p != nil && p.typ == typ && p.withDevice == withDevice {
		return p, nil
	}
	var unit, zone string
	if typ.TimeSet {
		unit, zone = typ.TimeUnit, typ.TimeZone
	}
	cols, err := cdata.NewResult(d.timeColumn, unit, zone, props, withDevice)
	if err != nil {
		return nil, err
	}
	p := &resultPlan{typ: typ, withDevice: withDevice, cols: cols}
	if all {
		d.lastPlan.Store(p)
	}
	return p, nil
}

// startScan parses a scan request and starts the scan it asks for.
func startScan(db C.uintptr_t, requestJSON *C.char) (*result, error) {
	d, err := lookupDB(uintptr(db))
	if err != nil {
		return nil, err
	}
	req, withDevice, err := parseScanRequest(requestJSON)
	if err != nil {
		return nil, err
	}
	bufs := newDecodeBuffers()
	req.Buffers = bufs
	ctx := d.context()
	rows, err := d.db.Scan(ctx, req)
	if err != nil {
		return nil, err
	}
	plan, err := d.resultPlan(rows.Type(), rows.Properties(), withDevice, req.Properties == nil)
	if err != nil {
		rows.Close()
		return nil, err
	}
	batchRows := req.BatchRows
	if batchRows <= 0 {
		batchRows = engine.DefaultBatchRows
	}
	r := &result{db: d, rows: rows, typeName: req.Type, bufs: bufs, mem: exportMemory, cols: plan.cols, plan: plan,
		batchRows: batchRows, wait: rows.Waits(), ctx: ctx}
	r.mem.Owner = bufs.owner
	r.mem.Ref = func(block uintptr) { C.ag_export_ref(*(*unsafe.Pointer)(unsafe.Pointer(&block))) }
	return r, nil
}

//export ag_go_explain
func ag_go_explain(db C.uintptr_t, requestJSON *C.char, planOut **C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		if planOut == nil {
			return fmt.Errorf("explain: plan_out is NULL: %w", errInvalid)
		}
		*planOut = nil
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		req, _, err := parseScanRequest(requestJSON)
		if err != nil {
			return err
		}
		plan, err := d.db.Explain(d.context(), req)
		if err != nil {
			return err
		}
		*planOut = C.CString(plan)
		return nil
	})
}

// openResult makes out the stream of r.
func openResult(r *result, out *C.struct_ArrowArrayStream) error {
	table.mu.Lock()
	token := newToken()
	table.results[token] = r
	table.mu.Unlock()
	if rc := C.ag_result_init(out, C.uintptr_t(token)); rc != 0 {
		dropResult(token)
		return fmt.Errorf("out of memory for the result stream: %w", errs.ErrInternal)
	}
	return nil
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
		return r.cols.ExportSchema(&exportMemory, cdata.Addr(out))
	})
}

//export agResultNext
func agResultNext(cr *C.struct_ag_result, out *C.struct_ArrowArray) C.int {
	return resultCall(cr, func(r *result) error { return r.exportNext(out) })
}

// exportNext exports the next batch into out, left released at the end.
// A canceled scan stops here even with a batch in hand (held), as the
// scan itself would before reading it; one at its end stays at its end.
func (r *result) exportNext(out *C.struct_ArrowArray) error {
	if r.ctx != nil && r.ctx.Err() != nil && !(r.ended && r.held == nil) {
		return r.scanError(fmt.Errorf("scan of %q stopped: %w", r.typeName, errs.ErrCanceled))
	}
	var parts []cdata.Part
	err := unlocked.If(r.wait, func() (err error) {
		parts, err = r.nextParts()
		return err
	})
	if err != nil {
		return r.scanError(err)
	}
	if len(parts) == 0 {
		return nil // end of stream: out stays released
	}
	return r.cols.ExportBatch(&r.mem, parts, cdata.Addr(out))
}

// scanError is err of a read of the scan, saying so when arcadego_close
// canceled it.
func (r *result) scanError(err error) error {
	if errors.Is(err, errs.ErrCanceled) && r.db.isClosed() {
		return fmt.Errorf("scan of %q stopped: the database was closed: %w", r.typeName, errs.ErrCanceled)
	}
	return err
}

//export agResultRelease
func agResultRelease(token C.uintptr_t) {
	defer func() { _ = recover() }() // nothing to report to: release returns void
	dropResult(uintptr(token))
}
