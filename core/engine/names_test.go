package engine

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestCheckedNamesReuseIDs: inserts whose tablets share a checked name
// list reuse the property ids the last one resolved only while the type
// and the columns' types are the same: a property dropped and created
// again, or a column of another type, is resolved anew.
func TestCheckedNamesReuseIDs(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	names := []string{"a", "b"}
	list := tablet.CheckNames(names) // the columns carry these very strings
	listed := func(t0 int64, b tablet.Column) *tablet.Tablet {
		b.Name = names[1]
		return &tablet.Tablet{Times: []int64{t0}, Names: list,
			Columns: []tablet.Column{tablet.Int64s(names[0], []int64{t0 * 10}, nil), b}}
	}
	for i, dev := range []string{"d1", "d2", "d3"} {
		require.NoError(t, db.Insert("T", dev, listed(int64(i+1), tablet.Int64s("", []int64{int64(i + 1)}, nil))))
	}
	last := db.lastIDs.Load()
	require.NotNil(t, last, "a known insert of a listed tablet is remembered")
	assert.Same(t, list, last.names)

	require.NoError(t, db.Exec("DROP PROPERTY T.b; CREATE PROPERTY T.b INT64"))
	require.NoError(t, db.Insert("T", "d4", listed(4, tablet.Int64s("", []int64{44}, nil))))
	// An Int32 column of an INT64 property is widened, not taken as known.
	require.NoError(t, db.Insert("T", "d5", listed(5, tablet.Int32s("", []int32{55}, nil))))
	// A Double one is refused, as without a list.
	err := db.Insert("T", "d6", listed(6, tablet.Doubles("", []float64{6.5}, nil)))
	require.ErrorIs(t, err, errs.ErrInvalidArgument)

	assert.Equal(t, map[string]map[int64]map[string]any{
		"d1": {1: {"a": int64(10), "b": nil}},
		"d2": {2: {"a": int64(20), "b": nil}},
		"d3": {3: {"a": int64(30), "b": nil}},
		"d4": {4: {"a": int64(40), "b": int64(44)}},
		"d5": {5: {"a": int64(50), "b": int64(55)}},
	}, rowsOf(t, db, "T"), "the old b is dropped; the new b holds the later values")
	ty, ok := db.Catalog().Type("T")
	require.True(t, ok)
	b, ok := ty.Property("b")
	require.True(t, ok)
	assert.Equal(t, schema.Int64, b.Type)
}

// TestCheckedNamesConcurrently: writers of two types and two name lists
// share the memory of resolved ids while the types gain properties; every
// row lands under the property its column names (run under -race).
func TestCheckedNamesConcurrently(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	require.NoError(t, db.Exec("CREATE TYPE A; CREATE TYPE B"))
	lists := [][]string{{"a", "b"}, {"b", "a"}}
	checked := []*tablet.NameList{tablet.CheckNames(lists[0]), tablet.CheckNames(lists[1])}
	const writers, rows = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rows {
				l := (w + i) % 2
				names := lists[l]
				tab := &tablet.Tablet{Times: []int64{int64(i)}, Names: checked[l], Columns: []tablet.Column{
					tablet.Int64s(names[0], []int64{int64(names[0][0])}, nil), tablet.Int64s(names[1], []int64{int64(names[1][0])}, nil)}}
				typ := []string{"A", "B"}[w%2]
				if err := db.Insert(typ, fmt.Sprintf("w%d", w), tab); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			if err := db.Exec(fmt.Sprintf("CREATE PROPERTY A.x%d INT64; CREATE PROPERTY B.x%d INT64", i, i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	for _, typ := range []string{"A", "B"} {
		got := rowsOf(t, db, typ)
		require.Len(t, got, writers/2)
		for dev, byTime := range got {
			require.Len(t, byTime, rows, dev)
			for tm, row := range byTime {
				assert.Equal(t, int64('a'), row["a"], "%s %s %d", typ, dev, tm)
				assert.Equal(t, int64('b'), row["b"], "%s %s %d", typ, dev, tm)
			}
		}
	}
}
