package segment

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

var testMeta = &Metadata{ID: "5f1c4d4e-8a43-4f4b-9d51-0d5c3a1e9b7a", Name: "Sensor", SchemaString: Layout{}.DeltaSchema(), CreatedTime: 1700000000000}

func add(path string, size int64) AddFile {
	return AddFile{Path: path, Size: size, ModificationTime: 1700000000001, Stats: `{"numRecords":1}`}
}

func logFile(dir string, v int64) string { return filepath.Join(dir, "_delta_log", versionName(v)) }

// sameState checks that two tables hold the same replayed state.
func sameState(t *testing.T, want, got *Table) {
	t.Helper()
	assert.Equal(t, want.Version(), got.Version())
	assert.Equal(t, want.Metadata(), got.Metadata())
	assert.Equal(t, want.Files(), got.Files())
	assert.Equal(t, want.txns, got.txns)
}

func TestTableCommitReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "types", "Sensor") // neither exists yet
	tb, err := OpenTable(dir, -1)
	require.NoError(t, err)
	assert.EqualValues(t, -1, tb.Version())
	assert.Nil(t, tb.Metadata())
	assert.Empty(t, tb.Files())
	assert.Equal(t, dir, tb.Dir())

	steps := []struct {
		c     Commit
		files []string
	}{
		{Commit{Metadata: testMeta, Adds: []AddFile{add("p-1.parquet", 10)}, AppID: "arcadego", TxnVersion: 7}, []string{"p-1.parquet"}},
		{Commit{Adds: []AddFile{add("p-3.parquet", 30), add("p-2.parquet", 20)}}, []string{"p-1.parquet", "p-2.parquet", "p-3.parquet"}},
		{Commit{Removes: []string{"p-1.parquet", "p-3.parquet"}, Adds: []AddFile{add("p-4.parquet", 40)}, AppID: "arcadego", TxnVersion: 9}, []string{"p-2.parquet", "p-4.parquet"}},
		{Commit{Metadata: &Metadata{ID: testMeta.ID, Name: "Sensor", SchemaString: Layout{TimeUnit: "ms"}.DeltaSchema(), CreatedTime: 1}}, []string{"p-2.parquet", "p-4.parquet"}},
		{Commit{Removes: []string{"p-2.parquet", "p-4.parquet"}}, nil},
	}
	for i, s := range steps {
		require.NoError(t, tb.Commit(s.c, i%2 == 0), "step %d", i)
		assert.EqualValues(t, i, tb.Version())
		var paths []string
		for _, f := range tb.Files() {
			paths = append(paths, f.Path)
		}
		assert.Equal(t, s.files, paths, "step %d", i)
		again, err := OpenTable(dir, int64(i))
		require.NoError(t, err)
		sameState(t, tb, again)
	}
	v, ok := tb.TxnVersion("arcadego")
	assert.True(t, ok)
	assert.EqualValues(t, 9, v)
	_, ok = tb.TxnVersion("other")
	assert.False(t, ok)
	assert.Equal(t, Layout{TimeUnit: "ms"}.DeltaSchema(), tb.Metadata().SchemaString)
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	require.NoError(t, err)
	assert.Len(t, entries, len(steps), "no temporary files left")
}

// TestTableJSON pins the actions and fields the kernel-based readers
// require.
func TestTableJSON(t *testing.T) {
	dir := t.TempDir()
	tb, err := OpenTable(dir, -1)
	require.NoError(t, err)
	require.NoError(t, tb.Commit(Commit{Metadata: testMeta, Adds: []AddFile{add("a.parquet", 5)}, AppID: "app", TxnVersion: 3}, true))
	require.NoError(t, tb.Commit(Commit{Removes: []string{"a.parquet"}}, true))
	actions := func(v int64) map[string]map[string]any {
		data, err := os.ReadFile(logFile(dir, v))
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(string(data), "\n"))
		out := map[string]map[string]any{}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			var a map[string]map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &a), line)
			require.Len(t, a, 1)
			for k, v := range a {
				out[k] = v
			}
		}
		return out
	}
	v0 := actions(0)
	keys := func(m map[string]any) []string {
		var k []string
		for s := range m {
			k = append(k, s)
		}
		sort.Strings(k)
		return k
	}
	var kinds []string
	for k := range v0 {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	require.Equal(t, []string{"add", "commitInfo", "metaData", "protocol", "txn"}, kinds)
	assert.Equal(t, map[string]any{"minReaderVersion": 1.0, "minWriterVersion": 2.0}, v0["protocol"])
	assert.Equal(t, map[string]any{
		"id": testMeta.ID, "name": "Sensor", "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
		"schemaString": testMeta.SchemaString, "partitionColumns": []any{}, "configuration": map[string]any{},
		"createdTime": 1700000000000.0,
	}, v0["metaData"])
	assert.Equal(t, map[string]any{
		"path": "a.parquet", "partitionValues": map[string]any{}, "size": 5.0, "modificationTime": 1700000000001.0,
		"dataChange": true, "stats": `{"numRecords":1}`,
	}, v0["add"])
	assert.Equal(t, []string{"appId", "lastUpdated", "version"}, keys(v0["txn"]))
	assert.Equal(t, "app", v0["txn"]["appId"])
	assert.Equal(t, 3.0, v0["txn"]["version"])
	assert.Equal(t, "WRITE", v0["commitInfo"]["operation"])
	assert.Equal(t, "arcadego", v0["commitInfo"]["engineInfo"])
	v1 := actions(1)
	require.Len(t, v1, 2)
	assert.Equal(t, []string{"dataChange", "deletionTimestamp", "extendedFileMetadata", "partitionValues", "path", "size"}, keys(v1["remove"]))
	assert.Equal(t, 5.0, v1["remove"]["size"])
	assert.Equal(t, true, v1["remove"]["extendedFileMetadata"])
}

func TestTableConflict(t *testing.T) {
	dir := t.TempDir()
	tb, err := OpenTable(dir, -1)
	require.NoError(t, err)
	require.NoError(t, tb.Commit(Commit{Metadata: testMeta, Adds: []AddFile{add("a.parquet", 1)}}, false))
	// Another writer took version 1 behind tb's back.
	other, err := OpenTable(dir, 0)
	require.NoError(t, err)
	require.NoError(t, other.Commit(Commit{Adds: []AddFile{add("b.parquet", 2)}}, false))
	before, err := os.ReadFile(logFile(dir, 1))
	require.NoError(t, err)

	err = tb.Commit(Commit{Adds: []AddFile{add("c.parquet", 3)}}, true)
	require.ErrorIs(t, err, errs.ErrConflict)
	assert.Contains(t, err.Error(), versionName(1))
	assert.EqualValues(t, 0, tb.Version(), "state unchanged")
	assert.Equal(t, []AddFile{add("a.parquet", 1)}, tb.Files())
	after, err := os.ReadFile(logFile(dir, 1))
	require.NoError(t, err)
	assert.Equal(t, before, after, "the existing version is not overwritten")
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file left")
}

func TestTableCommitRejects(t *testing.T) {
	dir := t.TempDir()
	tb, err := OpenTable(dir, -1)
	require.NoError(t, err)
	require.ErrorIs(t, tb.Commit(Commit{Adds: []AddFile{add("a.parquet", 1)}}, false), errs.ErrInvalidArgument, "version 0 without metadata")
	require.NoError(t, tb.Commit(Commit{Metadata: testMeta, Adds: []AddFile{add("a.parquet", 1)}}, false))
	cases := map[string]Commit{
		"remove inactive":    {Removes: []string{"zz.parquet"}},
		"remove twice":       {Removes: []string{"a.parquet", "a.parquet"}},
		"add active":         {Adds: []AddFile{add("a.parquet", 1)}},
		"add twice":          {Adds: []AddFile{add("b.parquet", 1), add("b.parquet", 1)}},
		"add in a subdir":    {Adds: []AddFile{add("x/b.parquet", 1)}},
		"add hidden":         {Adds: []AddFile{add(".tmp-b.parquet", 1)}},
		"add needing escape": {Adds: []AddFile{add("b c.parquet", 1)}},
		"add negative size":  {Adds: []AddFile{add("b.parquet", -1)}},
		"metadata no id":     {Metadata: &Metadata{SchemaString: "{}"}},
		"metadata new id":    {Metadata: &Metadata{ID: "other", SchemaString: "{}"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, tb.Commit(c, false), errs.ErrInvalidArgument)
			assert.EqualValues(t, 0, tb.Version())
			_, err := os.Stat(logFile(dir, 1))
			assert.True(t, os.IsNotExist(err))
		})
	}
}

func TestOpenTableCorrupt(t *testing.T) {
	// Three versions, then one spoiled in each case.
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		tb, err := OpenTable(dir, -1)
		require.NoError(t, err)
		require.NoError(t, tb.Commit(Commit{Metadata: testMeta, Adds: []AddFile{add("a.parquet", 1)}}, false))
		require.NoError(t, tb.Commit(Commit{Adds: []AddFile{add("b.parquet", 2)}}, false))
		require.NoError(t, tb.Commit(Commit{Removes: []string{"a.parquet"}}, false))
		return dir
	}
	appendLine := func(t *testing.T, dir string, v int64, line string) {
		f, err := os.OpenFile(logFile(dir, v), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(line)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	cases := []struct {
		name  string
		spoil func(t *testing.T, dir string)
		min   int64
		names int64 // the version file the error must name
	}{
		{"gap", func(t *testing.T, dir string) { require.NoError(t, os.Remove(logFile(dir, 1))) }, -1, 1},
		{"no version 0", func(t *testing.T, dir string) { require.NoError(t, os.Remove(logFile(dir, 0))) }, -1, 0},
		{"below minVersion", func(t *testing.T, dir string) { require.NoError(t, os.Remove(logFile(dir, 2))) }, 2, 2},
		{"minVersion past the end", func(t *testing.T, dir string) {}, 5, 3},
		{"garbage line", func(t *testing.T, dir string) { appendLine(t, dir, 1, "{not json\n") }, -1, 1},
		{"empty line", func(t *testing.T, dir string) { appendLine(t, dir, 1, "\n\n") }, -1, 1},
		{"unknown action", func(t *testing.T, dir string) { appendLine(t, dir, 2, `{"cdc":{"path":"x"}}`+"\n") }, -1, 2},
		{"two actions on a line", func(t *testing.T, dir string) {
			appendLine(t, dir, 2, `{"add":{"path":"x","size":1},"txn":{"appId":"a","version":1}}`+"\n")
		}, -1, 2},
		{"add without size", func(t *testing.T, dir string) { appendLine(t, dir, 2, `{"add":{"path":"x"}}`+"\n") }, -1, 2},
		{"null action", func(t *testing.T, dir string) { appendLine(t, dir, 2, `{"add":null}`+"\n") }, -1, 2},
		{"remove inactive", func(t *testing.T, dir string) { appendLine(t, dir, 2, `{"remove":{"path":"a.parquet"}}`+"\n") }, -1, 2},
		{"reader version", func(t *testing.T, dir string) {
			appendLine(t, dir, 1, `{"protocol":{"minReaderVersion":3,"minWriterVersion":7}}`+"\n")
		}, -1, 1},
		{"partitioned", func(t *testing.T, dir string) {
			appendLine(t, dir, 1, `{"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"{}","partitionColumns":["device"]}}`+"\n")
		}, -1, 1},
		{"version 0 without metaData", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(logFile(dir, 0), []byte(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`+"\n"), 0o644))
		}, -1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := setup(t)
			tc.spoil(t, dir)
			_, err := OpenTable(dir, tc.min)
			require.ErrorIs(t, err, errs.ErrCorrupt)
			assert.Contains(t, err.Error(), logFile(dir, tc.names))
		})
	}
	t.Run("other files are ignored", func(t *testing.T) {
		dir := setup(t)
		for _, name := range []string{"_last_checkpoint", ".tmp-x", "00000000000000000003.crc", "0000000000000000000.json", "+0000000000000000003.json"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "_delta_log", name), []byte("junk"), 0o644))
		}
		tb, err := OpenTable(dir, 2)
		require.NoError(t, err)
		assert.EqualValues(t, 2, tb.Version())
		assert.Equal(t, []AddFile{add("b.parquet", 2)}, tb.Files())
	})
	t.Run("empty log dir", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, "_delta_log"), 0o755))
		tb, err := OpenTable(dir, -1)
		require.NoError(t, err)
		assert.EqualValues(t, -1, tb.Version())
		_, err = OpenTable(dir, 0)
		require.ErrorIs(t, err, errs.ErrCorrupt)
		assert.Contains(t, err.Error(), logFile(dir, 0))
	})
}

func TestRemoveStrays(t *testing.T) {
	dir := t.TempDir()
	tb, err := OpenTable(dir, -1)
	require.NoError(t, err)
	removed, err := tb.RemoveStrays()
	require.NoError(t, err)
	assert.Empty(t, removed)
	for _, name := range []string{"keep.parquet", "gone.parquet", "never-committed.parquet", ".tmp-part.parquet"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "subdir"), 0o755))
	require.NoError(t, tb.Commit(Commit{Metadata: testMeta, Adds: []AddFile{add("keep.parquet", 1), add("gone.parquet", 1)}}, true))
	require.NoError(t, tb.Commit(Commit{Removes: []string{"gone.parquet"}}, true))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "_delta_log", ".tmp-00000000000000000002.json-123"), nil, 0o644))

	removed, err = tb.RemoveStrays()
	require.NoError(t, err)
	sort.Strings(removed)
	assert.Equal(t, []string{".tmp-part.parquet", "_delta_log/.tmp-00000000000000000002.json-123", "gone.parquet", "never-committed.parquet"}, removed)
	var left []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	assert.Equal(t, []string{"_delta_log", "keep.parquet", "subdir"}, left)
	again, err := OpenTable(dir, 1)
	require.NoError(t, err)
	sameState(t, tb, again)
}

// TestTableWithFiles writes files through Writer and commits them as a
// flush would, then reopens both.
func TestTableWithFiles(t *testing.T) {
	dir := t.TempDir()
	l := Layout{TimeUnit: "ms", Columns: allTypes}
	tb, err := OpenTable(dir, -1)
	require.NoError(t, err)
	data := map[string][]row{"d1": makeRows(allTypes, 10, 1700000000000, 1000, patterns["between"])}
	w, err := Create(filepath.Join(dir, "part-00000000000000000000-0.parquet"), l, WriterOptions{Sync: true})
	require.NoError(t, err)
	require.NoError(t, w.Append("d1", buildTablet(allTypes, data["d1"], 0)))
	info, err := w.Close()
	require.NoError(t, err)
	require.NoError(t, tb.Commit(Commit{
		Metadata: &Metadata{ID: testMeta.ID, Name: "Sensor", SchemaString: l.DeltaSchema(), CreatedTime: 1},
		Adds:     []AddFile{{Path: info.Name, Size: info.Size, ModificationTime: 1, Stats: info.Stats}},
	}, true))
	tb2, err := OpenTable(dir, 0)
	require.NoError(t, err)
	for _, a := range tb2.Files() {
		f, err := Open(filepath.Join(dir, a.Path), a.Size)
		require.NoError(t, err)
		got := readAll(t, f.Read("d1", allTypes, 0, 1<<62, 0), allTypes, 0)
		assert.Equal(t, data["d1"], got)
		require.NoError(t, f.Close())
	}
	removed, err := tb2.RemoveStrays()
	require.NoError(t, err)
	assert.Empty(t, removed)
}
