package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

// An insert's property ids, found when it is added to a transaction, are
// used at commit only when the catalog is the one they were found in;
// otherwise the commit resolves the columns by name again. These tests
// change the catalog between the insert and the commit.

func TestInsertIDsAfterALaterDropInTheTransaction(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Insert("T", "d", int64Tablet([]int64{1}, map[string][]int64{"a": {1}, "b": {2}})))
	require.NoError(t, tx.Exec("DROP PROPERTY T.b"))
	require.ErrorIs(t, tx.Commit(), errs.ErrNotFound, "the insert's column b has no property any more")
	_, ok := db.Catalog().Type("T")
	assert.False(t, ok, "nothing of the failed commit is visible")
}

func TestInsertIDsAfterADropAndRecreateInTheTransaction(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.a INT64; CREATE PROPERTY T.b INT64"))
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Insert("T", "d", int64Tablet([]int64{1}, map[string][]int64{"a": {1}, "b": {2}})))
	require.NoError(t, tx.Exec("DROP PROPERTY T.b; CREATE PROPERTY T.b INT64"))
	require.NoError(t, tx.Insert("T", "d", int64Tablet([]int64{2}, map[string][]int64{"b": {3}})))
	require.NoError(t, tx.Commit())
	ty, _ := db.Catalog().Type("T")
	b, _ := ty.Property("b")
	assert.Greater(t, uint32(b.ID), uint32(2), "b was re-created with a new id")
	// Both inserts land in the new b: the first one by name, at commit.
	assert.Equal(t, map[string]map[int64]map[string]any{"d": {
		1: {"a": int64(1), "b": int64(2)},
		2: {"a": nil, "b": int64(3)},
	}}, rowsOf(t, db, "T"))
}

func TestInsertIDsAfterAConcurrentCommit(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("T", "d", int64Tablet([]int64{1}, map[string][]int64{"a": {1}})))
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Insert("T", "d", int64Tablet([]int64{2}, map[string][]int64{"a": {2}, "n": {20}})))
	// Another commit adds a property first, taking the id the transaction
	// gave its new column n.
	require.NoError(t, db.Insert("T", "e", int64Tablet([]int64{1}, map[string][]int64{"m": {9}})))
	require.NoError(t, tx.Commit())
	ty, _ := db.Catalog().Type("T")
	m, _ := ty.Property("m")
	n, _ := ty.Property("n")
	assert.NotEqual(t, m.ID, n.ID)
	rows := rowsOf(t, db, "T")
	assert.Equal(t, map[string]any{"a": int64(2), "m": nil, "n": int64(20)}, rows["d"][2])
	assert.Equal(t, map[string]any{"a": nil, "m": int64(9), "n": nil}, rows["e"][1])
}
