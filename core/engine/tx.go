package engine

import (
	"errors"
	"fmt"
	"math"
	mathbits "math/bits"
	"runtime"
	"slices"
	"strings"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/internal/namesort"
	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Tx is a transaction: DDL and tablet writes that commit together or not
// at all. Not safe for concurrent use. The caller must Commit or Rollback
// it; an abandoned transaction holds its tablets' memory until then.
//
// Statements are checked against the transaction's own view (the catalog
// at Begin plus its own DDL), so errors surface at the statement; Commit
// checks everything again against the newest catalog.
type Tx struct {
	db      *DB
	base    *schema.Catalog // the catalog view started from
	view    *schema.Catalog
	ops     []schema.Op
	entries []entry
	longs   []longInsert // long-format inserts whose tablet outlives the commit
	deletes []txDelete
	done    bool
	first   [1]entry // entries' first backing array: a one-insert transaction allocates none
	ids0    [16]schema.PropertyID
	idsUsed bool     // ids0 holds an insert's property ids
	mem     txMemory // the small inserts' copies and ids
}

// idsFor returns room for the property ids of an insert of n columns: a
// narrow tablet inserted by itself allocates none, later ones share
// blocks.
func (tx *Tx) idsFor(n int) []schema.PropertyID {
	if tx.idsUsed || n > len(tx.ids0) {
		return tx.mem.ids.take(n, firstBlockElems, mostBlockElems)
	}
	tx.idsUsed = true
	return tx.ids0[:n:n]
}

// longInsert is a long-format insert of borrowed or transaction-owned
// rows: entries [from, to) of the transaction are the device slices of t
// (prepared, each device's rows together), one per run. A direct write
// reads t whole instead of device by device.
//
// A deferred one (deferred set) has no entries yet: it is large enough
// for a direct write and the only write into its type so far, so the
// commit writes t straight to Parquet without making a slice per device.
// If the commit cannot (see errDeferred), it makes the entries then and
// takes the usual way.
type longInsert struct {
	typ      string
	t        *tablet.Tablet
	runs     []deviceRun
	byName   []deviceRun // runs in device name order
	from, to int
	deferred bool
	bytes    int                 // deferred: t's size in the log's encoding
	ids      []schema.PropertyID // deferred: t's property ids in resolvedIn
	typeID   schema.TypeID
	resolved *schema.Catalog
}

// entriesOf appends the entries of deferred long insert l to entries, one
// per device, and returns them; l then names them.
func (l *longInsert) entriesOf(entries []entry) []entry {
	l.from = len(entries)
	entries = slices.Grow(entries, len(l.runs))
	tabs := l.t.SliceRuns(len(l.runs), func(i int) (int, int) { return l.runs[i].lo, l.runs[i].hi })
	for i, r := range l.runs {
		entries = append(entries, entry{typ: l.typ, device: r.device, t: &tabs[i], ids: l.ids, typeID: l.typeID, resolvedIn: l.resolved})
	}
	l.to, l.deferred = len(entries), false
	return entries
}

// undefer gives every deferred long insert into typ its entries, so that
// a later write into typ comes after them.
func (tx *Tx) undefer(typ string) {
	for i := range tx.longs {
		if l := &tx.longs[i]; l.deferred && l.typ == typ {
			tx.entries = l.entriesOf(tx.entries)
		}
	}
}

// canDefer returns t's size if a long insert of t (prepared; ids
// complete) into typ may be deferred (a direct write is likely to take it
// whole), else 0.
func (tx *Tx) canDefer(typ string, t *tablet.Tablet, ids []schema.PropertyID) int {
	ty, ok := tx.view.Type(typ)
	if !ok || tx.db.log == nil || t.Rows() == 0 || slices.Contains(ids, 0) || slices.ContainsFunc(ty.Indexes(), func(ix *schema.Index) bool { return ix.Unique }) {
		return 0
	}
	if slices.ContainsFunc(tx.entries, func(e entry) bool { return e.typ == typ }) ||
		slices.ContainsFunc(tx.deletes, func(d txDelete) bool { return d.typ == typ }) ||
		slices.ContainsFunc(tx.longs, func(l longInsert) bool { return l.typ == typ }) {
		return 0
	}
	if n := tablet.AppendSize(t); n >= tx.db.longDirectBytes() {
		return n
	}
	return 0
}

// entry is one inserted tablet, encoded for the log at Insert time so the
// caller's buffers are free once Insert returns (enc, in the
// transaction's blocks: txMemory; t is nil until the commit reads it back
// from enc), or borrowed (InsertBorrowed: enc is nil and t is the
// caller's).
type entry struct {
	typ, device string
	t           *tablet.Tablet
	enc         []byte
	// ids are t's property ids in catalog resolvedIn (nil: not resolved),
	// so that a commit on that very catalog, the usual case, need not look
	// up every column again: for a row of 10,000 new columns, half a
	// millisecond.
	ids        []schema.PropertyID
	typeID     schema.TypeID
	resolvedIn *schema.Catalog
}

func (tx *Tx) check(what string) error {
	if tx.done {
		return fmt.Errorf("%s: transaction already finished: %w", what, errs.ErrClosed)
	}
	if tx.db.closed.Load() {
		return fmt.Errorf("%s: %w", what, errs.ErrClosed)
	}
	return nil
}

// Exec adds the statements of a DDL script. When a statement fails, none
// of the script is added and the transaction stays usable.
func (tx *Tx) Exec(script string) error {
	if err := tx.check("exec"); err != nil {
		return err
	}
	ops, err := schema.ParseScript(script)
	if err != nil {
		return err
	}
	return tx.applyOps(ops)
}

// Apply adds one DDL operation.
func (tx *Tx) Apply(op schema.Op) error {
	if err := tx.check("apply"); err != nil {
		return err
	}
	return tx.applyOps([]schema.Op{op})
}

func (tx *Tx) applyOps(ops []schema.Op) error {
	var ch *schema.Change
	if tx.view == tx.base {
		ch = tx.view.Edit()
	} else {
		// The view already holds this transaction's earlier statements:
		// still one version, as when the log replays the commit.
		ch = tx.view.Continue()
	}
	ch.Grow(len(ops))
	for _, op := range ops {
		if err := ch.Apply(op); err != nil {
			return err
		}
	}
	for _, op := range ops {
		tx.undefer(op.Type) // a new index, say, must see the rows
	}
	tx.view = ch.Catalog()
	if tx.ops == nil {
		tx.ops = ch.Ops() // ch is dropped: its list can be taken, not copied
	} else {
		tx.ops = append(tx.ops, ch.Ops()...)
	}
	return nil
}

// Insert adds a tablet of type typ for device. With auto-create on, a
// missing type and missing properties are created (typed from the
// tablet's columns) in this transaction. The tablet's buffers may be
// reused once Insert returns.
func (tx *Tx) Insert(typ, device string, t *tablet.Tablet) error {
	return tx.insert(typ, device, t, false)
}

// InsertBorrowed adds a tablet like Insert but keeps using its buffers
// instead of copying them: the caller keeps them valid and unmodified
// until Commit or Rollback returns. A bulk insert is then copied once,
// into the memtable, and written to the log from the caller's memory.
func (tx *Tx) InsertBorrowed(typ, device string, t *tablet.Tablet) error {
	return tx.insert(typ, device, t, true)
}

// checkInsert checks what every insert checks first: the transaction is
// open, t is a tablet, typ is a valid type name.
func (tx *Tx) checkInsert(typ string, t *tablet.Tablet) error {
	if err := tx.check("insert"); err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("insert into %q: nil tablet: %w", typ, errs.ErrInvalidArgument)
	}
	if err := schema.ValidateName("type", typ); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	return nil
}

func (tx *Tx) insert(typ, device string, t *tablet.Tablet, borrow bool) error {
	if err := tx.checkInsert(typ, t); err != nil {
		return err
	}
	if err := validateDevice(device); err != nil {
		return fmt.Errorf("insert into %q: %w", typ, err)
	}
	ids := tx.idsFor(len(t.Columns))
	t, auto, err := tx.prepare(typ, t, ids)
	if err != nil {
		return err
	}
	tx.undefer(typ)
	n := len(tx.entries)
	tx.addEntry(typ, device, t, borrow)
	if err := tx.applyAuto(typ, auto, n, ids); err != nil {
		return err
	}
	tx.resolved(typ, ids, n, len(tx.entries))
	return nil
}

// resolved records ids, complete, as the property ids of entries
// [from, to) in the transaction's view.
func (tx *Tx) resolved(typ string, ids []schema.PropertyID, from, to int) {
	ty, ok := tx.view.Type(typ)
	if !ok || slices.Contains(ids, 0) {
		return // resolved at commit
	}
	for i := from; i < to; i++ {
		e := &tx.entries[i]
		e.ids, e.typeID, e.resolvedIn = ids, ty.ID, tx.view
	}
}

// prepare checks tablet t for type typ against the transaction's view and
// converts it (conform); it returns the tablet to store and the DDL that
// auto-create needs, changing nothing. ids (one per column) gets the ids
// of the columns' existing properties, 0 for those to create.
func (tx *Tx) prepare(typ string, t *tablet.Tablet, ids []schema.PropertyID) (*tablet.Tablet, []schema.Op, error) {
	if err := t.Validate(); err != nil {
		return nil, nil, fmt.Errorf("insert into %q: %w", typ, err)
	}
	if i := slices.Index(t.Times, math.MaxInt64); i >= 0 {
		// A scan's end is exclusive, so no range could ever read it back.
		return nil, nil, fmt.Errorf("insert into %q: row %d: time %d (the largest int64) is reserved: %w", typ, i, int64(math.MaxInt64), errs.ErrInvalidArgument)
	}
	ty, ok := tx.view.Type(typ)
	if ok && tx.db.knownCached(ty, t, ids) {
		return t, nil, nil // the usual insert: nothing to convert or create
	}
	if ok {
		var err error
		if t, err = conform(ty, t); err != nil {
			return nil, nil, fmt.Errorf("insert into %q: %w", typ, err)
		}
	}
	_, auto, err := missing(tx.view, typ, t, tx.db.opts.AutoCreate, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("insert into %q: %w", typ, err)
	}
	return t, auto, nil
}

// known reports whether every column of t is a property of ty of its
// type and t's times are ty's kind, filling ids: what conform and
// missing would find, in one lookup a column instead of two. When it
// reports false, ids may be partly filled; prepare then takes the long
// way, which sets each of them.
func known(ty *schema.Type, t *tablet.Tablet, ids []schema.PropertyID) bool {
	if !ty.TimeSet || ty.TimeUnit != t.TimeUnit || ty.TimeZone != t.TimeZone {
		return false
	}
	for i := range t.Columns {
		p, ok := ty.Property(t.Columns[i].Name)
		if !ok || p.Type != t.Columns[i].Type {
			return false
		}
		ids[i] = p.ID
	}
	return true
}

// namedIDs is what known found for a checked name list in a type: its
// columns' types and property ids. Immutable.
type namedIDs struct {
	ty    *schema.Type // of a published catalog, so frozen: its identity is its content
	names *tablet.NameList
	types []schema.PropertyType
	ids   []schema.PropertyID
}

// knownCached is known, with a memory for tablets whose names are
// a checked list (the C ABI's small inserts, one schema after another):
// when the last such insert found the same list in the same type, it
// fills ids from that insert's outcome instead of looking up each name
// (for a one-row insert of 10 columns, its names cost as much as its
// values).
func (db *DB) knownCached(ty *schema.Type, t *tablet.Tablet, ids []schema.PropertyID) bool {
	names := t.CheckedNames()
	if names == nil {
		return known(ty, t, ids)
	}
	if last := db.lastIDs.Load(); last != nil && last.ty == ty && last.names == names &&
		ty.TimeSet && ty.TimeUnit == t.TimeUnit && ty.TimeZone == t.TimeZone {
		for i := range t.Columns {
			if t.Columns[i].Type != last.types[i] {
				return known(ty, t, ids)
			}
		}
		copy(ids, last.ids)
		return true
	}
	if !known(ty, t, ids) {
		return false
	}
	types := make([]schema.PropertyType, len(t.Columns))
	for i := range t.Columns {
		types[i] = t.Columns[i].Type
	}
	db.lastIDs.Store(&namedIDs{ty: ty, names: names, types: types, ids: slices.Clone(ids)})
	return true
}

// addEntry appends the write of t (prepared) for device: borrowed, or
// encoded for the log now so that the caller's buffers are free.
func (tx *Tx) addEntry(typ, device string, t *tablet.Tablet, borrow bool) {
	e := entry{typ: typ, device: device, t: t}
	if !borrow {
		e.enc, e.t = tx.mem.copyOf(typ, device, t), nil // read back at commit: readCopy
	}
	tx.entries = append(tx.entries, e)
}

// applyAuto applies the auto-create DDL of an insert whose entries start
// at index from; on failure it takes them back, so the insert adds nothing.
// The properties it creates take the next ids in the order of the columns
// that need them (0 in ids), which it fills in.
func (tx *Tx) applyAuto(typ string, auto []schema.Op, from int, ids []schema.PropertyID) error {
	if len(auto) == 0 {
		return nil
	}
	_, last, _ := tx.view.LastIDs()
	if err := tx.applyOps(auto); err != nil {
		clear(tx.entries[from:])
		tx.entries = tx.entries[:from]
		return fmt.Errorf("insert into %q: %w", typ, err)
	}
	created := 0
	for _, id := range ids {
		if id == 0 {
			created++
		}
	}
	if _, now, _ := tx.view.LastIDs(); int(now-last) != created {
		return nil // not the plain case (ids stay incomplete): resolved at commit
	}
	for i, id := range ids {
		if id == 0 {
			last++
			ids[i] = last
		}
	}
	return nil
}

// InsertLong adds a long-format tablet: the rows of any number of devices,
// the device of each row in t's column deviceColumn (STRING, no nulls),
// which is not stored as a property. The rows are split by device in one
// pass: where each device's rows are already together, its part is a slice
// of t; otherwise t is copied once, grouped by device in order of first
// appearance. Like Insert, it adds everything or, on error, nothing.
func (tx *Tx) InsertLong(typ, deviceColumn string, t *tablet.Tablet) error {
	return tx.insertLong(typ, deviceColumn, t, false)
}

// InsertLongBorrowed is InsertLong keeping t's buffers instead of copying
// them, as InsertBorrowed.
func (tx *Tx) InsertLongBorrowed(typ, deviceColumn string, t *tablet.Tablet) error {
	return tx.insertLong(typ, deviceColumn, t, true)
}

// deviceRun is rows [lo, hi) of one device in a long-format tablet.
type deviceRun struct {
	device string
	lo, hi int
}

// splitLong returns the columns of long-format tablet t but its device
// column deviceColumn as a tablet of their own, and its device runs
// (deviceRuns), once the device column is checked: STRING, its buffers,
// every row's device. The device column may be called "device": it is no
// property, so only its values are checked here, and the rest by prepare.
func splitLong(deviceColumn string, t *tablet.Tablet) (rest *tablet.Tablet, runs, byName []deviceRun, err error) {
	j := slices.IndexFunc(t.Columns, func(c tablet.Column) bool { return c.Name == deviceColumn })
	if j < 0 {
		return nil, nil, nil, fmt.Errorf("no device column %q in the batch: %w", deviceColumn, errs.ErrInvalidArgument)
	}
	devs := &t.Columns[j]
	if devs.Type != schema.String {
		return nil, nil, nil, fmt.Errorf("device column %q is %s, not STRING: %w", deviceColumn, devs.Type, errs.ErrInvalidArgument)
	}
	if err := devs.Validate(t.Rows()); err != nil {
		return nil, nil, nil, fmt.Errorf("device column %q: %w", deviceColumn, err)
	}
	if runs, byName, err = deviceRuns(devs, t.Rows()); err != nil {
		return nil, nil, nil, fmt.Errorf("device column %q: %w", deviceColumn, err)
	}
	for _, r := range runs {
		if err := validateDevice(r.device); err != nil {
			return nil, nil, nil, fmt.Errorf("row %d: %w", r.lo, err)
		}
	}
	rest = &tablet.Tablet{Times: t.Times, Columns: slices.Delete(slices.Clone(t.Columns), j, j+1), TimeUnit: t.TimeUnit, TimeZone: t.TimeZone}
	return rest, runs, byName, nil
}

// ValidateLong checks long-format tablet t as InsertLong does before it
// looks at the schema: its device column deviceColumn (every row's
// device) and the other columns' names and buffers (Tablet.Validate). For
// callers that check every batch of a stream before the first goes in.
func ValidateLong(deviceColumn string, t *tablet.Tablet) error {
	rest, _, _, err := splitLong(deviceColumn, t)
	if err != nil {
		return err
	}
	return rest.Validate()
}

func (tx *Tx) insertLong(typ, deviceColumn string, t *tablet.Tablet, borrow bool) error {
	if err := tx.checkInsert(typ, t); err != nil {
		return err
	}
	rest, runs, byName, err := splitLong(deviceColumn, t)
	if err != nil {
		return fmt.Errorf("insert into %q: %w", typ, err)
	}
	// Checked and converted before any grouping: the errors name the
	// caller's rows, and a malformed tablet is never copied.
	ids := make([]schema.PropertyID, len(rest.Columns))
	rest, auto, err := tx.prepare(typ, rest, ids)
	if err != nil {
		return err
	}
	if byName == nil {
		rest, runs = groupByDevice(rest, runs)
		borrow = true // the grouped copy is the transaction's own
		byName = slices.Clone(runs)
		sortRuns(byName)
	}
	// The type's first rows also declare its time column (SetTime): no
	// obstacle to deferring them.
	size := 0
	if borrow && !slices.ContainsFunc(auto, func(op schema.Op) bool { return op.Kind != schema.SetTime }) {
		size = tx.canDefer(typ, rest, ids)
	}
	if size > 0 {
		if len(auto) > 0 {
			if err := tx.applyOps(auto); err != nil {
				return fmt.Errorf("insert into %q: %w", typ, err)
			}
		}
		ty, _ := tx.view.Type(typ)
		tx.longs = append(tx.longs, longInsert{typ: typ, t: rest, runs: runs, byName: byName, deferred: true, bytes: size, ids: ids, typeID: ty.ID, resolved: tx.view})
		return nil
	}
	tx.undefer(typ)
	n := len(tx.entries)
	tx.entries = slices.Grow(tx.entries, len(runs))
	var tabs []tablet.Tablet // borrowed: the entries hold the slices
	// Copied: each slice is copied at once, so one slice serves them all.
	var scratch tablet.Tablet
	var scratchCols []tablet.Column
	if borrow {
		tabs = rest.SliceRuns(len(runs), func(i int) (int, int) { return runs[i].lo, runs[i].hi })
	} else {
		scratchCols = make([]tablet.Column, len(rest.Columns))
	}
	for i, r := range runs {
		slice := &scratch
		if borrow {
			slice = &tabs[i]
		} else {
			rest.SliceInto(slice, scratchCols, r.lo, r.hi)
		}
		tx.addEntry(typ, r.device, slice, borrow)
	}
	if err := tx.applyAuto(typ, auto, n, ids); err != nil {
		return err
	}
	tx.resolved(typ, ids, n, len(tx.entries))
	if borrow {
		tx.longs = append(tx.longs, longInsert{typ: typ, t: rest, runs: runs, byName: byName, from: n, to: len(tx.entries)})
	}
	return nil
}

// deviceRuns returns the runs of equal devices in column c of n rows and,
// when each device has a single run, those runs in name order (nil
// otherwise). The names share one string.
func deviceRuns(c *tablet.Column, n int) (runs, byName []deviceRun, err error) {
	// Where runs start, and their count and name bytes first, so that the
	// runs and their names are allocated once at their size: grown by
	// doubling, they were most of a large batch's fresh memory here. A
	// large batch is looked at in parts at once, each part whole words of
	// the bitmap.
	starts := make([]uint64, (n+63)/64)
	parts := 1
	if n >= 1<<16 {
		parts = runtime.GOMAXPROCS(0)
	}
	type partRuns struct{ count, size, null int }
	got := make([]partRuns, parts)
	words := (len(starts) + parts - 1) / parts
	failed := par.Do(parts, parts, func(_, p int) error {
		r := partRuns{null: -1}
		for i := min(p*words*64, n); i < min((p+1)*words*64, n); i++ {
			if !c.Valid(i) {
				r.null = i
				break
			}
			if dev := c.Bytes(i); i == 0 || string(dev) != string(c.Bytes(i-1)) {
				starts[i/64] |= 1 << (i % 64)
				r.count++
				r.size += len(dev)
			}
		}
		got[p] = r
		return nil
	})
	if err := errors.Join(failed...); err != nil { // a panic, as an error
		return nil, nil, err
	}
	count, size := 0, 0
	for _, r := range got {
		if r.null >= 0 {
			return nil, nil, fmt.Errorf("row %d has no device (null): %w", r.null, errs.ErrInvalidArgument)
		}
		count += r.count
		size += r.size
	}
	runs = make([]deviceRun, 0, count)
	var names strings.Builder
	names.Grow(size)
	for w, bits := range starts {
		for ; bits != 0; bits &= bits - 1 {
			i := w*64 + mathbits.TrailingZeros64(bits)
			if len(runs) > 0 {
				runs[len(runs)-1].hi = i
			}
			runs = append(runs, deviceRun{lo: i})
			names.Write(c.Bytes(i))
		}
	}
	if len(runs) > 0 {
		runs[len(runs)-1].hi = n
	}
	all, start := names.String(), 0
	for i := range runs {
		end := start + len(c.Bytes(runs[i].lo))
		runs[i].device = all[start:end]
		start = end
	}
	// Each device has one run if no two runs in name order are equal:
	// usually they already are in name order.
	byName = runs
	if !slices.IsSortedFunc(runs, compareRuns) {
		byName = slices.Clone(runs)
		sortRuns(byName)
	}
	for i := 1; i < len(byName); i++ {
		if byName[i].device == byName[i-1].device {
			return runs, nil, nil
		}
	}
	return runs, byName, nil
}

func compareRuns(a, b deviceRun) int { return strings.Compare(a.device, b.device) }

// sortRuns sorts runs by device name. Many runs are ordered by namesort:
// a batch of a million devices spent 0.44-0.53 s in slices.SortFunc (two
// halves at once, then merged), 0.23-0.29 s so.
func sortRuns(runs []deviceRun) {
	if len(runs) < 64 {
		slices.SortFunc(runs, compareRuns)
		return
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.device
	}
	sorted := make([]deviceRun, len(runs))
	for j, i := range namesort.Order(names) {
		sorted[j] = runs[i]
	}
	copy(runs, sorted)
}

// groupByDevice copies t with each device's rows together, devices in
// order of first appearance and rows in their order, and returns the copy
// and its runs.
func groupByDevice(t *tablet.Tablet, runs []deviceRun) (*tablet.Tablet, []deviceRun) {
	order := map[string]int{}
	var names []string
	count := []int{}
	for _, r := range runs {
		k, ok := order[r.device]
		if !ok {
			k = len(names)
			order[r.device] = k
			names = append(names, r.device)
			count = append(count, 0)
		}
		count[k] += r.hi - r.lo
	}
	start := make([]int, len(names)+1)
	for k, c := range count {
		start[k+1] = start[k] + c
	}
	perm := make([]int32, t.Rows())
	next := slices.Clone(start[:len(names)])
	for _, r := range runs {
		k := order[r.device]
		for i := r.lo; i < r.hi; i++ {
			perm[next[k]] = int32(i)
			next[k]++
		}
	}
	out := make([]deviceRun, len(names))
	for k, name := range names {
		out[k] = deviceRun{device: name, lo: start[k], hi: start[k+1]}
	}
	return t.Gather(perm), out
}

// Commit makes the transaction durable and visible, or changes nothing.
// The transaction is finished afterwards either way.
func (tx *Tx) Commit() error {
	if err := tx.check("commit"); err != nil {
		return err
	}
	tx.done = true
	defer tx.discard()
	if len(tx.ops) == 0 && len(tx.entries) == 0 && len(tx.longs) == 0 && len(tx.deletes) == 0 {
		return nil
	}
	return tx.db.commit(tx.base, tx.view, tx.ops, tx.entries, tx.longs, tx.deletes)
}

// Rollback discards the transaction. Safe after Commit (no-op).
func (tx *Tx) Rollback() {
	tx.done = true
	tx.discard()
}

func (tx *Tx) discard() {
	tx.ops, tx.entries, tx.longs, tx.deletes, tx.view, tx.base = nil, nil, nil, nil, nil, nil
	clear(tx.first[:])
	tx.mem, tx.idsUsed = txMemory{}, false // a Tx kept after its end holds no block
}

// validateDevice checks a device key: like a name, but may be empty.
func validateDevice(device string) error {
	if device == "" {
		return nil
	}
	if err := schema.ValidateName("device", device); err != nil {
		return err
	}
	return nil
}

// missing checks tablet t (conformed: see conform) against type typ in cat
// and returns the type (nil if absent) and the operations that make t
// fit: with autoCreate, the type and properties it lacks; always, fixing
// the time representation of a type that has none. Everything else that does not fit is an error
// naming the column. ids, when not nil, receives the id of each column's
// property (columns to be created get none).
func missing(cat *schema.Catalog, typ string, t *tablet.Tablet, autoCreate bool, ids []schema.PropertyID) (*schema.Type, []schema.Op, error) {
	var ops []schema.Op
	ty, ok := cat.Type(typ)
	if !ok {
		if !autoCreate {
			return nil, nil, fmt.Errorf("type %q does not exist (create it, or open with auto-create): %w", typ, errs.ErrNotFound)
		}
		ops = make([]schema.Op, 0, len(t.Columns)+2)
		ops = append(ops, schema.Op{Kind: schema.CreateType, Type: typ, IfNotExists: true})
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		var p *schema.Property
		if ty != nil {
			p, _ = ty.Property(c.Name)
		}
		switch {
		case p != nil && p.Type != c.Type:
			return nil, nil, fmt.Errorf("column %q is %s but property %s.%s is %s: %w", c.Name, c.Type, typ, c.Name, p.Type, errs.ErrInvalidArgument)
		case p != nil:
			if ids != nil {
				ids[i] = p.ID
			}
		case !autoCreate:
			return nil, nil, fmt.Errorf("property %s.%s does not exist (create it, or open with auto-create): %w", typ, c.Name, errs.ErrNotFound)
		default:
			if ops == nil { // room for every column left and SetTime
				ops = make([]schema.Op, 0, len(t.Columns)-i+1)
			}
			ops = append(ops, schema.Op{Kind: schema.CreateProperty, Type: typ, Property: c.Name, PropertyType: c.Type, IfNotExists: true})
		}
	}
	// The first insert declares the time column's kind, plain int64
	// included (once it has rows), so that later inserts cannot
	// reinterpret the rows stored.
	if ty == nil || !ty.TimeSet {
		if t.TimeUnit == "" && t.Rows() == 0 {
			return ty, ops, nil
		}
		ops = append(ops, schema.Op{Kind: schema.SetTime, Type: typ, TimeUnit: t.TimeUnit, TimeZone: t.TimeZone})
	} else if ty.TimeUnit != t.TimeUnit || ty.TimeZone != t.TimeZone {
		why := ""
		switch {
		case t.TimeUnit == "":
			why = ": plain integers do not say their unit; pass timestamps"
		case ty.TimeUnit != "" && (t.TimeZone == "") != (ty.TimeZone == ""):
			why = ": a time with a zone is an instant, one without a wall-clock reading"
		}
		return nil, nil, fmt.Errorf("the time column is %s but type %q stores times as %s%s: %w",
			timeName(t.TimeUnit, t.TimeZone), typ, timeName(ty.TimeUnit, ty.TimeZone), why, errs.ErrInvalidArgument)
	}
	return ty, ops, nil
}

func timeName(unit, zone string) string {
	switch {
	case unit == "":
		return "int64"
	case zone == "":
		return "timestamp[" + unit + "]"
	}
	return "timestamp[" + unit + ", " + zone + "]"
}

// resolve applies ops to base and maps every entry's columns to property
// ids of the result. It changes nothing: the caller publishes the catalog.
// applied, when not nil, is the result of ops on base already computed.
// replay says the entries come from the log: there, an insert into a type
// whose time kind is undeclared declares it (logs written before first
// inserts declared it hold no such declaration); in a live commit the
// transaction's inserts declared it, so a missing declaration means the
// type was dropped and re-created under the transaction: a conflict.
// The writes go into dst's array when it has room (a commit of one
// tablet passes one on its stack).
func resolve(base, applied *schema.Catalog, ops []schema.Op, entries []entry, replay bool, dst []write) (*schema.Catalog, []write, error) {
	cat := base
	if applied != nil {
		cat = applied
	} else if len(ops) > 0 {
		ch := base.Edit()
		for _, op := range ops {
			if err := ch.Apply(op); err != nil {
				return nil, nil, err
			}
		}
		cat = ch.Catalog()
	}
	writes := dst[:0]
	if cap(writes) < len(entries) {
		writes = make([]write, 0, len(entries))
	}
	writes = writes[:len(entries)]
	for i, e := range entries {
		if e.resolvedIn == cat {
			writes[i] = write{typ: e.typeID, device: e.device, t: e.t, ids: e.ids, entry: i}
			if e.t == nil {
				writes[i].enc = e.tabletEnc()
			}
			continue
		}
		t, err := entries[i].tablet()
		if err != nil {
			return nil, nil, err
		}
		ids := make([]schema.PropertyID, len(t.Columns))
		ty, extra, err := missing(cat, e.typ, t, false, ids)
		if err != nil {
			return nil, nil, fmt.Errorf("insert into %q: %w", e.typ, err)
		}
		if len(extra) > 0 {
			if !replay {
				return nil, nil, fmt.Errorf("insert into %q: time representation changed concurrently: %w", e.typ, errs.ErrConflict)
			}
			ch := cat.Edit()
			for _, op := range extra {
				if op.Kind != schema.SetTime {
					return nil, nil, fmt.Errorf("insert into %q: the schema changed: %w", e.typ, errs.ErrConflict)
				}
				if err := ch.Apply(op); err != nil {
					return nil, nil, fmt.Errorf("insert into %q: %w", e.typ, err)
				}
			}
			cat = ch.Catalog()
			if ty, _, err = missing(cat, e.typ, t, false, ids); err != nil {
				return nil, nil, fmt.Errorf("insert into %q: %w", e.typ, err)
			}
		}
		writes[i] = write{typ: ty.ID, device: e.device, t: t, ids: ids, entry: i}
	}
	return cat, writes, nil
}
