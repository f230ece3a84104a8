package engine

import (
	"slices"
	"strings"

	"github.com/arcadego/arcadego/core/wal"
)

// Stats is a snapshot of a database's counters and storage, for
// monitoring and tests. Counters count since Open.
type Stats struct {
	MemtableBytes       int64       `json:"memtable_bytes"`        // live memtable, estimated
	ImmutableMemtables  int         `json:"immutable_memtables"`   // waiting for or in a flush
	ImmutableBytes      int64       `json:"immutable_bytes"`       // their estimated size
	MemtableBudget      int64       `json:"memtable_budget"`       // Options.MemtableBudget in force
	PoolBytes           int64       `json:"pool_bytes"`            // memory of flushed memtables kept for the next ones (at most the budget)
	Flushes             uint64      `json:"flushes"`               // flushes that completed
	FlushedRows         uint64      `json:"flushed_rows"`          // rows written to Parquet by flushes (rewrites included)
	FlushedBytes        uint64      `json:"flushed_bytes"`         // Parquet bytes written by flushes
	Checkpoints         uint64      `json:"checkpoints"`           // checkpoints that completed
	DirectWrites        uint64      `json:"direct_writes"`         // large inserts written straight to Parquet, one per type and commit (their rows and bytes count as flushed)
	Compactions         uint64      `json:"compactions"`           // types whose files were merged (their rows and bytes count as flushed)
	IndexSidecarsBuilt  uint64      `json:"index_sidecars_built"`  // index sidecars built from data files (flushes, compactions, backfills, lookups)
	IndexSidecarsMerged uint64      `json:"index_sidecars_merged"` // index sidecars of compacted files merged from the old files' sidecars
	Stalls              uint64      `json:"stalls"`                // commits that waited for a flush (back-pressure)
	StallNanos          int64       `json:"stall_nanos"`           // time they waited in all
	FlushError          string      `json:"flush_error,omitempty"` // the last flush's failure, "" once one succeeds
	WALBytes            int64       `json:"wal_bytes"`             // bytes in live log segments
	WALSegments         int         `json:"wal_segments"`
	Fsyncs              uint64      `json:"fsyncs"` // log and storage fsyncs (files and directories)
	Log                 wal.Stats   `json:"-"`
	Types               []TypeStats `json:"types"` // types with flushed data, by name
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

// Stats returns the database's counters and, per type with flushed data,
// its table. It reads no file.
func (db *DB) Stats() Stats {
	st := Stats{
		MemtableBudget:      db.budget,
		PoolBytes:           db.pool.Bytes(),
		Flushes:             db.counters.flushes.Load(),
		FlushedRows:         db.counters.flushedRows.Load(),
		FlushedBytes:        db.counters.flushedBytes.Load(),
		Checkpoints:         db.counters.checkpoints.Load(),
		DirectWrites:        db.counters.directWrites.Load(),
		Compactions:         db.counters.compactions.Load(),
		IndexSidecarsBuilt:  db.sidecarsBuilt.Load(),
		IndexSidecarsMerged: db.sidecarsMerged.Load(),
		Stalls:              db.counters.stalls.Load(),
		StallNanos:          db.counters.stallNanos.Load(),
		Types:               []TypeStats{},
	}
	if p := db.flushErr.Load(); p != nil {
		st.FlushError = (*p).Error()
	}
	cat := db.catalog.Load()
	db.stateMu.Lock()
	v := db.view.Load()
	st.MemtableBytes = v.mem.MemoryUsage()
	if v.imm != nil {
		st.ImmutableMemtables = 1
		st.ImmutableBytes = v.imm.mem.MemoryUsage()
	}
	for id, t := range v.tables {
		ty, ok := cat.TypeByID(id)
		if !ok || len(t.files) == 0 && t.version < 0 {
			continue
		}
		ts := TypeStats{Name: ty.Name, ID: uint32(id), Path: t.dir, Files: len(t.files), DeltaVersion: t.version}
		for _, f := range t.files {
			ts.Bytes += f.size
		}
		ts.Rows = rowsIn(t.files)
		st.Types = append(st.Types, ts)
	}
	db.stateMu.Unlock()
	slices.SortFunc(st.Types, func(a, b TypeStats) int { return strings.Compare(a.Name, b.Name) })
	st.Log = db.LogStats()
	st.WALBytes = st.Log.LiveBytes
	st.WALSegments = st.Log.Segments
	st.Fsyncs = st.Log.Fsyncs + db.counters.fsyncs.Load()
	return st
}

// FlushedRows returns the rows in the files of type typ now (0 for a type
// that has none or does not exist). It reads no file: a caller's cheap
// guess of a query's size.
func (db *DB) FlushedRows(typ string) int64 {
	ty, ok := db.catalog.Load().Type(typ)
	if !ok {
		return 0
	}
	tb := db.view.Load().tables[ty.ID]
	if tb == nil {
		return 0
	}
	return rowsIn(tb.files)
}

// rowsIn returns the rows the files hold.
func rowsIn(files []*dataFile) int64 {
	var rows int64
	for _, f := range files {
		rows += f.Rows()
	}
	return rows
}
