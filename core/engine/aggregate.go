package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
)

// Agg is one aggregate of a property: Func is one of count, min, max,
// sum, mean, first, last.
type Agg struct {
	Property string
	Func     string
}

// AggregateRequest asks for aggregates of one type's rows, over the rows
// a ScanRequest with the same devices and range would return.
type AggregateRequest struct {
	Type         string
	Aggs         []Agg
	Devices      []string
	DevicePrefix string
	Start, End   *int64
	// ByDevice gives each device its rows of results; otherwise the
	// devices' rows are aggregated together.
	ByDevice bool
	// Every, when > 0, cuts time into buckets [Origin + k*Every,
	// Origin + (k+1)*Every), in the time column's unit, each its own
	// result row; buckets without rows have none. 0: one bucket.
	Every, Origin int64
	// Fill, with Every (without, an error), gives result rows to the
	// buckets without rows from the first bucket of the range (Start's,
	// else the first with rows) to its last (End's, else the last with
	// rows), per device with ByDevice (a range without rows has none):
	// "" adds none; "null": their aggregates are null (counts 0);
	// "previous": they repeat the bucket before; "linear": numbers are
	// interpolated between the buckets on both sides (integers rounded),
	// the rest null. Counts of filled buckets are 0.
	Fill string
	// Where, if set, aggregates only the rows it accepts.
	Where *Where
}

// AggColumnName is the result column of an aggregate: "x_min".
func AggColumnName(a Agg) string { return a.Property + "_" + a.Func }

// aggFuncs are the aggregate functions and the property types they take.
var aggFuncs = map[string]func(schema.PropertyType) bool{
	"count": func(schema.PropertyType) bool { return true },
	"first": func(schema.PropertyType) bool { return true },
	"last":  func(schema.PropertyType) bool { return true },
	"min":   ordered,
	"max":   ordered,
	"sum":   numeric,
	"mean":  numeric,
}

func numeric(t schema.PropertyType) bool {
	return t == schema.Int32 || t == schema.Int64 || t == schema.Float || t == schema.Double
}

func ordered(t schema.PropertyType) bool {
	return numeric(t) || t == schema.Timestamp || t == schema.Date || t == schema.String
}

// AggResultType is the type of an aggregate's result column: count is
// INT64; sum is INT64 for integers (an overflow is an error) and DOUBLE
// for floats; mean is DOUBLE; min, max, first and last have the
// property's type.
func AggResultType(fn string, pt schema.PropertyType) schema.PropertyType {
	switch fn {
	case "count":
		return schema.Int64
	case "mean":
		return schema.Double
	case "sum":
		if pt == schema.Float || pt == schema.Double {
			return schema.Double
		}
		return schema.Int64
	}
	return pt
}

// Aggregate computes req's aggregates, reading the rows as a scan does
// (newest value per device and time, deletes and TTL applied) but without
// handing them out: one pass over each run of devices (many rows are read
// in runs at once, see grouper.aggregate), the accumulators of one group
// at a time for the usual rows in device and time order. Nulls are
// skipped, as in SQL; a group's aggregates of a property without a
// non-null value are null (count: 0). The result is a batch per device
// (ByDevice) or one batch (device ""), whose times are the buckets'
// starts or, without Every, each group's first time; the columns are the
// aggregates, in order, named by AggColumnName.
func (db *DB) Aggregate(ctx context.Context, req AggregateRequest) ([]Batch, *schema.Type, error) {
	if req.Every < 0 {
		return nil, nil, fmt.Errorf("aggregate: every %d must be >= 0: %w", req.Every, errs.ErrInvalidArgument)
	}
	if !slices.Contains([]string{"", "null", "previous", "linear"}, req.Fill) {
		return nil, nil, fmt.Errorf("aggregate: unknown fill %q (null, previous, linear): %w", req.Fill, errs.ErrInvalidArgument)
	}
	if req.Fill != "" && req.Every == 0 {
		return nil, nil, fmt.Errorf("aggregate: fill %q needs buckets (every): %w", req.Fill, errs.ErrInvalidArgument)
	}
	if len(req.Aggs) == 0 {
		return nil, nil, fmt.Errorf("aggregate: no aggregates asked for: %w", errs.ErrInvalidArgument)
	}
	cat := db.catalog.Load()
	ty, ok := cat.Type(req.Type)
	if !ok {
		if err := schema.ValidateName("type", req.Type); err != nil {
			return nil, nil, fmt.Errorf("aggregate: %w", err)
		}
		return nil, nil, fmt.Errorf("aggregate: type %q: %w", req.Type, errs.ErrNotFound)
	}
	var props []string
	specs := make([]aggSpec, len(req.Aggs))
	seen := map[Agg]bool{}
	for i, a := range req.Aggs {
		p, ok := ty.Property(a.Property)
		if !ok {
			return nil, nil, fmt.Errorf("aggregate: property %s.%s: %w", req.Type, a.Property, errs.ErrNotFound)
		}
		takes, known := aggFuncs[a.Func]
		if !known {
			return nil, nil, fmt.Errorf("aggregate: unknown function %q (count, min, max, sum, mean, first, last): %w", a.Func, errs.ErrInvalidArgument)
		}
		if !takes(p.Type) {
			return nil, nil, fmt.Errorf("aggregate: %s of %s.%s, a %s property: %w", a.Func, req.Type, a.Property, p.Type, errs.ErrInvalidArgument)
		}
		if seen[a] {
			return nil, nil, fmt.Errorf("aggregate: %s of %q asked twice: %w", a.Func, a.Property, errs.ErrInvalidArgument)
		}
		seen[a] = true
		col := slices.Index(props, a.Property)
		if col < 0 {
			col = len(props)
			props = append(props, a.Property)
		}
		specs[i] = aggSpec{fn: a.Func, id: p.ID, typ: p.Type, col: col, name: AggColumnName(a)}
	}
	g := &grouper{req: req, specs: specs, index: map[groupKey]int{}}
	sreq := ScanRequest{Type: req.Type, Devices: req.Devices, DevicePrefix: req.DevicePrefix,
		Properties: props, Start: req.Start, End: req.End, Where: req.Where,
		ReuseBatches: true} // each batch is read once, at once: no copies, no fresh memory
	if g.statsAnswer(ty) {
		sreq.takeFiles = func(files []*dataFile, mems []*memtable.Memtable) []bool { return g.fromStats(ty, files, mems) }
	}
	rows, err := db.Scan(ctx, sreq)
	if err != nil {
		return nil, nil, fmt.Errorf("aggregate: %w", err)
	}
	defer rows.Close()
	if err := g.aggregate(rows); err != nil {
		return nil, nil, fmt.Errorf("aggregate: %w", err)
	}
	out, err := g.result()
	if err != nil {
		return nil, nil, fmt.Errorf("aggregate of %q: %w", req.Type, err)
	}
	return out, rows.Type(), nil
}

// aggregate adds the rows of rows. A scan of many rows is split in parts,
// a run of devices each, up to one a core: each part is aggregated on a
// goroutine of its own into groups of its own, which are added to g's in
// device order once all are done. The parts read the scan's snapshot.
func (g *grouper) aggregate(rows *Rows) error {
	n := aggregateSplit.parts
	if n == 0 {
		n = min(runtime.GOMAXPROCS(0), 8)
	}
	parts := rows.split(n, aggregateSplit.minRows)
	subs := make([]*grouper, len(parts))
	failures := make([]error, len(parts))
	panics := make([]any, len(parts))
	// The first part (in device order) that failed: the parts after it
	// stop, those before it go on to their own end or error, so the error
	// returned is the one a single pass would meet first.
	var firstFailed atomic.Int64
	firstFailed.Store(int64(len(parts)))
	fail := func(k int) {
		for f := firstFailed.Load(); int64(k) < f && !firstFailed.CompareAndSwap(f, int64(k)); f = firstFailed.Load() {
		}
	}
	// run aggregates part k; it keeps its error and panic for the end (par
	// would turn a panic into an error), and returns nil.
	run := func(_, k int) error {
		defer func() {
			if p := recover(); p != nil {
				panics[k] = p
				fail(k)
			}
		}()
		part := parts[k]
		for b, ok := part.Next(); ok && firstFailed.Load() > int64(k); b, ok = part.Next() {
			subs[k].add(b)
		}
		if failures[k] = part.Err(); failures[k] != nil {
			fail(k)
		}
		return nil
	}
	aggregatePartsRun.Add(int64(len(parts) - 1))
	subs[0] = g // the first part's devices come first: g's groups are its
	for k := 1; k < len(parts); k++ {
		defer parts[k].Close()
		subs[k] = &grouper{req: g.req, specs: g.specs, index: map[groupKey]int{}}
	}
	par.Do(len(parts), len(parts), run)
	if k := firstFailed.Load(); k < int64(len(parts)) {
		if panics[k] != nil {
			panic(panics[k]) // on the caller's goroutine, as a single pass would
		}
		return failures[k]
	}
	for _, sub := range subs[1:] {
		for _, gr := range sub.groups {
			if _, ok := g.index[gr.key]; !ok { // a group of this part's only (by device, every one): taken as it is
				g.index[gr.key] = len(g.groups)
				g.groups = append(g.groups, gr)
				continue
			}
			into := g.groupFor(gr.key, gr.first)
			for k := range g.specs {
				into.accs[k].merge(&g.specs[k], &gr.accs[k])
			}
		}
	}
	return nil
}

// aggregateSplit is how an aggregate is split: in parts parts (0: one a
// core, up to 8), each of at least minRows rows as the files' directories
// count them (a part costs a goroutine and a merge, some µs). Tests set
// it to split small scans.
var aggregateSplit = struct {
	parts   int
	minRows int64
}{0, 1 << 15}

// aggregatePartsRun counts the parts of aggregates run on goroutines of
// their own, for tests.
var aggregatePartsRun atomic.Int64

// statsAnswer reports whether files' statistics can answer the request:
// count, min, max, sum and mean of numbers over every row of every
// device, in one group, without a filter or a retention cutoff.
func (g *grouper) statsAnswer(ty *schema.Type) bool {
	r := g.req
	if r.ByDevice || r.Every > 0 || r.Where != nil || r.Devices != nil || r.DevicePrefix != "" || r.Start != nil || r.End != nil ||
		ttlCutoff(ty, time.Now()) != math.MinInt64 {
		return false
	}
	for _, s := range g.specs {
		if !slices.Contains([]string{"count", "min", "max", "sum", "mean"}, s.fn) || !numeric(s.typ) {
			return false
		}
	}
	return true
}

// aggSpec is one requested aggregate, resolved.
type aggSpec struct {
	fn   string
	id   schema.PropertyID
	typ  schema.PropertyType // the property's
	col  int                 // its column in the scan's batches
	name string
}

// cell is one value of a column: integers (Int32, Int64, Timestamp,
// Date, Boolean as 0 or 1) in i, floats in f, strings and bytes in s.
type cell struct {
	i int64
	f float64
	s string
}

func cellAt(c *tablet.Column, r int) cell {
	switch c.Type {
	case schema.Int32, schema.Date:
		return cell{i: int64(c.Int32(r))}
	case schema.Int64, schema.Timestamp:
		return cell{i: c.Int64(r)}
	case schema.Float:
		return cell{f: float64(c.Float(r))}
	case schema.Double:
		return cell{f: c.Double(r)}
	case schema.Boolean:
		if c.Bool(r) {
			return cell{i: 1}
		}
		return cell{}
	}
	return cell{s: string(c.Bytes(r))}
}

// less orders cells of type t; NaN is greater than every number, as in
// DuckDB and Postgres.
func less(t schema.PropertyType, a, b cell) bool {
	switch t {
	case schema.Float, schema.Double:
		if math.IsNaN(a.f) {
			return false
		}
		return math.IsNaN(b.f) || a.f < b.f
	case schema.String, schema.Binary:
		return strings.Compare(a.s, b.s) < 0
	}
	return a.i < b.i
}

// acc accumulates one aggregate of one group.
type acc struct {
	n             int64   // non-null values
	sumI          int128  // of integers
	sumF          float64 // of floats
	v             cell    // min, max, first or last
	firstT, lastT int64   // times of first and last
}

// int128 is an integer sum, exact in any order: whether an INT64 sum
// overflows is its total's to say, not that of the order its parts came
// in (devices are aggregated in parts at once, as many as the cores).
type int128 struct {
	hi int64
	lo uint64
}

func (x *int128) add(v int64) {
	lo, carry := bits.Add64(x.lo, uint64(v), 0)
	x.hi += v>>63 + int64(carry) // v's upper word: -1 or 0
	x.lo = lo
}

func (x *int128) addWide(y int128) {
	lo, carry := bits.Add64(x.lo, y.lo, 0)
	x.hi += y.hi + int64(carry)
	x.lo = lo
}

// int64 returns x, and whether it fits.
func (x int128) int64() (int64, bool) {
	v := int64(x.lo)
	return v, x.hi == v>>63
}

// float64 returns x rounded to a float64. Beyond INT64 its magnitude is
// converted: hi*2^64 + lo of a negative x would cancel the rounding of
// lo's conversion against hi's.
func (x int128) float64() float64 {
	if v, fits := x.int64(); fits {
		return float64(v)
	}
	hi, lo := uint64(x.hi), x.lo
	if x.hi < 0 { // two's complement: -x
		lo, hi = ^lo+1, ^hi
		if lo == 0 {
			hi++
		}
		return -(float64(hi)*(1<<64) + float64(lo))
	}
	return float64(hi)*(1<<64) + float64(lo)
}

// addSum adds a file's sum of the values of s's property (n, not
// counted here, is the caller's).
func (a *acc) addSum(s *aggSpec, sum segment.Sum) {
	if s.typ == schema.Float || s.typ == schema.Double {
		a.sumF += sum.Float
		return
	}
	a.addInt(sum.Int)
}

func (a *acc) addInt(v int64) { a.sumI.add(v) }

// merge adds b, the same aggregate's accumulator over rows of devices
// after a's: ties of first keep a's, ties of last take b's, as one pass
// over all the rows would.
func (a *acc) merge(s *aggSpec, b *acc) {
	if b.n == 0 {
		return
	}
	switch s.fn {
	case "sum", "mean":
		a.sumF += b.sumF
		a.sumI.addWide(b.sumI)
	case "min":
		if a.n == 0 || less(s.typ, b.v, a.v) {
			a.v = b.v
		}
	case "max":
		if a.n == 0 || less(s.typ, a.v, b.v) {
			a.v = b.v
		}
	case "first":
		if a.n == 0 || b.firstT < a.firstT {
			a.v, a.firstT = b.v, b.firstT
		}
	case "last":
		if a.n == 0 || b.lastT >= a.lastT {
			a.v, a.lastT = b.v, b.lastT
		}
	}
	a.n += b.n
}

func (a *acc) add(s *aggSpec, v cell, t int64) {
	a.n++
	switch s.fn {
	case "sum", "mean":
		if s.typ == schema.Float || s.typ == schema.Double {
			a.sumF += v.f
			return
		}
		a.addInt(v.i)
	case "min":
		if a.n == 1 || less(s.typ, v, a.v) {
			a.v = v
		}
	case "max":
		if a.n == 1 || less(s.typ, a.v, v) {
			a.v = v
		}
	case "first":
		if a.n == 1 || t < a.firstT {
			a.v, a.firstT = v, t
		}
	case "last":
		if a.n == 1 || t >= a.lastT {
			a.v, a.lastT = v, t
		}
	}
}

// groupKey is a result row: a device ("" across devices) and a bucket.
type groupKey struct {
	device string
	bucket int64
}

type group struct {
	key   groupKey
	first int64 // the group's first time
	accs  []acc
}

// grouper holds the groups of an Aggregate. Rows come device by device,
// each in time order, so the group of a row is nearly always the last
// one's: the index is looked up only when it changes.
type grouper struct {
	req    AggregateRequest
	specs  []aggSpec
	groups []*group
	index  map[groupKey]int
	last   *group
}

func (g *grouper) bucket(t int64) int64 {
	if g.req.Every <= 0 {
		return 0
	}
	// Floor division, for times before the origin too.
	d := t - g.req.Origin
	k := d / g.req.Every
	if d%g.req.Every < 0 {
		k--
	}
	return k
}

func (g *grouper) add(b Batch) {
	t := b.Rows
	device := ""
	if g.req.ByDevice {
		device = b.Device
	}
	// A batch is one device's rows in time order: its rows of one bucket
	// are a run, aggregated a column at a time.
	n := len(t.Times)
	for lo := 0; lo < n; {
		key := groupKey{device, g.bucket(t.Times[lo])}
		hi := n
		if g.req.Every > 0 {
			hi = lo + 1
			for hi < n && g.bucket(t.Times[hi]) == key.bucket {
				hi++
			}
		}
		gr := g.last
		if gr == nil || gr.key != key {
			gr = g.groupFor(key, t.Times[lo])
		}
		gr.first = min(gr.first, t.Times[lo])
		for k := range g.specs {
			s := &g.specs[k]
			gr.accs[k].addRun(s, &t.Columns[s.col], t.Times, lo, hi)
		}
		lo = hi
	}
}

// groupFor returns the group of key (making it, with first as its first
// time), and makes it the last used.
func (g *grouper) groupFor(key groupKey, first int64) *group {
	i, ok := g.index[key]
	if !ok {
		i = len(g.groups)
		g.groups = append(g.groups, &group{key: key, first: first, accs: make([]acc, len(g.specs))})
		g.index[key] = i
	}
	gr := g.groups[i]
	gr.first = min(gr.first, first)
	g.last = gr
	return gr
}

// addRun adds rows [lo, hi) of column c, whose times are times: DOUBLE
// columns without nulls in a loop of their own per function (most of an
// aggregate's rows), the rest a row at a time.
func (a *acc) addRun(s *aggSpec, c *tablet.Column, times []int64, lo, hi int) {
	if s.typ == schema.Double && c.Validity == nil && hi > lo && s.fn != "first" && s.fn != "last" {
		vals := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(c.Values))), c.Offset+hi)[c.Offset+lo:]
		switch s.fn {
		case "count":
			a.n += int64(len(vals))
			return
		case "sum", "mean":
			a.sumF += sumDoubles(vals)
			a.n += int64(len(vals))
			return
		case "min": // NaN is the greatest (see less)
			m := minDoubles(vals)
			if a.n == 0 || m < a.v.f || math.IsNaN(a.v.f) && !math.IsNaN(m) {
				a.v.f = m
			}
			a.n += int64(len(vals))
			return
		case "max":
			m := maxDoubles(vals) // NaN if one is, which is the greatest
			if a.n == 0 || m > a.v.f || math.IsNaN(m) {
				a.v.f = m
			}
			a.n += int64(len(vals))
			return
		}
	}
	for r := lo; r < hi; r++ {
		if !c.Valid(r) {
			continue
		}
		a.add(s, cellAt(c, r), times[r])
	}
}

// minDoubles returns the least of vals (not empty), NaN the greatest: the
// least number, or NaN if all are.
func minDoubles(vals []float64) float64 {
	if s := sumDoubles(vals); s != s { // a NaN (or both infinities): compare with care
		return minSkippingNaN(vals)
	}
	// Four chains of plain comparisons (no NaN to mind), on a reslice
	// that needs no bounds checks: the builtin min, which orders NaN and
	// signed zeros, took three times as long.
	m0, m1, m2, m3 := vals[0], vals[0], vals[0], vals[0]
	i := 0
	for ; i+4 <= len(vals); i += 4 {
		v := vals[i : i+4 : i+4]
		if v[0] < m0 {
			m0 = v[0]
		}
		if v[1] < m1 {
			m1 = v[1]
		}
		if v[2] < m2 {
			m2 = v[2]
		}
		if v[3] < m3 {
			m3 = v[3]
		}
	}
	for ; i < len(vals); i++ {
		m0 = min(m0, vals[i])
	}
	return min(m0, m1, m2, m3)
}

// minSkippingNaN is minDoubles for values of which some may be NaN.
func minSkippingNaN(vals []float64) float64 {
	m := math.NaN()
	for _, v := range vals {
		if v < m || math.IsNaN(m) {
			m = v
		}
	}
	return m
}

// maxDoubles returns the greatest of vals (not empty), NaN if one is:
// NaN is the greatest. As minDoubles.
func maxDoubles(vals []float64) float64 {
	if s := sumDoubles(vals); s != s {
		return maxWithNaN(vals)
	}
	m0, m1, m2, m3 := vals[0], vals[0], vals[0], vals[0]
	i := 0
	for ; i+4 <= len(vals); i += 4 {
		v := vals[i : i+4 : i+4]
		if v[0] > m0 {
			m0 = v[0]
		}
		if v[1] > m1 {
			m1 = v[1]
		}
		if v[2] > m2 {
			m2 = v[2]
		}
		if v[3] > m3 {
			m3 = v[3]
		}
	}
	for ; i < len(vals); i++ {
		m0 = max(m0, vals[i])
	}
	return max(m0, m1, m2, m3)
}

// maxWithNaN is maxDoubles for values of which some may be NaN: the
// builtin max makes any NaN the result.
func maxWithNaN(vals []float64) float64 {
	m := vals[0]
	for _, v := range vals {
		m = max(m, v)
	}
	return m
}

// sumDoubles sums vals in eight running sums, added at the end: eight
// times the additions in flight, in registers, on a reslice that needs no
// bounds checks (four sums in an array took five times as long). A sum
// in another order differs in its last bits, as sums over files and
// memtables already do.
func sumDoubles(vals []float64) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	i := 0
	for ; i+8 <= len(vals); i += 8 {
		v := vals[i : i+8 : i+8]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		s4 += v[4]
		s5 += v[5]
		s6 += v[6]
		s7 += v[7]
	}
	for ; i < len(vals); i++ {
		s0 += vals[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// result returns the groups as batches, a device at a time, buckets in
// time order, with the empty buckets Fill asks for.
func (g *grouper) result() ([]Batch, error) {
	slices.SortFunc(g.groups, func(a, b *group) int {
		if c := strings.Compare(a.key.device, b.key.device); c != 0 {
			return c
		}
		return cmp.Compare(a.key.bucket, b.key.bucket)
	})
	var out []Batch
	for lo := 0; lo < len(g.groups); {
		hi := lo + 1
		for hi < len(g.groups) && g.groups[hi].key.device == g.groups[lo].key.device {
			hi++
		}
		groups, err := g.filled(g.groups[lo:hi])
		if err != nil {
			return nil, err
		}
		t, err := g.tablet(groups)
		if err != nil {
			return nil, err
		}
		out = append(out, Batch{Device: g.groups[lo].key.device, Rows: t, Stable: true})
		lo = hi
	}
	return out, nil
}

// maxFilledBuckets bounds the rows a Fill may add to one device's result.
const maxFilledBuckets = 10_000_000

// filled returns groups (of one device, sorted) with an empty group (no
// accs) for every bucket without rows between the range's first bucket
// (Start's, else the first group's) and its last (End's, else the last
// group's), when the request fills.
func (g *grouper) filled(groups []*group) ([]*group, error) {
	if g.req.Fill == "" || g.req.Every <= 0 {
		return groups, nil
	}
	first, last := groups[0].key.bucket, groups[len(groups)-1].key.bucket
	if g.req.Start != nil {
		first = g.bucket(*g.req.Start)
	}
	if g.req.End != nil {
		last = g.bucket(*g.req.End - 1)
	}
	if last-first >= maxFilledBuckets {
		return nil, fmt.Errorf("fill of %d buckets of %d: more than %d; narrow the range or widen every: %w",
			last-first+1, g.req.Every, maxFilledBuckets, errs.ErrInvalidArgument)
	}
	out := make([]*group, 0, last-first+1)
	i := 0
	for b := first; b <= last; b++ {
		if i < len(groups) && groups[i].key.bucket == b {
			out = append(out, groups[i])
			i++
			continue
		}
		out = append(out, &group{key: groupKey{groups[0].key.device, b}})
	}
	return out, nil
}

// tablet returns the result rows of groups (a group without accs is an
// empty bucket, filled as the request says); an INT64 sum that does not
// fit is an error.
func (g *grouper) tablet(groups []*group) (*tablet.Tablet, error) {
	n := len(groups)
	t := &tablet.Tablet{Times: make([]int64, n), Columns: make([]tablet.Column, len(g.specs))}
	for i, gr := range groups {
		t.Times[i] = gr.first
		if g.req.Every > 0 {
			t.Times[i] = g.req.Origin + gr.key.bucket*g.req.Every
		}
	}
	for k := range g.specs {
		s := &g.specs[k]
		rt := AggResultType(s.fn, s.typ)
		vals := make([]cell, n)
		valid := make([]bool, n)
		for i, gr := range groups {
			if gr.accs == nil {
				valid[i] = s.fn == "count" // 0
				continue
			}
			a := &gr.accs[k]
			valid[i] = a.n > 0 || s.fn == "count"
			switch {
			case s.fn == "count":
				vals[i].i = a.n
			case s.fn == "mean" && a.n > 0 && (s.typ == schema.Float || s.typ == schema.Double):
				vals[i].f = a.sumF / float64(a.n)
			case s.fn == "mean" && a.n > 0: // of the exact sum: the same whatever the order of the rows
				vals[i].f = a.sumI.float64() / float64(a.n)
			case s.fn == "sum" && rt == schema.Double:
				vals[i].f = a.sumF
			case s.fn == "sum":
				v, fits := a.sumI.int64()
				if !fits {
					return nil, fmt.Errorf("sum of %q overflows INT64: %w", strings.TrimSuffix(s.name, "_sum"), errs.ErrInvalidArgument)
				}
				vals[i].i = v
			default:
				vals[i] = a.v
			}
		}
		if s.fn != "count" {
			fillBuckets(g.req.Fill, rt, groups, vals, valid)
		}
		t.Columns[k] = cellColumn(s.name, rt, vals, valid)
	}
	return t, nil
}

// fillBuckets gives the empty buckets (groups without accs) of one column their
// values: "null" leaves them null; "previous" repeats the last value
// before them; "linear" interpolates numbers between the values on both
// sides (rounding integers to the nearest), and leaves the others, and
// buckets with no value on one side, null.
func fillBuckets(mode string, t schema.PropertyType, groups []*group, vals []cell, valid []bool) {
	switch mode {
	case "previous":
		for i := 1; i < len(groups); i++ {
			if groups[i].accs == nil {
				vals[i], valid[i] = vals[i-1], valid[i-1]
			}
		}
	case "linear":
		if !numeric(t) {
			return
		}
		prev := -1
		for i := range groups {
			if groups[i].accs == nil || !valid[i] {
				continue
			}
			if prev >= 0 && i-prev > 1 {
				for j := prev + 1; j < i; j++ {
					if groups[j].accs != nil {
						continue // a bucket with rows but no value stays null
					}
					frac := float64(j-prev) / float64(i-prev)
					if t == schema.Float || t == schema.Double {
						vals[j].f = vals[prev].f + (vals[i].f-vals[prev].f)*frac
					} else {
						vals[j].i = vals[prev].i + int64(math.Round(float64(vals[i].i-vals[prev].i)*frac))
					}
					valid[j] = true
				}
			}
			prev = i
		}
	}
}

// cellColumn builds a column of type t from cells.
func cellColumn(name string, t schema.PropertyType, cells []cell, valid []bool) tablet.Column {
	switch t {
	case schema.Int32, schema.Date:
		v := make([]int32, len(cells))
		for i, c := range cells {
			v[i] = int32(c.i)
		}
		if t == schema.Date {
			return tablet.Dates(name, v, valid)
		}
		return tablet.Int32s(name, v, valid)
	case schema.Int64:
		return tablet.Int64s(name, mapCells(cells, func(c cell) int64 { return c.i }), valid)
	case schema.Timestamp:
		return tablet.Timestamps(name, mapCells(cells, func(c cell) int64 { return c.i }), valid)
	case schema.Float:
		return tablet.Floats(name, mapCells(cells, func(c cell) float32 { return float32(c.f) }), valid)
	case schema.Double:
		return tablet.Doubles(name, mapCells(cells, func(c cell) float64 { return c.f }), valid)
	case schema.Boolean:
		return tablet.Bools(name, mapCells(cells, func(c cell) bool { return c.i != 0 }), valid)
	case schema.Binary:
		return tablet.Binaries(name, mapCells(cells, func(c cell) []byte { return []byte(c.s) }), valid)
	}
	return tablet.Strings(name, mapCells(cells, func(c cell) string { return c.s }), valid)
}

func mapCells[T any](cells []cell, fn func(cell) T) []T {
	out := make([]T, len(cells))
	for i, c := range cells {
		out[i] = fn(c)
	}
	return out
}
