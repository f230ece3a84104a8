// Package index owns the data structures of secondary indexes: the
// order-preserving encoding of index keys (key.go), the part of an index
// that covers one memtable (Mem: sorted runs merged as they grow), and the
// sorted sidecar file that covers one data file (File).
//
// Both parts map a key to the (device, time) of rows that held it when
// the part was written. They are candidates, not answers: a row may have
// been overwritten or deleted since, so the engine reads the candidates'
// rows and keeps those whose current values match. A part must never
// miss a row that holds a key in its source; it may list rows that no
// longer do.
//
// This package must not know about the catalog, the engine's views, the
// log or Parquet: the engine decides what to index, and when.
package index
