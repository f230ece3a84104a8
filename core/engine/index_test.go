package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/tablet"
)

// modelRow is a row of the reference model: nil is null.
type modelRow struct {
	k *int64
	s *string
}

// indexModel is what the engine must return: rows by device and time,
// newest non-null value winning per property, deletes removing rows.
type indexModel map[string]map[int64]*modelRow

func (m indexModel) match(pred func(r *modelRow) bool) []string {
	var out []string
	for d, rows := range m {
		for t, r := range rows {
			if pred(r) {
				out = append(out, fmt.Sprintf("%s@%d", d, t))
			}
		}
	}
	slices.Sort(out)
	return out
}

// whereRows scans typ with w and returns the rows as "device@time",
// sorted, and the scan's plan.
func whereRows(t *testing.T, db *DB, typ string, w Where) ([]string, string) {
	t.Helper()
	rows, err := db.Scan(context.Background(), ScanRequest{Type: typ, Where: &w, Properties: []string{"k"}})
	require.NoError(t, err)
	defer rows.Close()
	plan := rows.Plan()
	var out []string
	for {
		b, ok := rows.Next()
		if !ok {
			break
		}
		for _, tm := range b.Rows.Times {
			out = append(out, fmt.Sprintf("%s@%d", b.Device, tm))
		}
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out, plan
}

func cond(p, op string, v any) Where { return Where{Cond: &Cond{Property: p, Op: op, Value: v}} }

// TestIndexLookupsMatchModel: random inserts, overwrites, writes of part
// of a key, deletes, flushes, compactions and reopens; after each step
// every lookup through an index returns exactly the model's rows, and
// says it used the index.
func TestIndexLookupsMatchModel(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testIndexModel(t, seed) })
	}
}

func testIndexModel(t *testing.T, seed uint64) {
	dir := filepath.Join(t.TempDir(), "db")
	opts := Options{}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	defer func() { _ = db.Close() }()
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE U; CREATE PROPERTY U.k INT64; CREATE PROPERTY U.s STRING; CREATE PROPERTY U.v DOUBLE"))
	rng := rand.New(rand.NewPCG(8, seed))
	model := indexModel{}
	words := []string{"a", "b", "c\x00d", ""}
	for step := range 120 {
		switch op := rng.IntN(12); {
		case op < 7:
			dev := fmt.Sprintf("d%d", rng.IntN(6))
			n := 1 + rng.IntN(20)
			times := make([]int64, 0, n)
			seen := map[int64]bool{}
			for len(times) < n {
				tm := int64(rng.IntN(60))
				if !seen[tm] {
					seen[tm] = true
					times = append(times, tm)
				}
			}
			ks, kv := make([]int64, n), make([]bool, n)
			ss, sv := make([]string, n), make([]bool, n)
			vs := make([]float64, n)
			for i := range n {
				ks[i], kv[i] = int64(rng.IntN(15)), rng.IntN(6) != 0
				ss[i], sv[i] = words[rng.IntN(len(words))], rng.IntN(6) != 0
			}
			// Some writes carry only part of the (s, k) key.
			withK, withS := rng.IntN(5) != 0, rng.IntN(5) != 0
			tb := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("v", vs, nil)}}
			if withK {
				tb.Columns = append(tb.Columns, tablet.Int64s("k", ks, kv))
			}
			if withS {
				tb.Columns = append(tb.Columns, tablet.Strings("s", ss, sv))
			}
			require.NoError(t, db.Insert("U", dev, tb))
			if model[dev] == nil {
				model[dev] = map[int64]*modelRow{}
			}
			for i, tm := range times {
				r := model[dev][tm]
				if r == nil {
					r = &modelRow{}
					model[dev][tm] = r
				}
				if withK && kv[i] {
					r.k = &ks[i]
				}
				if withS && sv[i] {
					r.s = &ss[i]
				}
			}
		case op == 7:
			dev := fmt.Sprintf("d%d", rng.IntN(6))
			lo := int64(rng.IntN(60))
			hi := lo + int64(rng.IntN(20))
			require.NoError(t, db.Delete(DeleteRequest{Type: "U", Devices: []string{dev}, Start: &lo, End: &hi}))
			for tm := range model[dev] {
				if tm >= lo && tm < hi {
					delete(model[dev], tm)
				}
			}
		case op == 8 || op == 9:
			require.NoError(t, db.Flush())
		case op == 10:
			require.NoError(t, db.Compact("U"))
		default:
			require.NoError(t, db.Close())
			db, err = Open(dir, opts)
			require.NoError(t, err)
		}
		if step < 8 {
			continue
		}
		if step == 8 {
			// Created over rows in the memtables and in files: both backfilled.
			require.NoError(t, db.Exec("CREATE INDEX byk ON U (k) NOTUNIQUE; CREATE INDEX bysk ON U (s, k) NOTUNIQUE"))
		}
		k := int64(rng.IntN(15))
		k2 := k + int64(rng.IntN(5))
		w := words[rng.IntN(len(words))]
		for _, c := range []struct {
			where Where
			index string
			pred  func(r *modelRow) bool
		}{
			{cond("k", "=", k), "byk", func(r *modelRow) bool { return r.k != nil && *r.k == k }},
			{Where{And: []Where{cond("k", ">=", k), cond("k", "<", k2)}}, "byk", func(r *modelRow) bool { return r.k != nil && *r.k >= k && *r.k < k2 }},
			{cond("k", ">", k), "byk", func(r *modelRow) bool { return r.k != nil && *r.k > k }},
			{cond("k", "in", []any{k, k2}), "byk", func(r *modelRow) bool { return r.k != nil && (*r.k == k || *r.k == k2) }},
			{cond("s", "=", w), "bysk", func(r *modelRow) bool { return r.s != nil && *r.s == w }},
			{Where{And: []Where{cond("s", "=", w), cond("k", "<=", k)}}, "bysk", func(r *modelRow) bool { return r.s != nil && *r.s == w && r.k != nil && *r.k <= k }},
			{Where{And: []Where{cond("s", "=", w), cond("k", "=", k)}}, "bysk", func(r *modelRow) bool { return r.s != nil && *r.s == w && r.k != nil && *r.k == k }},
		} {
			got, plan := whereRows(t, db, "U", c.where)
			noIndex, _ := whereRows(t, db, "U", Where{Or: []Where{c.where}})
			require.Equal(t, model.match(c.pred), noIndex, "step %d without the index, %+v", step, c.where)
			require.Equal(t, model.match(c.pred), got, "step %d, %+v", step, c.where)
			require.True(t, strings.HasPrefix(plan, "index "+c.index+" "), "step %d: plan %q", step, plan)
		}
	}
}

// TestIndexSidecars: a flush writes each file's sidecars, CREATE INDEX
// on a type with files backfills them, a damaged one is rebuilt, and
// DROP INDEX's are deleted by the next flush; an index on an empty type
// creates no file.
func TestIndexSidecars(t *testing.T) {
	db, dir := openDisk(t, Options{})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE E; CREATE PROPERTY E.k INT64; CREATE INDEX ek ON E (k) UNIQUE"))
	before := listFiles(t, dir)
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.k INT64"))
	require.Equal(t, before, listFiles(t, dir), "DDL, indexes included, creates no file")
	for d := range 3 {
		require.NoError(t, db.Insert("T", fmt.Sprintf("d%d", d), int64Tablet([]int64{1, 2, 3}, map[string][]int64{"k": {int64(d), 10 + int64(d), 20}})))
	}
	require.NoError(t, db.Flush())
	ty, _ := db.Catalog().Type("T")
	sidecars := func() []string {
		m, _ := filepath.Glob(filepath.Join(db.tableDir(ty.ID), indexDir, "*.agix"))
		return m
	}
	require.Empty(t, sidecars())
	built := db.sidecarsBuilt.Load()
	require.NoError(t, db.Exec("CREATE INDEX tk ON T (k) NOTUNIQUE"))
	require.Len(t, sidecars(), 1, "the backfill")
	require.Equal(t, built+1, db.sidecarsBuilt.Load())
	got, plan := whereRows(t, db, "T", cond("k", "=", int64(20)))
	require.Equal(t, []string{"d0@3", "d1@3", "d2@3"}, got)
	require.Contains(t, plan, "index tk on T (k = 20): 3 candidate rows in 3 devices")

	// A damaged sidecar is read as missing, and rebuilt.
	path := sidecars()[0]
	require.NoError(t, db.Close())
	require.NoError(t, os.WriteFile(path, []byte("AGIX junk"), 0o644))
	db, err := Open(dir, Options{})
	require.NoError(t, err)
	defer func() { _ = db.Close() }()
	got, _ = whereRows(t, db, "T", cond("k", "=", int64(11)))
	require.Equal(t, []string{"d1@2"}, got)
	require.Equal(t, uint64(1), db.sidecarsBuilt.Load())

	require.NoError(t, db.Exec("DROP INDEX tk"))
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	require.Empty(t, m, "the dropped index's sidecars are gone once DROP INDEX commits")
	_, plan = whereRows(t, db, "T", cond("k", "=", int64(11)))
	require.True(t, strings.HasPrefix(plan, "scan of T"), plan)
	require.NoError(t, db.Insert("T", "d9", int64Tablet([]int64{1}, map[string][]int64{"k": {5}})))
	require.NoError(t, db.Flush())
	m, _ = filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	require.Empty(t, m, "and stay gone after the next flush")
}

func listFiles(t *testing.T, dir string) []string {
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return err
	}))
	return out
}

// indexBenchRows: n rows over 1,000 devices, k a permutation of 0..n-1.
func indexBenchRows(n int) *tablet.Tablet {
	rng := rand.New(rand.NewPCG(1, 1))
	names := make([]string, n)
	times := make([]int64, n)
	ks := make([]int64, n)
	vs := make([]float64, n)
	for i, k := range rng.Perm(n) {
		names[i] = fmt.Sprintf("dev-%04d", i%1000)
		times[i] = int64(i / 1000)
		ks[i] = int64(k)
		vs[i] = rng.Float64()
	}
	return &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("device", names, nil), tablet.Int64s("k", ks, nil), tablet.Doubles("v", vs, nil)}}
}

// BenchmarkCreateIndex: CREATE INDEX over 1 M flushed rows (the backfill
// of the files' sidecars).
func BenchmarkCreateIndex(b *testing.B) {
	rows := indexBenchRows(1_000_000)
	for i := range b.N {
		b.StopTimer()
		db, _ := openDisk(b, Options{})
		require.NoError(b, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.v DOUBLE"))
		require.NoError(b, db.InsertLong("A", "device", rows))
		require.NoError(b, db.Flush())
		b.StartTimer()
		require.NoError(b, db.Exec(fmt.Sprintf("CREATE INDEX i%d ON A (k) UNIQUE", i)))
		b.StopTimer()
		require.NoError(b, db.Close())
	}
}

// BenchmarkInsertIndexed: 1 M rows in one long-format commit into a type
// with no index, a UNIQUE one, and three.
func BenchmarkInsertIndexed(b *testing.B) {
	rows := indexBenchRows(1_000_000)
	for _, c := range []struct {
		name string
		ddl  string
	}{
		{"none", ""},
		{"unique", "; CREATE INDEX ON A (k) UNIQUE"},
		{"three", "; CREATE INDEX ON A (k) UNIQUE; CREATE INDEX ON A (v) NOTUNIQUE; CREATE INDEX ON A (k, v) NOTUNIQUE"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				db, _ := openDisk(b, Options{})
				require.NoError(b, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.v DOUBLE"+c.ddl))
				b.StartTimer()
				require.NoError(b, db.InsertLong("A", "device", rows))
				require.NoError(b, db.Flush())
				b.StopTimer()
				require.NoError(b, db.Close())
			}
			b.ReportMetric(float64(1_000_000*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// TestCompactionMergesSidecars: a compaction that keeps every row writes
// its new files' sidecars by merging the old files' (none built from the
// data), also when it splits a device over several new files; one that
// drops rows (a delete) builds them from the data. Lookups through
// either equal the scan without the index.
func TestCompactionMergesSidecars(t *testing.T) {
	db, _ := openDisk(t, Options{DirectWriteBytes: -1})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.k INT64; CREATE PROPERTY T.s STRING; "+
		"CREATE INDEX tk ON T (k) NOTUNIQUE; CREATE INDEX ts ON T (s, k) NOTUNIQUE"))
	rng := rand.New(rand.NewPCG(12, 13))
	for step := range 6 { // a file a step: devices that append, one row each of k
		for d := range 5 {
			n := 50 + rng.IntN(100)
			times, ks, ss, sv := make([]int64, n), make([]int64, n), make([]string, n), make([]bool, n)
			for i := range n {
				times[i] = int64(step*1000 + i)
				ks[i], ss[i], sv[i] = rng.Int64N(40), fmt.Sprint("s", rng.IntN(5)), rng.IntN(4) > 0
			}
			require.NoError(t, db.Insert("T", fmt.Sprintf("d%d", d), &tablet.Tablet{Times: times,
				Columns: []tablet.Column{tablet.Int64s("k", ks, nil), tablet.Strings("s", ss, sv)}}))
		}
		require.NoError(t, db.Flush())
	}
	check := func(what string) {
		t.Helper()
		for _, w := range []Where{cond("k", "=", int64(7)), cond("k", "<", int64(3)), {And: []Where{cond("s", "=", "s2"), cond("k", ">=", int64(30))}}} {
			got, plan := whereRows(t, db, "T", w)
			require.Contains(t, plan, "index", what)
			var want []string
			for dev, rows := range rowsOf(t, db, "T") {
				for tm, row := range rows {
					if w.Cond != nil && matchesCond(w.Cond, row) || w.And != nil && matchesCond(w.And[0].Cond, row) && matchesCond(w.And[1].Cond, row) {
						want = append(want, fmt.Sprintf("%s@%d", dev, tm))
					}
				}
			}
			slices.Sort(want)
			require.Equal(t, want, got, "%s: %+v", what, w)
		}
	}
	check("flushed")
	built, merged := db.sidecarsBuilt.Load(), db.sidecarsMerged.Load()
	db.compactRows = 800 // the compaction writes several files, splitting devices
	require.NoError(t, db.Compact("T"))
	ty, _ := db.Catalog().Type("T")
	files := len(db.view.Load().tables[ty.ID].files)
	require.Greater(t, files, 1)
	require.Equal(t, built, db.sidecarsBuilt.Load(), "a sidecar was built from data")
	require.Equal(t, merged+uint64(2*files), db.sidecarsMerged.Load(), "two indexes, merged for each new file")
	check("compacted, merged")

	// A delete's flush drops rows from the files it rewrites: the next
	// compaction keeps every row there is, and merges.
	from, to := int64(2000), int64(2050)
	require.NoError(t, db.Delete(DeleteRequest{Type: "T", Devices: []string{"d1"}, Start: &from, End: &to}))
	require.NoError(t, db.Flush())
	check("after a delete")
	db.compactRows = 1500
	merged = db.sidecarsMerged.Load()
	require.NoError(t, db.Compact("T"))
	require.Greater(t, db.sidecarsMerged.Load(), merged)
	check("compacted again")
}

// TestCompactionDroppingRowsBuildsSidecars: a compaction that leaves rows
// out (expired by the TTL) builds its files' sidecars from their data.
func TestCompactionDroppingRowsBuildsSidecars(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true, DirectWriteBytes: -1})
	now := time.Now().UnixMilli()
	day := int64(24 * time.Hour / time.Millisecond)
	require.NoError(t, db.Insert("S", "a", msTablet(now-10*day, now-2*day)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("S", "b", msTablet(now-10*day+1, now-day)))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Exec("CREATE INDEX sk ON S (k) NOTUNIQUE; ALTER TYPE S SET TTL 7d"))
	built, merged := db.sidecarsBuilt.Load(), db.sidecarsMerged.Load()
	require.NoError(t, db.Compact("S"))
	require.Equal(t, merged, db.sidecarsMerged.Load(), "rows were left out: nothing to merge")
	require.Equal(t, built+1, db.sidecarsBuilt.Load())
	got, plan := whereRows(t, db, "S", cond("k", "=", now-day))
	require.Contains(t, plan, "index sk")
	require.Equal(t, []string{fmt.Sprintf("b@%d", now-day)}, got)
	got, _ = whereRows(t, db, "S", cond("k", "=", now-10*day))
	require.Empty(t, got, "expired")
}

// matchesCond evaluates one comparison of whereRows' kinds on a row.
func matchesCond(c *Cond, row map[string]any) bool {
	v, ok := row[c.Property]
	if !ok || v == nil {
		return false
	}
	switch x := v.(type) {
	case int64:
		y := c.Value.(int64)
		return c.Op == "=" && x == y || c.Op == "<" && x < y || c.Op == ">=" && x >= y
	case string:
		return c.Op == "=" && x == c.Value.(string)
	}
	return false
}
