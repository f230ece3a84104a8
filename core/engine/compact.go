package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
)

// Compaction rewrites a type's files into fewer, larger ones: small files
// (each flush and direct write adds at least one per type it touches)
// cost a footer, a descriptor and a Delta add each, and every scan and
// reopen pays for them. The rewrite is the flush's merge without new
// rows: the files' rows, under the type's current layout (so the columns
// of dropped properties go), into files of about compactFileRows rows,
// committed to the Delta log as the removal of the old files and the
// addition of the new ones in one commit. Readers that hold an old file
// keep reading it through their descriptor; its name is deleted at once.
//
// Size-tiered and in the background: after a flush, a type with at least
// compactMinFiles files of fewer than compactFileRows rows has those
// merged. DB.Compact merges every file of a type on demand.
//
// Every compaction leaves out the rows a type's TTL has expired; after a
// flush, the files of a type with a TTL whose time span has expired for
// the most part (all of a file, or half its span) are rewritten so.

const (
	// compactFileRows is the size compaction merges files up to.
	compactFileRows = 4 * flushFileRows
	// compactMinFiles is how many small files a type gathers before a
	// background compaction merges them.
	compactMinFiles = 8
)

// Compact flushes (so that deletes not yet physical are), then merges
// the files of type typ ("" for every type) into as few as
// compactFileRows allows, now, and waits for it.
func (db *DB) Compact(typ string) error {
	if db.closed.Load() {
		return fmt.Errorf("compact: %w", errs.ErrClosed)
	}
	if err := db.readOnly("compact"); err != nil {
		return err
	}
	if typ != "" {
		if _, ok := db.catalog.Load().Type(typ); !ok {
			return fmt.Errorf("compact: type %q: %w", typ, errs.ErrNotFound)
		}
	}
	if err := db.flushAll(); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	defer db.indexAll() // the new files' sidecars, once the locks below are released
	db.ttlMu.RLock()
	defer db.ttlMu.RUnlock()
	db.deltaMu.Lock()
	defer db.deltaMu.Unlock()
	if db.closed.Load() {
		return fmt.Errorf("compact: %w", errs.ErrClosed)
	}
	cat := db.catalog.Load() // under ttlMu: the TTLs in force until the Delta commit
	var types []*schema.Type
	if typ == "" {
		types = cat.Types()
	} else {
		ty, ok := cat.Type(typ)
		if !ok {
			return fmt.Errorf("compact: type %q: %w", typ, errs.ErrNotFound)
		}
		types = []*schema.Type{ty}
	}
	for _, ty := range types {
		if err := db.compactType(ty, compactAll); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
	}
	return nil
}

// compactSmall runs the background compactions after a flush: each type
// of cat with compactMinFiles small files has them merged. Its failures
// change nothing and are left for the next flush to retry.
func (db *DB) compactSmall() {
	db.ttlMu.RLock()
	defer db.ttlMu.RUnlock()
	db.deltaMu.Lock()
	defer db.deltaMu.Unlock()
	cat := db.catalog.Load()
	now := time.Now()
	for id, tb := range db.view.Load().tables {
		ty, ok := cat.TypeByID(id)
		switch {
		case !ok:
		case len(smallFiles(tb.files)) >= compactMinFiles:
			_ = db.compactType(ty, compactSmallFiles)
		case len(expiringFiles(tb.files, ttlCutoff(ty, now))) > 0:
			_ = db.compactType(ty, compactExpired)
		}
	}
}

// expiringFiles returns the files whose time span is mostly before
// cutoff: wholly, or by half or more.
func expiringFiles(files []*dataFile, cutoff int64) []*dataFile {
	var out []*dataFile
	for _, f := range files {
		_, _, lo, hi := f.Bounds()
		if lo < cutoff && (hi < cutoff || float64(cutoff)-float64(lo) >= (float64(hi)-float64(lo))/2) {
			out = append(out, f)
		}
	}
	return out
}

// What compactType merges.
const (
	compactAll        = iota // every file
	compactSmallFiles        // the files of fewer than compactFileRows rows
	compactExpired           // the files expiringFiles returns
)

// smallFiles returns the files of fewer than compactFileRows rows.
func smallFiles(files []*dataFile) []*dataFile {
	var out []*dataFile
	for _, f := range files {
		if f.Rows() < compactFileRows {
			out = append(out, f)
		}
	}
	return out
}

// deadColumns reports whether a file of layout l holds a column that is
// no live property of ty (a dropped one, or one whose name is now
// another's).
func deadColumns(l segment.Layout, ty *schema.Type) bool {
	for _, c := range l.Columns {
		if p, ok := ty.PropertyByID(c.ID); !ok || p.Name != c.Name || p.Type != c.Type {
			return true
		}
	}
	return false
}

// compactType merges the files of ty that mode selects and publishes the
// new table. The caller holds deltaMu.
func (db *DB) compactType(ty *schema.Type, mode int) error {
	tb := db.view.Load().tables[ty.ID]
	if tb == nil {
		return nil
	}
	cutoff := ttlCutoff(ty, time.Now())
	var olds []*dataFile
	switch mode {
	case compactAll:
		olds = slices.Clone(tb.files)
	case compactSmallFiles:
		olds = smallFiles(tb.files)
	case compactExpired:
		olds = expiringFiles(tb.files, cutoff)
	}
	if len(olds) == 0 {
		return nil
	}
	if _, _, lo, _ := olds[0].Bounds(); len(olds) == 1 && mode != compactExpired && lo >= cutoff && !deadColumns(olds[0].Layout(), ty) {
		return nil // one file holding only live properties and rows: nothing to gain
	}
	total := rowsIn(olds)
	commit := segment.Commit{AppID: txnApp, TxnVersion: txnAfter(tb, 0), Metadata: deltaMetadata(tb, ty)}
	nt, err := db.rewriteTable(ty, tb, commit, rewriting{
		what: "compaction", olds: olds, files: int(total/db.compactRows) + 1, fileRows: db.compactRows,
		writeStep: "compact-write", commitStep: "compact-commit"})
	if err != nil {
		return err
	}
	db.publishTable(ty.ID, nt)
	dropReplaced(tb.dir, olds)
	db.counters.compactions.Add(1)
	return nil
}
