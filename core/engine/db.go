package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/gcpace"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// Options configure a database. The zero value is a durable database with
// wal.SyncFull and auto-create off.
type Options struct {
	Sync       wal.SyncMode
	AutoCreate bool // Insert adds missing types and properties, typed from the tablet
	// SegmentBytes overrides the log's segment size (tests); 0 keeps the default.
	SegmentBytes int64
	// MemtableBudget is the live memtable's size in bytes at which it is
	// handed over to a background flush; 0 means DefaultMemtableBudget.
	MemtableBudget int64
	// DirectWriteBytes: a transaction's inserts into one type of at least
	// this many bytes go straight to Parquet files instead of the log and
	// the memtable (see direct.go); 0 means DefaultDirectWriteBytes, -1
	// never. A long-format batch that is its type's only write in the
	// transaction goes so from a quarter of it.
	DirectWriteBytes int64
	// ReadOnly opens a database that another process may hold for writing
	// (see readonly.go): no lock is taken and no byte written; the
	// database is as it was on disk when it was opened; commits, flushes
	// and clones are refused.
	ReadOnly bool
}

// DefaultDirectWriteBytes is the direct-write threshold of Options that
// set none.
const DefaultDirectWriteBytes = directWriteBytes

// DefaultMemtableBudget is the memtable budget of Options that set none.
const DefaultMemtableBudget = 64 << 20

// DB is an open database. Safe for concurrent use.
type DB struct {
	path string
	opts Options
	lock *os.File // the directory, holding its flock; nil in memory
	log  *wal.Log // nil in memory; never changes after Open

	// view is the memtables and files scans read; see view. It changes
	// under stateMu, and its memtable is handed over under publishMu too.
	view   atomic.Pointer[view]
	budget int64
	// pool recycles the value memory of flushed memtables (see
	// memtable.Pool); nil in memory and read-only, where none is flushed.
	pool *memtable.Pool
	man  *manifest // the last manifest written; guarded by deltaMu (Open needs none)

	// stateMu guards hand-overs and view changes, stopping, retry,
	// flushing and flushRuns; stateCond signals them. Lock order: publishMu, stateMu.
	stateMu     sync.Mutex
	stateCond   *sync.Cond
	flushErr    atomic.Pointer[error] // the last flush's failure; nil once one succeeds
	retry       bool                  // Flush asks the flusher to retry after a failure
	flushRuns   uint64                // flush attempts finished, checkpoint included
	flushing    bool                  // the flusher is running an attempt
	stopping    bool
	exited      bool          // the flusher has returned
	compactDue  bool          // a flush succeeded since the last background compaction
	compacting  bool          // the flusher runs a background compaction
	flusherDone chan struct{} // closed when the flusher returns; nil in memory
	counters    flushCounters
	// fault, when set by a test, runs at each storage step ("write",
	// "commit", "checkpoint") and fails it with the error it returns: a
	// disk that fills up at that point.
	fault func(step string) error
	// fileRows is flushFileRows, lowered by tests to split small flushes.
	fileRows int64
	// compactRows is compactFileRows, lowered by tests to split compactions.
	compactRows int64
	// directBytes is directWriteBytes, lowered by tests.
	directBytes int
	// beforeKeepDirect, when set by a test, runs as keepDirect starts
	// (under commitMu).
	beforeKeepDirect func()
	// deltaMu serializes what commits to the Delta logs and publishes the
	// tables: a whole flush, and each direct write's attachment. Lock
	// order: publishMu, deltaMu, stateMu.
	deltaMu sync.Mutex

	// marks caches the flushed marks of tables Open has not opened yet
	// (see flushedPast); used by replay only.
	marks map[schema.TypeID]int64

	// ttlMu keeps a type's TTL from changing while a flush or compaction
	// leaves out the rows it expired: they hold it shared from reading the
	// catalog to their Delta commit, and a commit that changes a TTL holds
	// it exclusively. Lock order: ttlMu before deltaMu.
	ttlMu sync.RWMutex

	// lastIDs is the outcome of the last insert whose checked names found
	// every column a property (see DB.knownCached).
	lastIDs atomic.Pointer[namedIDs]

	// catalog is the published catalog: every commit it includes is durable
	// and in the memtable. Readers load it without locking.
	catalog atomic.Pointer[schema.Catalog]

	// commitMu orders commits: it guards pending, nextSeq and closed, and
	// is held while a commit validates and appends its record.
	commitMu sync.Mutex
	pending  *schema.Catalog // newest catalog, including appended but unpublished commits
	nextSeq  uint64
	// typeWrites counts, per type, the commits appended but not yet
	// published that write it (guarded by writesMu): a direct write
	// stays direct only into a type none writes.
	writesMu   sync.Mutex
	typeWrites map[schema.TypeID]int
	closed     atomic.Bool
	inflight   sync.WaitGroup // commits between append and publish
	directing  sync.WaitGroup // direct writes writing their files (before the commit mutex)

	// publishMu and published make commits publish in log order.
	publishMu sync.Mutex
	published uint64
	turn      *sync.Cond
	failed    error // set once a log write or fsync failed; guarded by publishMu
	// applyView and applyCols are apply's tablet for reading copies back
	// (readCopy), reused write after write; guarded by publishMu.
	applyView tablet.Tablet
	applyCols []tablet.Column
	// failure is failed, readable under commitMu: a commit after a failure
	// appends nothing (its record could be replayed out of order with the
	// commits that failed to publish).
	failure    atomic.Pointer[error]
	appliedEnd wal.LSN // where the last record in the memtable ends; guarded by publishMu

	// memIx holds each memtable's index parts (*memtable.Memtable to
	// *memParts), from its first indexed write until its flush.
	memIx sync.Map
	// sidecarsBuilt counts the index sidecars built (Stats).
	sidecarsBuilt atomic.Uint64
	// sidecarsMerged counts the sidecars compactions merged (Stats).
	sidecarsMerged atomic.Uint64
	// uniqueMu serializes the commits that check a UNIQUE index, from the
	// check until their rows are in the memtable (unique.go).
	uniqueMu sync.Mutex
}

const (
	walDir = "wal"
	// recordCommit is the log record kind of a commit.
	recordCommit byte = 1
)

// Open opens (creating if needed) the database in directory path; an empty
// path opens a database held only in memory.
func Open(path string, opts Options) (*DB, error) {
	// Checked before anything is created: a refused Open leaves no trace.
	if err := logOptions(opts).Validate(); err != nil {
		return nil, fmt.Errorf("open %q: %w", path, err)
	}
	if opts.MemtableBudget < 0 {
		return nil, fmt.Errorf("open %q: memtable budget %d must be >= 0 (0: the default, %d): %w",
			path, opts.MemtableBudget, DefaultMemtableBudget, errs.ErrInvalidArgument)
	}
	if opts.DirectWriteBytes < -1 {
		return nil, fmt.Errorf("open %q: direct write bytes %d must be >= 0 (0: the default, %d) or -1 (never): %w",
			path, opts.DirectWriteBytes, DefaultDirectWriteBytes, errs.ErrInvalidArgument)
	}
	db := &DB{path: path, opts: opts, pending: schema.Empty(), budget: opts.MemtableBudget, fileRows: flushFileRows, compactRows: compactFileRows,
		directBytes: directWriteBytes, typeWrites: map[schema.TypeID]int{}}
	switch {
	case opts.DirectWriteBytes > 0:
		db.directBytes = int(min(opts.DirectWriteBytes, math.MaxInt))
	case opts.DirectWriteBytes == -1:
		db.directBytes = math.MaxInt
	}
	if db.budget == 0 {
		db.budget = DefaultMemtableBudget
	}
	if path != "" && !opts.ReadOnly {
		// One memtable's worth: the next memtable fills from the last
		// flushed one's memory, while the two in use stay the most held.
		db.pool = memtable.NewPool(db.budget)
	}
	db.turn = sync.NewCond(&db.publishMu)
	db.stateCond = sync.NewCond(&db.stateMu)
	db.view.Store(&view{mem: db.newMemtable(), tables: map[schema.TypeID]*table{}})
	if opts.ReadOnly {
		if path == "" {
			return nil, fmt.Errorf("open: a database in memory cannot be opened read-only: %w", errs.ErrInvalidArgument)
		}
		return openReadOnly(db)
	}
	if path != "" {
		if err := db.openDir(); err != nil {
			db.release()
			return nil, err
		}
	}
	db.catalog.Store(db.pending)
	if db.log != nil {
		db.flusherDone = make(chan struct{})
		go db.flushLoop()
	}
	gcpace.Track(paced{db})
	return db, nil
}

func (db *DB) openDir() error {
	logDir := filepath.Join(db.path, walDir)
	if err := db.makeDirs(logDir); err != nil {
		return fmt.Errorf("open %q: %v: %w", db.path, err, errs.ErrIO)
	}

	// The lock is on the directory itself: a lock file can be deleted
	// while the database is open, and a second process would then lock a
	// new file of the same name and write beside the first.
	f, err := os.Open(db.path)
	if err != nil {
		return fmt.Errorf("open %q: %v: %w", db.path, err, errs.ErrIO)
	}
	db.lock = f
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("open %q: the database is in use by another process or handle: %w", db.path, errs.ErrIO)
		}
		return fmt.Errorf("open %q: lock: %v: %w", db.path, err, errs.ErrIO)
	}
	man, err := readManifest(db.path)
	if err != nil {
		return fmt.Errorf("open %q: %w", db.path, err)
	}
	lopts := logOptions(db.opts)
	if man != nil {
		lopts.First, lopts.Last = man.WALFirst, man.WALLast
	} else if err := db.checkNoData(); err != nil {
		return err
	}
	db.log, err = wal.Open(logDir, lopts)
	if err != nil {
		return fmt.Errorf("open %q: %w", db.path, err)
	}
	if man == nil {
		// A new database, or one written before the manifest existed,
		// whose log holds everything.
		man = &manifest{Format: formatVersion, WALFirst: db.log.KeptFrom(0)}
		if err := man.write(db.path, db.syncing()); err != nil {
			return fmt.Errorf("open %q: %w", db.path, err)
		}
	}
	db.man = man
	if err := db.readSnapshot(); err != nil {
		return err
	}
	snap := db.pending
	if err := db.recover(); err != nil {
		return err
	}
	db.appliedEnd = db.log.End()
	return db.openTables(snap, db.pending)
}

// readSnapshot reads the catalog snapshot the manifest names, if any.
func (db *DB) readSnapshot() error {
	if db.man.Catalog == "" {
		return nil
	}
	snap := filepath.Join(db.path, db.man.Catalog)
	data, err := os.ReadFile(snap)
	if err != nil {
		return fmt.Errorf("open %q: catalog snapshot %s named by the manifest: %v: %w", db.path, snap, err, errs.ErrCorrupt)
	}
	if db.pending, err = schema.DecodeCatalog(data); err != nil {
		return fmt.Errorf("open %q: catalog snapshot %s: %w", db.path, snap, err)
	}
	return nil
}

// checkNoData refuses a directory without a manifest that holds flushed
// data or catalog snapshots: its manifest was lost, and opening it would
// silently lose what only the manifest could say.
func (db *DB) checkNoData() error {
	entries, err := os.ReadDir(db.path)
	if err != nil {
		return fmt.Errorf("open %q: %v: %w", db.path, err, errs.ErrIO)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "catalog-") {
			return fmt.Errorf("open %q: %s is missing, yet %s exists: %w", db.path, filepath.Join(db.path, manifestFile), name, errs.ErrCorrupt)
		}
		if name == tablesDir {
			if sub, _ := os.ReadDir(filepath.Join(db.path, name)); len(sub) > 0 {
				return fmt.Errorf("open %q: %s is missing, yet %s holds data: %w", db.path, filepath.Join(db.path, manifestFile), name, errs.ErrCorrupt)
			}
		}
	}
	return nil
}

// logOptions are the log's options for a database opened with opts.
func logOptions(opts Options) wal.Options {
	return wal.Options{Sync: opts.Sync, SegmentBytes: opts.SegmentBytes, ReadOnly: opts.ReadOnly}
}

// syncDir fsyncs a directory; tests replace it to see which are synced.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// makeDirs creates logDir, the tables' directory and their missing
// parents. Unless the sync mode is off, it then fsyncs the directories
// holding the new entries, from the database directory (which holds wal/
// and types/) up to the first ancestor that already existed: the log
// fsyncs only its own directory, and a new entry not yet on disk would
// lose every commit under it in a machine crash.
func (db *DB) makeDirs(logDir string) error {
	top := filepath.Clean(db.path)
	for {
		if _, err := os.Stat(top); err == nil || filepath.Dir(top) == top {
			break
		}
		top = filepath.Dir(top)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	// The tables' directory, so that the fsync below covers it too.
	if err := os.Mkdir(filepath.Join(db.path, tablesDir), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if db.opts.Sync == wal.SyncOff {
		return nil
	}
	for d := filepath.Dir(logDir); ; d = filepath.Dir(d) {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("fsync of directory %q: %w", d, err)
		}
		if d == top || filepath.Dir(d) == d {
			return nil
		}
	}
}

// recover replays the log: every record is a commit that was appended, so
// it is applied as is; a record that does not apply means the files are
// corrupt, not that the commit failed.
//
// Records before the checkpoint's end are in the Parquet files already
// and are skipped. When the memtable passes its budget during replay, it
// is flushed and checkpointed on the spot, so reopening a large log needs
// no more memory than writing it did.
func (db *DB) recover() error {
	overBudget := false
	return db.log.ReplayFrom(wal.LSN(db.man.End), func(lsn wal.LSN, kind byte, payload []byte) error {
		if overBudget && !db.opts.ReadOnly { // a reader keeps the log's rows in memory
			if err := db.recoveryFlush(lsn); err != nil {
				return err
			}
			overBudget = false
		}
		where := func() string {
			path, off := db.log.Locate(lsn)
			return fmt.Sprintf("log record in %s at offset %d", path, off)
		}
		if kind != recordCommit {
			return fmt.Errorf("%s: unknown kind %d: %w", where(), kind, errs.ErrCorrupt)
		}
		rec, err := decodeRecord(payload)
		if err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		cat, writes, err := resolve(db.pending, nil, rec.ops, rec.entries, true, nil)
		if err != nil {
			return fmt.Errorf("%s does not apply: %v: %w", where(), err, errs.ErrCorrupt)
		}
		dels, err := resolveDeletes(cat, rec.deletes, true)
		if err != nil {
			return fmt.Errorf("%s does not apply: %w", where(), err)
		}
		db.pending = cat
		// What a flush already put in a type's table is not applied again:
		// re-written rows would undo the deletes that flush made physical.
		writes = slices.DeleteFunc(writes, func(w write) bool { return db.flushedPast(w.typ, lsn) })
		dels = slices.DeleteFunc(dels, func(d resolvedDelete) bool { return db.flushedPast(d.typ, lsn) })
		db.indexMemtables(cat, rec.ops)
		if err := db.applyInOrder(cat, writes, dels); err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		for _, a := range rec.attached {
			if err := db.replayAttach(a, cat, lsn); err != nil {
				return fmt.Errorf("%s: %w", where(), err)
			}
		}
		overBudget = db.view.Load().mem.MemoryUsage() >= db.budget
		return nil
	})
}

// recoveryFlush flushes and checkpoints what replay has put into the
// memtable, all records before end.
func (db *DB) recoveryFlush(end wal.LSN) error {
	db.appliedEnd = end
	db.catalog.Store(db.pending)
	imm := db.handOver(true)
	if err := db.flushImmutable(imm, db.pending); err != nil {
		return err
	}
	return db.checkpoint(imm.end, imm.catalog, db.pending)
}

func (db *DB) release() {
	if v := db.view.Load(); v != nil {
		for _, t := range v.tables {
			t.release()
		}
	}
	if db.log != nil {
		_ = db.log.Close()
	}
	if db.lock != nil {
		_ = db.lock.Close() // closing the descriptor drops the flock
	}
}

// Close closes the database after the commits in flight have published.
// Transactions still open fail with errs.ErrClosed. Later calls return
// errs.ErrClosed.
func (db *DB) Close() error {
	db.commitMu.Lock()
	if db.closed.Swap(true) {
		db.commitMu.Unlock()
		return fmt.Errorf("close: %w", errs.ErrClosed)
	}
	db.commitMu.Unlock()
	db.directing.Wait()
	db.inflight.Wait()
	defer gcpace.Untrack(paced{db})
	var err error
	if db.log != nil {
		if !db.opts.ReadOnly && db.flushErr.Load() == nil && db.log.Stats().LiveBytes > closeCheckpointBytes {
			err = db.flushAll()
		}
		db.stopFlusher()
		// A Compact call in progress holds deltaMu; once it is through,
		// later ones see closed under it and do nothing.
		db.deltaMu.Lock()
		db.deltaMu.Unlock()
		for _, t := range db.view.Load().tables {
			t.release()
		}
		// db.log stays set: LogStats may read it concurrently, and a
		// closed log still answers Stats.
		if cerr := db.log.Close(); err == nil {
			err = cerr
		}
	}
	db.pool.Drain() // its memory goes back with the rest of a closed database's
	if db.lock != nil {
		_ = db.lock.Close() // closing the descriptor drops the flock
	}
	return err
}

// Flush writes everything committed so far to Parquet files, commits
// them to the types' Delta logs and checkpoints: it returns once the log
// before it is no longer needed. After a failed background flush it
// retries. A database in memory has nothing to flush.
func (db *DB) Flush() error { return db.flushCall("flush") }

// Checkpoint makes the log before it unnecessary: every flush ends with a
// checkpoint, so this is Flush.
func (db *DB) Checkpoint() error { return db.flushCall("checkpoint") }

func (db *DB) flushCall(op string) error {
	if db.closed.Load() {
		return fmt.Errorf("%s: %w", op, errs.ErrClosed)
	}
	if err := db.readOnly(op); err != nil {
		return err
	}
	if err := db.flushAll(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// Path returns the directory of the database, "" in memory.
func (db *DB) Path() string { return db.path }

// Catalog returns the current schema version.
func (db *DB) Catalog() *schema.Catalog { return db.catalog.Load() }

// LogStats returns the log's counters (zero in memory).
func (db *DB) LogStats() wal.Stats {
	if db.log == nil || db.closed.Load() {
		return wal.Stats{}
	}
	return db.log.Stats()
}

// Budget returns the bytes at which the live memtable is handed over:
// the memtable budget (Options.MemtableBudget or its default).
func (db *DB) Budget() int64 { return db.budget }

// paced is a database as the collector's pacing (gcpace) sees it. A disk
// database's memtables are handed over and flushed away, so they count
// once, against its budget. A memory database's memtable is its data and
// never leaves: it counts as the rest of the heap does, with GOGC=100's
// room (the heap may double before a collection), and its budget only
// sets the least headroom. Counted as a memtable, it had the headroom of
// half its size: twice the collections, each marking all of it
// (100,000 one-row devices took 12-15% longer an insert, for 2-10% less
// RSS).
type paced struct{ db *DB }

func (p paced) MemoryUsage() int64 {
	if p.db.path == "" {
		return 0
	}
	return p.db.MemoryUsage()
}

func (p paced) Budget() int64 { return p.db.budget }

// newMemtable returns an empty live memtable.
func (db *DB) newMemtable() *memtable.Memtable {
	return memtable.New(memtable.Options{Pool: db.pool})
}

// MemoryUsage returns the memtables' estimated size in bytes, with the
// memory kept for the next ones.
func (db *DB) MemoryUsage() int64 {
	v := db.view.Load()
	n := v.mem.MemoryUsage() + db.pool.Bytes()
	if v.imm != nil {
		n += v.imm.mem.MemoryUsage()
	}
	return n
}

// Begin starts a transaction.
func (db *DB) Begin() (*Tx, error) { return db.begin(new(Tx)) }

// begin starts zeroed transaction tx.
func (db *DB) begin(tx *Tx) (*Tx, error) {
	if db.closed.Load() {
		return nil, fmt.Errorf("begin: %w", errs.ErrClosed)
	}
	if err := db.readOnly("begin"); err != nil {
		return nil, err
	}
	cat := db.catalog.Load()
	tx.db, tx.base, tx.view = db, cat, cat
	tx.entries = tx.first[:0]
	return tx, nil
}

// Exec runs a DDL script as one transaction.
func (db *DB) Exec(script string) error {
	return db.autocommit(func(tx *Tx) error { return tx.Exec(script) })
}

// Apply runs one DDL operation as a transaction.
func (db *DB) Apply(op schema.Op) error {
	return db.autocommit(func(tx *Tx) error { return tx.Apply(op) })
}

// Insert writes one tablet as a transaction.
func (db *DB) Insert(typ, device string, t *tablet.Tablet) error {
	// The caller's buffers outlive the commit, so nothing is copied early.
	return db.autocommit(func(tx *Tx) error { return tx.InsertBorrowed(typ, device, t) })
}

// InsertLong commits a long-format tablet (see Tx.InsertLong) on its own,
// borrowing t's buffers until it returns.
func (db *DB) InsertLong(typ, deviceColumn string, t *tablet.Tablet) error {
	return db.autocommit(func(tx *Tx) error { return tx.InsertLongBorrowed(typ, deviceColumn, t) })
}

func (db *DB) autocommit(fn func(*Tx) error) error {
	tx, err := db.begin(spareTxs.Get().(*Tx))
	if err != nil {
		return err
	}
	// No one else sees this Tx, and a commit keeps nothing of it once
	// it returns (each committer applies its own writes): the next
	// autocommit reuses it instead of allocating half a kilobyte.
	defer func() {
		*tx = Tx{}
		spareTxs.Put(tx)
	}()
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// spareTxs holds the zeroed transactions of finished autocommits.
var spareTxs = sync.Pool{New: func() any { return new(Tx) }}

// fail records the failure that fails every later commit. The caller
// holds publishMu.
func (db *DB) fail(err error) {
	db.failed = err
	db.failure.Store(&err)
}

// forgetCopy drops apply's references into the copies it read, so that
// they do not keep a transaction's memory once it has committed.
func (db *DB) forgetCopy() {
	if db.applyView.Columns != nil {
		clear(db.applyCols[:cap(db.applyCols)])
		db.applyView = tablet.Tablet{}
	}
}

// write is one resolved tablet write: chunk key and column ids.
type write struct {
	typ    schema.TypeID
	device string
	t      *tablet.Tablet // nil: a copy, read from enc where needed
	enc    []byte         // the copy's encoding (entry.tabletEnc)
	ids    []schema.PropertyID
	entry  int // index of its entry in the transaction
}

// apply writes into the live memtable; the caller holds publishMu (or is
// Open), so no hand-over runs meanwhile, and apply's own memory for
// reading copies back (applyView, applyCols) is its alone.
func (db *DB) apply(cat *schema.Catalog, writes []write) error {
	mem := db.view.Load().mem
	for _, w := range writes {
		if w.t == nil {
			var err error
			if db.applyCols, err = readCopy(w.enc, &db.applyView, db.applyCols); err != nil {
				return fmt.Errorf("memtable write on device %q: %w", w.device, err)
			}
			w.t = &db.applyView
		}
		db.indexWrite(cat, mem, w)
		if err := mem.Chunk(w.typ, w.device).Write(w.t, w.ids); err != nil {
			return fmt.Errorf("memtable write of %d rows on device %q: %v: %w", w.t.Rows(), w.device, err, errs.ErrInternal)
		}
	}
	return nil
}

// commit runs the commit protocol (see the package doc) for ops and
// entries. view is the result of ops on base, reused when no commit came
// in between (the common case) instead of applying ops again.
func (db *DB) commit(base, view *schema.Catalog, ops []schema.Op, entries []entry, longs []longInsert, deletes []txDelete) error {
	for attempt := 0; ; attempt++ {
		err := db.commitOnce(base, view, ops, entries, longs, deletes)
		if errors.Is(err, errDeferred) {
			// The usual way after all: the deferred inserts get their
			// entries, after the transaction's others (of other types).
			entries = slices.Clip(entries)
			longs = slices.Clone(longs)
			for i := range longs {
				if longs[i].deferred {
					entries = longs[i].entriesOf(entries)
				}
			}
			continue
		}
		if !errors.Is(err, errUniqueRetry) {
			if err != nil {
				return err
			}
			break
		}
		if attempt == 8 {
			return fmt.Errorf("commit: %w: %w", err, errs.ErrConflict)
		}
	}
	// The backfill of CREATE INDEX: the existing files' sidecars, built
	// now rather than by the first lookup (lookups are correct either
	// way); and DROP INDEX's sidecars deleted.
	for _, op := range ops {
		switch op.Kind {
		case schema.CreateIndex:
			if ty, ok := db.catalog.Load().Type(op.Type); ok {
				db.buildSidecars(ty.ID, false)
			}
		case schema.DropIndex: // DROP INDEX may leave out the type
			if _, ty, ok := base.IndexByName(op.Index); ok {
				db.buildSidecars(ty.ID, true)
			}
		}
	}
	return nil
}

func (db *DB) commitOnce(base, view *schema.Catalog, ops []schema.Op, entries []entry, longs []longInsert, deletes []txDelete) error {
	if err := db.waitForRoom(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	// UNIQUE indexes are checked before the record, against every commit
	// before it (unique.go).
	var unique map[schema.TypeID][]*schema.Index
	var uniqueSeq uint64
	var uniqueCreates bool
	// (A UNIQUE index created meanwhile is caught under commitMu, by
	// uniqueStillHolds.)
	if mayNeedUnique(base, view, ops, entries) {
		if txCat, txWrites, err := resolve(base, view, ops, entries, false, nil); err == nil {
			if unique, uniqueCreates = uniqueWork(txCat, ops, txWrites); unique != nil {
				db.uniqueMu.Lock()
				defer db.uniqueMu.Unlock() // after the rows are in the memtable
				uniqueSeq = db.settle()
				if err := db.checkUnique(txCat, unique, txWrites, deletes); err != nil {
					return fmt.Errorf("commit: %w", err)
				}
			}
		}
	}
	if slices.ContainsFunc(ops, func(op schema.Op) bool { return op.Kind == schema.SetTTL }) {
		db.ttlMu.Lock()
		defer db.ttlMu.Unlock()
	}
	// Large inserts are written to Parquet before the commit mutex, so
	// that other commits go on meanwhile (see direct.go). Close waits for
	// them, so that no file appears after it has dropped the lock.
	if db.directSizes(view, entries, longs, deletes) != nil {
		db.commitMu.Lock()
		if db.closed.Load() {
			db.commitMu.Unlock()
			return fmt.Errorf("commit: %w", errs.ErrClosed)
		}
		db.directing.Add(1)
		db.commitMu.Unlock()
		defer db.directing.Done() // after dropDirect, deferred below
	}
	direct, err := db.writeDirect(view, entries, longs, deletes)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	defer dropDirect(direct)
	db.commitMu.Lock()
	if db.closed.Load() {
		db.commitMu.Unlock()
		return fmt.Errorf("commit: %w", errs.ErrClosed)
	}
	if p := db.failure.Load(); p != nil {
		db.commitMu.Unlock()
		return fmt.Errorf("commit: %w", *p)
	}
	if db.pending != base {
		view = nil
	}
	var oneWrite [1]write // a commit of one tablet resolves it here, not on the heap
	cat, writes, err := resolve(db.pending, view, ops, entries, false, oneWrite[:0])
	var dels []resolvedDelete
	if err == nil {
		dels, err = resolveDeletes(cat, deletes, false)
	}
	if err == nil {
		err = uniqueStillHolds(cat, ops, writes, unique, uniqueCreates && db.nextSeq != uniqueSeq)
	}
	if err != nil {
		db.commitMu.Unlock()
		return fmt.Errorf("commit: %w", err)
	}
	var lsn, end wal.LSN
	var kept []*directPart // direct writes in the record, published in turn below
	if db.log != nil {
		logged := entries
		if kept = db.keepDirect(direct, cat, writes); slices.ContainsFunc(direct, func(p *directPart) bool { return p.long != nil && !p.logged }) {
			for _, p := range kept {
				p.logged = false // removed by dropDirect, deferred above
			}
			db.commitMu.Unlock()
			return errDeferred
		}
		if len(kept) > 0 {
			logged, writes = withoutDirect(entries, writes, kept)
		}
		lsn, err = db.log.AppendParts(recordCommit, recordParts(ops, logged, attachmentsOf(kept), loggedDeletes(deletes, writes))...)
		if err != nil {
			for _, p := range kept {
				p.logged = false
			}
			db.commitMu.Unlock()
			return fmt.Errorf("commit: %w", err)
		}
		end = db.log.End() // commitMu makes this the record's end
		defer db.uncountWrites(db.countWrites(writes, kept, dels))
		defer closeUnpublished(kept)
	}
	db.pending = cat
	db.nextSeq++
	seq := db.nextSeq
	db.inflight.Add(1)
	db.commitMu.Unlock()
	defer db.inflight.Done()

	var syncErr error
	switch {
	case db.log == nil:
	case len(kept) > 0:
		// The Delta commit of a direct write is durable once published:
		// its log record must be durable first, whatever the sync mode.
		syncErr = db.log.SyncNow(lsn)
	default:
		syncErr = db.log.Sync(lsn)
	}

	db.publishMu.Lock()
	defer db.publishMu.Unlock()
	for db.published != seq-1 {
		db.turn.Wait()
	}
	db.published = seq
	db.turn.Broadcast()
	if db.failed == nil && syncErr != nil {
		db.fail(fmt.Errorf("the log failed; reopen the database: %w", syncErr))
	}
	if db.failed != nil {
		return fmt.Errorf("commit: %w", db.failed)
	}
	for _, p := range kept {
		if err := db.publishDirect(p, cat, lsn); err != nil {
			// The log holds the commit: reopening publishes it.
			db.fail(fmt.Errorf("%w (reopen the database to finish the commit)", err))
			return fmt.Errorf("commit: %w", db.failed)
		}
		p.published = true
	}
	db.indexMemtables(cat, ops)
	if err := db.applyInOrder(cat, writes, dels); err != nil {
		db.fail(err)
		return fmt.Errorf("commit: %w", err)
	}
	db.catalog.Store(cat)
	if db.log != nil {
		db.appliedEnd = end
		if db.view.Load().mem.MemoryUsage() >= db.budget {
			db.handOver(false)
		}
	}
	return nil
}
