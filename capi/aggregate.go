package main

/*
#include "bridge.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"

	"github.com/arcadego/arcadego/core/engine"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/internal/cdata"
	"github.com/arcadego/arcadego/internal/unlocked"
)

// streamCall is the start of a call that returns a result stream (out,
// cleared by its C wrapper in exports.c): the database, and the request
// decoded into req, whose "type" (typ) is required.
func streamCall(what string, db C.uintptr_t, requestJSON *C.char, out *C.struct_ArrowArrayStream, req any, typ **string) (*dbHandle, error) {
	if out == nil {
		return nil, fmt.Errorf("%s: out is NULL: %w", what, errInvalid)
	}
	d, err := lookupDB(uintptr(db))
	if err != nil {
		return nil, err
	}
	if err := decodeCJSON(what+" request", requestJSON, req); err != nil {
		return nil, err
	}
	if *typ == nil {
		return nil, fmt.Errorf("%s request: \"type\" is required: %w", what, errInvalid)
	}
	return d, nil
}

// aggregateRequest is the request_json of arcadego_aggregate.
type aggregateRequest struct {
	Type       *string         `json:"type"`
	Aggregates [][2]string     `json:"aggregates"`
	Devices    []string        `json:"devices"`
	Prefix     string          `json:"device_prefix"`
	Start      *int64          `json:"start"`
	End        *int64          `json:"end"`
	ByDevice   bool            `json:"by_device"`
	Every      int64           `json:"every"`
	Origin     int64           `json:"origin"`
	Fill       string          `json:"fill"`
	Where      json.RawMessage `json:"where"`
}

//export ag_go_aggregate
func ag_go_aggregate(db C.uintptr_t, requestJSON *C.char, out *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		var r aggregateRequest
		d, err := streamCall("aggregate", db, requestJSON, out, &r, &r.Type)
		if err != nil {
			return err
		}
		req := engine.AggregateRequest{Type: *r.Type, Devices: r.Devices, DevicePrefix: r.Prefix, Start: r.Start, End: r.End,
			ByDevice: r.ByDevice, Every: r.Every, Origin: r.Origin, Fill: r.Fill}
		if req.Where, err = parseWhere(r.Where); err != nil {
			return fmt.Errorf("aggregate request: %w", err)
		}
		for _, a := range r.Aggregates {
			req.Aggs = append(req.Aggs, engine.Agg{Property: a[0], Func: a[1]})
		}
		var batches []engine.Batch
		var ty *schema.Type
		aggregate := func() (err error) {
			batches, ty, err = d.db.Aggregate(d.context(), req)
			return err
		}
		if err := unlocked.If(waits(d.db, r.Devices, *r.Type), aggregate); err != nil {
			return err
		}
		props := make([]schema.Property, len(req.Aggs))
		for i, a := range req.Aggs {
			p, _ := ty.Property(a.Property)
			props[i] = schema.Property{ID: schema.PropertyID(i + 1), Name: engine.AggColumnName(a), Type: engine.AggResultType(a.Func, p.Type)}
		}
		var unit, zone string
		if ty.TimeSet {
			unit, zone = ty.TimeUnit, ty.TimeZone
		}
		cols, err := cdata.NewResult(d.timeColumn, unit, zone, props, req.ByDevice)
		if err != nil {
			return err
		}
		return openResult(&result{db: d, rows: &batchList{batches}, typeName: req.Type, mem: exportMemory, cols: cols,
			batchRows: engine.DefaultBatchRows}, out)
	})
}

// waits guesses whether a query of type typ over devices (nil: every
// device, or a prefix's) waits for goroutines many times, as it reads
// many devices' rows from files at once, and so runs unlocked.
func waits(db *engine.DB, devices []string, typ string) bool {
	return devices == nil && db.FlushedRows(typ) >= engine.WaitRows
}

// lastRequest is the request_json of arcadego_last.
type lastRequest struct {
	Type       *string  `json:"type"`
	Properties []string `json:"properties"`
	Devices    []string `json:"devices"`
	Prefix     string   `json:"device_prefix"`
}

//export ag_go_last
func ag_go_last(db C.uintptr_t, requestJSON *C.char, out *C.struct_ArrowArrayStream, cerr **C.char) C.int {
	return call(cerr, func() error {
		var r lastRequest
		d, err := streamCall("last", db, requestJSON, out, &r, &r.Type)
		if err != nil {
			return err
		}
		var batches []engine.Batch
		var ty *schema.Type
		var props []schema.Property
		last := func() (err error) {
			batches, ty, props, err = d.db.Last(d.context(), engine.LastRequest{Type: *r.Type, Properties: r.Properties,
				Devices: r.Devices, DevicePrefix: r.Prefix})
			return err
		}
		if err := unlocked.If(waits(d.db, r.Devices, *r.Type), last); err != nil {
			return err
		}
		cols := make([]schema.Property, 0, 2*len(props))
		for i, p := range props {
			cols = append(cols, schema.Property{ID: schema.PropertyID(2*i + 1), Name: p.Name, Type: p.Type},
				schema.Property{ID: schema.PropertyID(2*i + 2), Name: p.Name + engine.LastTimeSuffix, Type: schema.Int64})
		}
		var unit, zone string
		if ty.TimeSet {
			unit, zone = ty.TimeUnit, ty.TimeZone
		}
		res, err := cdata.NewResult(d.timeColumn, unit, zone, cols, true)
		if err != nil {
			return err
		}
		return openResult(&result{db: d, rows: &batchList{batches}, typeName: *r.Type, mem: exportMemory, cols: res,
			batchRows: engine.DefaultBatchRows}, out)
	})
}
