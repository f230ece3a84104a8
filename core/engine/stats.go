package engine

import "github.com/arcadego/arcadego/core/wal"

// Stats is a snapshot of a database's counters and storage, for
// monitoring and tests. Counters count since Open.
type Stats struct {
	MemtableBytes      int64       `json:"memtable_bytes"`        // live memtable, estimated
	ImmutableMemtables int         `json:"immutable_memtables"`   // waiting for or in a flush
	ImmutableBytes     int64       `json:"immutable_bytes"`       // their estimated size
	MemtableBudget     int64       `json:"memtable_budget"`       // Options.MemtableBudget in force
	Flushes            uint64      `json:"flushes"`               // flushes that completed
	FlushedRows        uint64      `json:"flushed_rows"`          // rows written to Parquet by flushes (rewrites included)
	FlushedBytes       uint64      `json:"flushed_bytes"`         // Parquet bytes written by flushes
	Checkpoints        uint64      `json:"checkpoints"`           // checkpoints that completed
	Stalls             uint64      `json:"stalls"`                // commits that waited for a flush (back-pressure)
	StallNanos         int64       `json:"stall_nanos"`           // time they waited in all
	FlushError         string      `json:"flush_error,omitempty"` // the last flush's failure, "" once one succeeds
	WALBytes           int64       `json:"wal_bytes"`             // bytes in live log segments
	WALSegments        int         `json:"wal_segments"`
	Fsyncs             uint64      `json:"fsyncs"` // log and storage fsyncs (files and directories)
	Log                wal.Stats   `json:"-"`
	Types              []TypeStats `json:"types"` // types with flushed data, by name
}

// TypeStats describes the flushed data of one type: a Delta Lake table.
type TypeStats struct {
	Name         string `json:"name"`
	ID           uint32 `json:"id"`
	Path         string `json:"path"` // the table's directory ("" in memory)
	Files        int    `json:"files"`
	Bytes        int64  `json:"bytes"`
	Rows         int64  `json:"rows"`
	DeltaVersion int64  `json:"delta_version"` // the latest commit in _delta_log, -1 when none
}
