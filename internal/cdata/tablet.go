package cdata

import (
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// The direct import: a batch whose columns all have simple types becomes a
// tablet.Tablet over the caller's C buffers, without arrow arrays,
// arrow.Record and arrowbridge, whose costs are per column (arrow data and
// an arrow.Array per child, a schema index): milliseconds for a batch of
// 10,000 columns. The tablet borrows the
// buffers until the batch is released, after the engine has copied it.
//
// Simple types are those whose Arrow layout is the tablet's: bool, int32,
// int64, float32, float64, date32, timestamp[ns] (any zone), utf8 and
// binary, none dictionary-encoded; the time column is int64 or a timestamp
// of any unit. Batches with any other column take the arrow path
// (import.go) whole.
//
// The direct path is an optimization that must not change any outcome: it
// accepts a batch only if the arrow path would accept it and produce the
// same tablet (same checks as arrayPlan, same null counts as the arrow
// arrays and arrowbridge.ToTablet), and on anything it refuses it gives up and lets
// the arrow path run from the start, which then reports the error in its
// own words (or accepts what the direct path was unsure of).

// directSchema is a record schema whose columns are all simple. It is
// immutable once built, and shared (see lastPlan).
type directSchema struct {
	timeColumn string
	names      []string
	formats    []string
	types      []schema.PropertyType // per column; unused at timeIdx
	timeIdx    int
	unit       string // Tablet.TimeUnit and TimeZone
	zone       string
	props      *tablet.NameList // the names but the time column's, checked once for every tablet of the plan
}

// lastPlan is the last direct plan made: batches of one schema usually
// come in a row, and checking that a schema is the same one is much
// cheaper than planning it (a map of the names, a string per name).
var lastPlan atomic.Pointer[directSchema]

// emptyOffsets are the offsets of a var-width column without rows (shared:
// the engine never writes a tablet).
var emptyOffsets = []int32{0}

// simpleFormats are the simple property formats but timestamps.
var simpleFormats = map[string]schema.PropertyType{
	"b": schema.Boolean, "i": schema.Int32, "l": schema.Int64, "f": schema.Float,
	"g": schema.Double, "tdD": schema.Date, "u": schema.String, "z": schema.Binary,
}

// simpleType returns the property type of a simple Arrow format.
func simpleType(format string) (schema.PropertyType, bool) {
	if pt, ok := simpleFormats[format]; ok {
		return pt, true
	}
	if unit, _, ok := timestampFormat(format); ok && unit == "ns" {
		return schema.Timestamp, true
	}
	return 0, false
}

// timestampFormat parses "ts" + unit letter + ":" + zone (the zone may hold
// colons: "+01:00").
func timestampFormat(format string) (unit, zone string, ok bool) {
	if len(format) < 4 || format[:2] != "ts" || format[3] != ':' {
		return "", "", false
	}
	switch format[2] {
	case 's':
		unit = "s"
	case 'm':
		unit = "ms"
	case 'u':
		unit = "us"
	case 'n':
		unit = "ns"
	default:
		return "", "", false
	}
	return unit, format[4:], true
}

// planDirect makes the direct plan of the record schema at addr (checked
// by checkSchema; not lastPlan's: Input.init tried that first), or
// returns nil when the batch must take the arrow path: a column that is
// not simple, and every schema the arrow path refuses (duplicate names,
// no time column, a time column of another type).
func planDirect(addr uintptr, timeColumn string) *directSchema {
	d := newPlan(addr, timeColumn)
	if d != nil {
		lastPlan.Store(d)
	}
	return d
}

// sameAs reports whether the schema at addr has d's columns, names and
// formats, and so d's plan. It checks every pointer before it follows it,
// as checkSchema does, so that a schema it accepts is one checkSchema
// accepts: the usual insert, one schema after another, need not walk it
// twice.
func (d *directSchema) sameAs(addr uintptr, timeColumn string) bool {
	if addr < minAddr {
		return false
	}
	root := at[Schema](addr)
	if timeColumn != d.timeColumn || root.Release == 0 || root.NChildren != int64(len(d.names)) ||
		root.NChildren > 0 && root.Children < minAddr || root.Dictionary != 0 ||
		root.Name != 0 && root.Name < minAddr || root.Format < minAddr || !cEqual(root.Format, "+s") {
		return false
	}
	for i, c := range words(root.Children, root.NChildren) {
		if c < minAddr {
			return false
		}
		s := at[Schema](c)
		if s.NChildren != 0 || s.Dictionary != 0 || s.Format < minAddr || !cEqual(s.Format, d.formats[i]) {
			return false
		}
		if name := d.names[i]; s.Name == 0 && name != "" || s.Name != 0 && (s.Name < minAddr || !cEqual(s.Name, name)) {
			return false
		}
	}
	return true
}

func newPlan(addr uintptr, timeColumn string) *directSchema {
	root := at[Schema](addr)
	kids := words(root.Children, root.NChildren)
	d := &directSchema{
		timeColumn: timeColumn,
		names:      make([]string, len(kids)),
		formats:    make([]string, len(kids)),
		types:      make([]schema.PropertyType, len(kids)),
		timeIdx:    -1,
	}
	seen := make(map[string]struct{}, len(kids))
	for i, c := range kids {
		s := at[Schema](c)
		if s.NChildren != 0 || s.Dictionary != 0 {
			return nil
		}
		name := cString(s.Name)
		if _, dup := seen[name]; dup {
			return nil
		}
		seen[name] = struct{}{}
		d.names[i] = name
		format := cView(s.Format)
		if name == timeColumn {
			unit, zone, ok := "", "", format == "l"
			if !ok {
				if unit, zone, ok = timestampFormat(format); !ok {
					return nil
				}
			}
			d.timeIdx, d.unit, d.zone = i, unit, strings.Clone(zone)
			d.formats[i] = strings.Clone(format)
			continue
		}
		pt, ok := simpleType(format)
		if !ok {
			return nil
		}
		d.types[i] = pt
		d.formats[i] = strings.Clone(format)
	}
	if d.timeIdx < 0 {
		return nil
	}
	d.props = tablet.CheckNames(slices.Delete(slices.Clone(d.names), d.timeIdx, d.timeIdx+1))
	return d
}

// directBatch is a direct batch, its tablet and its column slice in one
// object. A released one is kept for the next batch: a small insert then
// allocates none of them, and a wide tablet's slice (128 bytes a column)
// costs no fresh pages on every insert.
type directBatch struct {
	Batch
	tab  tablet.Tablet
	cols []tablet.Column
}

// spareBatch is the last released direct batch (one: inserts of one
// caller come one after another).
var spareBatch atomic.Pointer[directBatch]

// maxSpareColumns bounds the column slice kept (8 MiB).
const maxSpareColumns = 1 << 16

func getDirectBatch() *directBatch {
	if b := spareBatch.Swap(nil); b != nil {
		return b
	}
	b := new(directBatch)
	b.home = b
	return b
}

// putDirectBatch keeps b, which nobody reads any more, for the next batch.
func putDirectBatch(b *directBatch) {
	clear(b.cols) // drop the names and the pointers into C memory
	if cap(b.cols) > maxSpareColumns {
		b.cols = nil
	}
	b.tab, b.Tablet = tablet.Tablet{}, nil
	spareBatch.Store(b)
}

// tablet reads the caller's struct array at addr as a tablet of d, borrowing
// its buffers, or returns nil if the arrow path must decide. Every check of
// arrayPlan.root and arrayPlan.node for these layouts is repeated here.
func (d *directSchema) tablet(addr uintptr, b *directBatch) *tablet.Tablet {
	a := *at[Array](addr)
	if _, err := counts(&a, ""); err != nil {
		return nil
	}
	if a.NBuffers != 1 || a.NChildren != int64(len(d.names)) || (a.NChildren > 0 && a.Children < minAddr) ||
		a.NullCount > 0 || a.Dictionary != 0 {
		return nil
	}
	n := a.Length
	need := a.Offset + n
	t := &b.tab
	*t = tablet.Tablet{TimeUnit: d.unit, TimeZone: d.zone, Names: d.props}
	if k := len(d.names) - 1; k > 0 {
		if cap(b.cols) < k {
			b.cols = make([]tablet.Column, k)
		}
		t.Columns = b.cols[:k]
	}
	j := 0
	for i, addr := range words(a.Children, a.NChildren) {
		if addr < minAddr {
			return nil
		}
		c := *at[Array](addr)
		if c.Length < need {
			return nil
		}
		if _, err := counts(&c, ""); err != nil || c.NChildren != 0 || c.Dictionary != 0 {
			return nil
		}
		pt := schema.Int64 // the time column's layout
		if i != d.timeIdx {
			pt = d.types[i]
		}
		want := int64(2)
		if tablet.VarWidth(pt) {
			want = 3
		}
		if c.NBuffers != want || c.Buffers < minAddr {
			return nil
		}
		bufs := words(c.Buffers, want)
		valid := bufs[0]
		if valid < minAddr {
			if c.NullCount > 0 {
				return nil
			}
			valid, c.NullCount = 0, 0
		}
		end := c.Offset + c.Length
		var values, data uintptr
		var size int64 // bytes of data (var width)
		var ok bool
		switch {
		case pt == schema.Boolean:
			values, ok = bufferAt(bufs[1], (end+7)/8, c.Length)
		case tablet.VarWidth(pt):
			if values, ok = bufferAt(bufs[1], 4*(end+1), c.Length); ok {
				var err error
				if size, err = checkOffsets(unsafe.Slice(at[int32](values), end+1)[c.Offset:], ""); err == nil {
					data, ok = bufferAt(bufs[2], size, c.Length)
				} else {
					ok = false
				}
			}
		default:
			values, ok = bufferAt(bufs[1], int64(tablet.Width(pt))*end, c.Length)
		}
		if !ok {
			return nil
		}

		// The rows of the batch are rows off..off+n of the column, as
		// importRecord slices a struct's children. Its null count is the child's
		// when the slice is the whole child, else counted in the slice.
		off := c.Offset + a.Offset
		nulls := c.NullCount
		if nulls != 0 && (nulls < 0 || a.Offset != 0 || c.Length != n) {
			nulls = n - int64(bitutil.CountSetBits(bytesAt(valid, (end+7)/8), int(off), int(n)))
		}

		if i == d.timeIdx {
			if nulls > 0 {
				return nil
			}
			t.Times = []int64{}
			if n > 0 {
				t.Times = unsafe.Slice(at[int64](values), end)[off : off+n : off+n]
			}
			continue
		}
		col := &t.Columns[j]
		j++
		*col = tablet.Column{Name: d.names[i], Type: pt}
		if n == 0 {
			if tablet.VarWidth(pt) {
				col.Offsets = emptyOffsets
			}
			continue
		}
		col.Offset = int(off)
		if nulls > 0 {
			col.Validity = bytesAt(valid, (end+7)/8)
		}
		switch {
		case pt == schema.Boolean:
			col.Values = bytesAt(values, (end+7)/8)
		case tablet.VarWidth(pt):
			col.Offsets = unsafe.Slice(at[int32](values), end+1)
			col.Data = bytesAt(data, size)
		default:
			col.Values = bytesAt(values, int64(tablet.Width(pt))*end)
		}
	}
	return t
}
