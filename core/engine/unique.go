package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/index"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
)

// UNIQUE indexes. A commit that writes a type with a UNIQUE index, or
// creates one, checks it before its record is appended, holding uniqueMu
// from before the check until its rows are in the memtable, and after
// every commit appended before the check is visible: so each check sees
// every row a commit could have added under that index. A commit that
// resolved without an index another commit then created fails with
// ErrConflict (retry it); so does CREATE UNIQUE INDEX when a commit came
// in between its check and its append, after a few attempts.
//
// The key of a row after the commit is the newest non-null value of each
// property (the transaction's, else the stored row's); a row whose key
// has a null is not indexed, so any number of rows may have one.

// errUniqueRetry: the check no longer holds; commit runs it again.
var errUniqueRetry = errors.New("a commit came in between the UNIQUE check and the append")

// uniqueWork returns the UNIQUE indexes a commit of ops and entries
// must check, as of cat, and whether one of them is created by ops.
func uniqueWork(cat *schema.Catalog, ops []schema.Op, writes []write) (map[schema.TypeID][]*schema.Index, bool) {
	var out map[schema.TypeID][]*schema.Index
	add := func(ty *schema.Type) {
		if _, done := out[ty.ID]; done {
			return
		}
		for _, ix := range ty.Indexes() {
			if ix.Unique {
				if out == nil {
					out = map[schema.TypeID][]*schema.Index{}
				}
				out[ty.ID] = append(out[ty.ID], ix)
			}
		}
	}
	creates := false
	for _, op := range ops {
		if op.Kind == schema.CreateIndex && op.Unique {
			if ty, ok := cat.Type(op.Type); ok {
				add(ty)
				creates = true
			}
		}
	}
	for _, w := range writes {
		if ty, ok := cat.TypeByID(w.typ); ok {
			add(ty)
		}
	}
	return out, creates
}

// uniqueStillHolds checks, under commitMu, that the UNIQUE indexes the
// commit must respect as of cat, the newest catalog, are those it
// checked (checked), and that no commit came in since the check of an
// index it creates (movedOn).
func uniqueStillHolds(cat *schema.Catalog, ops []schema.Op, writes []write, checked map[schema.TypeID][]*schema.Index, movedOn bool) error {
	now, _ := uniqueWork(cat, ops, writes)
	for id, ixs := range now {
		for _, ix := range ixs {
			if !slices.ContainsFunc(checked[id], func(c *schema.Index) bool { return c.ID == ix.ID }) {
				return fmt.Errorf("UNIQUE index %q was created by a concurrent commit: retry the transaction: %w", ix.Name, errs.ErrConflict)
			}
		}
	}
	if movedOn {
		return errUniqueRetry
	}
	return nil
}

// mayNeedUnique is a quick look, before resolving, at whether a commit
// writes a type with a UNIQUE index (as of view, else base) or creates
// one.
func mayNeedUnique(base, view *schema.Catalog, ops []schema.Op, entries []entry) bool {
	for _, op := range ops {
		if op.Kind == schema.CreateIndex && op.Unique {
			return true
		}
	}
	cat := view
	if cat == nil {
		cat = base
	}
	last := ""
	for i, e := range entries {
		if i > 0 && e.typ == last {
			continue
		}
		last = e.typ
		if ty, ok := cat.Type(e.typ); ok && slices.ContainsFunc(ty.Indexes(), func(ix *schema.Index) bool { return ix.Unique }) {
			return true
		}
	}
	return false
}

// settle waits until every commit appended so far is visible.
func (db *DB) settle() uint64 {
	db.commitMu.Lock()
	seq := db.nextSeq
	db.commitMu.Unlock()
	db.publishMu.Lock()
	for db.published < seq && db.failed == nil {
		db.turn.Wait()
	}
	db.publishMu.Unlock()
	return seq
}

// checkUnique checks the UNIQUE indexes work of cat (the commit's
// catalog) against the rows now visible and the transaction's writes.
// created are indexes the transaction makes, whose every row is checked.
func (db *DB) checkUnique(cat *schema.Catalog, work map[schema.TypeID][]*schema.Index, writes []write, deletes []txDelete) error {
	for i := range writes {
		if _, checked := work[writes[i].typ]; !checked {
			continue // checkIndex reads only the writes of the types it checks
		}
		if _, err := writes[i].tablet(); err != nil { // a copy, read back for good
			return err
		}
	}
	for id, ixs := range work {
		ty, _ := cat.TypeByID(id)
		published, _ := db.catalog.Load().TypeByID(id)
		for _, ix := range ixs {
			isNew := published == nil || !slices.ContainsFunc(published.Indexes(), func(p *schema.Index) bool { return p.ID == ix.ID })
			if err := db.checkIndex(ty, ix, isNew, writes, deletes); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyProps returns the properties of ix.
func keyProps(ty *schema.Type, ix *schema.Index) []*schema.Property {
	props := make([]*schema.Property, len(ix.Properties))
	for k, id := range ix.Properties {
		props[k], _ = ty.PropertyByID(id)
	}
	return props
}

// partialKey is a row's key values so far (nil: not known yet).
type partialKey []*cell

func (db *DB) checkIndex(ty *schema.Type, ix *schema.Index, isNew bool, writes []write, deletes []txDelete) error {
	props := keyProps(ty, ix)
	np := len(props)
	// The transaction's rows: row i (order[i]) has each key property's
	// newest non-null value in cells[i*np+k] when set[i*np+k].
	total := 0
	for _, w := range writes {
		if w.typ == ty.ID {
			total += w.t.Rows()
		}
	}
	slot := make(map[index.Row]int, total)
	order := make([]index.Row, 0, total)
	cells := make([]cell, 0, total*np)
	set := make([]bool, 0, total*np)
	pos := make([]int, np)
	for _, w := range writes {
		if w.typ != ty.ID {
			continue
		}
		touches := false
		for k, p := range props {
			pos[k] = slices.Index(w.ids, p.ID)
			touches = touches || pos[k] >= 0
		}
		if !touches && !isNew {
			continue
		}
		for i, tm := range w.t.Times {
			at := index.Row{Device: w.device, Time: tm}
			r, seen := slot[at]
			if !seen {
				r = len(order)
				slot[at] = r
				order = append(order, at)
				cells = append(cells, make([]cell, np)...)
				set = append(set, make([]bool, np)...)
			}
			for k, j := range pos {
				if j >= 0 && w.t.Columns[j].Valid(i) {
					cells[r*np+k], set[r*np+k] = cellAt(&w.t.Columns[j], i), true
				}
			}
		}
	}
	scratch := make(partialKey, np)
	mine := func(r int) partialKey { // valid until the next call
		for k := range np {
			scratch[k] = nil
			if set[r*np+k] {
				scratch[k] = &cells[r*np+k]
			}
		}
		return scratch
	}
	// Complete them from the rows as they are.
	var incomplete []index.Row
	for r, at := range order {
		if slices.Contains(set[r*np:(r+1)*np], false) {
			incomplete = append(incomplete, at)
		}
	}
	if len(incomplete) > 0 {
		err := db.eachKey(ty, props, incomplete, func(at index.Row, pk partialKey) error {
			r := slot[at]
			for k, c := range pk {
				if c != nil && !set[r*np+k] {
					cells[r*np+k], set[r*np+k] = *c, true
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	var buf []byte
	// keyOf encodes pk into buf (valid until the next call); false when
	// a part is null.
	keyOf := func(pk partialKey) ([]byte, bool) {
		buf = buf[:0]
		for k, c := range pk {
			if c == nil {
				return nil, false
			}
			buf = appendCell(buf, props[k].Type, *c)
		}
		return buf, true
	}
	owner := make(map[string]index.Row, len(order))
	for r, at := range order {
		key, ok := keyOf(mine(r))
		if !ok {
			continue
		}
		if prev, dup := owner[string(key)]; dup {
			return uniqueError(ix, props, mine(r), prev, "in the same transaction")
		}
		owner[string(key)] = at
	}
	deleted := func(at index.Row) bool {
		for _, d := range deletes {
			if d.typ == ty.Name && slices.ContainsFunc(d.ranges, func(r memtable.DeleteRange) bool { return r.Covers(at.Device, at.Time) }) {
				return true
			}
		}
		return false
	}
	// The rows already there: every row when the index is new, else the
	// index's candidates for the transaction's keys.
	var seen []index.Row // isNew: the rows seen, keys[i] ends at ends[i]
	var keys []byte
	var ends []int
	visit := func(at index.Row, pk partialKey) error {
		if _, rewritten := slot[at]; rewritten || deleted(at) {
			return nil // its key after the commit is the transaction's
		}
		key, ok := keyOf(pk)
		if !ok {
			return nil
		}
		if prev, dup := owner[string(key)]; dup {
			return uniqueError(ix, props, pk, prev, fmt.Sprintf("and by device %q at time %d", at.Device, at.Time))
		}
		if isNew {
			seen, keys, ends = append(seen, at), append(keys, key...), append(ends, len(keys)+len(key))
		}
		return nil
	}
	if isNew {
		if err := db.eachKey(ty, props, nil, visit); err != nil {
			return err
		}
		return db.storedDuplicates(ty, ix, props, seen, keys, ends)
	}
	if len(owner) == 0 {
		return nil
	}
	wanted := make([]string, 0, len(owner))
	for k := range owner {
		wanted = append(wanted, k)
	}
	return db.keyCandidates(ty, ix, props, wanted, visit)
}

// storedDuplicates reports two of rows with one key (row i's key ends at
// ends[i] in keys), sorting them rather than hashing a million strings.
func (db *DB) storedDuplicates(ty *schema.Type, ix *schema.Index, props []*schema.Property, rows []index.Row, keys []byte, ends []int) error {
	entries := make([]index.Entry, len(rows))
	at := 0
	for i := range rows {
		entries[i] = index.Entry{Key: keys[at:ends[i]:ends[i]], Device: uint32(i)} // Device: the row's number here
		at = ends[i]
	}
	index.SortEntries(entries)
	for i := 1; i < len(entries); i++ {
		if bytes.Equal(entries[i].Key, entries[i-1].Key) {
			a, b := rows[entries[i-1].Device], rows[entries[i].Device]
			stored, err := db.readKeys(ty, props, []index.Row{a})
			if err != nil {
				return err
			}
			return uniqueError(ix, props, stored[a], b, fmt.Sprintf("and by device %q at time %d", a.Device, a.Time))
		}
	}
	return nil
}

func uniqueError(ix *schema.Index, props []*schema.Property, pk partialKey, at index.Row, also string) error {
	parts := make([]string, len(props))
	for k, p := range props {
		c := pk[k]
		switch p.Type {
		case schema.Float, schema.Double:
			parts[k] = fmt.Sprintf("%s = %v", p.Name, c.f)
		case schema.String, schema.Binary:
			parts[k] = fmt.Sprintf("%s = %q", p.Name, c.s)
		case schema.Boolean:
			parts[k] = fmt.Sprintf("%s = %v", p.Name, c.i != 0)
		default:
			parts[k] = fmt.Sprintf("%s = %d", p.Name, c.i)
		}
	}
	return fmt.Errorf("UNIQUE index %q: key (%s) held by device %q at time %d %s: %w",
		ix.Name, strings.Join(parts, ", "), at.Device, at.Time, also, errs.ErrConflict)
}

// readKeys reads the key properties of rows as they are now.
func (db *DB) readKeys(ty *schema.Type, props []*schema.Property, rows []index.Row) (map[index.Row]partialKey, error) {
	out := map[index.Row]partialKey{}
	err := db.eachKey(ty, props, rows, func(at index.Row, pk partialKey) error {
		own := make(partialKey, len(pk))
		for k, c := range pk {
			if c != nil {
				v := *c
				own[k] = &v
			}
		}
		out[at] = own
		return nil
	})
	return out, err
}

// eachKey calls fn with the key properties of each of rows (nil: every
// row of ty) as they are now; pk is valid during the call only.
func (db *DB) eachKey(ty *schema.Type, props []*schema.Property, rows []index.Row, fn func(at index.Row, pk partialKey) error) error {
	names := make([]string, len(props))
	for k, p := range props {
		names[k] = p.Name
	}
	if pty, ok := db.catalog.Load().Type(ty.Name); !ok || pty.ID != ty.ID {
		return nil // created by this commit: no rows yet
	}
	pk := make(partialKey, len(props))
	cells := make([]cell, len(props))
	read := func(req ScanRequest, want func(index.Row) bool) error {
		req.Type, req.Properties = ty.Name, names
		r, err := db.Scan(context.Background(), req)
		if err != nil {
			return err
		}
		defer r.Close()
		for {
			b, ok := r.Next()
			if !ok {
				break
			}
			for i, tm := range b.Rows.Times {
				at := index.Row{Device: b.Device, Time: tm}
				if want != nil && !want(at) {
					continue
				}
				for k := range props {
					pk[k] = nil
					if c := &b.Rows.Columns[k]; c.Valid(i) {
						cells[k] = cellAt(c, i)
						pk[k] = &cells[k]
					}
				}
				if err := fn(at, pk); err != nil {
					return err
				}
			}
		}
		return r.Err()
	}
	if rows == nil {
		return read(ScanRequest{}, nil)
	}
	byDevice := map[string][]int64{}
	for _, at := range rows {
		byDevice[at.Device] = append(byDevice[at.Device], at.Time)
	}
	set := map[index.Row]bool{}
	for _, at := range rows {
		set[at] = true
	}
	for d, times := range byDevice {
		lo, hi := slices.Min(times), slices.Max(times)
		end := hi + 1
		if hi == math.MaxInt64 {
			end = hi
		}
		if err := read(ScanRequest{Devices: []string{d}, Start: &lo, End: &end}, func(at index.Row) bool { return set[at] }); err != nil {
			return err
		}
	}
	return nil
}

// keyCandidates calls fn with the key properties, as they are now, of
// the rows that ix lists under any of keys (encoded).
func (db *DB) keyCandidates(ty *schema.Type, ix *schema.Index, props []*schema.Property, keys []string, fn func(index.Row, partialKey) error) error {
	sorted := make([]index.Entry, len(keys))
	for i, k := range keys {
		sorted[i].Key = []byte(k)
	}
	index.SortEntries(sorted) // faster than sorting the strings
	plan := &indexPlan{ix: ix, keys: make([][]byte, len(keys))}
	for i, e := range sorted {
		plan.keys[i] = e.Key
	}
	files, mems := db.pin(ty.ID)
	defer unpin(files, mems)
	var rows []index.Row
	err := db.candidateRows(ty, plan, files, mems, func(d string, t int64) { rows = append(rows, index.Row{Device: d, Time: t}) })
	if err != nil || len(rows) == 0 {
		return err
	}
	return db.eachKey(ty, props, rows, fn)
}
