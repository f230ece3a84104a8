// Package engine owns the database: it ties the catalog (core/schema), the
// write-ahead log (core/wal) and the aligned memtable (core/memtable)
// together into transactions, recovery and scans, and answers the queries
// built on scans: aggregates (aggregate.go, from the files' statistics
// where they suffice: filestats.go), value filters (where.go) and latest
// values (last.go). It must not import Arrow or cgo: the C ABI (capi) and
// the Arrow bridge convert at the boundary.
//
// A database directory holds:
//
//	MANIFEST             JSON: format, last checkpoint, its catalog snapshot,
//	                     the oldest log segment kept, each table's Delta version
//	catalog-N.snap       the catalog as of checkpoint N (schema.AppendCatalog)
//	wal/NNNNNN.wal       the log (core/wal) since the checkpoint
//	types/<type id>/     one Delta Lake table per type: Parquet files
//	                     part-<version>-<n>.parquet (flushes),
//	                     part-<uuid>-<n>.parquet (direct writes) and
//	                     _delta_log/ (core/segment)
//
// The directory itself holds an exclusive flock while the database is open,
// so a second process (or handle) gets a clear error; deleting a file
// cannot undo it.
//
// DDL never creates a file: the catalog lives in the log, and a snapshot
// is written only at checkpoints. Open fsyncs the directories it creates
// (the log fsyncs only its own), and checks its options before it creates
// anything. Names on disk are ids, never user strings.
//
// Storage tier. Commits go into the live memtable. When it passes
// Options.MemtableBudget, the commit that passed it hands it over: it
// becomes immutable and a fresh memtable takes writes at once, and a
// background goroutine flushes it: per type, the rows sorted by (device,
// time), equal keys merged, into new Parquet files (one, or up to
// GOMAXPROCS written in parallel for a large flush, split by key range),
// merged with every older file where a device's new rows fall within that
// device's time span there, and with any file holding a column whose name
// a new property now has. One Delta commit per type adds the new files and
// removes the merged ones, so a table never holds a key twice and a
// dropped property's values never come back under its name. Then a checkpoint writes the catalog as it was
// at the hand-over, then the manifest, then deletes the log segments the
// flush covers. Back-pressure: a commit waits while the live memtable is
// over budget and the previous one is still being flushed, so at most two
// memtables are in memory (Stats counts the stalls). A failed flush or
// checkpoint fails every later commit (the database on disk stays
// consistent) until Flush succeeds or the database is reopened.
//
// Direct writes (direct.go): a transaction's large inserts into a type go
// straight to Parquet files, which its log record names and which are
// added to the Delta log when the commit publishes.
//
// Clone (clone.go) copies the directory of an open database while
// flushes and checkpoints wait: Parquet files hard-linked, the rest copied.
//
// Reopen reads the manifest, the catalog snapshot, each type's Delta log
// and the files it lists, then replays the log from the checkpoint (a
// replay that passes the budget flushes and checkpoints on the way). A
// file the manifest or a Delta log names that is missing or damaged is
// errs.ErrCorrupt naming it; a Parquet or temporary file nothing names is
// deleted, as is the table of a type dropped before the checkpoint (one
// dropped later may still receive a direct write the log replays).
//
// Scans pin one view: the type's files (reference counted, so a flush
// may remove and unlink them while a scan reads), the immutable and the
// live memtable's chunk snapshots. Per device they merge those sources,
// oldest first, newest non-null wins, a batch at a time.
//
// Commit protocol. Under the commit mutex a transaction's operations are
// re-applied to the newest catalog (which may include commits not yet
// durable), its tablets are resolved against the result, and ONE log
// record holding both is appended. Outside the mutex the committer waits
// for the log's fsync, which concurrent committers share (group commit).
// Then, in log order, the tablets go into the memtable and the catalog is
// published with one atomic store: readers never lock the catalog.
// Validation happens before the append, so a failed commit leaves nothing
// on disk or in memory. A failed fsync, or a commit that could not be
// published, poisons the database: its state on disk is unknown, and every
// later commit returns the error without appending (see core/wal). Such a
// commit, and those appended before the failure was known, were written to
// the log, so reopening may replay them: an I/O error from Commit means
// "unknown", not "not committed".
//
// A transaction's statements and auto-created properties are one catalog
// version (schema.Catalog.Continue), as when the log replays the commit.
//
// Visibility: a scan sees a commit's catalog only after the commit's data
// is in the memtable. A scan running during a multi-tablet commit may see
// some of its chunks before others.
//
// This package must not import Arrow, must not read the log's or the
// tables' files itself (core/wal and core/segment do), and must not create
// a file per schema object.
package engine
