package abi_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openDB opens a database in memory (path "") or in path, with options
// ("" for NULL), and closes it at the end of the test.
func openDB(t testing.TB, path, options string) uintptr {
	t.Helper()
	var p, o *byte
	if path != "" {
		p = cstr(path)
	}
	if options != "" {
		o = cstr(options)
	}
	var db uintptr
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.open(p, o, &db, e) })
	require.Equal(t, codeOK, code, "open: %s", msg)
	require.NotZero(t, db)
	t.Cleanup(func() { lib.close(db, nil) })
	return db
}

func requireOK(t testing.TB, code int, msg string, what string) {
	t.Helper()
	require.Equal(t, codeOK, code, "%s: %s", what, msg)
}

func execDDL(t testing.TB, db uintptr, script string) {
	t.Helper()
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.exec(db, cstr(script), e) })
	requireOK(t, code, msg, script)
}

func begin(t testing.TB, db uintptr) uintptr {
	t.Helper()
	var tx uintptr
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.begin(db, &tx, e) })
	requireOK(t, code, msg, "begin")
	require.NotZero(t, tx)
	return tx
}

func commit(t testing.TB, tx uintptr) {
	t.Helper()
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.commit(tx, e) })
	requireOK(t, code, msg, "commit")
}

// insert runs arcadego_insert of b into typ for device.
func insert(t testing.TB, db uintptr, typ, device string, b *batch) (int, string) {
	t.Helper()
	return callErr(t, func(e *uintptr) int32 {
		return lib.insert(db, cstr(typ), cstr(device), b.schemaAddr, b.arrayAddr, e)
	})
}

func txInsert(t testing.TB, tx uintptr, typ, device string, b *batch) (int, string) {
	t.Helper()
	return callErr(t, func(e *uintptr) int32 {
		return lib.txInsert(tx, cstr(typ), cstr(device), b.schemaAddr, b.arrayAddr, e)
	})
}

// describeJSON returns arcadego_describe's JSON for typ ("" for all).
func describeJSON(t testing.TB, db uintptr, typ string) (int, string) {
	t.Helper()
	var p *byte
	if typ != "" {
		p = cstr(typ)
	}
	var out uintptr
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.describe(db, p, &out, e) })
	if code != codeOK {
		assert.Zero(t, out, "json_out set on failure")
		return code, msg
	}
	s := goString(out)
	lib.free(out)
	return code, s
}

type description struct {
	Types []struct {
		Name string `json:"name"`
		Time *struct {
			Unit string `json:"unit"`
			Zone string `json:"zone"`
		} `json:"time"`
		Properties []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"properties"`
		Indexes []struct {
			Name       string   `json:"name"`
			Unique     bool     `json:"unique"`
			Properties []string `json:"properties"`
		} `json:"indexes"`
	} `json:"types"`
}

func describe(t testing.TB, db uintptr, typ string) description {
	t.Helper()
	code, s := describeJSON(t, db, typ)
	require.Equal(t, codeOK, code, s)
	var d description
	require.NoError(t, json.Unmarshal([]byte(s), &d), s)
	return d
}

// state renders everything the database holds: the schema and every row
// of every type. A failed call must leave it unchanged.
func state(t testing.TB, db uintptr) string {
	t.Helper()
	_, s := describeJSON(t, db, "")
	var d description
	require.NoError(t, json.Unmarshal([]byte(s), &d))
	out := s
	for _, ty := range d.Types {
		r := scanResult(t, db, fmt.Sprintf(`{"type": %q}`, ty.Name))
		out += fmt.Sprintf("\n%s %v %v", ty.Name, r.names, r.rows)
	}
	return out
}

// schemaAB is the schema most tests use: type A with k INT64 and s STRING.
const schemaAB = "CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.s STRING"

// goodBatch is a valid batch for schemaAB: time 1..3, k 10..30, s with a null.
func goodBatch(t testing.TB) *batch {
	return exportBatch(t, 3,
		timeCol(1, 2, 3),
		int64Col("k", []int64{10, 20, 30}, nil),
		stringCol("s", []string{"a", "", "ccc"}, []bool{true, false, true}))
}
