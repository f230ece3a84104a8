package memtable

// This file lists the package's API with placeholder bodies; the memtable
// work replaces it with the real implementation (same signatures).

import (
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// Options tune a memtable. Zero values take defaults.
type Options struct {
	BlockRows int // rows per block; a power of two, default 1024
}

// Memtable holds the aligned chunks of every (type, device).
type Memtable struct{}

// New returns an empty memtable.
func New(opts Options) *Memtable { panic("unimplemented") }

// Chunk returns the chunk of (typ, device), creating it if absent.
func (m *Memtable) Chunk(typ schema.TypeID, device string) *Chunk { panic("unimplemented") }

// Lookup returns the chunk of (typ, device) if it exists.
func (m *Memtable) Lookup(typ schema.TypeID, device string) (*Chunk, bool) { panic("unimplemented") }

// Devices returns the devices that have a chunk of typ, sorted.
func (m *Memtable) Devices(typ schema.TypeID) []string { panic("unimplemented") }

// MemoryUsage returns the estimated bytes held by all chunks.
func (m *Memtable) MemoryUsage() int64 { panic("unimplemented") }

// Clone returns a deep copy that shares no mutable memory with m.
func (m *Memtable) Clone() *Memtable { panic("unimplemented") }

// Clear drops every chunk. The caller must own m exclusively (no readers).
func (m *Memtable) Clear() { panic("unimplemented") }

// Chunk is the aligned chunk of one (type, device).
type Chunk struct{}

// Write appends the rows of t. ids[i] is the column id of t.Columns[i];
// the caller has validated t and checked each column's type against the
// schema. Columns the chunk lacks are added in one step.
func (c *Chunk) Write(t *tablet.Tablet, ids []schema.PropertyID) error { panic("unimplemented") }

// ColumnRef names a column to read: its id, the name to give it in the
// result, and its type.
type ColumnRef struct {
	ID   schema.PropertyID
	Name string
	Type schema.PropertyType
}

// Snapshot is a consistent, read-only view of a chunk.
type Snapshot struct{}

// Snapshot returns a view of the rows written so far; it never blocks a writer.
func (c *Chunk) Snapshot() Snapshot { panic("unimplemented") }

// Rows returns the number of rows written (before merging equal times).
func (s Snapshot) Rows() int { panic("unimplemented") }

// Width returns the number of columns.
func (s Snapshot) Width() int { panic("unimplemented") }

// Read returns rows with start <= time < end, sorted by time, equal times
// merged (per column the last non-null value wins), with the columns of
// cols in that order (a column the chunk lacks reads as all null). The
// result owns its memory.
func (s Snapshot) Read(cols []ColumnRef, start, end int64) *tablet.Tablet { panic("unimplemented") }

// Width returns the number of columns.
func (c *Chunk) Width() int { panic("unimplemented") }

// MemoryUsage returns the estimated bytes held by the chunk.
func (c *Chunk) MemoryUsage() int64 { panic("unimplemented") }

// Clone returns a deep copy of c.
func (c *Chunk) Clone() *Chunk { panic("unimplemented") }

// Clear drops every row and column, keeping the chunk usable. The caller
// must own c exclusively (no concurrent readers or writers).
func (c *Chunk) Clear() { panic("unimplemented") }
