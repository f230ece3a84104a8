// Package segment owns the on-disk form of flushed data: Parquet files of
// one type's rows (Writer, Open, File.Read, File.Scanner) and each type's Delta Lake
// transaction log, _delta_log (Table). Other readers (Spark, delta-rs,
// polars, DuckDB, pyarrow) read the same files through the same log.
//
// # Files
//
// A file holds rows keyed by (device, time), sorted by device then time,
// each key once, in row groups of at most WriterOptions.RowGroupRows rows
// (65,536 by default) and about RowGroupBytes value bytes, in data pages
// of about 8 KiB. A new device starts a new row group once the current one
// is a quarter full: small devices share row groups, large ones get their
// own, whose time bounds then prune within the device. Within a row group,
// a time range reads only the pages holding it (Scanner, through
// fastChunk), by the page index kept in the footer (arcadego.chunks).
// The pages are encoded by this package (encode.go), the footer's
// metadata by the Parquet library. Columns, Snappy-compressed (not zstd:
// the v17 zstd codec allocates GOMAXPROCS encoders per page, 11.5 GB for
// 2,000 columns), except the
// number columns that Snappy does not shrink by a tenth on a sample of
// the first row group (random-looking doubles), which are not compressed
// at all and are read from the page in place:
//
//	device  BYTE_ARRAY (String)  REQUIRED   Delta "string", nullable false
//	time    INT64                REQUIRED   see below
//	<prop>  one OPTIONAL column per property, named after it, field_id = property id
//
// Property types (Parquet physical/logical, Delta type):
//
//	BOOLEAN    BOOLEAN                  "boolean"
//	INT32      INT32                    "integer"
//	INT64      INT64                    "long"
//	FLOAT      FLOAT                    "float"
//	DOUBLE     DOUBLE                   "double"
//	STRING     BYTE_ARRAY (String)      "string"
//	BINARY     BYTE_ARRAY               "binary"
//	DATE       INT32 (Date)             "date"
//	TIMESTAMP  INT64, no logical type   "long" (nanoseconds, exact: Spark refuses
//	                                    TIMESTAMP(NANOS) and Delta's timestamp is µs)
//
// The time column follows the type's TimeUnit: "" (plain int64), "s" and
// "ns" are a plain INT64 (Delta "long", exact); "ms" and "us" are INT64
// TIMESTAMP(MILLIS or MICROS, isAdjustedToUTC=true) (Delta "timestamp").
// The TimeZone is not stored: the catalog keeps it.
//
// Our own reader maps columns by field_id, never by name, so a property
// dropped and re-created under the same name (a new id) never picks up the
// old column's data; a column of the right id but another type reads as
// null.
//
// The footer's key-value metadata holds, besides Parquet's own:
//
//	arcadego.format   "1"
//	arcadego.layout   time unit, property types and a CRC-32C of the column ids
//	                  and names: "ms;DOUBLE,STRING;1a2b3c4d" (Parquet types cannot
//	                  tell INT64 from TIMESTAMP, or "s" from "ns")
//	arcadego.devices  the device directory: base64 of uvarint count, then per
//	                  sorted device uvarint length, name, uvarint row count,
//	                  varint first time, uvarint last minus first time
//	arcadego.chunks   per row group: rows, min and max time, and per column
//	                  chunk its length and CRC-32C (chunks are contiguous from byte 4)
//	                  and per page its length, values and CRC-32C: a page index
//	arcadego.crc      CRC-32C of the values above
//
// Open checks all of it against the Parquet footer, so a flipped footer
// byte is corruption, not silently wrong pruning; each column chunk read
// is checked against its CRC (the Parquet library reads no page CRCs). A
// device's rows are found through a Bloom filter and a hash table of the
// directory's names built at open (devindex.go), then row groups are
// pruned by their time bounds (arcadego.chunks, under the CRC, equal to
// the Parquet statistics).
//
// A file holds at most 32,767 row groups (Close refuses more): the footer
// numbers them in an int16, and delta-rs refuses a file with more
// (pyarrow, DuckDB and polars do not). With the default options that is
// over 500 M rows, or fewer of very wide rows, far past the engine's file
// sizes.
//
// Pages are version 1 data pages. Encodings: RLE_DICTIONARY for the device
// and STRING columns (a STRING chunk whose dictionary would pass 1 MiB is
// PLAIN), DELTA_BINARY_PACKED for the time column (in pages of 1,024
// rows), PLAIN for the rest; definition levels in the RLE/bit-packed
// hybrid. Parquet row-group statistics are written for device and time
// only (reading per-row-group min and max values was half of a reopen;
// the Delta log has the properties' statistics per file).
//
// Statistics for Delta (FileInfo.Stats) cover device, time and the first
// 30 properties (Delta indexes 32 columns by default); see statsJSON for
// what min/max leave out and why.
//
// # Delta log
//
// Table replays dir/_delta_log/NNNNNNNNNNNNNNNNNNNN.json from version 0 and
// commits the next version. Rules:
//   - versions are contiguous from 0; version 0 holds protocol
//     (minReaderVersion 1, minWriterVersion 2) and metaData;
//   - a version is written to a temporary file, then link(2)ed to its name,
//     so an existing version is never overwritten (errs.ErrConflict);
//   - every action carries the fields the kernel-based readers require
//     (metaData id/format/schemaString/partitionColumns/configuration; add
//     path/size/partitionValues/modificationTime/dataChange), and add.size
//     is the exact file size;
//   - no partitions, no checkpoints, no deletion vectors, no column mapping.
//
// This package must not import core/engine or core/memtable, nor Arrow's
// pqarrow (it pulls gRPC into the binary): it uses the low-level parquet,
// file, schema, metadata and compress packages only. It never chooses
// file names (callers pass paths) and never deletes a file the log names.
package segment
