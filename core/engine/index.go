package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/index"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
)

// Indexes. Each index of a type has one part per source of the type's
// rows (core/index):
//
//   - per memtable, an index.Mem, written as each commit is applied (its
//     entries before its rows, so a scan that sees a row finds its entry);
//   - per data file, a sidecar _index/<file>.<index id>.agix in the
//     type's directory, built from the file's rows: by the flush or
//     compaction that wrote the file, by CREATE INDEX for the files that
//     exist (the backfill), or by the first lookup that needs it. A
//     sidecar is derived data: one that is missing or damaged is built
//     again, so none is fsynced, and a crash at any point loses nothing.
//
// A scan whose filter constrains an index's leading properties asks each
// source's part for the (device, time) of the rows that held a matching
// key, and reads only those devices, between their first and last such
// time, through the filter: rows since overwritten or deleted fall out
// there. Nulls are not indexed (a row whose first key property is null is
// in no part; no filter that an index serves accepts a null). A replaced
// file's sidecars are deleted with it, a dropped index's once DROP INDEX
// has committed, and any left over (a crash in between) at open.

const indexDir = "_index"

// memParts are the index parts of one memtable.
type memParts struct {
	mu    sync.Mutex
	parts map[schema.IndexID]*index.Mem
}

func (p *memParts) get(id schema.IndexID, create bool) *index.Mem {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.parts[id]
	if m == nil && create {
		if p.parts == nil {
			p.parts = map[schema.IndexID]*index.Mem{}
		}
		m = &index.Mem{}
		p.parts[id] = m
	}
	return m
}

// memPartsOf returns the index parts of m.
func (db *DB) memPartsOf(m *memtable.Memtable) *memParts {
	if p, ok := db.memIx.Load(m); ok {
		return p.(*memParts)
	}
	p, _ := db.memIx.LoadOrStore(m, &memParts{})
	return p.(*memParts)
}

// indexWrite adds the entries of w to the live memtable's index parts,
// before w's rows are written.
func (db *DB) indexWrite(cat *schema.Catalog, mem *memtable.Memtable, w write) {
	if cat == nil {
		return
	}
	if ty, ok := cat.TypeByID(w.typ); ok {
		db.indexRows(mem, ty.Indexes(), w)
	}
}

// indexRows adds the entries of w's rows to mem's parts of indexes.
func (db *DB) indexRows(mem *memtable.Memtable, indexes []*schema.Index, w write) {
	if len(indexes) == 0 {
		return
	}
	parts := db.memPartsOf(mem)
	n := w.t.Rows()
	for _, ix := range indexes {
		pos := make([]int, len(ix.Properties))
		present := false
		for k, id := range ix.Properties {
			pos[k] = slices.Index(w.ids, id)
			present = present || pos[k] >= 0
		}
		if !present {
			continue
		}
		part := parts.get(ix.ID, true)
		var buf []byte
		var ends []int
		var rows []int
		// In a write, a null is no value (it does not overwrite): a row
		// with part of the key has a key that depends on older sources,
		// so it is a candidate of every lookup (AddPartial).
		for i := range n {
			start, whole, any := len(buf), true, false
			for _, j := range pos {
				if j < 0 {
					whole = false
					continue
				}
				var ok bool
				if buf, ok = index.AppendColumn(buf, &w.t.Columns[j], i); ok {
					any = true
				} else {
					whole = false
				}
			}
			switch {
			case whole:
				ends, rows = append(ends, len(buf)), append(rows, i)
			case any:
				part.AddPartial(index.Row{Device: w.device, Time: w.t.Times[i]})
				buf = buf[:start]
			default:
				buf = buf[:start]
			}
		}
		all := string(buf) // one allocation; each key is a substring
		entries := make([]index.MemEntry, len(rows))
		at := 0
		for k, i := range rows {
			entries[k] = index.MemEntry{Key: all[at:ends[k]], Device: w.device, Time: w.t.Times[i]}
			at = ends[k]
		}
		part.Add(entries)
	}
}

// indexMemtables fills the memtable parts of the indexes ops create (as
// of cat) from the rows the memtables hold, before the commit's own rows
// are applied and its catalog published: the files' parts are built from
// the files (buildSidecars), the memtables' from their rows. The caller
// holds publishMu, or is Open's replay.
func (db *DB) indexMemtables(cat *schema.Catalog, ops []schema.Op) {
	for _, op := range ops {
		if op.Kind != schema.CreateIndex {
			continue
		}
		ty, ok := cat.Type(op.Type)
		if !ok {
			continue
		}
		name := op.Index
		if name == "" {
			name = schema.IndexName(op.Type, op.Properties)
		}
		ix, ok := ty.Index(name)
		if !ok {
			continue
		}
		v := db.view.Load()
		mems := []*memtable.Memtable{v.mem}
		if v.imm != nil {
			mems = append(mems, v.imm.mem)
		}
		refs := make([]memtable.ColumnRef, len(ix.Properties))
		for k, p := range keyProps(ty, ix) {
			refs[k] = memtable.ColumnRef{ID: p.ID, Name: p.Name, Type: p.Type}
		}
		for _, m := range mems {
			names, chunks := m.Directory(ty.ID)
			for i, d := range names {
				cur := chunks[i].Snapshot().Cursor(refs, math.MinInt64, math.MaxInt64, DefaultBatchRows)
				for t := cur.Next(); t != nil; t = cur.Next() {
					db.indexRows(m, []*schema.Index{ix}, write{typ: ty.ID, device: d, t: t, ids: ix.Properties})
				}
			}
		}
	}
}

func sidecarPath(dir, file string, id schema.IndexID) string {
	return filepath.Join(dir, indexDir, file+"."+strconv.FormatUint(uint64(id), 10)+".agix")
}

// sidecar returns f's part of index ix of ty (whose table is in dir),
// opening it, or building it when it is missing or damaged. A read-only
// handle builds it in memory.
func (db *DB) sidecar(ty *schema.Type, dir string, f *dataFile, ix *schema.Index) (*index.File, error) {
	f.ixMu.Lock()
	defer f.ixMu.Unlock()
	if s := f.ix[ix.ID]; s != nil {
		return s, nil
	}
	path := sidecarPath(dir, f.name, ix.ID)
	s, err := index.OpenFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, index.ErrDamaged) {
		return nil, err
	}
	if s == nil {
		devices, entries, err := sidecarEntries(ty, f, ix)
		if err != nil {
			return nil, fmt.Errorf("index %q of file %s: %w", ix.Name, f.name, err)
		}
		if db.opts.ReadOnly {
			s, err = index.Build(devices, entries)
		} else {
			if err = os.MkdirAll(filepath.Join(dir, indexDir), 0o755); err != nil {
				return nil, fmt.Errorf("index %q: %v: %w", ix.Name, err, errs.ErrIO)
			}
			if err = index.WriteFile(path, devices, entries); err == nil {
				s, err = index.OpenFile(path)
			}
		}
		if err != nil {
			return nil, err
		}
		db.sidecarsBuilt.Add(1)
	}
	if f.ix == nil {
		f.ix = map[schema.IndexID]*index.File{}
	}
	f.ix[ix.ID] = s
	return s, nil
}

// sidecarEntries reads the keys of ix from every row of f.
func sidecarEntries(ty *schema.Type, f *dataFile, ix *schema.Index) ([]string, []index.Entry, error) {
	cols := make([]segment.Column, len(ix.Properties))
	for k, id := range ix.Properties {
		p, ok := ty.PropertyByID(id)
		if !ok {
			return nil, nil, fmt.Errorf("property %d of the index is gone: %w", id, errs.ErrInternal)
		}
		cols[k] = segment.Column{ID: p.ID, Name: p.Name, Type: p.Type}
	}
	s := f.Scanner(cols)
	defer s.Release()
	devices := f.Devices()
	var buf []byte
	var ends []int
	var entries []index.Entry
	for di, d := range devices {
		cur := s.Read(d, math.MinInt64, math.MaxInt64, 0)
		for {
			t, err := cur.Next()
			if err != nil {
				return nil, nil, err
			}
			if t == nil {
				break
			}
			for i := range t.Rows() {
				// A file's rows are whole: a null is a null. The row is
				// indexed unless its first property is null, so that a
				// lookup of a prefix finds rows whose later ones are.
				start := len(buf)
				var first bool
				buf, first = index.AppendColumn(buf, &t.Columns[0], i)
				if !first {
					buf = buf[:start]
					continue
				}
				for j := 1; j < len(cols); j++ {
					buf, _ = index.AppendColumn(buf, &t.Columns[j], i)
				}
				ends = append(ends, len(buf))
				entries = append(entries, index.Entry{Device: uint32(di), Time: t.Times[i]})
			}
		}
	}
	at := 0
	for k := range entries {
		entries[k].Key = buf[at:ends[k]:ends[k]]
		at = ends[k]
	}
	return devices, entries, nil
}

// buildSidecars makes sure every file of the type's current table has
// its part of each of the type's indexes (the backfill of CREATE INDEX
// and the flushes' eager build); with sweep, it also deletes the
// sidecars that belong to no file or index of it (DROP INDEX). Errors
// are left to the lookups, which build what is missing themselves.
func (db *DB) buildSidecars(id schema.TypeID, sweep bool) {
	ty, _ := db.catalog.Load().TypeByID(id)
	files, mems := db.pin(id)
	defer unpin(files, mems)
	dir := db.tableDir(id)
	for _, f := range files {
		if ty != nil {
			for _, ix := range ty.Indexes() {
				_, _ = db.sidecar(ty, dir, f, ix)
			}
		}
	}
	if sweep && !db.opts.ReadOnly {
		sweepSidecars(dir, ty, files)
	}
}

// indexNewFiles builds the sidecars of files a flush, compaction or
// direct write has written and not yet published, for the indexes of the
// published catalog (whose ids are final: an index the same transaction
// creates is backfilled after its commit), so that no lookup builds them.
func (db *DB) indexNewFiles(id schema.TypeID, files []*newFile) {
	ty, ok := db.catalog.Load().TypeByID(id)
	if !ok || len(ty.Indexes()) == 0 {
		return
	}
	dir := db.tableDir(id)
	for _, f := range files {
		for _, ix := range ty.Indexes() {
			_, _ = db.sidecar(ty, dir, f.dataFile, ix) // a failure is built again by the lookup that needs it
		}
	}
}

// indexRewritten builds the sidecars of a rewrite's new files. Those of
// a compaction that kept every row (no delete or expiry dropped one) are
// merged from the old files' sidecars, which hold the same rows' keys (no
// key is in two files): no data is read and nothing sorted again.
func (db *DB) indexRewritten(id schema.TypeID, added []*newFile, rw rewriting) {
	ty, ok := db.catalog.Load().TypeByID(id)
	if !ok || len(ty.Indexes()) == 0 {
		return
	}
	before := rowsIn(rw.olds)
	var after int64
	for _, f := range added {
		after += f.Rows()
	}
	if len(rw.snaps.names) == 0 && len(rw.olds) > 0 && len(added) > 0 && before == after && !db.opts.ReadOnly {
		for _, ix := range ty.Indexes() {
			_ = db.mergeSidecars(ty, rw.olds, added, ix) // on failure, built below
		}
	}
	db.indexNewFiles(id, added)
}

// mergeSidecars writes the sidecars of index ix for added, the files a
// compaction wrote from olds (every row of olds, and only those).
func (db *DB) mergeSidecars(ty *schema.Type, olds []*dataFile, added []*newFile, ix *schema.Index) error {
	dir := db.tableDir(ty.ID)
	parts := make([]*index.File, len(olds))
	for i, f := range olds {
		s, err := db.sidecar(ty, dir, f, ix)
		if err != nil {
			return err
		}
		parts[i] = s
	}
	// Where each old file's device went: the new file and its device
	// number there; file -1 when it went to several (its time decides).
	type dest struct{ file, dev int }
	find := func(name string, t int64, split bool) (dest, bool) {
		found := dest{file: -1}
		for j, nf := range added {
			p, ok := slices.BinarySearch(nf.Devices(), name)
			if !ok {
				continue
			}
			if split {
				if _, first, last := nf.DeviceAt(p); t < first || t > last {
					continue
				}
			}
			if found.file >= 0 {
				return dest{file: -1}, true
			}
			found = dest{j, p}
		}
		return found, found.file >= 0
	}
	remap := make([][]dest, len(parts))
	for i, s := range parts {
		remap[i] = make([]dest, len(s.Devices()))
		for k, name := range s.Devices() {
			d, ok := find(name, 0, false)
			if !ok {
				return fmt.Errorf("device %q of an old file is in no new one: %w", name, errs.ErrInternal)
			}
			remap[i][k] = d
		}
	}
	entries := make([][]index.Entry, len(added))
	var bad error
	index.Merge(parts, func(src int, key []byte, dev uint32, t int64) {
		d := remap[src][dev]
		if d.file < 0 {
			var ok bool
			if d, ok = find(parts[src].Devices()[dev], t, true); !ok || d.file < 0 {
				bad = fmt.Errorf("a row of device %q at %d is in no new file: %w", parts[src].Devices()[dev], t, errs.ErrInternal)
				return
			}
		}
		entries[d.file] = append(entries[d.file], index.Entry{Key: key, Device: uint32(d.dev), Time: t})
	})
	if bad != nil {
		return bad
	}
	if err := os.MkdirAll(filepath.Join(dir, indexDir), 0o755); err != nil {
		return fmt.Errorf("index %q: %v: %w", ix.Name, err, errs.ErrIO)
	}
	for j, nf := range added {
		path := sidecarPath(dir, nf.name, ix.ID)
		if err := index.WriteFile(path, nf.Devices(), entries[j]); err != nil {
			return err
		}
		s, err := index.OpenFile(path)
		if err != nil {
			return err
		}
		nf.ixMu.Lock()
		if nf.ix == nil {
			nf.ix = map[schema.IndexID]*index.File{}
		}
		if old := nf.ix[ix.ID]; old != nil {
			old.Close()
		}
		nf.ix[ix.ID] = s
		nf.ixMu.Unlock()
		db.sidecarsMerged.Add(1)
	}
	return nil
}

// indexAll runs buildSidecars for every indexed type with a table.
func (db *DB) indexAll() {
	cat := db.catalog.Load()
	for id := range db.view.Load().tables {
		if ty, ok := cat.TypeByID(id); ok && len(ty.Indexes()) > 0 {
			db.buildSidecars(id, false)
		}
	}
}

// sweepSidecars deletes the sidecars of dir that belong to no file of
// files or to no index of ty, and temporary ones.
func sweepSidecars(dir string, ty *schema.Type, files []*dataFile) {
	entries, err := os.ReadDir(filepath.Join(dir, indexDir))
	if err != nil {
		return
	}
	live := map[string]bool{}
	for _, f := range files {
		if ty != nil {
			for _, ix := range ty.Indexes() {
				live[filepath.Base(sidecarPath(dir, f.name, ix.ID))] = true
			}
		}
	}
	for _, e := range entries {
		if !live[e.Name()] {
			_ = os.Remove(filepath.Join(dir, indexDir, e.Name()))
		}
	}
}

// removeSidecars deletes the sidecars of a file the table no longer
// holds.
func removeSidecars(dir, file string) {
	matches, _ := filepath.Glob(filepath.Join(dir, indexDir, file+".*.agix"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
}

// closeSidecars unmaps a closed file's sidecars.
func (f *dataFile) closeSidecars() {
	f.ixMu.Lock()
	for _, s := range f.ix {
		s.Close()
	}
	f.ix = nil
	f.ixMu.Unlock()
}

// keyRange is [lo, hi) over encoded keys; a nil bound is none.
type keyRange struct{ lo, hi []byte }

// indexPlan is how a scan's filter uses an index.
type indexPlan struct {
	ix     *schema.Index
	ranges []keyRange
	keys   [][]byte // instead of ranges: whole keys, sorted
	desc   string   // the constraints used, as in the filter
}

// maxIndexRanges bounds the key ranges of an "in" list (or of the
// product of several): more are read as one range from the least to the
// greatest.
const maxIndexRanges = 4096

// planIndex picks the index of ty that w constrains best: the most
// leading properties with "=" or "in", then a range on the next one, a
// UNIQUE index on a tie; nil when none serves w (an "or", or no
// constraint on any index's first property).
func planIndex(ty *schema.Type, w *Where) *indexPlan {
	if w == nil {
		return nil
	}
	// The conditions every accepted row meets: w's, or those of its
	// "and"s, at any depth ("or"s constrain no one property).
	var conds []Cond
	var collect func(w *Where)
	collect = func(w *Where) {
		if w.Cond != nil {
			conds = append(conds, *w.Cond)
		}
		for i := range w.And {
			collect(&w.And[i])
		}
	}
	collect(w)
	var best *indexPlan
	bestScore := 0
	for _, ix := range ty.Indexes() {
		plan, score := planOne(ty, ix, conds)
		if plan == nil {
			continue
		}
		if ix.Unique {
			score++
		}
		if score > bestScore {
			best, bestScore = plan, score
		}
	}
	return best
}

// planOne plans ix for conds; the score counts constrained properties
// (equalities twice, so that "a = 1 and b > 2" beats "a > 1").
func planOne(ty *schema.Type, ix *schema.Index, conds []Cond) (*indexPlan, int) {
	prefixes := [][]byte{nil}
	score := 0
	var used []string
	for _, id := range ix.Properties {
		p, ok := ty.PropertyByID(id)
		if !ok {
			return nil, 0
		}
		var eq []cell
		isEq := false
		var lo, hi *Cond
		for i := range conds {
			c := &conds[i]
			if c.Property != p.Name {
				continue
			}
			switch c.Op {
			case "=":
				if x, err := cellOfValue(p, c.Value); err == nil && !isEq {
					eq, isEq = []cell{x}, true
					used = append(used, fmt.Sprintf("%s = %v", p.Name, c.Value))
				}
			case "in":
				if isEq {
					continue
				}
				list, ok := c.Value.([]any)
				if !ok {
					continue
				}
				var cells []cell
				for _, v := range list {
					x, err := cellOfValue(p, v)
					if err != nil {
						cells = nil
						break
					}
					cells = append(cells, x)
				}
				if cells != nil && len(cells)*len(prefixes) <= maxIndexRanges {
					eq, isEq = cells, true
					used = append(used, fmt.Sprintf("%s in (%d values)", p.Name, len(cells)))
				}
			case ">", ">=":
				if lo == nil {
					lo = c
				}
			case "<", "<=":
				if hi == nil {
					hi = c
				}
			}
		}
		if isEq {
			var next [][]byte
			for _, pre := range prefixes {
				for _, x := range eq {
					next = append(next, appendCell(slices.Clip(pre), p.Type, x))
				}
			}
			prefixes = next
			score += 2
			continue
		}
		if lo == nil && hi == nil {
			break
		}
		// A range on this property ends the key's constrained part.
		var ranges []keyRange
		for _, pre := range prefixes {
			r := keyRange{lo: pre, hi: index.PrefixEnd(pre)}
			if lo != nil {
				x, err := cellOfValue(p, lo.Value)
				if err != nil {
					return nil, 0
				}
				k := appendCell(slices.Clip(pre), p.Type, x)
				if r.lo = k; lo.Op == ">" {
					r.lo = index.PrefixEnd(k)
				}
				used = append(used, fmt.Sprintf("%s %s %v", p.Name, lo.Op, lo.Value))
			}
			if hi != nil {
				x, err := cellOfValue(p, hi.Value)
				if err != nil {
					return nil, 0
				}
				k := appendCell(slices.Clip(pre), p.Type, x)
				if r.hi = k; hi.Op == "<=" {
					r.hi = index.PrefixEnd(k)
				}
				used = append(used, fmt.Sprintf("%s %s %v", p.Name, hi.Op, hi.Value))
			}
			if r.lo != nil && len(r.lo) == 0 {
				r.lo = nil
			}
			ranges = append(ranges, r)
		}
		used = slices.Compact(used)
		return &indexPlan{ix: ix, ranges: ranges, desc: strings.Join(used, " and ")}, score + 1
	}
	if score == 0 {
		return nil, 0
	}
	ranges := make([]keyRange, len(prefixes))
	for i, pre := range prefixes {
		ranges[i] = keyRange{lo: pre, hi: index.PrefixEnd(pre)}
	}
	return &indexPlan{ix: ix, ranges: ranges, desc: strings.Join(used, " and ")}, score
}

// appendCell appends the key component of x, a value of type t.
func appendCell(dst []byte, t schema.PropertyType, x cell) []byte {
	dst = append(dst, 1) // not null
	switch t {
	case schema.Float, schema.Double:
		return index.AppendFloat(dst, x.f)
	case schema.String, schema.Binary:
		return index.AppendBytes(dst, []byte(x.s))
	case schema.Boolean:
		return index.AppendBool(dst, x.i != 0)
	}
	return index.AppendInt(dst, x.i)
}

// candidates asks every part of plan's index over files and mems for
// the rows that held a key in the plan's ranges: per device, the least
// and greatest such time.
func (db *DB) candidates(ty *schema.Type, plan *indexPlan, files []*dataFile, mems []*memtable.Memtable) (map[string][2]int64, int, error) {
	out := map[string][2]int64{}
	n := 0
	err := db.candidateRows(ty, plan, files, mems, func(device string, t int64) {
		n++
		if w, ok := out[device]; ok {
			out[device] = [2]int64{min(w[0], t), max(w[1], t)}
		} else {
			out[device] = [2]int64{t, t}
		}
	})
	return out, n, err
}

// candidateRows calls fn for each row that a part of plan's index over
// files and mems lists under a key in the plan's ranges.
func (db *DB) candidateRows(ty *schema.Type, plan *indexPlan, files []*dataFile, mems []*memtable.Memtable, fn func(device string, t int64)) error {
	for _, m := range mems {
		p, ok := db.memIx.Load(m)
		if !ok {
			continue
		}
		part := p.(*memParts).get(plan.ix.ID, false)
		if part == nil {
			continue
		}
		if plan.keys != nil {
			part.SearchKeys(plan.keys, fn)
		}
		for _, r := range plan.ranges {
			part.Search(r.lo, r.hi, fn)
		}
	}
	dir := db.tableDir(ty.ID)
	for _, f := range files {
		s, err := db.sidecar(ty, dir, f, plan.ix)
		if err != nil {
			return err
		}
		if plan.keys != nil {
			s.SearchKeys(plan.keys, fn)
		}
		for _, r := range plan.ranges {
			s.Search(r.lo, r.hi, fn)
		}
	}
	return nil
}
