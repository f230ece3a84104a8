package abi_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/arcadego/arcadego/internal/cdata/cdatatest"
	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionIsStaticAndNonEmpty(t *testing.T) {
	p := lib.version()
	require.NotZero(t, p)
	assert.Regexp(t, `^\d+\.\d+\.\d+`, goString(p))
	assert.Equal(t, p, lib.version(), "the version string is allocated once")
	lib.free(0) // arcadego_free(NULL) is a no-op
}

func TestOpenOptions(t *testing.T) {
	cases := []struct {
		name, options string
		code          int
		msg           string
	}{
		{"null options", "", codeOK, ""},
		{"empty object", "{}", codeOK, ""},
		{"json null", "null", codeOK, ""},
		{"every option", `{"sync": "off", "auto_create": true, "time_column": "ts"}`, codeOK, ""},
		{"sync normal", `{"sync": "normal"}`, codeOK, ""},
		{"does not parse", `{"sync": `, codeInvalidArgument, "open options"},
		{"not an object", `[1]`, codeInvalidArgument, "open options"},
		{"unknown key", `{"synk": "full"}`, codeInvalidArgument, "synk"},
		{"trailing data", `{} {}`, codeInvalidArgument, "after the JSON value"},
		{"bad sync mode", `{"sync": "sometimes"}`, codeInvalidArgument, "sometimes"},
		{"wrong type", `{"auto_create": "yes"}`, codeInvalidArgument, "auto_create"},
		{"empty time column", `{"time_column": ""}`, codeInvalidArgument, "time column"},
		{"time column named device", `{"time_column": "device"}`, codeInvalidArgument, "device"},
		{"not UTF-8", "{\"time_column\": \"\xff\"}", codeInvalidArgument, "UTF-8"},
		{"memtable budget", `{"memtable_budget": 1048576}`, codeOK, ""},
		{"memtable budget 0 is the default", `{"memtable_budget": 0}`, codeOK, ""},
		{"negative memtable budget", `{"memtable_budget": -1}`, codeInvalidArgument, "memtable_budget"},
		{"direct writes from 1 MiB", `{"direct_write_bytes": 1048576}`, codeOK, ""},
		{"no direct writes", `{"direct_write_bytes": -1}`, codeOK, ""},
		{"bad direct write threshold", `{"direct_write_bytes": -2}`, codeInvalidArgument, "direct_write_bytes"},
		{"fractional memtable budget", `{"memtable_budget": 1.5}`, codeInvalidArgument, "memtable_budget"},
		{"memtable budget in exponent form", `{"memtable_budget": 1e6}`, codeInvalidArgument, "memtable_budget"},
		{"memtable budget as a string", `{"memtable_budget": "64MB"}`, codeInvalidArgument, "memtable_budget"},
		{"memtable budget past int64", `{"memtable_budget": 9223372036854775808}`, codeInvalidArgument, "memtable_budget"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opts *byte
			if c.options != "" {
				opts = cstr(c.options)
			}
			db := uintptr(0xbad)
			code, msg := callErr(t, func(e *uintptr) int32 { return lib.open(nil, opts, &db, e) })
			require.Equal(t, c.code, code, msg)
			assert.Contains(t, msg, c.msg)
			if code == codeOK {
				require.NotZero(t, db)
				code, msg = callErr(t, func(e *uintptr) int32 { return lib.close(db, e) })
				assert.Equal(t, codeOK, code, msg)
			} else {
				assert.Zero(t, db, "out is cleared on failure")
			}
		})
	}
}

func TestOpenOnDiskLocksTheDirectoryAndKeepsData(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, `{"sync": "full"}`)
	execDDL(t, db, schemaAB)
	code, msg := insert(t, db, "A", "d1", goodBatch(t))
	requireOK(t, code, msg, "insert")

	var second uintptr
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.open(cstr(dir), nil, &second, e) })
	assert.Equal(t, codeIO, code, msg)

	code, msg = callErr(t, func(e *uintptr) int32 { return lib.close(db, e) })
	requireOK(t, code, msg, "close")
	again := openDB(t, dir, "")
	r := scanResult(t, again, `{"type": "A"}`)
	assert.Equal(t, []any{int64(10), int64(20), int64(30)}, r.column("k"))

	_, err := os.Stat(filepath.Join(dir, "A"))
	assert.True(t, os.IsNotExist(err), "no file is named after a type")
}

// TestNullAndStaleHandles calls every export that takes a handle with NULL
// (INVALID_ARGUMENT), a closed one and an unknown one (CLOSED). Arrow
// structs passed along are released all the same.
func TestNullAndStaleHandles(t *testing.T) {
	live := openDB(t, "", "")
	execDDL(t, live, schemaAB)

	var closedDB uintptr
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.open(nil, nil, &closedDB, e) })
	requireOK(t, code, msg, "open")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.close(closedDB, e) })
	requireOK(t, code, msg, "close")

	liveTx := begin(t, live)
	defer lib.rollback(liveTx)
	committed := begin(t, live)
	commit(t, committed)
	rolledBack := begin(t, live)
	require.Equal(t, int32(codeOK), lib.rollback(rolledBack))

	// A transaction of a closed database is closed with it.
	var other uintptr
	code, _ = callErr(t, func(e *uintptr) int32 { return lib.open(nil, nil, &other, e) })
	require.Equal(t, codeOK, code)
	orphan := begin(t, other)
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.close(other, e) })
	requireOK(t, code, msg, "close with an open transaction")

	dbs := []struct {
		name  string
		token uintptr
		code  int
	}{
		{"NULL", 0, codeInvalidArgument},
		{"closed", closedDB, codeClosed},
		{"a transaction token", liveTx, codeClosed},
		{"unknown", 0xfeedface, codeClosed},
	}
	for _, h := range dbs {
		t.Run("db "+h.name, func(t *testing.T) {
			calls := map[string]func(e *uintptr) int32{
				"close": func(e *uintptr) int32 { return lib.close(h.token, e) },
				"begin": func(e *uintptr) int32 {
					var tx uintptr
					return lib.begin(h.token, &tx, e)
				},
				"exec": func(e *uintptr) int32 { return lib.exec(h.token, cstr(schemaAB), e) },
				"scan": func(e *uintptr) int32 {
					s := libc.calloc(1, unsafe.Sizeof(cStream{}))
					defer libc.free(s)
					rc := lib.scan(h.token, cstr(`{"type": "A"}`), s, e)
					assert.Zero(t, at[cStream](s).release, "no stream on failure")
					return rc
				},
				"describe": func(e *uintptr) int32 {
					var out uintptr
					return lib.describe(h.token, nil, &out, e)
				},
				"flush":      func(e *uintptr) int32 { return lib.flush(h.token, e) },
				"checkpoint": func(e *uintptr) int32 { return lib.checkpoint(h.token, e) },
				"stats": func(e *uintptr) int32 {
					out := uintptr(0xdead)
					rc := lib.stats(h.token, &out, e)
					assert.Zero(t, out, "stats: json_out is NULL on failure")
					return rc
				},
				"insert": func(e *uintptr) int32 {
					b := goodBatch(t)
					rc := lib.insert(h.token, cstr("A"), cstr("d1"), b.schemaAddr, b.arrayAddr, e)
					assertReleasedOnce(t, b)
					return rc
				},
				"insert_stream": func(e *uintptr) int32 {
					s, st := exportStream(t, &streamState{failAt: -1})
					rc := lib.insertStream(h.token, cstr("A"), cstr("d1"), s, e)
					assert.Equal(t, 1, st.released, "stream released once")
					return rc
				},
			}
			for name, fn := range calls {
				code, msg := callErr(t, fn)
				assert.Equal(t, h.code, code, "%s: %s", name, msg)
			}
			assert.Equal(t, int32(h.code), lib.cancel(h.token), "cancel")
		})
	}

	txs := []struct {
		name  string
		token uintptr
		code  int
	}{
		{"NULL", 0, codeInvalidArgument},
		{"committed", committed, codeClosed},
		{"rolled back", rolledBack, codeClosed},
		{"of a closed database", orphan, codeClosed},
		{"a database token", live, codeClosed},
	}
	for _, h := range txs {
		t.Run("tx "+h.name, func(t *testing.T) {
			calls := map[string]func(e *uintptr) int32{
				"tx_exec": func(e *uintptr) int32 { return lib.txExec(h.token, cstr("CREATE TYPE Z"), e) },
				"tx_insert": func(e *uintptr) int32 {
					b := goodBatch(t)
					rc := lib.txInsert(h.token, cstr("A"), nil, b.schemaAddr, b.arrayAddr, e)
					assertReleasedOnce(t, b)
					return rc
				},
				"tx_insert_stream": func(e *uintptr) int32 {
					s, st := exportStream(t, &streamState{failAt: -1})
					rc := lib.txInsertStream(h.token, cstr("A"), nil, s, e)
					assert.Equal(t, 1, st.released, "stream released once")
					return rc
				},
				"commit": func(e *uintptr) int32 { return lib.commit(h.token, e) },
			}
			for name, fn := range calls {
				code, msg := callErr(t, fn)
				assert.Equal(t, h.code, code, "%s: %s", name, msg)
			}
			assert.Equal(t, int32(h.code), lib.rollback(h.token), "rollback")
		})
	}
	d := describe(t, live, "")
	require.Len(t, d.Types, 1, "nothing was created through a stale handle")
}

func assertReleasedOnce(t testing.TB, b *batch) {
	t.Helper()
	s, a := b.releases()
	assert.Equal(t, 1, s, "schema release calls")
	assert.Equal(t, 1, a, "array release calls")
	assert.Zero(t, b.schema().release, "schema marked released")
	assert.Zero(t, b.array().release, "array marked released")
}

// TestNullPointers passes NULL for each pointer argument in turn.
func TestNullPointers(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	before := state(t, db)
	tx := begin(t, db)
	defer lib.rollback(tx)

	cases := map[string]func(e *uintptr) int32{
		"open out":       func(e *uintptr) int32 { return lib.open(nil, nil, nil, e) },
		"begin out":      func(e *uintptr) int32 { return lib.begin(db, nil, e) },
		"exec script":    func(e *uintptr) int32 { return lib.exec(db, nil, e) },
		"tx_exec script": func(e *uintptr) int32 { return lib.txExec(tx, nil, e) },
		"scan request": func(e *uintptr) int32 {
			s := libc.calloc(1, unsafe.Sizeof(cStream{}))
			defer libc.free(s)
			return lib.scan(db, nil, s, e)
		},
		"scan out":            func(e *uintptr) int32 { return lib.scan(db, cstr(`{"type": "A"}`), 0, e) },
		"describe json_out":   func(e *uintptr) int32 { return lib.describe(db, nil, nil, e) },
		"stats json_out":      func(e *uintptr) int32 { return lib.stats(db, nil, e) },
		"set_runtime options": func(e *uintptr) int32 { return lib.setRuntime(nil, e) },
		"insert type": func(e *uintptr) int32 {
			b := goodBatch(t)
			defer assertReleasedOnce(t, b)
			return lib.insert(db, nil, nil, b.schemaAddr, b.arrayAddr, e)
		},
		"tx_insert type": func(e *uintptr) int32 {
			b := goodBatch(t)
			defer assertReleasedOnce(t, b)
			return lib.txInsert(tx, nil, nil, b.schemaAddr, b.arrayAddr, e)
		},
		"insert schema": func(e *uintptr) int32 {
			b := goodBatch(t)
			defer func() {
				_, a := b.releases()
				assert.Equal(t, 1, a, "the array is released")
			}()
			return lib.insert(db, cstr("A"), nil, 0, b.arrayAddr, e)
		},
		"insert array": func(e *uintptr) int32 {
			b := goodBatch(t)
			defer func() {
				s, _ := b.releases()
				assert.Equal(t, 1, s, "the schema is released")
			}()
			return lib.insert(db, cstr("A"), nil, b.schemaAddr, 0, e)
		},
		"insert_stream stream":    func(e *uintptr) int32 { return lib.insertStream(db, cstr("A"), nil, 0, e) },
		"tx_insert_stream stream": func(e *uintptr) int32 { return lib.txInsertStream(tx, cstr("A"), nil, 0, e) },
		"insert_stream type": func(e *uintptr) int32 {
			s, st := exportStream(t, &streamState{failAt: -1})
			defer func() { assert.Equal(t, 1, st.released) }()
			return lib.insertStream(db, nil, nil, s, e)
		},
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			code, msg := callErr(t, fn)
			assert.Equal(t, codeInvalidArgument, code, msg)
			assert.Contains(t, msg, "NULL")
		})
	}
	commit(t, tx)
	assert.Equal(t, before, state(t, db))
}

// TestRoundTripEveryPropertyType inserts every property type with nulls in
// a transaction that also creates the schema, and reads it back.
func TestRoundTripEveryPropertyType(t *testing.T) {
	db := openDB(t, "", "")
	tx := begin(t, db)
	code, msg := callErr(t, func(e *uintptr) int32 {
		return lib.txExec(tx, cstr(`CREATE DOCUMENT TYPE A;
			CREATE PROPERTY A.b BOOLEAN; CREATE PROPERTY A.i INT32; CREATE PROPERTY A.l INT64;
			CREATE PROPERTY A.f FLOAT; CREATE PROPERTY A.d DOUBLE; CREATE PROPERTY A.s STRING;
			CREATE PROPERTY A.bin BINARY; CREATE PROPERTY A.ts TIMESTAMP; CREATE PROPERTY A.dt DATE;
			CREATE INDEX ON A (l) NOTUNIQUE`), e)
	})
	requireOK(t, code, msg, "tx_exec")

	valid := []bool{true, false, true}
	b := exportBatch(t, 3,
		timeCol(100, 200, 300),
		boolCol("b", []bool{true, false, false}, valid),
		fixedCol("i", "i", []int32{-1, 0, 1 << 30}, valid),
		int64Col("l", []int64{-1 << 62, 0, 7}, valid),
		fixedCol("f", "f", []float32{1.5, 0, -2.25}, valid),
		fixedCol("d", "g", []float64{3.25, 0, -1e300}, valid),
		stringCol("s", []string{"héllo", "", ""}, valid),
		varCol("bin", "z", []string{"\x00\xff", "", "x"}, valid),
		fixedCol("ts", "tsn:", []int64{1_700_000_000_000_000_000, 0, -5}, valid),
		fixedCol("dt", "tdD", []int32{19000, 0, -3}, valid),
	)
	code, msg = txInsert(t, tx, "A", "dev", b)
	requireOK(t, code, msg, "tx_insert")
	assertReleasedOnce(t, b)

	code, _ = describeJSON(t, db, "A")
	assert.Equal(t, codeNotFound, code, "nothing is visible before commit")
	commit(t, tx)

	r := scanResult(t, db, `{"type": "A"}`)
	assert.Equal(t, []string{"device", "time", "b", "i", "l", "f", "d", "s", "bin", "ts", "dt"}, r.names)
	assert.Equal(t, []string{"i", "l", "b", "i", "l", "f", "g", "u", "z", "tsn:", "tdD"}, r.formats)
	assert.Equal(t, []string{"u", "", "", "", "", "", "", "", "", "", ""}, r.dicts)
	assert.Equal(t, [][]any{
		{"dev", int64(100), true, int32(-1), int64(-1 << 62), float32(1.5), 3.25, "héllo", []byte{0, 0xff}, int64(1_700_000_000_000_000_000), int32(19000)},
		{"dev", int64(200), nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{"dev", int64(300), false, int32(1 << 30), int64(7), float32(-2.25), -1e300, "", []byte("x"), int64(-5), int32(-3)},
	}, r.rows)
	assert.Equal(t, 1, r.batches)

	d := describe(t, db, "A")
	require.Len(t, d.Types, 1)
	require.Len(t, d.Types[0].Properties, 9)
	assert.Equal(t, "TIMESTAMP", d.Types[0].Properties[7].Type)
	require.Len(t, d.Types[0].Indexes, 1)
	assert.Equal(t, []string{"l"}, d.Types[0].Indexes[0].Properties)
	assert.False(t, d.Types[0].Indexes[0].Unique)
}

// TestDanglingZeroLengthBuffersImport gives zero-length buffers as the
// pointers polars and arrow-rs use (0x1, alignments) and NULL.
func TestDanglingZeroLengthBuffersImport(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB+"; CREATE PROPERTY A.flag BOOLEAN")

	t.Run("zero rows, every buffer dangling", func(t *testing.T) {
		before := state(t, db)
		b := exportBatch(t, 0,
			column{name: "time", format: "l", bufs: []any{uintptr(1), uintptr(8)}},
			column{name: "k", format: "l", bufs: []any{uintptr(0x40), uintptr(1)}},
			column{name: "s", format: "u", bufs: []any{uintptr(1), uintptr(4), uintptr(1)}},
			column{name: "flag", format: "b", bufs: []any{uintptr(0), uintptr(1)}})
		code, msg := insert(t, db, "A", "d", b)
		requireOK(t, code, msg, "insert")
		assertReleasedOnce(t, b)
		assert.Equal(t, before, state(t, db))
	})
	t.Run("empty strings with a dangling data buffer", func(t *testing.T) {
		c := stringCol("s", []string{"", "", ""}, nil)
		c.bufs[0], c.bufs[2] = uintptr(1), uintptr(1) // no bitmap, no bytes
		b := exportBatch(t, 3, timeCol(1, 2, 3), c)
		code, msg := insert(t, db, "A", "empty", b)
		requireOK(t, code, msg, "insert")
		assertReleasedOnce(t, b)
		r := scanResult(t, db, `{"type": "A", "devices": ["empty"], "properties": ["s"]}`)
		assert.Equal(t, []any{"", "", ""}, r.column("s"))
	})
	t.Run("unknown null count without a bitmap", func(t *testing.T) {
		c := int64Col("k", []int64{5, 6}, nil)
		c.nulls = -1
		b := exportBatch(t, 2, timeCol(1, 2), c)
		code, msg := insert(t, db, "A", "unknown", b)
		requireOK(t, code, msg, "insert")
		r := scanResult(t, db, `{"type": "A", "devices": ["unknown"], "properties": ["k"]}`)
		assert.Equal(t, []any{int64(5), int64(6)}, r.column("k"))
	})
	t.Run("sliced columns", func(t *testing.T) {
		k := int64Col("k", []int64{0, 0, 7, 8}, nil)
		k.offset, k.length = 2, 2
		s := stringCol("s", []string{"x", "y", "z"}, []bool{true, true, false})
		s.offset, s.length, s.nulls = 1, 2, 1
		b := exportBatch(t, 2, timeCol(1, 2), k, s)
		code, msg := insert(t, db, "A", "sliced", b)
		requireOK(t, code, msg, "insert")
		r := scanResult(t, db, `{"type": "A", "devices": ["sliced"], "properties": ["k", "s"]}`)
		assert.Equal(t, [][]any{{"sliced", int64(1), int64(7), "y"}, {"sliced", int64(2), int64(8), nil}}, r.rows)
	})
	t.Run("dictionary-encoded strings", func(t *testing.T) {
		dict := stringCol("", []string{"p", "q"}, nil)
		// int8 indices; the null row's index is out of range, which is fine.
		idx := column{name: "s", format: "c", flags: flagNullable, length: 3, nulls: 1,
			bufs: []any{[]byte{0b101}, []byte{1, 9, 0}}, dict: &dict}
		b := exportBatch(t, 3, timeCol(1, 2, 3), idx)
		code, msg := insert(t, db, "A", "dict", b)
		requireOK(t, code, msg, "insert")
		r := scanResult(t, db, `{"type": "A", "devices": ["dict"], "properties": ["s"]}`)
		assert.Equal(t, []any{"q", nil, "p"}, r.column("s"))
	})
}

// TestOtherLayoutsImport covers the layouts besides the common ones:
// large strings, string views, fixed-size binary, unsigned and date64.
func TestOtherLayoutsImport(t *testing.T) {
	db := openDB(t, "", `{"auto_create": true}`)
	long := "a value longer than twelve bytes"
	large := column{name: "large", format: "U", length: 2,
		bufs: []any{[]byte(nil), le64(0, 2, 5), []byte("hiyou")}}
	fixed := column{name: "fixed", format: "w:2", length: 2, bufs: []any{[]byte(nil), []byte("abcd")}}
	unsigned := column{name: "u64", format: "L", length: 2, bufs: []any{[]byte(nil), le64(1, 1<<62)}}
	date64 := column{name: "d64", format: "tdm", length: 2, bufs: []any{[]byte(nil), le64(86_400_000, 0)}}
	b := exportBatch(t, 2, timeCol(1, 2), large, specCol(cdatatest.ViewCol("view", "vu", []string{"short", long}, nil)), fixed, unsigned, date64)
	code, msg := insert(t, db, "L", "", b)
	requireOK(t, code, msg, "insert")
	r := scanResult(t, db, `{"type": "L"}`)
	assert.Equal(t, []string{"u", "u", "z", "l", "tdD"}, r.formats[2:])
	assert.Equal(t, [][]any{
		{"", int64(1), "hi", "short", []byte("ab"), int64(1), int32(1)},
		{"", int64(2), "you", long, []byte("cd"), int64(1 << 62), int32(0)},
	}, r.rows)

	for _, c := range []struct {
		name   string
		mutate func(views []byte)
		msg    string
	}{
		{"view past its data buffer", func(v []byte) { binary.LittleEndian.PutUint32(v[16+12:], 30) }, "outside the data buffers"},
		{"view of a missing buffer", func(v []byte) { binary.LittleEndian.PutUint32(v[16+8:], 3) }, "outside the data buffers"},
		{"negative view length", func(v []byte) { binary.LittleEndian.PutUint32(v, 0xffffffff) }, "negative length"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := exportBatch(t, 2, timeCol(1, 2), specCol(cdatatest.ViewCol("view", "vu", []string{"short", long}, nil)))
			c.mutate(unsafe.Slice(at[byte](words(b.colArray(1).buffers, 4)[1]), 32))
			code, msg := insert(t, db, "L", "bad", b)
			assert.Equal(t, codeInvalidArgument, code, msg)
			assert.Contains(t, msg, c.msg)
			assertReleasedOnce(t, b)
		})
	}
}

func le64(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

// badCase is one malformed insert: mutate breaks a good batch (or build
// makes a bad one); the insert must fail with code and a message holding
// msg, release what it must, and change nothing.
type badCase struct {
	name         string
	build        func(t testing.TB) *batch
	mutate       func(t testing.TB, b *batch)
	typ, device  string
	code         int
	msg          string
	schemaIsLive bool // false when the case releases the schema itself
	arrayIsLive  bool
}

// cmem returns C memory holding s (NUL-terminated), freed after the test.
func cmem(t testing.TB, s string) uintptr {
	p := cbytes(append([]byte(s), 0))
	t.Cleanup(func() { libc.free(p) })
	return p
}

func badCases() []badCase {
	good := goodBatch
	withCol := func(c column) func(t testing.TB) *batch {
		return func(t testing.TB) *batch {
			return exportBatch(t, 3, timeCol(1, 2, 3), int64Col("k", []int64{1, 2, 3}, nil), c)
		}
	}
	cases := []badCase{
		{name: "array already released", mutate: func(t testing.TB, b *batch) { b.array().release = 0 },
			code: codeInvalidArgument, msg: "already released", arrayIsLive: false, schemaIsLive: true},
		{name: "schema already released", mutate: func(t testing.TB, b *batch) { b.schema().release = 0 },
			code: codeInvalidArgument, msg: "already released", arrayIsLive: true},
		{name: "all-zero ArrowSchema", mutate: func(t testing.TB, b *batch) { *b.schema() = cSchema{} },
			code: codeInvalidArgument, msg: "already released", arrayIsLive: true},
		{name: "schema with NULL format", mutate: func(t testing.TB, b *batch) {
			*b.schema() = cSchema{release: callbacks.schema, privateData: b.schemaID}
		}, code: codeInvalidArgument, msg: "format is NULL", schemaIsLive: true, arrayIsLive: true},
		{name: "top level is not a struct", mutate: func(t testing.TB, b *batch) { b.schema().format = cmem(t, "l") },
			code: codeInvalidArgument, msg: "not a struct"},
		{name: "schema has more columns than the array", mutate: func(t testing.TB, b *batch) { b.array().nChildren = 2 },
			code: codeInvalidArgument, msg: "2 columns but its schema has 3"},
		{name: "negative schema children", mutate: func(t testing.TB, b *batch) { b.schema().nChildren = -1 },
			code: codeInvalidArgument, msg: "n_children"},
		{name: "NULL child schema", mutate: func(t testing.TB, b *batch) { words(b.schema().children, 3)[1] = 0 },
			code: codeInvalidArgument, msg: "column 1"},
		{name: "schema cycle", mutate: func(t testing.TB, b *batch) {
			c := b.colSchema(1) // its only child is itself
			c.nChildren, c.children = 1, b.schema().children+8
		}, code: codeInvalidArgument, msg: "deeper"},
		{name: "NULL column array", mutate: func(t testing.TB, b *batch) { words(b.array().children, 3)[1] = 0 },
			code: codeInvalidArgument, msg: `column "k": array pointer`},
		{name: "column shorter than the batch", mutate: func(t testing.TB, b *batch) { b.colArray(1).length = 2 },
			code: codeInvalidArgument, msg: `column "k" has 2 rows but the batch has 3`},
		{name: "negative batch length", mutate: func(t testing.TB, b *batch) { b.array().length = -1 },
			code: codeInvalidArgument, msg: "negative length"},
		{name: "negative column offset", mutate: func(t testing.TB, b *batch) { b.colArray(1).offset = -1 },
			code: codeInvalidArgument, msg: "negative offset"},
		{name: "huge column offset", mutate: func(t testing.TB, b *batch) { b.colArray(1).offset = 1 << 50 },
			code: codeInvalidArgument, msg: "too large"},
		{name: "null count above length", mutate: func(t testing.TB, b *batch) { b.colArray(2).nullCount = 4 },
			code: codeInvalidArgument, msg: "exceeds length"},
		{name: "null count below -1", mutate: func(t testing.TB, b *batch) { b.colArray(2).nullCount = -2 },
			code: codeInvalidArgument, msg: "negative"},
		{name: "nulls without a validity bitmap", mutate: func(t testing.TB, b *batch) {
			words(b.colArray(2).buffers, 3)[0] = 0
		}, code: codeInvalidArgument, msg: "no validity bitmap"},
		{name: "wrong buffer count", mutate: func(t testing.TB, b *batch) { b.colArray(2).nBuffers = 2 },
			code: codeInvalidArgument, msg: "2 buffers"},
		{name: "NULL buffers pointer", mutate: func(t testing.TB, b *batch) { b.colArray(1).buffers = 0 },
			code: codeInvalidArgument, msg: "buffers pointer"},
		{name: "dangling values buffer with rows", mutate: func(t testing.TB, b *batch) {
			words(b.colArray(1).buffers, 2)[1] = 1
		}, code: codeInvalidArgument, msg: "must hold 24 bytes"},
		{name: "unmapped values buffer", mutate: func(t testing.TB, b *batch) {
			words(b.colArray(1).buffers, 2)[1] = 0x1000 // below mmap_min_addr: never mapped
		}, code: codeInvalidArgument, msg: "faulted at address 0x1000"},
		{name: "unmapped values buffer of a large batch", build: func(t testing.TB) *batch {
			// Large enough that the engine's work runs on a goroutine of its
			// own (see unlocked in capi): the fault is caught there too.
			const n = 40_000
			times, ks := make([]int64, n), make([]int64, n)
			for i := range times {
				times[i], ks[i] = int64(i), int64(i)
			}
			b := exportBatch(t, n, timeCol(times...), int64Col("k", ks, nil))
			words(b.colArray(1).buffers, 2)[1] = 0x1000
			return b
		}, code: codeInvalidArgument, msg: "reading the Arrow input faulted at address 0x"}, // wherever it is read first
		{name: "decreasing string offsets", mutate: func(t testing.TB, b *batch) {
			offs := unsafe.Slice(at[int32](words(b.colArray(2).buffers, 3)[1]), 4)
			offs[3] = 0
		}, code: codeInvalidArgument, msg: "decrease"},
		{name: "children on a flat column", mutate: func(t testing.TB, b *batch) { b.colArray(1).nChildren = 1 },
			code: codeInvalidArgument, msg: "children"},
		{name: "dictionary on a plain column", mutate: func(t testing.TB, b *batch) { b.colArray(1).dictionary = b.arrayAddr },
			code: codeInvalidArgument, msg: "not dictionary-encoded"},
		{name: "null rows at the top level", mutate: func(t testing.TB, b *batch) { b.array().nullCount = 1 },
			code: codeInvalidArgument, msg: "null at the top level"},
		{name: "list column", build: withCol(column{name: "s", format: "+l", length: 3,
			bufs:     []any{[]byte(nil), make([]byte, 16)},
			children: []column{int64Col("item", []int64{}, nil)}}),
			code: codeInvalidArgument, msg: `column 2 "s" (Arrow format "+l"): nested types are not supported`},
		{name: "list format without a child", build: withCol(column{name: "s", format: "+l", length: 3, bufs: []any{[]byte(nil), make([]byte, 16)}}),
			code: codeInvalidArgument, msg: "nested types are not supported"},
		{name: "decimal column", build: withCol(column{name: "s", format: "d:10,2", length: 3, bufs: []any{[]byte(nil), make([]byte, 48)}}),
			code: codeInvalidArgument, msg: "unsupported Arrow type decimal"},
		{name: "float16 column", build: withCol(column{name: "s", format: "e", length: 3, bufs: []any{[]byte(nil), make([]byte, 6)}}),
			code: codeInvalidArgument, msg: "unsupported Arrow type float16"},
		{name: "unknown format", build: withCol(column{name: "s", format: "xyz", length: 3, bufs: []any{[]byte(nil), make([]byte, 6)}}),
			code: codeInvalidArgument, msg: `column 2 "s"`},
		{name: "duplicate column names", build: func(t testing.TB) *batch {
			return exportBatch(t, 3, timeCol(1, 2, 3), int64Col("k", []int64{1, 2, 3}, nil), int64Col("k", []int64{1, 2, 3}, nil))
		}, code: codeInvalidArgument, msg: `fields named "k"`},
		{name: "missing time column", build: func(t testing.TB) *batch {
			return exportBatch(t, 3, int64Col("k", []int64{1, 2, 3}, nil))
		}, code: codeInvalidArgument, msg: `no time column "time"`},
		{name: "time column with nulls", build: func(t testing.TB) *batch {
			return exportBatch(t, 3, int64Col("time", []int64{1, 2, 3}, []bool{true, false, true}))
		}, code: codeInvalidArgument, msg: "has 1 nulls"},
		{name: "time column of strings", build: func(t testing.TB) *batch {
			return exportBatch(t, 1, stringCol("time", []string{"noon"}, nil))
		}, code: codeInvalidArgument, msg: "want int64 or timestamp"},
		{name: "column type conflicts with its property", build: func(t testing.TB) *batch {
			return exportBatch(t, 1, timeCol(1), stringCol("k", []string{"x"}, nil))
		}, code: codeInvalidArgument, msg: "property A.k is INT64"},
		{name: "invalid UTF-8 column name", build: withCol(int64Col("s\xff", []int64{1, 2, 3}, nil)),
			code: codeInvalidArgument, msg: "UTF-8"},
		{name: "invalid UTF-8 value", build: withCol(stringCol("s", []string{"ok", "\xff\xfe", "ok"}, nil)),
			code: codeInvalidArgument, msg: "UTF-8"},
		{name: "invalid UTF-8 type name", typ: "A\xff", code: codeInvalidArgument, msg: "UTF-8"},
		{name: "invalid UTF-8 device", device: "d\xff", code: codeInvalidArgument, msg: "UTF-8"},
		{name: "unknown type", typ: "Nope", code: codeNotFound, msg: `"Nope"`},
		{name: "unknown property", build: withCol(int64Col("z", []int64{1, 2, 3}, nil)),
			code: codeNotFound, msg: "A.z"},
		{name: "dictionary index out of range", build: func(t testing.TB) *batch {
			dict := stringCol("", []string{"x", "y"}, nil)
			return exportBatch(t, 3, timeCol(1, 2, 3), column{name: "s", format: "i", length: 3,
				bufs: []any{[]byte(nil), le32(0, 5, 1)}, dict: &dict})
		}, code: codeInvalidArgument, msg: "dictionary index 5"},
		{name: "dictionary missing from the array", build: func(t testing.TB) *batch {
			dict := stringCol("", []string{"x", "y"}, nil)
			b := exportBatch(t, 3, timeCol(1, 2, 3), column{name: "s", format: "i", length: 3,
				bufs: []any{[]byte(nil), le32(0, 1, 1)}, dict: &dict})
			b.colArray(1).dictionary = 0
			return b
		}, code: codeInvalidArgument, msg: "dictionary pointer"},
		{name: "dictionary with a string index", build: func(t testing.TB) *batch {
			dict := stringCol("", []string{"x"}, nil)
			return exportBatch(t, 1, timeCol(1), column{name: "s", format: "u", length: 1,
				bufs: []any{[]byte(nil), le32(0, 1), []byte("x")}, dict: &dict})
		}, code: codeInvalidArgument, msg: "not an integer"},
	}
	for i := range cases {
		c := &cases[i]
		if c.build == nil {
			c.build = good
		}
		if c.typ == "" {
			c.typ = "A"
		}
		if c.device == "" {
			c.device = "d1"
		}
		// Unless the case releases a struct itself, both are live.
		switch c.name {
		case "array already released", "schema already released", "all-zero ArrowSchema", "schema with NULL format":
		default:
			c.schemaIsLive, c.arrayIsLive = true, true
		}
	}
	return cases
}

func le32(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// TestBadArrowInputIsRefusedAndChangesNothing runs every bad case through
// arcadego_insert and arcadego_tx_insert.
func TestBadArrowInputIsRefusedAndChangesNothing(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	code, msg := insert(t, db, "A", "d0", goodBatch(t))
	requireOK(t, code, msg, "insert")
	before := state(t, db)

	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, via := range []string{"insert", "tx_insert"} {
				b := c.build(t)
				if c.mutate != nil {
					c.mutate(t, b)
				}
				var code int
				var msg string
				if via == "insert" {
					code, msg = insert(t, db, c.typ, c.device, b)
				} else {
					tx := begin(t, db)
					code, msg = txInsert(t, tx, c.typ, c.device, b)
					commit(t, tx) // the transaction stays usable and holds nothing
				}
				assert.Equal(t, c.code, code, "%s: %s", via, msg)
				assert.Contains(t, msg, c.msg, via)
				s, a := b.releases()
				assert.Equal(t, btoi(c.schemaIsLive), s, "%s: schema release calls", via)
				assert.Equal(t, btoi(c.arrayIsLive), a, "%s: array release calls", via)
				assert.Zero(t, b.schema().release, "%s: schema left released", via)
				assert.Zero(t, b.array().release, "%s: array left released", via)
			}
		})
	}
	assert.Equal(t, before, state(t, db))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestAutoCreateAndTimeColumnOption(t *testing.T) {
	db := openDB(t, "", `{"auto_create": true, "time_column": "ts"}`)
	b := exportBatch(t, 2,
		fixedCol("ts", "tsm:UTC", []int64{1000, 2000}, nil),
		fixedCol("x", "g", []float64{0.5, 1.5}, nil))
	code, msg := insert(t, db, "Auto", "", b)
	requireOK(t, code, msg, "insert")

	d := describe(t, db, "Auto")
	require.Len(t, d.Types, 1)
	require.NotNil(t, d.Types[0].Time)
	assert.Equal(t, "ms", d.Types[0].Time.Unit)
	assert.Equal(t, "UTC", d.Types[0].Time.Zone)

	r := scanResult(t, db, `{"type": "Auto"}`)
	assert.Equal(t, []string{"device", "ts", "x"}, r.names)
	assert.Equal(t, []string{"i", "tsm:UTC", "g"}, r.formats)
	assert.Equal(t, []string{"u", "", ""}, r.dicts)
	assert.Equal(t, [][]any{{"", int64(1000), 0.5}, {"", int64(2000), 1.5}}, r.rows)
}

func TestScanRequests(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	for _, dev := range []string{"b", "a"} {
		code, msg := insert(t, db, "A", dev, exportBatch(t, 5,
			timeCol(1, 2, 3, 4, 5), int64Col("k", []int64{1, 2, 3, 4, 5}, nil)))
		requireOK(t, code, msg, "insert")
	}

	t.Run("projection, devices, range and batch size", func(t *testing.T) {
		r := scanResult(t, db, `{"type": "A", "devices": ["b", "zz"], "properties": ["k"], "start": 2, "end": 5, "batch_rows": 2}`)
		assert.Equal(t, []string{"device", "time", "k"}, r.names)
		assert.Equal(t, [][]any{{"b", int64(2), int64(2)}, {"b", int64(3), int64(3)}, {"b", int64(4), int64(4)}}, r.rows)
		assert.Equal(t, 2, r.batches)
	})
	t.Run("sorted by device then time", func(t *testing.T) {
		r := scanResult(t, db, `{"type": "A", "properties": []}`)
		assert.Equal(t, []string{"device", "time"}, r.names)
		require.Len(t, r.rows, 10)
		assert.Equal(t, []any{"a", int64(1)}, r.rows[0])
		assert.Equal(t, []any{"b", int64(5)}, r.rows[9])
	})
	t.Run("without the device column", func(t *testing.T) {
		r := scanResult(t, db, `{"type": "A", "devices": ["b"], "properties": ["k"], "start": 2, "end": 4, "with_device": false}`)
		assert.Equal(t, []string{"time", "k"}, r.names)
		assert.Equal(t, [][]any{{int64(2), int64(2)}, {int64(3), int64(3)}}, r.rows)
		r = scanResult(t, db, `{"type": "A", "devices": ["zz"], "with_device": false}`)
		assert.Equal(t, []string{"time", "k", "s"}, r.names)
		assert.Empty(t, r.rows)
	})
	t.Run("no rows is a schema and no batches", func(t *testing.T) {
		r := scanResult(t, db, `{"type": "A", "start": 100}`)
		assert.Equal(t, []string{"device", "time", "k", "s"}, r.names)
		assert.Empty(t, r.rows)
		assert.Zero(t, r.batches)
	})

	bad := []struct {
		name, request string
		code          int
		msg           string
	}{
		{"does not parse", `{"type": "A"`, codeInvalidArgument, "scan request"},
		{"unknown key", `{"type": "A", "limit": 3}`, codeInvalidArgument, "limit"},
		{"type missing", `{}`, codeInvalidArgument, `"type" is required`},
		{"unknown type", `{"type": "Nope"}`, codeNotFound, "Nope"},
		{"unknown property", `{"type": "A", "properties": ["nope"]}`, codeNotFound, "nope"},
		{"zero batch rows", `{"type": "A", "batch_rows": 0}`, codeInvalidArgument, "batch_rows"},
		{"start not an integer", `{"type": "A", "start": 1.5}`, codeInvalidArgument, "start"},
		{"no device without devices", `{"type": "A", "with_device": false}`, codeInvalidArgument, "naming one device"},
		{"no device with two devices", `{"type": "A", "devices": ["a", "b"], "with_device": false}`, codeInvalidArgument, "naming one device, got 2"},
		{"with_device not a bool", `{"type": "A", "with_device": 0}`, codeInvalidArgument, "with_device"},
		// encoding/json reads it as U+FFFD: the rows of device "a\ufffd".
		{"half a surrogate pair", `{"type": "A", "devices": ["a\ud800"]}`, codeInvalidArgument, `\ud800 is half a surrogate pair`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			s := libc.calloc(1, unsafe.Sizeof(cStream{}))
			defer libc.free(s)
			code, msg := callErr(t, func(e *uintptr) int32 { return lib.scan(db, cstr(c.request), s, e) })
			assert.Equal(t, c.code, code, msg)
			assert.Contains(t, msg, c.msg)
			assert.Zero(t, at[cStream](s).release, "no stream on failure")

			// arcadego_scan_first fails alike, leaving its three structs
			// released even when the caller's held garbage.
			sch, arr := libc.calloc(1, unsafe.Sizeof(cSchema{})), libc.calloc(1, unsafe.Sizeof(cArray{}))
			defer libc.free(sch)
			defer libc.free(arr)
			at[cSchema](sch).release, at[cArray](arr).release, at[cStream](s).release = 1, 1, 1
			id := uint64(7)
			code, msg = callErr(t, func(e *uintptr) int32 { return lib.scanFirst(db, cstr(c.request), sch, arr, s, &id, e) })
			assert.Equal(t, c.code, code, msg)
			assert.Zero(t, id, "no schema id on failure")
			assert.Contains(t, msg, c.msg)
			assert.Zero(t, at[cSchema](sch).release, "no schema on failure")
			assert.Zero(t, at[cArray](arr).release, "no batch on failure")
			assert.Zero(t, at[cStream](s).release, "no stream on failure")
		})
	}
}

// TestScanFirst: arcadego_scan_first returns a result of one batch whole,
// with no stream to release; a longer one's first batch and a stream of
// the others; no rows as a schema alone. (scanResult checks its rows
// against arcadego_scan's in every scan test.)
func TestScanFirst(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	code, msg := insert(t, db, "A", "a", exportBatch(t, 5, timeCol(1, 2, 3, 4, 5), int64Col("k", []int64{1, 2, 3, 4, 5}, nil)))
	requireOK(t, code, msg, "insert")

	one := scanFirstResult(t, db, `{"type": "A", "devices": ["a"], "properties": ["k"]}`)
	assert.False(t, one.firstReleased)
	assert.True(t, one.restReleased, "one batch: nothing follows")
	assert.Equal(t, 1, one.batches)
	assert.Equal(t, []any{"a", int64(5), int64(5)}, one.rows[4])

	three := scanFirstResult(t, db, `{"type": "A", "properties": ["k"], "batch_rows": 2}`)
	assert.False(t, three.firstReleased)
	assert.False(t, three.restReleased, "two batches follow the first")
	assert.Equal(t, 3, three.batches)
	assert.Equal(t, one.rows, three.rows)

	exact := scanFirstResult(t, db, `{"type": "A", "properties": ["k"], "batch_rows": 5}`)
	assert.True(t, exact.restReleased, "a first batch that is exactly the result ends it")
	assert.Equal(t, one.rows, exact.rows)

	none := scanFirstResult(t, db, `{"type": "A", "start": 100}`)
	assert.True(t, none.firstReleased)
	assert.True(t, none.restReleased)
	assert.Equal(t, []string{"device", "time", "k", "s"}, none.names)
	assert.Empty(t, none.rows)

	// Schema ids: equal for results of one layout, whatever their rows;
	// different for another projection, or without the device column.
	assert.Equal(t, one.schemaID, three.schemaID)
	all := scanFirstResult(t, db, `{"type": "A", "devices": ["a"]}`)
	assert.Equal(t, none.schemaID, all.schemaID, "all properties, rows or none")
	assert.NotEqual(t, one.schemaID, all.schemaID)
	bare := scanFirstResult(t, db, `{"type": "A", "devices": ["a"], "properties": ["k"], "with_device": false}`)
	assert.NotEqual(t, one.schemaID, bare.schemaID)
	for _, id := range []uint64{one.schemaID, all.schemaID, bare.schemaID} {
		assert.NotZero(t, id)
	}
	execDDL(t, db, "CREATE PROPERTY A.added DOUBLE")
	grown := scanFirstResult(t, db, `{"type": "A", "devices": ["a"]}`)
	assert.NotEqual(t, all.schemaID, grown.schemaID, "a new property changes the layout")
	assert.Equal(t, []string{"device", "time", "k", "s", "added"}, grown.names)

	for _, nilArg := range []string{"schema_out", "first_out", "rest_out"} {
		out := [3]uintptr{libc.calloc(1, 80), libc.calloc(1, 80), libc.calloc(1, 80)}
		switch nilArg {
		case "schema_out":
			out[0] = 0
		case "first_out":
			out[1] = 0
		case "rest_out":
			out[2] = 0
		}
		code, msg := callErr(t, func(e *uintptr) int32 {
			return lib.scanFirst(db, cstr(`{"type": "A"}`), out[0], out[1], out[2], nil, e)
		})
		assert.Equal(t, codeInvalidArgument, code, nilArg)
		assert.Contains(t, msg, "must not be NULL", nilArg)
		for _, p := range out {
			if p != 0 {
				libc.free(p)
			}
		}
	}
}

func TestAggregate(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	for _, dev := range []string{"b", "a"} {
		code, msg := insert(t, db, "A", dev, exportBatch(t, 5,
			timeCol(1, 2, 3, 4, 5), int64Col("k", []int64{1, 2, 3, 4, 5}, []bool{true, true, false, true, true})))
		requireOK(t, code, msg, "insert")
	}
	run := func(request string) *result { return streamResult(t, lib.aggregate, db, request) }
	r := run(`{"type": "A", "aggregates": [["k", "sum"], ["k", "count"], ["k", "max"]]}`)
	assert.Equal(t, []string{"time", "k_sum", "k_count", "k_max"}, r.names)
	assert.Equal(t, [][]any{{int64(1), int64(24), int64(8), int64(5)}}, r.rows)
	r = run(`{"type": "A", "aggregates": [["k", "mean"]], "by_device": true, "every": 2, "start": 2}`)
	assert.Equal(t, []string{"device", "time", "k_mean"}, r.names)
	assert.Equal(t, [][]any{{"a", int64(2), 2.0}, {"a", int64(4), 4.5}, {"b", int64(2), 2.0}, {"b", int64(4), 4.5}}, r.rows)
	r = run(`{"type": "A", "aggregates": [["k", "count"]], "by_device": true, "every": 2, "fill": "null", "start": 0, "end": 8, "devices": ["a"]}`)
	assert.Equal(t, [][]any{{"a", int64(0), int64(1)}, {"a", int64(2), int64(1)}, {"a", int64(4), int64(2)}, {"a", int64(6), int64(0)}}, r.rows)
	r = run(`{"type": "A", "aggregates": [["k", "count"]], "where": {"or": [{"property": "k", "op": "<", "value": 2}, {"property": "k", "op": "is null"}]}}`)
	assert.Equal(t, [][]any{{int64(1), int64(2)}}, r.rows, "k < 2 or k is null: rows 1 and 3 of each device; count skips the null")

	// The latest values, through arcadego_last.
	last := streamResult(t, lib.last, db, `{"type": "A", "properties": ["k"]}`)
	assert.Equal(t, []string{"device", "time", "k", "k_time"}, last.names)
	assert.Equal(t, [][]any{{"a", int64(5), int64(5), int64(5)}, {"b", int64(5), int64(5), int64(5)}}, last.rows)

	for _, c := range []struct{ request, msg string }{
		{`{"aggregates": [["k", "sum"]]}`, `"type" is required`},
		{`{"type": "A", "aggregates": [["k", "median"]]}`, "median"},
		{`{"type": "A", "aggregates": [["k", "sum"]], "every": -1}`, "every -1"},
		{`{"type": "A", "aggregates": [["k", "sum"]], "limit": 3}`, "limit"},
		{`{"type": "A", "aggregates": [["k", "sum"]], "every": 2, "fill": "zero"}`, `unknown fill "zero"`},
		{`{"type": "A", "aggregates": [["k", "sum"]], "where": {"property": "k", "op": "~"}}`, `unknown op "~"`},
	} {
		s := libc.calloc(1, unsafe.Sizeof(cStream{}))
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.aggregate(db, cstr(c.request), s, e) })
		assert.Equal(t, codeInvalidArgument, code, msg)
		assert.Contains(t, msg, c.msg)
		assert.Zero(t, at[cStream](s).release, "no stream on failure")
		libc.free(s)
	}
}

func TestDescribe(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB+"; CREATE DOCUMENT TYPE B; CREATE INDEX ON A (k, s) UNIQUE")
	d := describe(t, db, "")
	require.Len(t, d.Types, 2)
	assert.Equal(t, "A", d.Types[0].Name)
	assert.Equal(t, "B", d.Types[1].Name)
	assert.Nil(t, d.Types[0].Time, "no time representation fixed yet")
	require.Len(t, d.Types[0].Indexes, 1)
	assert.True(t, d.Types[0].Indexes[0].Unique)
	assert.Equal(t, []string{"k", "s"}, d.Types[0].Indexes[0].Properties)
	assert.NotNil(t, d.Types[1].Properties, "empty lists are [] not null")

	code, msg := describeJSON(t, db, "Nope")
	assert.Equal(t, codeNotFound, code, msg)
}

func TestTransactions(t *testing.T) {
	t.Run("DDL and insert commit together", func(t *testing.T) {
		db := openDB(t, "", "")
		tx := begin(t, db)
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.txExec(tx, cstr(schemaAB), e) })
		requireOK(t, code, msg, "tx_exec")
		code, msg = txInsert(t, tx, "A", "d", goodBatch(t))
		requireOK(t, code, msg, "tx_insert")
		assert.Equal(t, `{"types":[]}`, mustDescribe(t, db))
		commit(t, tx)
		r := scanResult(t, db, `{"type": "A"}`)
		assert.Len(t, r.rows, 3)
	})
	t.Run("rollback leaves nothing", func(t *testing.T) {
		db := openDB(t, "", "")
		tx := begin(t, db)
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.txExec(tx, cstr(schemaAB), e) })
		requireOK(t, code, msg, "tx_exec")
		code, msg = txInsert(t, tx, "A", "d", goodBatch(t))
		requireOK(t, code, msg, "tx_insert")
		assert.Equal(t, int32(codeOK), lib.rollback(tx))
		assert.Equal(t, `{"types":[]}`, mustDescribe(t, db))
	})
	t.Run("a failing statement adds nothing and the transaction goes on", func(t *testing.T) {
		db := openDB(t, "", "")
		tx := begin(t, db)
		code, msg := callErr(t, func(e *uintptr) int32 {
			return lib.txExec(tx, cstr("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k NOPE"), e)
		})
		assert.Equal(t, codeInvalidArgument, code)
		assert.Contains(t, msg, "line 1")
		code, msg = callErr(t, func(e *uintptr) int32 { return lib.txExec(tx, cstr("CREATE DOCUMENT TYPE B"), e) })
		requireOK(t, code, msg, "tx_exec")
		commit(t, tx)
		d := describe(t, db, "")
		require.Len(t, d.Types, 1)
		assert.Equal(t, "B", d.Types[0].Name)
	})
	t.Run("a failed commit invalidates the handle", func(t *testing.T) {
		db := openDB(t, "", "")
		tx1, tx2 := begin(t, db), begin(t, db)
		for _, tx := range []uintptr{tx1, tx2} {
			code, msg := callErr(t, func(e *uintptr) int32 { return lib.txExec(tx, cstr("CREATE DOCUMENT TYPE A"), e) })
			requireOK(t, code, msg, "tx_exec")
		}
		commit(t, tx1)
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.commit(tx2, e) })
		assert.Equal(t, codeAlreadyExists, code, msg)
		code, msg = callErr(t, func(e *uintptr) int32 { return lib.commit(tx2, e) })
		assert.Equal(t, codeClosed, code, msg)
	})
	t.Run("close rolls back open transactions", func(t *testing.T) {
		dir := t.TempDir()
		var db uintptr
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.open(cstr(dir), nil, &db, e) })
		requireOK(t, code, msg, "open")
		tx := begin(t, db)
		code, msg = callErr(t, func(e *uintptr) int32 { return lib.txExec(tx, cstr(schemaAB), e) })
		requireOK(t, code, msg, "tx_exec")
		code, msg = callErr(t, func(e *uintptr) int32 { return lib.close(db, e) })
		requireOK(t, code, msg, "close")
		code, msg = callErr(t, func(e *uintptr) int32 { return lib.commit(tx, e) })
		assert.Equal(t, codeClosed, code, msg)
		again := openDB(t, dir, "")
		assert.Equal(t, `{"types":[]}`, mustDescribe(t, again))
	})
}

func mustDescribe(t testing.TB, db uintptr) string {
	t.Helper()
	code, s := describeJSON(t, db, "")
	require.Equal(t, codeOK, code, s)
	return s
}

// batchStream serves n good batches of rows starting at time from, with
// batch bad (if >= 0) broken by mutate.
func batchStream(t testing.TB, n int, from int64, bad int, mutate func(*batch)) *streamState {
	return &streamState{
		failAt: -1,
		schema: func() *batch { return goodBatch(t) },
		next: func(i int) *batch {
			if i >= n {
				return nil
			}
			tm := from + int64(i)*10
			b := exportBatch(t, 2, timeCol(tm, tm+1), int64Col("k", []int64{tm, tm}, nil), stringCol("s", []string{"x", "y"}, nil))
			if i == bad {
				mutate(b)
			}
			return b
		},
	}
}

func TestStreams(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)

	t.Run("insert_stream is one transaction", func(t *testing.T) {
		s, st := exportStream(t, batchStream(t, 3, 100, -1, nil))
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.insertStream(db, cstr("A"), cstr("s1"), s, e) })
		requireOK(t, code, msg, "insert_stream")
		assert.Equal(t, 1, st.released)
		assert.Zero(t, at[cStream](s).release)
		r := scanResult(t, db, `{"type": "A", "devices": ["s1"]}`)
		assert.Len(t, r.rows, 6)
	})
	t.Run("empty stream", func(t *testing.T) {
		s, st := exportStream(t, batchStream(t, 0, 0, -1, nil))
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.insertStream(db, cstr("A"), nil, s, e) })
		requireOK(t, code, msg, "insert_stream")
		assert.Equal(t, 1, st.released)
	})

	breakers := []struct {
		name   string
		mutate func(*batch)
		failAt int
		code   int
		msg    string
	}{
		{"bad third batch", func(b *batch) { b.colArray(1).length = 1 }, -1, codeInvalidArgument, "stream batch 2"},
		{"invalid UTF-8 in the third batch", func(b *batch) {
			*at[byte](words(b.colArray(2).buffers, 3)[2]) = 0xff
		}, -1, codeInvalidArgument, "UTF-8"},
		{"producer error", nil, 1, codeInvalidArgument, "producer failed on purpose"},
	}
	for _, c := range breakers {
		for _, via := range []string{"insert_stream", "tx_insert_stream"} {
			t.Run(c.name+" via "+via, func(t *testing.T) {
				before := state(t, db)
				spec := batchStream(t, 4, 1000, 2, c.mutate)
				spec.failAt = c.failAt
				s, st := exportStream(t, spec)
				var code int
				var msg string
				if via == "insert_stream" {
					code, msg = callErr(t, func(e *uintptr) int32 { return lib.insertStream(db, cstr("A"), cstr("bad"), s, e) })
				} else {
					tx := begin(t, db)
					code, msg = callErr(t, func(e *uintptr) int32 { return lib.txInsertStream(tx, cstr("A"), cstr("bad"), s, e) })
					commit(t, tx)
				}
				assert.Equal(t, c.code, code, msg)
				assert.Contains(t, msg, c.msg)
				assert.Equal(t, 1, st.released, "stream released once")
				assert.Equal(t, before, state(t, db), "nothing of the stream was written")
			})
		}
	}
	t.Run("already released stream", func(t *testing.T) {
		s, st := exportStream(t, batchStream(t, 1, 0, -1, nil))
		at[cStream](s).release = 0
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.insertStream(db, cstr("A"), nil, s, e) })
		assert.Equal(t, codeInvalidArgument, code, msg)
		assert.Contains(t, msg, "already released")
		assert.Zero(t, st.released, "a released stream is not released again")
	})
	t.Run("tx_insert_stream commits with the transaction", func(t *testing.T) {
		tx := begin(t, db)
		s, _ := exportStream(t, batchStream(t, 2, 5000, -1, nil))
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.txInsertStream(tx, cstr("A"), cstr("txs"), s, e) })
		requireOK(t, code, msg, "tx_insert_stream")
		r := scanResult(t, db, `{"type": "A", "devices": ["txs"]}`)
		assert.Empty(t, r.rows, "not visible before commit")
		commit(t, tx)
		r = scanResult(t, db, `{"type": "A", "devices": ["txs"]}`)
		assert.Len(t, r.rows, 4)
	})
}

func TestCancel(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	code, msg := insert(t, db, "A", "d", goodBatch(t))
	requireOK(t, code, msg, "insert")

	t.Run("a stream insert", func(t *testing.T) {
		before := state(t, db)
		spec := batchStream(t, 5, 100, -1, nil)
		next := spec.next
		spec.next = func(i int) *batch {
			if i == 2 {
				assert.Equal(t, int32(codeOK), lib.cancel(db)) // as another thread would
			}
			return next(i)
		}
		s, st := exportStream(t, spec)
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.insertStream(db, cstr("A"), cstr("c"), s, e) })
		assert.Equal(t, codeCanceled, code, msg)
		assert.Equal(t, 1, st.released)
		assert.Equal(t, before, state(t, db))
	})
	t.Run("an open result stream", func(t *testing.T) {
		s := libc.calloc(1, unsafe.Sizeof(cStream{}))
		defer libc.free(s)
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.scan(db, cstr(`{"type": "A"}`), s, e) })
		requireOK(t, code, msg, "scan")
		require.Equal(t, int32(codeOK), lib.cancel(db))
		_, err := readStream(s)
		var se *streamError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, 125, se.errno, "ECANCELED")
		assert.Contains(t, se.msg, "canceled")
	})
	t.Run("the rest of a first batch, one batch read ahead", func(t *testing.T) {
		s := firstThenRest(t, db, `{"type": "A", "batch_rows": 1}`) // the batch read ahead is a whole batch
		defer libc.free(s)
		require.Equal(t, int32(codeOK), lib.cancel(db))
		r, err := readStream(s)
		var se *streamError
		require.ErrorAs(t, err, &se, "the batch read ahead is not returned after the cancel")
		assert.Equal(t, 125, se.errno, "ECANCELED")
		assert.Zero(t, r.batches)
	})
	t.Run("calls after the cancel are not affected", func(t *testing.T) {
		r := scanResult(t, db, `{"type": "A"}`)
		assert.Len(t, r.rows, 3)
	})
}

func TestSetRuntime(t *testing.T) {
	cases := []struct {
		name, options string
		code          int
		msg           string
	}{
		{"all three", `{"gomaxprocs": 2, "memory_limit": 8589934592, "gc_percent": 100}`, codeOK, ""},
		{"empty", `{}`, codeOK, ""},
		{"gc off and on", `{"gc_percent": -1}`, codeOK, ""},
		{"gc back on", `{"gc_percent": 100}`, codeOK, ""},
		{"zero procs", `{"gomaxprocs": 0}`, codeInvalidArgument, "gomaxprocs"},
		{"negative limit", `{"memory_limit": -5, "gomaxprocs": 1}`, codeInvalidArgument, "memory_limit"},
		{"gc below -1", `{"gc_percent": -2}`, codeInvalidArgument, "gc_percent"},
		{"unknown key", `{"threads": 2}`, codeInvalidArgument, "threads"},
		{"does not parse", `{"gomaxprocs": }`, codeInvalidArgument, "runtime options"},
		{"not a number", `{"gomaxprocs": "2"}`, codeInvalidArgument, "gomaxprocs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, msg := callErr(t, func(e *uintptr) int32 { return lib.setRuntime(cstr(c.options), e) })
			assert.Equal(t, c.code, code, msg)
			assert.Contains(t, msg, c.msg)
		})
	}
}

// TestParallelInserts inserts from several goroutines (so several threads
// of the library) at once, in autocommit and in transactions, each value
// naming its worker and row: a batch imported by one thread and read by
// another (the library reuses its import objects) would show.
func TestParallelInserts(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	const workers, each = 4, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := fmt.Sprintf("w%d", w)
			for i := 0; i < each; i++ {
				tm := int64(i * 10)
				k := tm*100 + int64(w)
				b := exportBatch(t, 2, timeCol(tm, tm+1), int64Col("k", []int64{k, k + 100}, nil))
				var code int
				var msg string
				if i%2 == 0 {
					code, msg = insert(t, db, "A", dev, b)
				} else {
					tx := begin(t, db)
					code, msg = txInsert(t, tx, "A", dev, b)
					commit(t, tx)
				}
				assert.Equal(t, codeOK, code, msg)
			}
		}()
	}
	wg.Wait()
	r := scanResult(t, db, `{"type": "A", "properties": ["k"]}`)
	require.Len(t, r.rows, workers*each*2)
	for _, row := range r.rows { // device, time, k
		var w int
		_, err := fmt.Sscanf(row[0].(string), "w%d", &w)
		require.NoError(t, err)
		assert.Equal(t, row[1].(int64)*100+int64(w), row[2], "%v", row)
	}
}

// TestClosingTheDatabaseEndsItsResultStreams: a result stream opened
// before arcadego_close still gives its schema (twice, even) and can be
// released, but get_next fails with ECANCELED and says why.
func TestClosingTheDatabaseEndsItsResultStreams(t *testing.T) {
	db := openToClose(t)
	s := libc.calloc(1, unsafe.Sizeof(cStream{}))
	defer libc.free(s)
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.scan(db, cstr(`{"type": "A"}`), s, e) })
	requireOK(t, code, msg, "scan")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.close(db, e) })
	requireOK(t, code, msg, "close")

	sch := libc.calloc(1, unsafe.Sizeof(cSchema{}))
	defer libc.free(sch)
	rc, _, _ := purego.SyscallN(at[cStream](s).getSchema, s, sch)
	require.Zero(t, rc)
	assert.Equal(t, int64(4), at[cSchema](sch).nChildren)
	releaseSchema(sch)

	r, err := readStream(s)
	var se *streamError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 125, se.errno, "ECANCELED")
	assert.Contains(t, se.msg, "closed")
	assert.Equal(t, []string{"device", "time", "k", "s"}, r.names)
}

// openToClose opens a memory database of schemaAB with three rows of
// device d, which the test closes itself.
func openToClose(t *testing.T) uintptr {
	var db uintptr
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.open(nil, nil, &db, e) })
	requireOK(t, code, msg, "open")
	execDDL(t, db, schemaAB)
	code, msg = insert(t, db, "A", "d", goodBatch(t))
	requireOK(t, code, msg, "insert")
	return db
}

// firstThenRest runs arcadego_scan_first of request, releases its schema
// and first batch, and returns the rest stream (which must be there), to
// free after reading it.
func firstThenRest(t *testing.T, db uintptr, request string) uintptr {
	sch, arr := libc.calloc(1, unsafe.Sizeof(cSchema{})), libc.calloc(1, unsafe.Sizeof(cArray{}))
	defer libc.free(sch)
	defer libc.free(arr)
	s := libc.calloc(1, unsafe.Sizeof(cStream{}))
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.scanFirst(db, cstr(request), sch, arr, s, nil, e) })
	requireOK(t, code, msg, "scan_first")
	releaseSchema(sch)
	purego.SyscallN(at[cArray](arr).release, arr)
	require.NotZero(t, at[cStream](s).release, "batches follow the first")
	return s
}

// TestClosingTheDatabaseEndsTheRestOfAFirstBatch: arcadego_scan_first's
// rest stream, whose next batch was read ahead, says the database closed
// rather than return that batch.
func TestClosingTheDatabaseEndsTheRestOfAFirstBatch(t *testing.T) {
	db := openToClose(t)
	s := firstThenRest(t, db, `{"type": "A", "batch_rows": 1}`) // the batch read ahead is a whole batch
	defer libc.free(s)
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.close(db, e) })
	requireOK(t, code, msg, "close")

	r, err := readStream(s)
	var se *streamError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 125, se.errno, "ECANCELED")
	assert.Contains(t, se.msg, "closed")
	assert.Zero(t, r.batches)
}

// TestNullErrIsAccepted makes each export fail with err NULL: the status
// code still comes back, and the input is still released.
func TestNullErrIsAccepted(t *testing.T) {
	db := openDB(t, "", "")
	execDDL(t, db, schemaAB)
	tx := begin(t, db)
	defer lib.rollback(tx)
	cases := map[string]struct {
		code int
		call func() int32
	}{
		"open":        {codeInvalidArgument, func() int32 { var d uintptr; return lib.open(nil, cstr("{"), &d, nil) }},
		"close":       {codeClosed, func() int32 { return lib.close(0xfeedface, nil) }},
		"begin":       {codeInvalidArgument, func() int32 { return lib.begin(db, nil, nil) }},
		"exec":        {codeAlreadyExists, func() int32 { return lib.exec(db, cstr(schemaAB), nil) }},
		"tx_exec":     {codeInvalidArgument, func() int32 { return lib.txExec(tx, cstr("CREATE"), nil) }},
		"commit":      {codeClosed, func() int32 { return lib.commit(0xfeedface, nil) }},
		"describe":    {codeNotFound, func() int32 { var j uintptr; return lib.describe(db, cstr("Nope"), &j, nil) }},
		"set_runtime": {codeInvalidArgument, func() int32 { return lib.setRuntime(cstr(`{"gomaxprocs": 0}`), nil) }},
		"flush":       {codeClosed, func() int32 { return lib.flush(0xfeedface, nil) }},
		"checkpoint":  {codeClosed, func() int32 { return lib.checkpoint(0xfeedface, nil) }},
		"stats":       {codeInvalidArgument, func() int32 { return lib.stats(db, nil, nil) }},
		"scan": {codeNotFound, func() int32 {
			s := libc.calloc(1, unsafe.Sizeof(cStream{}))
			defer libc.free(s)
			return lib.scan(db, cstr(`{"type": "Nope"}`), s, nil)
		}},
		"insert": {codeInvalidArgument, func() int32 {
			b := goodBatch(t)
			defer assertReleasedOnce(t, b)
			return lib.insert(db, nil, nil, b.schemaAddr, b.arrayAddr, nil)
		}},
		"tx_insert_stream": {codeInvalidArgument, func() int32 {
			s, st := exportStream(t, &streamState{failAt: -1})
			defer func() { assert.Equal(t, 1, st.released) }()
			return lib.txInsertStream(tx, nil, nil, s, nil)
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { assert.Equal(t, int32(c.code), c.call()) })
	}
}

// TestInsertsIntoTypesOfOneLength: the library keeps the type name of the
// last insert to spare a copy when the next names the same type; names of
// the same length, each from a buffer of its own, still go to their own
// types.
func TestInsertsIntoTypesOfOneLength(t *testing.T) {
	db := openDB(t, "", `{"auto_create": true}`)
	for i, typ := range []string{"t1", "t2", "t1", "t1", "t3", "t2"} {
		b := exportBatch(t, 1, int64Col("time", []int64{int64(i)}, nil), int64Col("v", []int64{int64(i)}, nil))
		code, msg := insert(t, db, typ, "d", b)
		require.Equal(t, codeOK, code, msg)
	}
	for typ, want := range map[string][]any{"t1": {int64(0), int64(2), int64(3)}, "t2": {int64(1), int64(5)}, "t3": {int64(4)}} {
		assert.Equal(t, want, scanResult(t, db, `{"type": "`+typ+`"}`).column("v"), typ)
	}
}
