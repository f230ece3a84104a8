package engine

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/gcpace"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/wal"
)

// Read-only open (Options.ReadOnly) reads a database that a writer in
// another process may hold, without its lock and without writing a byte:
// the manifest, the catalog snapshot, the log up to the last whole record
// (the writer may be appending one), and each type's Delta log and files.
// What it sees is the database as it was on disk when it opened: commits
// made durable by then (with sync "normal", those the writer's background
// fsync has reached; the page cache is shared, so in practice every
// commit the writer has appended), nothing after. A direct write whose
// log record is there but whose Delta commit is not yet is added to the
// view in memory only. Files the writer deletes later stay readable
// through the descriptors opened here.
//
// The writer may checkpoint or flush while this open reads: a log segment,
// a snapshot or a Parquet file named a moment ago may be gone. The open
// then starts over from the new manifest, up to 100 times, before giving up.
// A writer that flushes and compacts without pause can make an attempt
// fail many times in a row on a busy machine; each failure is cheap.
const readOnlyAttempts = 100

func openReadOnly(db *DB) (*DB, error) {
	var err error
	for range readOnlyAttempts {
		if err = db.loadReadOnly(); err == nil {
			db.catalog.Store(db.pending)
			gcpace.Track(paced{db})
			return db, nil
		}
		db.release()
		db.log, db.man, db.pending = nil, nil, schema.Empty()
		db.view.Store(&view{mem: db.newMemtable(), tables: map[schema.TypeID]*table{}})
		if !errors.Is(err, errs.ErrCorrupt) && !errors.Is(err, errs.ErrIO) {
			break // not a race with the writer
		}
	}
	return nil, err
}

func (db *DB) loadReadOnly() error {
	if _, err := os.Stat(db.path); err != nil {
		return fmt.Errorf("open %q read-only: %v: %w", db.path, err, errs.ErrNotFound)
	}
	man, err := readManifest(db.path)
	if err != nil {
		return fmt.Errorf("open %q read-only: %w", db.path, err)
	}
	if man == nil {
		return fmt.Errorf("open %q read-only: no %s: not a database: %w", db.path, manifestFile, errs.ErrNotFound)
	}
	db.man = man
	// The tables before the log: rows the writer appends meanwhile reach
	// the log read after, whole, even when a flush publishes one type's
	// share of them in its table before another's; the other way round,
	// a reader could see one and miss the other.
	if err := db.openTablesReadOnly(); err != nil {
		return err
	}
	if err := db.readSnapshot(); err != nil {
		return err
	}
	lopts := logOptions(db.opts)
	lopts.First, lopts.Last = man.WALFirst, man.WALLast
	if db.log, err = wal.Open(filepath.Join(db.path, walDir), lopts); err != nil {
		return fmt.Errorf("open %q read-only: %w", db.path, err)
	}
	if err := db.recover(); err != nil {
		return err
	}
	db.appliedEnd = db.log.End()
	// The tables of types the log dropped go.
	cat := db.pending
	v := db.view.Load()
	tables := maps.Clone(v.tables)
	for id, t := range tables {
		if _, live := cat.TypeByID(id); !live {
			t.release()
			delete(tables, id)
		}
	}
	db.view.Store(&view{mem: v.mem, imm: v.imm, tables: tables})
	return nil
}

// openTablesReadOnly opens the table of every type directory there is.
func (db *DB) openTablesReadOnly() error {
	entries, err := os.ReadDir(filepath.Join(db.path, tablesDir))
	if err != nil {
		return fmt.Errorf("open %q read-only: %v: %w", db.path, err, errs.ErrIO)
	}
	tables := map[schema.TypeID]*table{}
	for _, e := range entries {
		id, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil || !e.IsDir() {
			continue
		}
		t, err := db.openTable(schema.TypeID(id))
		if err != nil {
			for _, t := range tables {
				t.release()
			}
			return err
		}
		tables[schema.TypeID(id)] = t
	}
	v := db.view.Load()
	db.view.Store(&view{mem: v.mem, imm: v.imm, tables: tables})
	return nil
}

// readOnly returns the error of a call that would write, on a database
// opened read-only; nil otherwise.
func (db *DB) readOnly(op string) error {
	if db.opts.ReadOnly {
		return fmt.Errorf("%s: the database is open read-only: %w", op, errs.ErrInvalidArgument)
	}
	return nil
}
