// Package memtable owns the in-memory aligned chunks: one Chunk per
// (type, device), holding the rows written to it in arrival order, with a
// time block and per-column value blocks in Arrow layout. It maps incoming
// tablet columns to chunk columns, grows a chunk by any number of new
// columns in one step, accounts for the memory it holds, and gives readers
// snapshots they read without locks.
//
// It must not do I/O, must not import Arrow and must not call the catalog:
// the caller resolves column names to schema.PropertyIDs and checks the
// tablet against the schema; a chunk only checks that a column keeps the
// type it was created with.
//
// # Layout
//
// Rows are appended in arrival order. Row r lives in row block r/BlockRows
// at block-relative row r%BlockRows. A row block has a time buffer and a
// slot array with one slot per column position; a slot holds the column's
// values for that row block (a "column block"). Values use Arrow layout:
// fixed-width values contiguous little endian, Booleans bit-packed LSB
// first, String and Binary as int32 offsets plus data bytes; validity
// bitmaps are LSB first, 1 = valid, stored as []uint64 words (a little
// endian word has the byte layout of the Arrow bitmap).
//
// Nulls cost nothing unless they sit between values. A column block holds
// the contiguous block-relative rows [lo, lo+n); every other row of the row
// block is null for that column. So a column that does not exist yet, a
// column absent from a tablet, and leading or trailing nulls in a tablet
// all cost nothing: a new column does not touch the rows already there, and
// a write does not touch the columns it does not carry. A block gets a
// validity bitmap only when a null falls inside [lo, lo+n), i.e. when it
// holds both nulls and values. (This refines "an absent block is all null":
// starting a block at its first value instead of at the row block's first
// row also keeps a column created late in a row block from allocating
// room, or a bitmap, for the rows before it, so its cost does not depend
// on the history.)
//
// Buffers start at the size the first write needs and double, up to the
// rest of the row block, so a one-row write of 10,000 new columns
// allocates 10,000 eight-byte buffers (carved from a few slabs), not
// 10,000 full blocks. A column that filled the previous row block gets the
// whole next one at once, so a steady stream does not copy.
//
// # Block pool
//
// With Options.Pool, value buffers (fixed-width values, String and Binary
// bytes) are carved from 256 KiB slabs that a Pool hands out and takes
// back, so that a memtable after a flush writes into memory already
// mapped rather than into fresh pages the kernel must fault in. Only
// full-size slab requests use the pool (a small write keeps its small
// slab), so pooling wastes no more than the slabs of the Go heap do. The
// memtable's creator and every reader that keeps snapshots past the
// moment it is dropped count a use (Retain, Release); the last Release
// zeroes the slabs into the pool. Times, validity bitmaps, offsets and
// slot arrays stay on the Go heap: they are small, and a reader may read
// times without holding a use.
//
// # Writing
//
// Chunk.Write maps the tablet's columns in one pass, with one lookup per
// column in an id table (PropertyID → column position). The same pass
// checks each column (type, buffer sizes), rejects duplicate ids and
// collects the missing columns; then the column list grows once to its
// final width, the rows are appended, and the memory totals are updated
// once. A failed Write changes nothing a reader or a later write can see.
// A write costs O(columns it carries + values it writes): nothing in it
// depends on the rows already in the chunk, nor on the columns it lacks.
//
// # Concurrency
//
// Writers of one chunk are serialized by the chunk's mutex; writers of
// different chunks never wait for each other. Readers never lock: a
// Snapshot is the immutable chunk state (row count, column list, row block
// list) that the writer publishes through an atomic pointer after each
// write, and a reader reads only rows below the snapshot's row count and
// columns below its width. The writer only ever writes memory at or beyond
// what it has published, except through atomics: slot coverage and buffer
// pointers, bitmap words (atomic OR, atomic loads), row block buffers and
// the id table's entries. Growing a buffer copies it and publishes the
// copy, so a reader holding the old one still sees every row of its
// snapshot.
//
// Equal times are merged when reading: Snapshot.Read sorts rows by time
// (stably; not at all when the times arrived non-decreasing) and per column
// takes the last non-null value in arrival order.
package memtable
