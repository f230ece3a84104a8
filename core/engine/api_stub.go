package engine

// This file lists the package's API with placeholder bodies; the engine
// work replaces it with the real implementation (same signatures).

import (
	"context"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// Options configure a database. The zero value is a durable database with
// SyncFull and auto-create off.
type Options struct {
	Sync       wal.SyncMode
	AutoCreate bool // Insert adds missing types and properties, typed from the tablet
}

// DB is an open database. Safe for concurrent use.
type DB struct{}

// Open opens (creating if needed) the database in directory path; an empty
// path opens a database held only in memory.
func Open(path string, opts Options) (*DB, error) { panic("unimplemented") }

// Close closes the database. Later calls return errs.ErrClosed.
func (db *DB) Close() error { panic("unimplemented") }

// Catalog returns the current schema version.
func (db *DB) Catalog() *schema.Catalog { panic("unimplemented") }

// Begin starts a transaction.
func (db *DB) Begin() (*Tx, error) { panic("unimplemented") }

// Exec runs a DDL script as one transaction.
func (db *DB) Exec(script string) error { panic("unimplemented") }

// Apply runs one DDL operation as a transaction.
func (db *DB) Apply(op schema.Op) error { panic("unimplemented") }

// Insert writes one tablet as a transaction.
func (db *DB) Insert(typ, device string, t *tablet.Tablet) error { panic("unimplemented") }

// Tx is a transaction: DDL and tablet writes that commit together or not
// at all. Not safe for concurrent use. Commit or Rollback it when done.
type Tx struct{}

// Exec adds the statements of a DDL script.
func (tx *Tx) Exec(script string) error { panic("unimplemented") }

// Apply adds one DDL operation.
func (tx *Tx) Apply(op schema.Op) error { panic("unimplemented") }

// Insert adds a tablet. Its buffers may be reused once Insert returns.
func (tx *Tx) Insert(typ, device string, t *tablet.Tablet) error { panic("unimplemented") }

// Commit makes the transaction durable and visible, or changes nothing.
func (tx *Tx) Commit() error { panic("unimplemented") }

// Rollback discards the transaction. Safe after Commit (no-op).
func (tx *Tx) Rollback() { panic("unimplemented") }

// ScanRequest selects rows of one type.
type ScanRequest struct {
	Type       string
	Devices    []string // nil: every device
	Properties []string // nil: every live property, in creation order
	Start      *int64   // nil: no lower bound; else time >= *Start
	End        *int64   // nil: no upper bound; else time < *End
	BatchRows  int      // rows per batch at most; default 65536
}

// Batch is a run of rows of one device, sorted by time.
type Batch struct {
	Device string
	Rows   *tablet.Tablet // owns its memory
}

// Rows iterates over scan results, device by device in device order.
type Rows struct{}

// Scan starts a scan. Results reflect the data committed when Scan was called.
func (db *DB) Scan(ctx context.Context, req ScanRequest) (*Rows, error) { panic("unimplemented") }

// Next returns the next batch, or false at the end or on error.
func (r *Rows) Next() (Batch, bool) { panic("unimplemented") }

// Err returns the error that ended the iteration, if any.
func (r *Rows) Err() error { panic("unimplemented") }

// Properties returns the result columns after device and time.
func (r *Rows) Properties() []schema.Property { panic("unimplemented") }

// Close releases the iterator.
func (r *Rows) Close() { panic("unimplemented") }
