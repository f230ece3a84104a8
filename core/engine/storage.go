package engine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/index"
	"github.com/arcadego/arcadego/core/internal/namesort"
	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// view is what scans read, replaced as a whole (under stateMu) when the
// memtable is handed over, when a type's flush commits, and when a flush
// completes. A scan takes a reference on each file it may read while it
// holds stateMu, so a file a later flush removes stays readable until the
// scan closes.
type view struct {
	mem    *memtable.Memtable // the live memtable: takes the writes
	imm    *immutable         // handed over and being flushed; nil when none
	tables map[schema.TypeID]*table
}

// immutable is a memtable handed over to the flush: it holds exactly the
// writes of the log records before end, less what earlier flushes wrote.
type immutable struct {
	mem     *memtable.Memtable
	end     wal.LSN
	catalog *schema.Catalog // the catalog as of end: the checkpoint's snapshot
	done    map[schema.TypeID]bool
}

// table is one type's flushed data: its Delta table and open files.
// files is never modified once the table is in a view.
type table struct {
	id      schema.TypeID
	dir     string
	delta   *segment.Table // the flusher's alone
	version int64          // delta's version when this table was made
	files   []*dataFile
}

// dataFile is an open Parquet file with a reference count: one for each
// view's table that lists it (counted once, passed on from view to view)
// and one per scan reading it. The last unref closes it.
type dataFile struct {
	*segment.File
	name   string
	size   int64
	stats  string    // its add action's Delta statistics ("" when unknown)
	parsed fileStats // stats, parsed when first needed (statsOf)
	refs   atomic.Int32
	// ix holds the file's index sidecars opened so far (index.go).
	ixMu sync.Mutex
	ix   map[schema.IndexID]*index.File
	// The file's summary of its devices' latest values (last.go): their
	// latest times and, per property asked so far, their last values.
	lastsMu sync.Mutex
	latest  []int64
	lasts   map[schema.PropertyID]propLast
}

// pin returns the files of type id's table and the memtables (oldest
// first) of the current view, holding a reference on each: flushes and
// compactions may replace them meanwhile. unpin lets them go.
func (db *DB) pin(id schema.TypeID) ([]*dataFile, []*memtable.Memtable) {
	db.stateMu.Lock()
	defer db.stateMu.Unlock()
	v := db.view.Load()
	var files []*dataFile
	if t := v.tables[id]; t != nil {
		files = t.files
		for _, f := range files {
			f.refs.Add(1)
		}
	}
	var mems []*memtable.Memtable
	if v.imm != nil {
		mems = append(mems, v.imm.mem)
	}
	mems = append(mems, v.mem)
	for _, m := range mems {
		m.Retain() // under stateMu: the flusher releases imm after taking it out of the view
	}
	return files, mems
}

func unpin(files []*dataFile, mems []*memtable.Memtable) {
	for _, f := range files {
		f.unref()
	}
	for _, m := range mems {
		m.Release()
	}
}

func (f *dataFile) unref() {
	if f.refs.Add(-1) == 0 {
		f.closeSidecars()
		_ = f.File.Close()
	}
}

// has reports whether the file holds rows of device whose times span
// overlaps [lo, hi].
func (f *dataFile) has(device string, lo, hi int64) bool {
	first, last, ok := f.DeviceTimes(device)
	return ok && last >= lo && first <= hi
}

// flushCounters count the storage tier's work for Stats.
type flushCounters struct {
	flushes, flushedRows, flushedBytes, checkpoints, stalls atomic.Uint64
	directWrites, compactions                               atomic.Uint64
	stallNanos                                              atomic.Int64
	fsyncs                                                  atomic.Uint64
}

// closeCheckpointBytes: Close checkpoints when the live log holds more, so
// that reopening replays little; below it a replay costs about what the
// checkpoint would, and a test's throwaway database closes at once.
const closeCheckpointBytes = 1 << 20

func (db *DB) tableDir(id schema.TypeID) string {
	return filepath.Join(db.path, tablesDir, strconv.FormatUint(uint64(id), 10))
}

func (db *DB) syncing() bool { return db.opts.Sync != wal.SyncOff }

// openTable opens the table of type id from disk (an empty one when it
// has no directory yet) with every file its Delta log lists.
func (db *DB) openTable(id schema.TypeID) (*table, error) {
	dir := db.tableDir(id)
	minVersion := int64(-1)
	if v, ok := db.man.Tables[uint32(id)]; ok {
		minVersion = v
	}
	dt, err := segment.OpenTable(dir, minVersion)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", db.path, err)
	}
	t := &table{id: id, dir: dir, delta: dt, version: dt.Version()}
	// Parsing the Parquet footers is most of a reopen: in parallel.
	adds := dt.Files()
	t.files = make([]*dataFile, len(adds))
	errs := par.Do(len(adds), par.CPUs(len(adds)), func(_, i int) error {
		a := adds[i]
		f, err := segment.Open(filepath.Join(dir, a.Path), a.Size)
		if err != nil {
			return err
		}
		t.files[i] = &dataFile{File: f, name: a.Path, size: a.Size, stats: a.Stats}
		t.files[i].refs.Store(1)
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		t.files = slices.DeleteFunc(t.files, func(f *dataFile) bool { return f == nil })
		t.release()
		return nil, fmt.Errorf("open %q: %w", db.path, err)
	}
	return t, nil
}

// release drops the table's references on its files.
func (t *table) release() {
	for _, f := range t.files {
		f.unref()
	}
}

// openTables opens the table of every type of cat that has data on disk,
// after deleting the directories of types dropped before snap (the
// catalog replay started from).
func (db *DB) openTables(snap, cat *schema.Catalog) error {
	onDisk, err := db.removeDroppedTables(snap, cat)
	if err != nil {
		return fmt.Errorf("open %q: %w", db.path, err)
	}
	for id := range db.man.Tables {
		if _, live := cat.TypeByID(schema.TypeID(id)); live && !onDisk[schema.TypeID(id)] {
			return fmt.Errorf("open %q: %s is missing, yet the manifest records version %d of its Delta log: %w",
				db.path, db.tableDir(schema.TypeID(id)), db.man.Tables[id], errs.ErrCorrupt)
		}
	}
	v := db.view.Load()
	tables := maps.Clone(v.tables)
	for id := range onDisk {
		if tables[id] != nil {
			continue // opened by a flush or a direct write during replay
		}
		t, err := db.openTable(id)
		if err != nil {
			return err
		}
		tables[id] = t
	}
	db.view.Store(&view{mem: v.mem, imm: v.imm, tables: tables})
	// Files of flushes and direct writes that stopped before their Delta
	// commit. Only now: until replay has published the direct writes the
	// log holds, their files are not in the Delta log yet.
	for _, t := range tables {
		if db.opts.ReadOnly {
			break // the writer's files: not ours to delete
		}
		if _, err := t.delta.RemoveStrays(); err != nil {
			return fmt.Errorf("open %q: %w", db.path, err)
		}
		ty, _ := cat.TypeByID(t.id)
		sweepSidecars(t.dir, ty, t.files)
	}
	return nil
}

// removeDroppedTables deletes the table directories of types dropped
// before snap, a checkpoint's catalog: ids it handed out but no longer
// has. A type dropped after it keeps its directory until a later
// checkpoint, since replaying the log from snap may publish a direct
// write into it. It returns the ids of cat's types that have a directory.
func (db *DB) removeDroppedTables(snap, cat *schema.Catalog) (map[schema.TypeID]bool, error) {
	lastType, _, _ := snap.LastIDs()
	root := filepath.Join(db.path, tablesDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	live := map[schema.TypeID]bool{}
	for _, e := range entries {
		id, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil || !e.IsDir() {
			continue // not ours
		}
		if _, ok := cat.TypeByID(schema.TypeID(id)); ok {
			live[schema.TypeID(id)] = true
			continue
		}
		if _, ok := snap.TypeByID(schema.TypeID(id)); ok || id > uint64(lastType) || db.opts.ReadOnly {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			return nil, fmt.Errorf("remove the data of a dropped type: %v: %w", err, errs.ErrIO)
		}
	}
	return live, nil
}

// handOver makes the live memtable immutable and starts a fresh one, if
// none is being flushed and force is set or the budget is reached. The
// caller holds publishMu, so the memtable holds exactly the records before
// appliedEnd. It returns the new immutable memtable, or nil.
func (db *DB) handOver(force bool) *immutable {
	db.stateMu.Lock()
	v := db.view.Load()
	if v.imm != nil || !force && v.mem.MemoryUsage() < db.budget {
		db.stateMu.Unlock()
		return nil
	}
	imm := &immutable{mem: v.mem, end: db.appliedEnd, catalog: db.catalog.Load(), done: map[schema.TypeID]bool{}}
	db.view.Store(&view{mem: db.newMemtable(), imm: imm, tables: v.tables})
	db.stateCond.Broadcast()
	db.stateMu.Unlock()
	db.rotateAt(imm.end) // outside stateMu: scans need not wait for its fsyncs
	return imm
}

// rotateAt starts a new log segment if the log ends at end (no commit is
// between its append and its publication), so that the checkpoint after
// this flush can delete every segment up to here instead of leaving the
// flushed records in the active one, to be read again at every reopen.
// The caller holds publishMu. A failed rotation fails the log, which
// every later commit reports.
func (db *DB) rotateAt(end wal.LSN) {
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	if db.log.End() == end {
		_, _ = db.log.Rotate()
	}
}

// waitForRoom is the back-pressure rule: a commit waits while the live
// memtable is over budget and the previous one is still being flushed, so
// at most two memtables are in memory. A failed flush fails the commit
// instead (see flushFailed).
func (db *DB) waitForRoom() error {
	if db.log == nil {
		return nil
	}
	if err := db.flushFailed(); err != nil {
		return err
	}
	if v := db.view.Load(); v.imm == nil || v.mem.MemoryUsage() < db.budget {
		return nil
	}
	db.stateMu.Lock()
	defer db.stateMu.Unlock()
	var start time.Time
	for {
		v := db.view.Load()
		if v.imm == nil || v.mem.MemoryUsage() < db.budget || db.stopping {
			break
		}
		if err := db.flushFailed(); err != nil {
			return err
		}
		if start.IsZero() {
			start = time.Now()
		}
		db.stateCond.Wait()
	}
	if !start.IsZero() {
		db.counters.stalls.Add(1)
		db.counters.stallNanos.Add(int64(time.Since(start)))
	}
	return nil
}

// flushFailed returns the last flush's failure, which fails every commit
// until a flush succeeds (Flush retries): the data on disk stays
// consistent, but a database that cannot flush would otherwise grow its
// memory without bound.
func (db *DB) flushFailed() error {
	if p := db.flushErr.Load(); p != nil {
		return fmt.Errorf("the background flush failed (call Flush to retry, or reopen): %w", *p)
	}
	return nil
}

// flushLoop is the background flush: it flushes each handed-over memtable
// and checkpoints. After a failure it waits for Flush to ask for a retry.
func (db *DB) flushLoop() {
	defer close(db.flusherDone)
	db.stateMu.Lock()
	defer db.stateMu.Unlock()
	defer func() { db.exited = true; db.stateCond.Broadcast() }() // wakes flushAll waiters
	for {
		v := db.view.Load()
		switch {
		case v.imm != nil && (db.flushErr.Load() == nil || db.retry):
			db.retry, db.flushing = false, true
			db.stateMu.Unlock()
			imm := v.imm
			err := db.flushImmutable(imm, db.catalog.Load())
			if err == nil {
				err = db.checkpoint(imm.end, imm.catalog, db.catalog.Load())
			}
			if err == nil {
				db.indexAll() // the new files' sidecars, before Flush returns
			}
			db.stateMu.Lock()
			db.compactDue = db.compactDue || err == nil
			db.flushing = false
			db.flushRuns++
			if err != nil {
				db.flushErr.Store(&err)
			} else {
				db.flushErr.Store(nil)
			}
			db.stateCond.Broadcast()
			if err == nil {
				// The live memtable may have filled during the flush.
				db.stateMu.Unlock()
				db.publishMu.Lock()
				db.handOver(false)
				db.publishMu.Unlock()
				db.stateMu.Lock()
			}
		case db.stopping:
			return
		case db.compactDue:
			// Only when no memtable waits for its flush: writers never wait
			// for a compaction, only a flush might.
			db.compactDue, db.compacting = false, true
			db.stateMu.Unlock()
			db.compactSmall()
			db.indexAll()
			db.stateMu.Lock()
			db.compacting = false
			db.stateCond.Broadcast()
		default:
			db.stateCond.Wait()
		}
	}
}

// flushAll hands the live memtable over (even a small or empty one, so
// that schema changes reach the Delta logs too) and waits until it is
// flushed and checkpointed. A failed earlier flush is retried first.
func (db *DB) flushAll() error {
	if db.log == nil {
		return nil
	}
	for {
		db.stateMu.Lock()
		// Wait until the flusher is idle with nothing handed over, so that
		// the attempts counted from here on are this hand-over's.
		for db.view.Load().imm != nil || db.flushing {
			if db.exited {
				db.stateMu.Unlock()
				return fmt.Errorf("flush: %w", errs.ErrClosed)
			}
			if !db.flushing && db.flushErr.Load() != nil {
				if err := db.retryFlushLocked(); err != nil {
					db.stateMu.Unlock()
					return err
				}
				continue
			}
			db.stateCond.Wait()
		}
		runs := db.flushRuns
		failed := db.flushErr.Load() != nil
		db.stateMu.Unlock()

		db.publishMu.Lock()
		imm := db.handOver(true)
		db.publishMu.Unlock()
		if imm == nil {
			continue // a commit handed over first: wait for that one
		}
		db.stateMu.Lock()
		defer db.stateMu.Unlock()
		if failed {
			// After a failed checkpoint (whose memtable is gone) the
			// flusher waits to be asked; otherwise the hand-over woke it,
			// and asking again would run a second attempt after a failure.
			db.retry = true
			db.stateCond.Broadcast()
		}
		for db.flushRuns == runs { // the attempt ends with its checkpoint
			if db.exited { // closed meanwhile: nobody flushes any more
				return fmt.Errorf("flush: %w", errs.ErrClosed)
			}
			db.stateCond.Wait()
		}
		return db.flushFailed()
	}
}

// retryFlushLocked asks the idle flusher for one more attempt at a failed
// flush and waits for it. The caller holds stateMu.
func (db *DB) retryFlushLocked() error {
	runs := db.flushRuns
	db.retry = true
	db.stateCond.Broadcast()
	for db.flushRuns == runs {
		if db.exited {
			return fmt.Errorf("flush: %w", errs.ErrClosed)
		}
		db.stateCond.Wait()
	}
	return db.flushFailed()
}

// stopFlusher ends the flush loop after the flush in progress.
func (db *DB) stopFlusher() {
	if db.flusherDone == nil {
		return
	}
	db.stateMu.Lock()
	db.stopping = true
	db.stateCond.Broadcast()
	db.stateMu.Unlock()
	<-db.flusherDone
}

// flushImmutable writes imm to Parquet, type by type, each in one Delta
// commit, then publishes the new tables and drops imm from the view, in
// one view change. cur is the newest catalog: a type or property dropped
// since the hand-over is not written. A type done by an earlier, failed
// attempt is not redone; the types a failed attempt did commit are
// published all the same.
func (db *DB) flushImmutable(imm *immutable, cur *schema.Catalog) error {
	// A direct write must not commit to a table between a flush's reading
	// of its files and the publication of the flushed table; a TTL must
	// not change while the flush leaves out the rows it expired.
	db.ttlMu.RLock()
	defer db.ttlMu.RUnlock()
	db.deltaMu.Lock()
	defer db.deltaMu.Unlock()
	if latest := db.catalog.Load(); latest != nil && latest.Version() > cur.Version() {
		cur = latest
	}
	// The flushed marks of its commits say the log holds what they cover
	// (see delete.go): it must, before any is written.
	if imm.end > 0 {
		if err := db.log.SyncNow(imm.end - 1); err != nil { // durable past the last record's last byte
			return fmt.Errorf("flush: %w", err)
		}
	}
	v := db.view.Load()
	ids := append(imm.mem.Types(), imm.mem.DeletedTypes()...)
	for id := range v.tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var dropped []*table
	var todo []*schema.Type
	for _, id := range ids {
		if imm.done[id] {
			continue
		}
		ty, live := cur.TypeByID(id)
		if !live {
			if t := v.tables[id]; t != nil {
				dropped = append(dropped, t)
			}
			continue
		}
		todo = append(todo, ty)
	}
	// Types flush in parallel: a type's flush is mostly waiting for its
	// fsyncs (file, directory, Delta commit), which overlap.
	done := make([]*flushedType, len(todo))
	errs := par.Do(len(todo), flushTypesAtOnce, func(_, i int) (err error) {
		done[i], err = db.flushType(todo[i], imm)
		return err
	})

	db.stateMu.Lock()
	v = db.view.Load()
	nv := &view{mem: v.mem, imm: v.imm, tables: maps.Clone(v.tables)}
	for i, f := range done {
		if f != nil {
			nv.tables[todo[i].ID] = f.table
		}
	}
	for _, t := range dropped {
		delete(nv.tables, t.id)
	}
	if errs == nil {
		nv.imm = nil
	}
	db.view.Store(nv)
	db.stateMu.Unlock()
	if errs == nil {
		imm.mem.Release() // the view's use; scans still reading it hold their own
		db.memIx.Delete(imm.mem)
	}

	for i, f := range done {
		if errs == nil || errs[i] == nil {
			imm.done[todo[i].ID] = true
		}
		if f == nil {
			continue
		}
		dropReplaced(f.table.dir, f.replaced)
	}
	for _, t := range dropped {
		t.release() // the directory goes at the checkpoint
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	db.counters.flushes.Add(1)
	return nil
}

// flushedType is what a type's flush committed: the type's new table, and
// the files it replaced, to be deleted once the table is published.
type flushedType struct {
	table    *table
	replaced []*dataFile
}

// flushTypesAtOnce bounds the types a flush writes at the same time.
const flushTypesAtOnce = 8

// flushBatchRows is the batch size of the merges a flush runs.
const flushBatchRows = 16384

// flushType writes the rows of type ty that imm holds into new Parquet
// files (see planFlush) and commits them to the type's Delta log. Files
// whose keys may overlap the new rows are merged into the new ones and
// removed in the same commit, so no (device, time) key is in two files;
// so are files holding a column whose name now belongs to another
// property (a dropped property's data must not come back under a new
// property of its name). It returns nil when the type has nothing to
// commit.
func (db *DB) flushType(ty *schema.Type, imm *immutable) (*flushedType, error) {
	tb, err := db.tableOf(ty.ID)
	if err != nil {
		return nil, err
	}
	rewrite := map[*dataFile]bool{}
	dels := imm.mem.Deletes(ty.ID) // made physical here: the files holding rows they cover are rewritten
	for _, f := range tb.files {
		if staleNames(f.Layout(), ty) || holdsDeleted(f, dels) {
			rewrite[f] = true
		}
	}
	var snaps newRows
	names, chunks := imm.mem.Directory(ty.ID) // in name order
	for i, d := range names {
		s := newSnapRows(chunks[i].Snapshot())
		lo, hi, ok := s.TimeBounds()
		if !ok {
			continue
		}
		snaps.add(d, s)
		for _, f := range tb.files {
			if !rewrite[f] && f.has(d, lo, hi) {
				rewrite[f] = true
			}
		}
	}
	newMeta := deltaMetadata(tb, ty)
	if len(snaps.names) == 0 && len(rewrite) == 0 && newMeta == nil {
		return nil, nil
	}

	// The flushed mark: every record of the type before imm.end is in the
	// table now, which replay need not apply again (see delete.go).
	commit := segment.Commit{AppID: txnApp, TxnVersion: txnAfter(tb, int64(imm.end)), Metadata: newMeta,
		Marks: map[string]int64{flushedApp: flushedAfter(tb, int64(imm.end))}}
	var olds []*dataFile
	for _, f := range tb.files {
		if rewrite[f] {
			olds = append(olds, f)
		}
	}
	nt, err := db.rewriteTable(ty, tb, commit, rewriting{
		what: "flush", snaps: snaps, olds: olds, dels: dels, files: runtime.GOMAXPROCS(0), fileRows: db.fileRows,
		writeStep: "write", commitStep: "commit"})
	if err != nil {
		return nil, err
	}
	return &flushedType{table: nt, replaced: olds}, nil
}

// rewriting is what rewriteTable writes: the merge of snaps and olds
// (without the rows dels or the type's TTL leave out), in at most files
// files of about fileRows rows; what names it in errors, and the two steps
// are the failure points tests inject.
type rewriting struct {
	what                  string
	snaps                 newRows
	olds                  []*dataFile
	dels                  []memtable.DeleteRange
	files                 int
	fileRows              int64
	writeStep, commitStep string
}

// rewriteTable writes the files of rw into tb's directory and commits
// them to its Delta log with commit (to which it adds the removal of
// rw.olds and the new files), and returns the table that results, not
// yet published. On failure it leaves nothing behind.
func (db *DB) rewriteTable(ty *schema.Type, tb *table, commit segment.Commit, rw rewriting) (*table, error) {
	for _, f := range rw.olds {
		commit.Removes = append(commit.Removes, f.name)
	}
	if err := db.injected(rw.writeStep); err != nil {
		return nil, fmt.Errorf("%s of type %q: %w", rw.what, ty.Name, err)
	}
	var added []*newFile
	if len(rw.snaps.names) > 0 || len(rw.olds) > 0 {
		layout := layoutOf(ty)
		refs := make([]memtable.ColumnRef, len(layout.Columns))
		for i, c := range layout.Columns {
			refs[i] = memtable.ColumnRef{ID: c.ID, Name: c.Name, Type: c.Type}
		}
		parts := planFlush(rw.snaps, rw.olds, rw.files, rw.fileRows)
		var err error
		added, err = db.writeFiles(tb.dir, fmt.Sprintf("part-%020d", tb.delta.Version()+1), layout, refs,
			rw.olds, rw.dels, ttlCutoff(ty, time.Now()), parts)
		if err != nil {
			return nil, fmt.Errorf("%s of type %q: %w", rw.what, ty.Name, err)
		}
		db.indexRewritten(ty.ID, added, rw)
		for _, f := range added {
			commit.Adds = append(commit.Adds, segment.AddFile{Path: f.name, Size: f.size, ModificationTime: time.Now().UnixMilli(), Stats: f.stats})
		}
	}
	err := db.injected(rw.commitStep)
	if err == nil {
		err = tb.delta.Commit(commit, db.syncing())
	}
	if err != nil {
		removeNewFiles(tb.dir, added)
		return nil, fmt.Errorf("%s of type %q: %w", rw.what, ty.Name, err)
	}
	nt := &table{id: tb.id, dir: tb.dir, delta: tb.delta, version: tb.delta.Version()}
	for _, f := range tb.files {
		if !slices.Contains(rw.olds, f) {
			nt.files = append(nt.files, f)
		}
	}
	for _, f := range added {
		nt.files = append(nt.files, f.dataFile)
	}
	return nt, nil
}

// publishTable makes nt its type's table in the view.
func (db *DB) publishTable(id schema.TypeID, nt *table) {
	db.stateMu.Lock()
	v := db.view.Load()
	nv := &view{mem: v.mem, imm: v.imm, tables: maps.Clone(v.tables)}
	nv.tables[id] = nt
	db.view.Store(nv)
	db.stateMu.Unlock()
}

// dropReplaced deletes the files a published table no longer holds.
func dropReplaced(dir string, olds []*dataFile) {
	for _, old := range olds {
		// Scans that hold it keep reading it through their descriptor.
		_ = os.Remove(filepath.Join(dir, old.name))
		removeSidecars(dir, old.name)
		old.unref()
	}
}

// newFile is a file a flush wrote, not yet committed.
type newFile struct {
	*dataFile
	stats string
}

// piece is one device's rows with start <= time < end: a flush splits a
// type's rows into runs of pieces, one file each.
type piece struct {
	device     string
	start, end int64
	rows       devRows // the device's new rows; nil: none
}

// newRows is the new rows of a flush or a direct write, device by device
// in name order. It was a map, which lost the order the memtable's sorted
// directory gives: a flush of 100,000 devices (BenchmarkFlushManyDevices)
// spent about a seventh of its time hashing the names into it, looking
// them up, and sorting them again.
type newRows struct {
	names []string  // in order, each once
	rows  []devRows // rows[i] are names[i]'s
}

// add appends device d's rows; d sorts after every device added before.
func (n *newRows) add(d string, r devRows) {
	n.names = append(n.names, d)
	n.rows = append(n.rows, r)
}

// flushFileRows is the least number of rows a flush gives a file of its
// own (DB.fileRows; tests lower it): below it, the cost of a file
// outweighs writing in parallel.
const flushFileRows = 1 << 18

// planFlush splits the devices of snaps and olds, in order, into at most
// k runs of about equal rows (counted before merging), each to be written
// as a file by its own goroutine. A device larger than a run's share is
// split by time, at times interpolated within its bounds; the runs' keys
// stay disjoint.
func planFlush(snaps newRows, olds []*dataFile, k int, minRows int64) [][]piece {
	type dev struct {
		name   string
		rows   int64
		lo, hi int64
		src    devRows
	}
	devs := make([]dev, len(snaps.names))
	var total int64
	for i, name := range snaps.names {
		s := snaps.rows[i]
		lo, hi, _ := s.TimeBounds()
		devs[i] = dev{name: name, rows: int64(s.Rows()), lo: lo, hi: hi, src: s}
		total += int64(s.Rows())
	}
	var order []int32  // devs' name order; nil: devs are in order
	if len(olds) > 0 { // a device may be in several sources: merged by name
		at := make(map[string]int, len(devs))
		for i, d := range devs {
			at[d.name] = i
		}
		for _, f := range olds {
			for _, name := range f.Devices() {
				lo, hi, _ := f.DeviceTimes(name)
				n := f.DeviceRows(name)
				total += n
				i, ok := at[name]
				if !ok {
					at[name] = len(devs)
					devs = append(devs, dev{name: name, rows: n, lo: lo, hi: hi})
					continue
				}
				d := &devs[i]
				d.rows += n
				d.lo, d.hi = min(d.lo, lo), max(d.hi, hi)
			}
		}
		names := make([]string, len(devs))
		for i, d := range devs {
			names[i] = d.name
		}
		order = namesort.Order(names)
	}
	k = int(min(int64(k), max(1, total/minRows)))
	share := (total + int64(k) - 1) / int64(k)
	parts := make([][]piece, 1, k)
	var room = share
	for j := range devs {
		d := devs[j]
		if order != nil {
			d = devs[order[j]]
		}
		start, rows := int64(math.MinInt64), d.rows
		for rows > room && len(parts) < k && room > 0 && d.hi > d.lo {
			// Split at the time that leaves about room rows here.
			cut := d.lo + int64(float64(d.hi-d.lo)*(1-float64(rows-room)/float64(d.rows)))
			if cut <= start || cut <= d.lo || cut > d.hi {
				break
			}
			parts[len(parts)-1] = append(parts[len(parts)-1], piece{d.name, start, cut, d.src})
			parts = append(parts, nil)
			start, rows, room = cut, rows-room, share
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], piece{d.name, start, math.MaxInt64, d.src})
		room -= rows
		if room <= 0 && len(parts) < k {
			parts = append(parts, nil)
			room = share
		}
	}
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// writeFiles writes each run of pieces into a file of directory dir
// (prefix, then "-<run>.parquet"), in parallel, and opens them. On
// failure it removes what it wrote.
func (db *DB) writeFiles(dir, prefix string, layout segment.Layout, refs []memtable.ColumnRef,
	olds []*dataFile, dels []memtable.DeleteRange, expired int64, parts [][]piece) ([]*newFile, error) {
	out := make([]*newFile, len(parts))
	errs := par.Do(len(parts), len(parts), func(_, i int) (err error) {
		out[i], err = db.writeFile(dir, fmt.Sprintf("%s-%d.parquet", prefix, i), layout, refs, olds, dels, expired, parts[i])
		return err
	})
	if err := errors.Join(errs...); err != nil {
		removeNewFiles(dir, out)
		return nil, err
	}
	// A file whose rows were all deleted is not worth a Delta add.
	var empty []*newFile
	out = slices.DeleteFunc(out, func(f *newFile) bool {
		if f.Rows() == 0 {
			empty = append(empty, f)
			return true
		}
		return false
	})
	removeNewFiles(dir, empty)
	return out, nil
}

// removeNewFiles closes and deletes files written but not committed.
func removeNewFiles(dir string, files []*newFile) {
	for _, f := range files {
		if f != nil {
			f.unref()
			_ = os.Remove(filepath.Join(dir, f.name))
			removeSidecars(dir, f.name)
		}
	}
}

// writeFile writes the merge of the memtable snapshots and the old files
// (without the rows dels covers) for the pieces of run, in order, into a
// new file of directory dir called name, and opens it. Rows older than
// expired (a TTL's cutoff; math.MinInt64: none) are left out.
func (db *DB) writeFile(dir, name string, layout segment.Layout, refs []memtable.ColumnRef,
	olds []*dataFile, dels []memtable.DeleteRange, expired int64, run []piece) (*newFile, error) {
	if expired != math.MinInt64 {
		dels = append(slices.Clip(dels), expiredRange(expired)...)
	}
	path := filepath.Join(dir, name)
	w, err := segment.Create(path, layout, segment.WriterOptions{Sync: db.syncing()})
	if err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	// A no-op once closed; else (a failure, or a panic that par.Do
	// reports) the writer's goroutines end and its file is removed.
	defer w.Abort()
	fail := func(err error) (*newFile, error) { return nil, fmt.Errorf("flush: %w", err) }
	scanners := make([]*segment.Scanner, len(olds))
	for i, f := range olds {
		scanners[i] = f.Scanner(layout.Columns)
	}
	var reused memtable.Cursor // see below
	reused.Views()
	reused.ReuseBatches()
	for _, pc := range run {
		var srcs []runSource
		for i, f := range olds {
			if f.has(pc.device, pc.start, pc.end-1) {
				srcs = append(srcs, filterDeleted(scanners[i].Read(pc.device, pc.start, pc.end, flushBatchRows), pc.device, dels))
			}
		}
		if pc.rows != nil {
			var src runSource
			if sr, ok := pc.rows.(snapRows); ok && len(srcs) == 0 {
				// The piece's only source: each batch is appended before
				// the next is read, so one cursor and batch serve them all.
				sr.CursorInto(&reused, refs, pc.start, pc.end, flushBatchRows)
				src = memSource{&reused}
			} else {
				src = pc.rows.cursor(refs, pc.start, pc.end, flushBatchRows)
			}
			srcs = append(srcs, filterDeleted(src, pc.device, expiredRange(expired)))
		}
		if len(srcs) == 0 {
			continue
		}
		var m runSource = srcs[0] // one source, the usual case: nothing to merge
		if len(srcs) > 1 {
			m = newMerger(srcs, flushBatchRows)
		}
		for {
			b, err := m.Next()
			if err != nil {
				return fail(err)
			}
			if b == nil {
				break
			}
			if err := w.Append(pc.device, b); err != nil {
				return fail(err)
			}
		}
	}
	return db.finishFile(w, path)
}

// finishFile closes a written file and opens it for reading.
func (db *DB) finishFile(w *segment.Writer, path string) (*newFile, error) {
	info, err := w.Close()
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("flush: %w", err)
	}
	db.counters.fsyncs.Add(uint64(info.Fsyncs))
	f, err := w.File()
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("flush: open the file just written: %w", err)
	}
	df := &dataFile{File: f, name: info.Name, size: info.Size, stats: info.Stats}
	df.refs.Store(1)
	db.counters.flushedRows.Add(uint64(info.Rows))
	db.counters.flushedBytes.Add(uint64(info.Size))
	return &newFile{dataFile: df, stats: info.Stats}, nil
}

// devRows is one device's new rows for a file: a memtable snapshot (a
// flush) or a direct write's tablets.
type devRows interface {
	Rows() int
	TimeBounds() (lo, hi int64, ok bool)
	// cursor reads the rows with start <= time < end, columns refs.
	cursor(refs []memtable.ColumnRef, start, end int64, batchRows int) runSource
}

// snapRows is a memtable snapshot as devRows.
type snapRows struct {
	memtable.Snapshot
	lo, hi int64 // its time bounds, read once: a flush asks for them twice
}

func newSnapRows(s memtable.Snapshot) snapRows {
	lo, hi, _ := s.TimeBounds()
	return snapRows{Snapshot: s, lo: lo, hi: hi}
}

func (s snapRows) TimeBounds() (lo, hi int64, ok bool) { return s.lo, s.hi, s.Rows() > 0 }

// cursor's batches view the chunk's blocks where they can (no copy): the
// memtables of a flush (immutable, held until the flush is published)
// and of a direct write (private) outlive the file's writing, which only
// reads the batches (the writer copies them into its row groups).
func (s snapRows) cursor(refs []memtable.ColumnRef, start, end int64, batchRows int) runSource {
	c := s.Cursor(refs, start, end, batchRows)
	c.Views()
	return memSource{c}
}

// memSource reads a memtable chunk as a runSource.
type memSource struct{ c *memtable.Cursor }

func (m memSource) Next() (*tablet.Tablet, error) { return m.c.Next(), nil }

// txnApp is the appId of the txn action of every Delta commit we write.
// Its version only grows: the largest log position whose commit the
// table holds in full, which tells replay whether a direct write's
// commit was published (see direct.go).
const txnApp = "arcadego"

// txnAfter returns the txn version of tb's next commit, one that holds
// the log's records up to pos.
func txnAfter(tb *table, pos int64) int64 {
	if v, ok := tb.delta.TxnVersion(txnApp); ok && v > pos {
		return v
	}
	return pos
}

// deltaMetadata returns the metaData action a commit of ty to tb needs:
// nil when the table's schema and name are already ty's.
func deltaMetadata(tb *table, ty *schema.Type) *segment.Metadata {
	schemaString := layoutOf(ty).DeltaSchema()
	meta := tb.delta.Metadata()
	if meta != nil && meta.SchemaString == schemaString && meta.Name == ty.Name {
		return nil
	}
	nm := &segment.Metadata{Name: ty.Name, SchemaString: schemaString, CreatedTime: time.Now().UnixMilli()}
	if meta != nil {
		nm.ID, nm.CreatedTime = meta.ID, meta.CreatedTime
	} else {
		nm.ID = newUUID()
	}
	return nm
}

// tableOf returns type id's table from the view, or opens it (creating
// its directory). The caller holds deltaMu (or is Open).
func (db *DB) tableOf(id schema.TypeID) (*table, error) {
	if tb := db.view.Load().tables[id]; tb != nil {
		return tb, nil
	}
	if err := db.makeTableDir(id); err != nil {
		return nil, err
	}
	return db.openTable(id)
}

// makeTableDir creates the directory of type id's table and makes its
// entry durable.
func (db *DB) makeTableDir(id schema.TypeID) error {
	dir := db.tableDir(id)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if db.opts.ReadOnly {
		return fmt.Errorf("%s is missing, yet the log names files in it: %w", dir, errs.ErrCorrupt)
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("flush: create %s: %v: %w", dir, err, errs.ErrIO)
	}
	if db.syncing() {
		db.counters.fsyncs.Add(1)
		if err := syncDir(filepath.Dir(dir)); err != nil {
			return fmt.Errorf("flush: fsync %s: %v: %w", filepath.Dir(dir), err, errs.ErrIO)
		}
	}
	return nil
}

// staleNames reports whether file layout l has a column whose name is now
// another property's (a dropped property's name, reused).
func staleNames(l segment.Layout, ty *schema.Type) bool {
	for _, c := range l.Columns {
		if p, ok := ty.Property(c.Name); ok && (p.ID != c.ID || p.Type != c.Type) {
			return true
		}
	}
	return false
}

// layoutOf returns the file layout of ty's live properties.
func layoutOf(ty *schema.Type) segment.Layout {
	props := ty.Properties()
	l := segment.Layout{TimeUnit: ty.TimeUnit, Columns: make([]segment.Column, len(props))}
	for i, p := range props {
		l.Columns[i] = segment.Column{ID: p.ID, Name: p.Name, Type: p.Type}
	}
	return l
}

// checkpoint records that the log before end is in the Parquet files
// (snap being the catalog as of end): it writes snap, then the manifest
// naming it, then deletes the log segments, the previous snapshot and the
// directories of dropped types, in that order, so a crash at any point
// leaves either checkpoint whole. cur is the newest catalog. It takes the
// flushed memtable's end and catalog, not the memtable, so that the
// memtable's memory can go while the checkpoint waits for its fsyncs.
func (db *DB) checkpoint(end wal.LSN, snap, cur *schema.Catalog) error {
	db.deltaMu.Lock() // a clone reads the manifest, snapshot and segments
	defer db.deltaMu.Unlock()
	if err := db.injected("checkpoint"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	sync := db.syncing()
	m := *db.man
	m.Checkpoint++
	m.End = uint64(end)
	m.Catalog = fmt.Sprintf("catalog-%016d.snap", m.Checkpoint)
	if err := writeFileAtomic(db.path, m.Catalog, schema.AppendCatalog(nil, snap), sync); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	m.WALFirst = db.log.KeptFrom(end)
	m.WALLast = db.log.Active()
	m.Tables = map[uint32]int64{}
	for id, t := range db.view.Load().tables {
		if _, live := cur.TypeByID(id); live && t.version >= 0 {
			m.Tables[uint32(id)] = t.version
		}
	}
	if err := m.write(db.path, sync); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if sync {
		db.counters.fsyncs.Add(4)
	}
	old := db.man
	db.man = &m
	if old.Catalog != "" && old.Catalog != m.Catalog {
		_ = os.Remove(filepath.Join(db.path, old.Catalog))
	}
	if err := db.log.DeleteBefore(m.WALFirst); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := db.removeDroppedTables(snap, cur); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	db.counters.checkpoints.Add(1)
	return nil
}

// injected returns the test fault for step, as an I/O error.
func (db *DB) injected(step string) error {
	if db.fault == nil {
		return nil
	}
	if err := db.fault(step); err != nil {
		return fmt.Errorf("%s: %w: %w", step, err, errs.ErrIO)
	}
	return nil
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
