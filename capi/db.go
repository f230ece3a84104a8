package main

/*
#include "bridge.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arcadego/arcadego/arrowbridge"
	"github.com/arcadego/arcadego/core/engine"
	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/gcpace"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/wal"
	"github.com/arcadego/arcadego/internal/cdata"
	"github.com/arcadego/arcadego/internal/flatjson"
	"github.com/arcadego/arcadego/internal/unlocked"
)

// decodeJSON decodes one JSON value from s into v, refusing unknown keys,
// trailing data, invalid UTF-8 and escapes of half a surrogate pair (both
// of which encoding/json would silently replace with U+FFFD, making two
// different names equal). what names the argument in errors.
func decodeJSON(what, s string, v any) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: not valid UTF-8: %w", what, errs.ErrInvalidArgument)
	}
	if esc := flatjson.LoneSurrogate(s); esc != "" {
		return fmt.Errorf("%s: %s is half a surrogate pair, not a character: %w", what, esc, errs.ErrInvalidArgument)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %v: %w", what, err, errs.ErrInvalidArgument)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: unexpected data after the JSON value: %w", what, errs.ErrInvalidArgument)
	}
	return nil
}

// decodeCJSON decodes the C string cjson (required) as decodeJSON does.
func decodeCJSON(what string, cjson *C.char, v any) error {
	src, err := goString(what, cjson)
	if err != nil {
		return err
	}
	return decodeJSON(what, src, v)
}

// openOptions is the options_json of arcadego_open.
type openOptions struct {
	Sync           *string `json:"sync"`
	AutoCreate     *bool   `json:"auto_create"`
	TimeColumn     *string `json:"time_column"`
	MemtableBudget *int64  `json:"memtable_budget"`
	DirectWrite    *int64  `json:"direct_write_bytes"`
	ReadOnly       *bool   `json:"read_only"`
}

// parseOpenOptions turns options_json (NULL: defaults) into engine options
// and the time column name.
func parseOpenOptions(cjson *C.char) (engine.Options, string, error) {
	var opts engine.Options
	timeColumn := arrowbridge.DefaultTimeColumn
	if cjson == nil {
		return opts, timeColumn, nil
	}
	var o openOptions
	if err := decodeJSON("open options", C.GoString(cjson), &o); err != nil {
		return opts, "", err
	}
	if o.Sync != nil {
		m, err := wal.ParseSyncMode(*o.Sync)
		if err != nil {
			return opts, "", fmt.Errorf("open options: sync: %w", err)
		}
		opts.Sync = m
	}
	if o.AutoCreate != nil {
		opts.AutoCreate = *o.AutoCreate
	}
	if o.MemtableBudget != nil {
		if *o.MemtableBudget < 0 {
			return opts, "", fmt.Errorf("open options: memtable_budget %d must be >= 0 bytes (0: the default, %d): %w",
				*o.MemtableBudget, engine.DefaultMemtableBudget, errs.ErrInvalidArgument)
		}
		opts.MemtableBudget = *o.MemtableBudget
	}
	if o.DirectWrite != nil {
		if *o.DirectWrite < -1 {
			return opts, "", fmt.Errorf("open options: direct_write_bytes %d must be >= 0 bytes (0: the default, %d) or -1 (never): %w",
				*o.DirectWrite, engine.DefaultDirectWriteBytes, errs.ErrInvalidArgument)
		}
		opts.DirectWriteBytes = *o.DirectWrite
	}
	if o.ReadOnly != nil {
		opts.ReadOnly = *o.ReadOnly
	}
	if o.TimeColumn != nil {
		timeColumn = *o.TimeColumn
		if err := schema.ValidateName("time column", timeColumn); err != nil {
			return opts, "", fmt.Errorf("open options: %w", err)
		}
		if timeColumn == schema.DeviceColumn {
			return opts, "", fmt.Errorf("open options: time column cannot be named %q (results have a device column): %w",
				timeColumn, errs.ErrInvalidArgument)
		}
	}
	return opts, timeColumn, nil
}

//export ag_go_open
func ag_go_open(path *C.char, optionsJSON *C.char, out *C.uintptr_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		if out == nil {
			return fmt.Errorf("open: out is NULL: %w", errs.ErrInvalidArgument)
		}
		*out = 0
		opts, timeColumn, err := parseOpenOptions(optionsJSON)
		if err != nil {
			return err
		}
		var db *engine.DB
		err = unlocked.Run(func() (err error) { // files are opened by goroutines
			db, err = engine.Open(optString(path), opts)
			return err
		})
		if err != nil {
			return err
		}
		*out = C.uintptr_t(addDB(db, timeColumn))
		return nil
	})
}

//export ag_go_close
func ag_go_close(db C.uintptr_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		err := closeDB(uintptr(db))
		releaseMemoryIfIdle()
		return err
	})
}

// idleReleaseBytes is how much memory the Go heap must hold but not use
// for the close of the last database to hand it back at once.
const idleReleaseBytes = 32 << 20

// releaseMemoryIfIdle gives memory back to the operating system when the
// last open database has closed: the kept result blocks, the Go heap's
// free pages when there are many (a collection and a scavenge, some
// milliseconds for a large heap), and then malloc's free memory. All is
// skipped when little was freed, so that a test suite's many small
// databases do not each pay for it. Otherwise the runtime returns free
// pages in the background, over minutes.
func releaseMemoryIfIdle() {
	table.mu.Lock()
	open := len(table.dbs)
	table.mu.Unlock()
	if open > 0 {
		return
	}
	freed := uint64(C.ag_pool_trim(0))
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Uint64()+s[1].Value.Uint64() > idleReleaseBytes {
		debug.FreeOSMemory()
		freed += idleReleaseBytes
	}
	if freed >= idleReleaseBytes {
		C.ag_release_free_memory() // what the process freed in C, too
	}
}

//export ag_go_begin
func ag_go_begin(db C.uintptr_t, out *C.uintptr_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		if out == nil {
			return fmt.Errorf("begin: out is NULL: %w", errs.ErrInvalidArgument)
		}
		*out = 0
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		token, err := d.begin()
		if err != nil {
			return err
		}
		*out = C.uintptr_t(token)
		return nil
	})
}

//export ag_go_tx_exec
func ag_go_tx_exec(tx C.uintptr_t, script *C.char, scriptLen C.size_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		t, err := lookupTx(uintptr(tx))
		if err != nil {
			return err
		}
		src, err := goStringN("script", script, scriptLen)
		if err != nil {
			return err
		}
		return t.use(func(tx *engine.Tx) error { return tx.Exec(src) })
	})
}

//export ag_go_commit
func ag_go_commit(tx C.uintptr_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		t, err := lookupTx(uintptr(tx))
		if err != nil {
			return err
		}
		return t.finish(uintptr(tx), func(tx *engine.Tx) error { return unlocked.If(t.cells >= unlockedCells, tx.Commit) })
	})
}

//export ag_go_rollback
func ag_go_rollback(tx C.uintptr_t) C.int {
	return call(nil, func() error {
		t, err := lookupTx(uintptr(tx))
		if err != nil {
			return err
		}
		return t.finish(uintptr(tx), func(tx *engine.Tx) error {
			tx.Rollback()
			return nil
		})
	})
}

//export ag_go_exec
func ag_go_exec(db C.uintptr_t, script *C.char, scriptLen C.size_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		src, err := goStringN("script", script, scriptLen)
		if err != nil {
			return err
		}
		return d.db.Exec(src)
	})
}

//export ag_go_cancel
func ag_go_cancel(db C.uintptr_t) C.int {
	return call(nil, func() error { return cancelDB(uintptr(db)) })
}

// runtimeOptions is the options_json of arcadego_set_runtime.
type runtimeOptions struct {
	GOMAXPROCS  *int   `json:"gomaxprocs"`
	MemoryLimit *int64 `json:"memory_limit"`
	GCPercent   *int   `json:"gc_percent"`
}

//export ag_go_set_runtime
func ag_go_set_runtime(optionsJSON *C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		var o runtimeOptions
		if err := decodeCJSON("runtime options", optionsJSON, &o); err != nil {
			return err
		}
		// Check everything before changing anything.
		if o.GOMAXPROCS != nil && *o.GOMAXPROCS <= 0 {
			return fmt.Errorf("runtime options: gomaxprocs %d must be > 0: %w", *o.GOMAXPROCS, errs.ErrInvalidArgument)
		}
		if o.MemoryLimit != nil && *o.MemoryLimit <= 0 {
			return fmt.Errorf("runtime options: memory_limit %d must be > 0: %w", *o.MemoryLimit, errs.ErrInvalidArgument)
		}
		if o.GCPercent != nil && *o.GCPercent < -1 {
			return fmt.Errorf("runtime options: gc_percent %d must be >= -1 (-1 turns the collector off): %w",
				*o.GCPercent, errs.ErrInvalidArgument)
		}
		if o.GOMAXPROCS != nil {
			runtime.GOMAXPROCS(*o.GOMAXPROCS)
		}
		if o.MemoryLimit != nil {
			gcpace.Disable() // the caller's limit from now on
			debug.SetMemoryLimit(*o.MemoryLimit)
		}
		if o.GCPercent != nil {
			debug.SetGCPercent(*o.GCPercent)
		}
		return nil
	})
}

// The JSON of arcadego_describe.
type (
	describeJSON struct {
		Types []typeJSON `json:"types"`
	}
	typeJSON struct {
		Name       string         `json:"name"`
		Time       *timeJSON      `json:"time,omitempty"`
		TTLNanos   int64          `json:"ttl_ns,omitempty"` // 0: none
		Properties []propertyJSON `json:"properties"`
		Indexes    []indexJSON    `json:"indexes"`
	}
	timeJSON struct {
		Unit string `json:"unit"`
		Zone string `json:"zone"`
	}
	propertyJSON struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	indexJSON struct {
		Name       string   `json:"name"`
		Unique     bool     `json:"unique"`
		Properties []string `json:"properties"`
	}
)

func describeType(t *schema.Type) typeJSON {
	j := typeJSON{Name: t.Name, TTLNanos: t.TTL, Properties: []propertyJSON{}, Indexes: []indexJSON{}}
	if t.TimeSet {
		j.Time = &timeJSON{Unit: t.TimeUnit, Zone: t.TimeZone}
	}
	for _, p := range t.Properties() {
		j.Properties = append(j.Properties, propertyJSON{Name: p.Name, Type: p.Type.String()})
	}
	for _, ix := range t.Indexes() {
		ij := indexJSON{Name: ix.Name, Unique: ix.Unique, Properties: []string{}}
		for _, id := range ix.Properties {
			if p, ok := t.PropertyByID(id); ok {
				ij.Properties = append(ij.Properties, p.Name)
			}
		}
		j.Indexes = append(j.Indexes, ij)
	}
	return j
}

//export ag_go_describe
func ag_go_describe(db C.uintptr_t, typ *C.char, typLen C.size_t, jsonOut **C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		if jsonOut == nil {
			return fmt.Errorf("describe: json_out is NULL: %w", errs.ErrInvalidArgument)
		}
		*jsonOut = nil
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		cat := d.db.Catalog()
		out := describeJSON{Types: []typeJSON{}}
		if typ == nil {
			for _, t := range cat.Types() {
				out.Types = append(out.Types, describeType(t))
			}
		} else {
			name, err := goStringN("type", typ, typLen)
			if err != nil {
				return err
			}
			if err := schema.ValidateName("type", name); err != nil {
				return fmt.Errorf("describe: %w", err)
			}
			t, ok := cat.Type(name)
			if !ok {
				return fmt.Errorf("describe: type %q: %w", name, errs.ErrNotFound)
			}
			out.Types = append(out.Types, describeType(t))
		}
		b, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("describe: %v: %w", err, errs.ErrInternal)
		}
		*jsonOut = C.CString(string(b))
		return nil
	})
}

//export ag_go_flush
func ag_go_flush(db C.uintptr_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		return unlocked.Run(d.db.Flush)
	})
}

//export ag_go_clone
func ag_go_clone(db C.uintptr_t, dest *C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		path, err := goString("clone destination", dest)
		if err != nil {
			return err
		}
		return unlocked.Run(func() error { return d.db.Clone(path) })
	})
}

//export ag_go_checkpoint
func ag_go_checkpoint(db C.uintptr_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		return unlocked.Run(d.db.Checkpoint)
	})
}

// deleteRequest is the request_json of arcadego_delete.
type deleteRequest struct {
	Type    *string  `json:"type"`
	Devices []string `json:"devices"`
	Start   *int64   `json:"start"`
	End     *int64   `json:"end"`
}

func parseDeleteRequest(cjson *C.char) (engine.DeleteRequest, error) {
	var r deleteRequest
	if err := decodeCJSON("delete request", cjson, &r); err != nil {
		return engine.DeleteRequest{}, err
	}
	if r.Type == nil {
		return engine.DeleteRequest{}, fmt.Errorf("delete request: \"type\" is required: %w", errs.ErrInvalidArgument)
	}
	return engine.DeleteRequest{Type: *r.Type, Devices: r.Devices, Start: r.Start, End: r.End}, nil
}

//export ag_go_delete
func ag_go_delete(db C.uintptr_t, requestJSON *C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		req, err := parseDeleteRequest(requestJSON)
		if err != nil {
			return err
		}
		return d.db.Delete(req)
	})
}

//export ag_go_tx_delete
func ag_go_tx_delete(tx C.uintptr_t, requestJSON *C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		t, err := lookupTx(uintptr(tx))
		if err != nil {
			return err
		}
		req, err := parseDeleteRequest(requestJSON)
		if err != nil {
			return err
		}
		return t.use(func(tx *engine.Tx) error { return tx.Delete(req) })
	})
}

//export ag_go_compact
func ag_go_compact(db C.uintptr_t, typ *C.char, typLen C.size_t, cerr **C.char) C.int {
	return call(cerr, func() error {
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		name := ""
		if typ != nil {
			if name, err = goStringN("type", typ, typLen); err != nil {
				return err
			}
			if err := schema.ValidateName("type", name); err != nil {
				return fmt.Errorf("compact: %w", err)
			}
		}
		return unlocked.Run(func() error { return d.db.Compact(name) })
	})
}

//export ag_go_stats
func ag_go_stats(db C.uintptr_t, jsonOut **C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		if jsonOut == nil {
			return fmt.Errorf("stats: json_out is NULL: %w", errs.ErrInvalidArgument)
		}
		*jsonOut = nil
		d, err := lookupDB(uintptr(db))
		if err != nil {
			return err
		}
		b, err := json.Marshal(d.db.Stats()) // "types" is a list, never null
		if err != nil {
			return fmt.Errorf("stats: %v: %w", err, errs.ErrInternal)
		}
		*jsonOut = C.CString(string(b))
		return nil
	})
}

// devicesRequest is the request_json of arcadego_devices.
type devicesRequest struct {
	Type   *string `json:"type"`
	Prefix string  `json:"prefix"`
}

// devicesJSON is its answer, one list per column.
// devicesJSON writes the device list as the JSON object
// {"device":[..],"rows":[..],"first":[..],"last":[..]} by hand: for a
// million devices encoding/json's reflection was most of the call.
func devicesJSON(list []engine.DeviceInfo) []byte {
	size := 64
	for _, d := range list {
		size += len(d.Name) + 3 + 3*21
	}
	b := make([]byte, 0, size)
	b = append(b, `{"device":[`...)
	for i, d := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, d.Name)
	}
	for _, col := range []struct {
		key string
		get func(engine.DeviceInfo) int64
	}{
		{"rows", func(d engine.DeviceInfo) int64 { return d.Rows }},
		{"first", func(d engine.DeviceInfo) int64 { return d.First }},
		{"last", func(d engine.DeviceInfo) int64 { return d.Last }},
	} {
		b = append(b, `],"`...)
		b = append(b, col.key...)
		b = append(b, `":[`...)
		for i, d := range list {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, col.get(d), 10)
		}
	}
	return append(b, "]}"...)
}

// appendJSONString appends s as a JSON string: names are valid UTF-8
// without control characters, but may hold quotes and backslashes.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, fmt.Sprintf(`\u%04x`, c)...)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// listDevices parses the request of arcadego_devices or _device_list
// (what names the call in errors) and lists the devices it asks for, with
// the type as listed.
func listDevices(db C.uintptr_t, requestJSON *C.char, what string) ([]engine.DeviceInfo, *schema.Type, error) {
	d, err := lookupDB(uintptr(db))
	if err != nil {
		return nil, nil, err
	}
	var r devicesRequest
	if err := decodeCJSON(what+" request", requestJSON, &r); err != nil {
		return nil, nil, err
	}
	if r.Type == nil {
		return nil, nil, fmt.Errorf("%s request: \"type\" is required: %w", what, errs.ErrInvalidArgument)
	}
	return d.db.DevicesOf(*r.Type, r.Prefix)
}

//export ag_go_devices
func ag_go_devices(db C.uintptr_t, requestJSON *C.char, jsonOut **C.char, cerr **C.char) C.int {
	return call(cerr, func() error {
		if jsonOut == nil {
			return fmt.Errorf("devices: json_out is NULL: %w", errs.ErrInvalidArgument)
		}
		*jsonOut = nil
		list, _, err := listDevices(db, requestJSON, "devices")
		if err != nil {
			return err
		}
		b := devicesJSON(list)
		*jsonOut = (*C.char)(C.CBytes(append(b, 0)))
		return nil
	})
}

//export ag_go_device_list
func ag_go_device_list(db C.uintptr_t, requestJSON *C.char, schemaOut *C.struct_ArrowSchema, arrayOut *C.struct_ArrowArray,
	cerr **C.char) C.int {
	return call(cerr, func() error {
		if schemaOut == nil {
			return fmt.Errorf("device_list: schema_out is NULL: %w", errs.ErrInvalidArgument)
		}
		if arrayOut == nil {
			return fmt.Errorf("device_list: array_out is NULL: %w", errs.ErrInvalidArgument)
		}
		list, ty, err := listDevices(db, requestJSON, "device_list")
		if err != nil {
			return err
		}
		var unit, zone string
		if ty.TimeSet {
			unit, zone = ty.TimeUnit, ty.TimeZone
		}
		done := false
		defer func() { // a failure (or panic) leaves both released and zeroed
			if !done {
				C.ag_release_array(arrayOut)
				C.ag_release_schema(schemaOut)
				*arrayOut, *schemaOut = C.struct_ArrowArray{}, C.struct_ArrowSchema{}
			}
		}()
		nameBytes := 0
		for _, dev := range list {
			nameBytes += len(dev.Name)
		}
		l, err := cdata.NewDeviceList(unit, zone, nameBytes)
		if err != nil {
			return err
		}
		if err := l.ExportSchema(&exportMemory, cdata.Addr(schemaOut)); err != nil {
			return err
		}
		row := func(i int) (string, int64, int64, int64) {
			dev := &list[i]
			return dev.Name, dev.Rows, dev.First, dev.Last
		}
		if err := l.ExportBatch(&exportMemory, len(list), row, cdata.Addr(arrayOut)); err != nil {
			return err
		}
		done = true
		return nil
	})
}
