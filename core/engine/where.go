package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Where is a value filter of a scan: one condition, or conditions joined
// by And or Or (exactly one of Cond, And and Or is set).
type Where struct {
	Cond *Cond
	And  []Where
	Or   []Where
}

// Cond compares a property with a value. Op is one of =, !=, <, <=, >,
// >=, "in" (Value a list), "is null" and "is not null" (no Value). Value
// is an int64 (or a float64 with an integral value) for integer,
// timestamp (nanoseconds) and date (days) properties, a float64 or int64
// for floats, a string for strings and binaries, a bool for booleans. As
// in SQL, a comparison with a null is false, so only "is null" keeps a
// row whose value is null. Floats compare as IEEE 754 says: NaN is
// neither equal to, less nor greater than anything (so "!=" NaN keeps
// every non-null value, and "=" NaN none).
type Cond struct {
	Property string
	Op       string
	Value    any
}

// ParseWhere decodes the JSON form of a Where: {"property": p, "op": o,
// "value": v}, {"and": [...]} or {"or": [...]}. Numbers keep their
// precision (an int64 stays exact).
func ParseWhere(data []byte) (*Where, error) {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("where: %v: %w", err, errs.ErrInvalidArgument)
	}
	w, err := whereOf(raw)
	if err != nil {
		return nil, fmt.Errorf("where: %w", err)
	}
	return &w, nil
}

func whereOf(raw any) (Where, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return Where{}, fmt.Errorf("%v is not an object: %w", raw, errs.ErrInvalidArgument)
	}
	for _, key := range []string{"and", "or"} {
		list, ok := m[key]
		if !ok {
			continue
		}
		if len(m) != 1 {
			return Where{}, fmt.Errorf("%q takes no other key: %w", key, errs.ErrInvalidArgument)
		}
		items, ok := list.([]any)
		if !ok || len(items) == 0 {
			return Where{}, fmt.Errorf("%q needs a non-empty list: %w", key, errs.ErrInvalidArgument)
		}
		out := make([]Where, len(items))
		for i, it := range items {
			w, err := whereOf(it)
			if err != nil {
				return Where{}, err
			}
			out[i] = w
		}
		if key == "and" {
			return Where{And: out}, nil
		}
		return Where{Or: out}, nil
	}
	c := &Cond{}
	for k, v := range m {
		switch k {
		case "property":
			s, ok := v.(string)
			if !ok {
				return Where{}, fmt.Errorf("\"property\" must be a string: %w", errs.ErrInvalidArgument)
			}
			c.Property = s
		case "op":
			s, ok := v.(string)
			if !ok {
				return Where{}, fmt.Errorf("\"op\" must be a string: %w", errs.ErrInvalidArgument)
			}
			c.Op = s
		case "value":
			c.Value = v
		default:
			return Where{}, fmt.Errorf("unknown key %q (property, op, value; and, or): %w", k, errs.ErrInvalidArgument)
		}
	}
	return Where{Cond: c}, nil
}

// filter is a compiled Where: conditions with their values converted to
// the properties' types, and their columns in the scan's batches.
type filter struct {
	cond    *compiledCond
	and, or []*filter
	keep    []bool // scratch of one batch
}

type compiledCond struct {
	id  schema.PropertyID
	col int
	typ schema.PropertyType
	op  string
	v   cell
	in  []cell
}

var whereOps = []string{"=", "!=", "<", "<=", ">", ">=", "in", "is null", "is not null"}

// compileWhere resolves w against type ty; colOf returns (adding it if
// needed) the batch column of a property.
func compileWhere(w *Where, ty *schema.Type, colOf func(p *schema.Property) int) (*filter, error) {
	switch {
	case w.Cond != nil && w.And == nil && w.Or == nil:
		c := w.Cond
		p, ok := ty.Property(c.Property)
		if !ok {
			return nil, fmt.Errorf("where: no property %s.%q: %w", ty.Name, c.Property, errs.ErrInvalidArgument)
		}
		if !slices.Contains(whereOps, c.Op) {
			return nil, fmt.Errorf("where: unknown op %q on %q (=, !=, <, <=, >, >=, in, is null, is not null): %w", c.Op, c.Property, errs.ErrInvalidArgument)
		}
		cc := &compiledCond{id: p.ID, col: colOf(p), typ: p.Type, op: c.Op}
		switch c.Op {
		case "is null", "is not null":
			if c.Value != nil {
				return nil, fmt.Errorf("where: %q %s takes no value: %w", c.Property, c.Op, errs.ErrInvalidArgument)
			}
		case "in":
			list, ok := c.Value.([]any)
			if !ok {
				return nil, fmt.Errorf("where: %q in needs a list of values: %w", c.Property, errs.ErrInvalidArgument)
			}
			for _, v := range list {
				x, err := cellOfValue(p, v)
				if err != nil {
					return nil, err
				}
				cc.in = append(cc.in, x)
			}
		default:
			if (c.Op == "<" || c.Op == "<=" || c.Op == ">" || c.Op == ">=") && p.Type == schema.Boolean {
				return nil, fmt.Errorf("where: %q is BOOLEAN: only =, !=, in and is (not) null: %w", c.Property, errs.ErrInvalidArgument)
			}
			x, err := cellOfValue(p, c.Value)
			if err != nil {
				return nil, err
			}
			cc.v = x
		}
		return &filter{cond: cc}, nil
	case w.Cond == nil && (w.And == nil) != (w.Or == nil):
		f := &filter{}
		for i := range w.And {
			g, err := compileWhere(&w.And[i], ty, colOf)
			if err != nil {
				return nil, err
			}
			f.and = append(f.and, g)
		}
		for i := range w.Or {
			g, err := compileWhere(&w.Or[i], ty, colOf)
			if err != nil {
				return nil, err
			}
			f.or = append(f.or, g)
		}
		return f, nil
	}
	return nil, fmt.Errorf("where: a filter is one condition, or \"and\" or \"or\" of filters: %w", errs.ErrInvalidArgument)
}

// specialFloats are the floats JSON cannot write, as the JSON form of a
// filter gives them: {"float": "NaN"}, {"float": "Infinity"}, {"float":
// "-Infinity"}.
var specialFloats = map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}

// cellOfValue converts a filter's value to a cell of p's type.
func cellOfValue(p *schema.Property, v any) (cell, error) {
	bad := func() (cell, error) {
		what := fmt.Sprintf("%v (%T)", v, v)
		if m, ok := v.(map[string]any); ok { // as it came: {"float": "NaN"}
			b, _ := json.Marshal(m)
			what = string(b)
		}
		return cell{}, fmt.Errorf("where: %s cannot be compared with %q, a %s property: %w", what, p.Name, p.Type, errs.ErrInvalidArgument)
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			v = i
		} else if f, err := n.Float64(); err == nil {
			v = f
		} else {
			return bad()
		}
	}
	if x, ok := v.(int); ok {
		v = int64(x)
	}
	switch p.Type {
	case schema.Int32, schema.Int64, schema.Timestamp, schema.Date:
		switch x := v.(type) {
		case int64:
			return cell{i: x}, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return cell{i: int64(x)}, nil
			}
		}
	case schema.Float, schema.Double:
		switch x := v.(type) {
		case float64:
			return cell{f: x}, nil
		case int64:
			return cell{f: float64(x)}, nil
		case map[string]any: // JSON has no NaN nor infinities: {"float": "NaN"}
			name, _ := x["float"].(string)
			if f, ok := specialFloats[name]; ok && len(x) == 1 {
				return cell{f: f}, nil
			}
		}
	case schema.String, schema.Binary:
		if s, ok := v.(string); ok {
			return cell{s: s}, nil
		}
	case schema.Boolean:
		if b, ok := v.(bool); ok {
			if b {
				return cell{i: 1}, nil
			}
			return cell{}, nil
		}
	}
	return bad()
}

// columns appends the batch columns f reads to cols.
func (f *filter) columns(cols []int) []int {
	if f.cond != nil && !slices.Contains(cols, f.cond.col) {
		cols = append(cols, f.cond.col)
	}
	for _, g := range append(f.and[:len(f.and):len(f.and)], f.or...) {
		cols = g.columns(cols)
	}
	return cols
}

// rows returns, for each row of t, whether it passes.
func (f *filter) rows(t *tablet.Tablet) []bool {
	n := t.Rows()
	f.keep = slices.Grow(f.keep[:0], n)[:n]
	keep := f.keep
	switch {
	case f.cond != nil:
		f.cond.eval(&t.Columns[f.cond.col], keep)
	case f.and != nil:
		for i := range keep {
			keep[i] = true
		}
		for _, g := range f.and {
			for i, ok := range g.rows(t) {
				keep[i] = keep[i] && ok
			}
		}
	default:
		clear(keep)
		for _, g := range f.or {
			for i, ok := range g.rows(t) {
				keep[i] = keep[i] || ok
			}
		}
	}
	return keep
}

func (c *compiledCond) eval(col *tablet.Column, keep []bool) {
	if c.typ == schema.Double && col.Validity == nil && c.evalDoubles(col, keep) {
		return
	}
	for r := range keep {
		valid := col.Valid(r)
		switch c.op {
		case "is null":
			keep[r] = !valid
			continue
		case "is not null":
			keep[r] = valid
			continue
		}
		if !valid {
			keep[r] = false
			continue
		}
		v := cellAt(col, r)
		switch c.op {
		case "in":
			keep[r] = slices.ContainsFunc(c.in, func(x cell) bool { return equal(c.typ, v, x) })
		case "=":
			keep[r] = equal(c.typ, v, c.v)
		case "!=":
			keep[r] = !equal(c.typ, v, c.v)
		case "<":
			keep[r] = lessNum(c.typ, v, c.v)
		case "<=": // neither may be NaN, which compares with nothing
			keep[r] = !lessNum(c.typ, c.v, v) && !isNaN(c.typ, v) && !isNaN(c.typ, c.v)
		case ">":
			keep[r] = lessNum(c.typ, c.v, v)
		case ">=":
			keep[r] = !lessNum(c.typ, v, c.v) && !isNaN(c.typ, v) && !isNaN(c.typ, c.v)
		}
	}
}

// evalDoubles is eval for a DOUBLE column without nulls and a comparison:
// a loop per operator, the same tests as below without a cell per row.
// It reports false for the operators it leaves to eval.
func (c *compiledCond) evalDoubles(col *tablet.Column, keep []bool) bool {
	vals := col.Values[8*col.Offset : 8*(col.Offset+len(keep))]
	if len(keep) == 0 {
		return true
	}
	if uintptr(unsafe.Pointer(&vals[0]))%8 != 0 {
		return false // a float64 view must be aligned: the careful loop
	}
	// A view of the values, ranged over: no bounds check per value.
	fs := unsafe.Slice((*float64)(unsafe.Pointer(&vals[0])), len(keep))
	keep = keep[:len(fs)]
	cv := c.v.f
	switch c.op {
	case "=":
		for r, v := range fs {
			keep[r] = v == cv
		}
	case "!=":
		for r, v := range fs {
			keep[r] = v != cv
		}
	case "<":
		for r, v := range fs {
			keep[r] = v < cv
		}
	case "<=":
		for r, v := range fs {
			keep[r] = v <= cv // false if either is NaN
		}
	case ">":
		for r, v := range fs {
			keep[r] = cv < v
		}
	case ">=":
		for r, v := range fs {
			keep[r] = v >= cv
		}
	default:
		return false
	}
	return true
}

func isNaN(t schema.PropertyType, v cell) bool {
	return (t == schema.Float || t == schema.Double) && math.IsNaN(v.f)
}

// equal compares cells of type t; NaN equals nothing, as in IEEE.
func equal(t schema.PropertyType, a, b cell) bool {
	switch t {
	case schema.Float, schema.Double:
		return a.f == b.f
	case schema.String, schema.Binary:
		return a.s == b.s
	}
	return a.i == b.i
}

// lessNum is a < b with IEEE comparisons for floats (NaN is not less nor
// greater than anything), unlike less, which orders NaN last for min/max.
func lessNum(t schema.PropertyType, a, b cell) bool {
	if t == schema.Float || t == schema.Double {
		return a.f < b.f
	}
	return less(t, a, b)
}

// mayMatch reports whether a file whose statistics are st, and whose
// columns are names, may hold a row f accepts: false only when its
// statistics rule every row out (a comparison of numbers outside the
// file's min and max, a null test the null count answers, a property the
// file does not have). The caller makes sure no newer row in memory can
// complete one of the file's.
func (f *filter) mayMatch(st *fileStats, names map[schema.PropertyID]string) bool {
	switch {
	case f.and != nil:
		for _, g := range f.and {
			if !g.mayMatch(st, names) {
				return false
			}
		}
		return true
	case f.or != nil:
		for _, g := range f.or {
			if g.mayMatch(st, names) {
				return true
			}
		}
		return false
	}
	c := f.cond
	name, in := names[c.id]
	if !in { // the file predates the property: every value is null
		return c.op == "is null"
	}
	nulls, known := st.nulls[name]
	if !known {
		return true
	}
	switch c.op {
	case "is null":
		return nulls > 0
	case "is not null":
		return st.rows > nulls
	}
	if st.rows == nulls {
		return false // comparisons with nulls are false
	}
	if !numeric(c.typ) || st.min[name] == nil || st.max[name] == nil {
		return true
	}
	lo, ok1 := statsCell(c.typ, st.min[name])
	hi, ok2 := statsCell(c.typ, st.max[name])
	if !ok1 || !ok2 {
		return true
	}
	within := func(v cell) bool { return !lessNum(c.typ, v, lo) && !lessNum(c.typ, hi, v) }
	switch c.op {
	case "=":
		return within(c.v)
	case "in":
		return slices.ContainsFunc(c.in, within)
	case "<":
		return lessNum(c.typ, lo, c.v)
	case "<=":
		return !lessNum(c.typ, c.v, lo)
	case ">":
		return lessNum(c.typ, c.v, hi)
	case ">=":
		return !lessNum(c.typ, hi, c.v)
	}
	return true // !=
}

// prunedFiles counts the files filtered scans skipped by their statistics
// (for tests: whether pruning happens at all).
var prunedFiles atomic.Int64
