package abi_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statsKeys are the keys arcadego.h documents for arcadego_stats ("flush_error"
// is present only while a flush is failing).
var statsKeys = []string{
	"memtable_bytes", "immutable_memtables", "immutable_bytes", "memtable_budget", "pool_bytes",
	"flushes", "flushed_rows", "flushed_bytes", "direct_writes", "checkpoints", "stalls", "stall_nanos",
	"wal_bytes", "wal_segments", "fsyncs", "types",
}

// statsJSON returns arcadego_stats's JSON decoded.
func statsJSON(t testing.TB, db uintptr) map[string]any {
	t.Helper()
	out := uintptr(0xdead) // must be overwritten
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.stats(db, &out, e) })
	requireOK(t, code, msg, "stats")
	require.NotZero(t, out)
	s := goString(out)
	lib.free(out)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m), s)
	return m
}

func TestFlushCheckpointAndStats(t *testing.T) {
	for _, where := range []string{"on disk", "in memory"} {
		t.Run(where, func(t *testing.T) {
			dir := ""
			if where == "on disk" {
				dir = t.TempDir()
			}
			db := openDB(t, dir, `{"memtable_budget": 1048576}`)
			execDDL(t, db, schemaAB)
			code, msg := insert(t, db, "A", "d1", goodBatch(t))
			requireOK(t, code, msg, "insert")
			before := state(t, db)

			code, msg = callErr(t, func(e *uintptr) int32 { return lib.flush(db, e) })
			requireOK(t, code, msg, "flush")
			assert.Equal(t, before, state(t, db), "a flush changes no row")
			code, msg = callErr(t, func(e *uintptr) int32 { return lib.flush(db, e) })
			requireOK(t, code, msg, "flush with nothing new")
			code, msg = callErr(t, func(e *uintptr) int32 { return lib.checkpoint(db, e) })
			requireOK(t, code, msg, "checkpoint")
			assert.Equal(t, before, state(t, db), "a checkpoint changes no row")

			st := statsJSON(t, db)
			for _, k := range statsKeys {
				assert.Contains(t, st, k)
			}
			for k, v := range st {
				switch k {
				case "types":
					_, ok := v.([]any)
					assert.True(t, ok, "types is a list (never null): %#v", v)
				case "flush_error":
					assert.IsType(t, "", v)
				default:
					assert.IsType(t, float64(0), v, "%s is a number", k)
				}
			}
		})
	}
}

// TestDataSurvivesCheckpointAndReopen: what a checkpoint covered (and may
// have removed from the log) is still there after a reopen.
func TestDataSurvivesCheckpointAndReopen(t *testing.T) {
	dir := t.TempDir()
	var db uintptr
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.open(cstr(dir), nil, &db, e) })
	requireOK(t, code, msg, "open")
	execDDL(t, db, schemaAB)
	code, msg = insert(t, db, "A", "d1", goodBatch(t))
	requireOK(t, code, msg, "insert")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.checkpoint(db, e) })
	requireOK(t, code, msg, "checkpoint")
	code, msg = insert(t, db, "A", "d2", goodBatch(t))
	requireOK(t, code, msg, "insert after the checkpoint")
	before := state(t, db)
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.close(db, e) })
	requireOK(t, code, msg, "close")

	again := openDB(t, dir, "")
	assert.Equal(t, before, state(t, again))
}

// TestClone: arcadego_clone copies an open database into an empty
// directory, which opens with the same rows; a non-empty directory, a
// database in memory and a closed handle are refused with their codes.
func TestClone(t *testing.T) {
	root := t.TempDir()
	db := openDB(t, filepath.Join(root, "db"), "")
	execDDL(t, db, schemaAB)
	code, msg := insert(t, db, "A", "d1", goodBatch(t))
	requireOK(t, code, msg, "insert")
	dest := filepath.Join(root, "copy")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.clone(db, cstr(dest), e) })
	requireOK(t, code, msg, "clone")
	copyDB := openDB(t, dest, "")
	assert.Equal(t, state(t, db), state(t, copyDB))

	code, msg = callErr(t, func(e *uintptr) int32 { return lib.clone(db, cstr(dest), e) })
	assert.Equal(t, codeAlreadyExists, code, msg)
	mem := openDB(t, "", "")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.clone(mem, cstr(filepath.Join(root, "m")), e) })
	assert.Equal(t, codeInvalidArgument, code, msg)
	code, _ = callErr(t, func(e *uintptr) int32 { return lib.clone(0xfeedface, cstr(filepath.Join(root, "x")), e) })
	assert.Equal(t, codeClosed, code)
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.clone(db, nil, e) })
	assert.Equal(t, codeInvalidArgument, code, msg)
}

// TestReadOnlyOpen: "read_only" opens a database another handle writes,
// sees what was committed when it opened, and refuses every write.
func TestReadOnlyOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDB(t, dir, "")
	execDDL(t, db, schemaAB)
	code, msg := insert(t, db, "A", "d1", goodBatch(t))
	requireOK(t, code, msg, "insert")
	reader := openDB(t, dir, `{"read_only": true}`)
	assert.Equal(t, state(t, db), state(t, reader))

	code, msg = insert(t, reader, "A", "d2", goodBatch(t))
	assert.Equal(t, codeInvalidArgument, code, msg)
	assert.Contains(t, msg, "read-only")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.flush(reader, e) })
	assert.Equal(t, codeInvalidArgument, code, msg)
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.clone(reader, cstr(filepath.Join(t.TempDir(), "c")), e) })
	assert.Equal(t, codeInvalidArgument, code, msg)

	var none uintptr
	code, msg = callErr(t, func(e *uintptr) int32 {
		return lib.open(cstr(filepath.Join(t.TempDir(), "none")), cstr(`{"read_only": true}`), &none, e)
	})
	assert.Equal(t, codeNotFound, code, msg)
	assert.Zero(t, none)
}

// TestNamesWithLengths: names and scripts are read for exactly their
// length, so they need no NUL terminator and a NUL inside one is refused,
// never cut there.
func TestNamesWithLengths(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	before := state(t, db)
	buf := func(s string) *byte { return &[]byte(s)[0] } // no terminator
	bad := map[string]func(e *uintptr) int32{
		"type with a NUL": func(e *uintptr) int32 {
			b := goodBatch(t)
			return abiN.insert(db, buf("A\x00B"), 3, buf("d"), 1, b.schemaAddr, b.arrayAddr, e)
		},
		"device with a NUL": func(e *uintptr) int32 {
			b := goodBatch(t)
			return abiN.insert(db, buf("A"), 1, buf("d\x00x"), 3, b.schemaAddr, b.arrayAddr, e)
		},
		"device column with a NUL": func(e *uintptr) int32 {
			b := goodBatch(t)
			return abiN.insertLong(db, buf("A"), 1, buf("k\x00"), 2, b.schemaAddr, b.arrayAddr, e)
		},
		"script with a NUL": func(e *uintptr) int32 {
			script := "CREATE DOCUMENT TYPE C\x00; CREATE DOCUMENT TYPE D"
			return abiN.exec(db, buf(script), uintptr(len(script)), e)
		},
		"describe a type with a NUL": func(e *uintptr) int32 {
			var out uintptr
			return abiN.describe(db, buf("A\x00B"), 3, &out, e)
		},
		"a length larger than any string": func(e *uintptr) int32 {
			return abiN.exec(db, buf("CREATE DOCUMENT TYPE C"), 1<<40, e)
		},
	}
	for name, call := range bad {
		code, msg := callErr(t, call)
		assert.Equal(t, codeInvalidArgument, code, "%s: %s", name, msg)
		assert.NotContains(t, msg, "not found", name)
	}
	assert.Equal(t, before, state(t, db), "a refused call changed the database")

	// Only the given bytes are read: "AXYZ" of length 1 is type A.
	b := goodBatch(t)
	code, msg := callErr(t, func(e *uintptr) int32 {
		return abiN.insert(db, buf("AXYZ"), 1, buf("d1-and-more"), 2, b.schemaAddr, b.arrayAddr, e)
	})
	requireOK(t, code, msg, "insert with lengths")
	code, msg = callErr(t, func(e *uintptr) int32 { return abiN.exec(db, buf("CREATE DOCUMENT TYPE C; garbage"), 22, e) })
	requireOK(t, code, msg, "exec of a prefix")
	assert.Contains(t, state(t, db), `"C"`)
	assert.Contains(t, state(t, db), `d1`)
}

// TestCompact: arcadego_compact merges a type's files, names the type it
// cannot find, and refuses a read-only handle.
func TestCompact(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDB(t, dir, "")
	execDDL(t, db, schemaAB)
	for _, dev := range []string{"d1", "d2", "d3"} {
		code, msg := insert(t, db, "A", dev, goodBatch(t))
		requireOK(t, code, msg, "insert")
		code, msg = callErr(t, func(e *uintptr) int32 { return lib.flush(db, e) })
		requireOK(t, code, msg, "flush")
	}
	want := state(t, db)
	files := func() int {
		m, err := filepath.Glob(filepath.Join(dir, "types", "*", "*.parquet"))
		require.NoError(t, err)
		return len(m)
	}
	require.Equal(t, 3, files())
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.compact(db, cstr("A"), 1, e) })
	requireOK(t, code, msg, "compact")
	assert.Equal(t, 1, files())
	assert.Equal(t, want, state(t, db))
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.compact(db, nil, 0, e) })
	requireOK(t, code, msg, "compact everything")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.compact(db, cstr("Nope"), 4, e) })
	assert.Equal(t, codeNotFound, code, msg)
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.compact(db, cstr("A\x00"), 2, e) })
	assert.Equal(t, codeInvalidArgument, code, msg)
	reader := openDB(t, dir, `{"read_only": true}`)
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.compact(reader, nil, 0, e) })
	assert.Equal(t, codeInvalidArgument, code, msg)
}

// TestDelete: arcadego_delete and arcadego_tx_delete remove rows by device
// and time range, at once and after a flush; bad requests change nothing.
func TestDelete(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDB(t, dir, "")
	execDDL(t, db, schemaAB)
	for _, dev := range []string{"d1", "d2"} {
		code, msg := insert(t, db, "A", dev, goodBatch(t))
		requireOK(t, code, msg, "insert")
	}
	full := state(t, db)
	for name, req := range map[string]string{
		"no type":      `{"devices": ["d1"]}`,
		"unknown key":  `{"type": "A", "device": "d1"}`,
		"bad device":   `{"type": "A", "devices": ["d\u0000"]}`,
		"not json":     `{"type": `,
		"start string": `{"type": "A", "start": "0"}`,
	} {
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.delete(db, cstr(req), e) })
		assert.Equal(t, codeInvalidArgument, code, "%s: %s", name, msg)
	}
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.delete(db, cstr(`{"type": "Nope"}`), e) })
	assert.Equal(t, codeNotFound, code, msg)
	assert.Equal(t, full, state(t, db), "a refused delete changed the database")

	code, msg = callErr(t, func(e *uintptr) int32 { return lib.delete(db, cstr(`{"type": "A", "devices": ["d1"]}`), e) })
	requireOK(t, code, msg, "delete d1")
	afterD1 := state(t, db)
	assert.NotContains(t, afterD1, "[d1 ")
	assert.Contains(t, afterD1, "[d2 ")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.flush(db, e) })
	requireOK(t, code, msg, "flush")
	assert.Equal(t, afterD1, state(t, db))

	// In a transaction: the delete goes with its commit, not before.
	var tx uintptr
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.begin(db, &tx, e) })
	requireOK(t, code, msg, "begin")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.txDelete(tx, cstr(`{"type": "A", "end": 9223372036854775807}`), e) })
	requireOK(t, code, msg, "tx delete")
	assert.Equal(t, afterD1, state(t, db))
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.commit(tx, e) })
	requireOK(t, code, msg, "commit")
	assert.NotContains(t, state(t, db), "[d2 ")
}
