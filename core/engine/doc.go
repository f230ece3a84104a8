// Package engine owns the database: it ties the catalog (core/schema), the
// write-ahead log (core/wal) and the aligned memtable (core/memtable)
// together into transactions, recovery and scans.
//
// A database directory holds a LOCK file (an exclusive flock, so a second
// process gets a clear error) and the log in wal/. Nothing else: DDL never
// creates a file, because the catalog lives in the log. Open fsyncs the
// directories it creates (the log fsyncs only its own), and checks its
// options before it creates anything.
//
// Commit protocol. Under the commit mutex a transaction's operations are
// re-applied to the newest catalog (which may include commits not yet
// durable), its tablets are resolved against the result, and ONE log
// record holding both is appended. Outside the mutex the committer waits
// for the log's fsync, which concurrent committers share (group commit).
// Then, in log order, the tablets go into the memtable and the catalog is
// published with one atomic store: readers never lock the catalog.
// Validation happens before the append, so a failed commit leaves nothing
// on disk or in memory. A failed fsync poisons the database: its state on
// disk is unknown, and every later commit returns the error (see
// core/wal). Such a commit, and those appended after it, were written to
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
// This package must not import Arrow, must not read the log's files itself,
// and must not create a file per schema object.
package engine
