package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
	"github.com/arcadego/arcadego/core/wal"
)

// storeModel is the reference for TestStorageMatchesModel: per type, its
// live properties and its rows, device -> time -> property -> value.
type storeModel struct {
	types map[string]*modelType
}

type modelType struct {
	props map[string]schema.PropertyType
	rows  map[string]map[int64]map[string]any
}

func (m *storeModel) expect(name string) map[string]map[int64]map[string]any {
	ty := m.types[name]
	out := map[string]map[int64]map[string]any{}
	for dev, rows := range ty.rows {
		out[dev] = map[int64]map[string]any{}
		for tm, row := range rows {
			r := map[string]any{}
			for p := range ty.props {
				r[p] = row[p]
			}
			out[dev][tm] = r
		}
	}
	return out
}

// randomTablet returns a tablet of some of ty's properties with nulls,
// out-of-order and repeated times, and the cells it holds.
func randomTablet(rng *rand.Rand, ty *modelType) (*tablet.Tablet, []int64, map[string][]any) {
	n := 1 + rng.IntN(6)
	times := make([]int64, n)
	for i := range times {
		times[i] = int64(rng.IntN(40))
	}
	t := &tablet.Tablet{Times: times}
	cells := map[string][]any{}
	names := make([]string, 0, len(ty.props))
	for p := range ty.props {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		if rng.IntN(3) == 0 {
			continue
		}
		valid := make([]bool, n)
		vals := make([]any, n)
		for i := range valid {
			valid[i] = rng.IntN(4) != 0
		}
		switch ty.props[p] {
		case schema.Int64:
			v := make([]int64, n)
			for i := range v {
				v[i] = int64(rng.IntN(1000))
				if valid[i] {
					vals[i] = v[i]
				}
			}
			t.Columns = append(t.Columns, tablet.Int64s(p, v, valid))
		case schema.Double:
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(rng.IntN(1000)) / 4
				if valid[i] {
					vals[i] = v[i]
				}
			}
			t.Columns = append(t.Columns, tablet.Doubles(p, v, valid))
		default:
			v := make([]string, n)
			for i := range v {
				v[i] = strings.Repeat("s", rng.IntN(5)) + fmt.Sprint(rng.IntN(100))
				if valid[i] {
					vals[i] = v[i]
				}
			}
			t.Columns = append(t.Columns, tablet.Strings(p, v, valid))
		}
		cells[p] = vals
	}
	return t, times, cells
}

// TestStorageMatchesModel runs random interleavings of inserts, DDL,
// deletes, flushes, checkpoints, compactions, clones and reopens against a
// model, comparing every type
// after every step. A small memtable budget adds background flushes at
// moments the test does not choose.
func TestStorageMatchesModel(t *testing.T) {
	for seed := range 6 {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 11))
			dir := filepath.Join(t.TempDir(), "db")
			opts := Options{Sync: wal.SyncOff, MemtableBudget: int64(4<<10 + rng.IntN(64<<10))}
			if seed%2 == 0 {
				opts.Sync = wal.SyncFull
			}
			db, err := Open(dir, opts)
			require.NoError(t, err)
			db.fileRows = int64(1 + seed%3*20) // flushes write several files in parallel
			// Odd seeds write the larger inserts straight to Parquet.
			direct := 1 << 30
			if seed%2 == 1 {
				direct = 40
			}
			directWrites := uint64(0)
			db.directBytes = direct
			defer func() {
				if db != nil {
					_ = db.Close()
				}
			}()
			m := &storeModel{types: map[string]*modelType{}}
			typeNames := []string{"A", "B", "C"}
			propNames := []string{"p0", "p1", "p2", "p3", "p4"}
			propTypes := []schema.PropertyType{schema.Int64, schema.Double, schema.String}
			steps := 160
			for step := range steps {
				op := rng.IntN(20)
				var what string
				switch {
				case op < 2 || len(m.types) == 0: // create a type
					name := typeNames[rng.IntN(len(typeNames))]
					if m.types[name] != nil {
						continue
					}
					what = "create type " + name
					require.NoError(t, db.Exec("CREATE DOCUMENT TYPE "+name), what)
					m.types[name] = &modelType{props: map[string]schema.PropertyType{}, rows: map[string]map[int64]map[string]any{}}
				case op == 2: // drop a type
					name := pick(rng, m.types)
					what = "drop type " + name
					require.NoError(t, db.Exec("DROP TYPE "+name), what)
					delete(m.types, name)
				case op < 5: // create a property, perhaps a dropped one's name
					name := pick(rng, m.types)
					p := propNames[rng.IntN(len(propNames))]
					if _, ok := m.types[name].props[p]; ok {
						continue
					}
					pt := propTypes[rng.IntN(len(propTypes))]
					what = fmt.Sprintf("create property %s.%s %s", name, p, pt)
					require.NoError(t, db.Exec(fmt.Sprintf("CREATE PROPERTY %s.%s %s", name, p, pt)), what)
					m.types[name].props[p] = pt
				case op == 5: // drop a property
					name := pick(rng, m.types)
					if len(m.types[name].props) == 0 {
						continue
					}
					p := pick(rng, m.types[name].props)
					what = fmt.Sprintf("drop property %s.%s", name, p)
					require.NoError(t, db.Exec(fmt.Sprintf("DROP PROPERTY %s.%s", name, p)), what)
					delete(m.types[name].props, p)
					for _, rows := range m.types[name].rows {
						for _, row := range rows {
							delete(row, p)
						}
					}
				case op == 6:
					what = "flush"
					require.NoError(t, db.Flush(), what)
				case op == 9: // delete a time range of one device or of all
					name := pick(rng, m.types)
					req := DeleteRequest{Type: name}
					if rng.IntN(3) > 0 {
						req.Devices = []string{fmt.Sprintf("d%d", rng.IntN(4))}
					}
					lo := int64(rng.IntN(300) - 20)
					hi := lo + int64(1+rng.IntN(120))
					if rng.IntN(4) > 0 {
						req.Start = &lo
					}
					if rng.IntN(4) > 0 {
						req.End = &hi
					}
					what = fmt.Sprintf("delete %s devices %v [%v, %v)", name, req.Devices, ptrStr(req.Start), ptrStr(req.End))
					require.NoError(t, db.Delete(req), what)
					for dev, rows := range m.types[name].rows {
						if req.Devices != nil && req.Devices[0] != dev {
							continue
						}
						for tm := range rows {
							if (req.Start == nil || tm >= *req.Start) && (req.End == nil || tm < *req.End) {
								delete(rows, tm)
							}
						}
						if len(rows) == 0 {
							delete(m.types[name].rows, dev)
						}
					}
				case op == 10: // a clone holds exactly what the database does
					what = "clone"
					dest := filepath.Join(t.TempDir(), fmt.Sprint("clone", step))
					require.NoError(t, db.Clone(dest), what)
					c, err := Open(dest, Options{})
					require.NoError(t, err, what)
					for name := range m.types {
						require.Equal(t, m.expect(name), rowsOf(t, c, name), "seed %d step %d: clone, type %s", seed, step, name)
					}
					require.NoError(t, c.Close())
				case op == 8:
					what = "compact"
					typ := ""
					if rng.IntN(2) == 0 {
						typ = pick(rng, m.types)
						what += " " + typ
					}
					require.NoError(t, db.Compact(typ), what)
				case op == 7:
					what = "reopen"
					directWrites += db.Stats().DirectWrites
					require.NoError(t, db.Close(), what)
					db, err = Open(dir, opts)
					require.NoError(t, err, what)
					db.fileRows = int64(1 + seed%3*20)
					db.directBytes = direct
				default: // insert
					name := pick(rng, m.types)
					ty := m.types[name]
					dev := fmt.Sprintf("d%d", rng.IntN(4))
					tb, times, cells := randomTablet(rng, ty)
					if seed%2 == 1 && rng.IntN(2) == 0 {
						// Later times: rows that may go straight to Parquet.
						for i := range times {
							times[i] += int64(step) * 50
						}
					}
					what = fmt.Sprintf("insert %d rows into %s/%s", len(times), name, dev)
					require.NoError(t, db.Insert(name, dev, tb), what)
					if ty.rows[dev] == nil {
						ty.rows[dev] = map[int64]map[string]any{}
					}
					for i, tm := range times {
						row := ty.rows[dev][tm]
						if row == nil {
							row = map[string]any{}
							ty.rows[dev][tm] = row
						}
						for p, vals := range cells {
							if vals[i] != nil {
								row[p] = vals[i]
							}
						}
					}
				}
				for name := range m.types {
					require.Equal(t, m.expect(name), rowsOf(t, db, name), "seed %d step %d (%s): type %s", seed, step, what, name)
				}
			}
			require.NoError(t, db.Flush())
			require.NoError(t, db.Compact(""))
			for _, ts := range db.Stats().Types {
				assert.LessOrEqual(t, ts.Files, 1, "type %s after compacting everything", ts.Name)
			}
			for name := range m.types {
				require.Equal(t, m.expect(name), rowsOf(t, db, name), "seed %d after compacting everything: type %s", seed, name)
			}
			st := db.Stats()
			if seed%2 == 1 {
				assert.Positive(t, directWrites+st.DirectWrites, "no insert was written straight to Parquet")
				t.Logf("%d inserts written straight to Parquet", directWrites+st.DirectWrites)
			}
			assert.Positive(t, st.Flushes)
			assert.Positive(t, st.Checkpoints)
			require.NoError(t, db.Close())
			// The Delta tables hold exactly the types left, and nothing else
			// is in the database directory.
			entries, err := os.ReadDir(filepath.Join(dir, tablesDir))
			require.NoError(t, err)
			assert.LessOrEqual(t, len(entries), len(m.types))
			db, err = Open(dir, opts)
			require.NoError(t, err)
			for name := range m.types {
				require.Equal(t, m.expect(name), rowsOf(t, db, name), "seed %d after the last reopen: type %s", seed, name)
			}
		})
	}
}

func ptrStr(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func pick[V any](rng *rand.Rand, m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}

func TestFlushWritesDeltaTablesAndTruncatesTheLog(t *testing.T) {
	db, dir := openDisk(t, Options{SegmentBytes: 2 << 10})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
	for i := range 200 {
		require.NoError(t, db.Insert("A", fmt.Sprint("d", i%3), int64Tablet([]int64{int64(i)}, map[string][]int64{"k": {int64(i)}})))
	}
	before := db.Stats()
	require.Greater(t, before.WALSegments, 3)
	require.NoError(t, db.Flush())
	st := db.Stats()
	assert.Equal(t, uint64(1), st.Flushes)
	assert.Equal(t, uint64(1), st.Checkpoints)
	assert.Equal(t, 1, st.WALSegments, "segments the flush covers are deleted")
	assert.Less(t, st.WALBytes, int64(100), "the flush started a new segment: the log holds no flushed record")
	assert.Equal(t, int64(0), st.MemtableBytes)
	require.Len(t, st.Types, 1)
	ts := st.Types[0]
	assert.Equal(t, "A", ts.Name)
	assert.Equal(t, 1, ts.Files)
	assert.Equal(t, int64(200), ts.Rows)
	assert.Equal(t, int64(0), ts.DeltaVersion)
	fi, err := os.Stat(filepath.Join(ts.Path, "_delta_log", "00000000000000000000.json"))
	require.NoError(t, err)
	assert.Positive(t, fi.Size())
	assert.True(t, strings.HasPrefix(ts.Path, dir))

	// Overwrite part of the flushed rows: the next flush merges the file
	// it overlaps instead of adding a second file with the same keys.
	require.NoError(t, db.Insert("A", "d1", int64Tablet([]int64{1, 1000}, map[string][]int64{"k": {-1, -2}})))
	require.NoError(t, db.Flush())
	ts = db.Stats().Types[0]
	assert.Equal(t, 1, ts.Files)
	assert.Equal(t, int64(201), ts.Rows)
	assert.Equal(t, int64(1), ts.DeltaVersion)
	rows := rowsOf(t, db, "A")
	assert.Equal(t, int64(-1), rows["d1"][1]["k"])
	assert.Equal(t, int64(-2), rows["d1"][1000]["k"])
	assert.Equal(t, int64(4), rows["d1"][4]["k"])
	assert.Len(t, rows["d0"], 67)

	// A schema change alone reaches the Delta log at the next flush.
	require.NoError(t, db.Exec("CREATE PROPERTY A.x DOUBLE"))
	require.NoError(t, db.Flush())
	assert.Equal(t, int64(2), db.Stats().Types[0].DeltaVersion)
}

func TestStrayAndMissingFilesOnReopen(t *testing.T) {
	setup := func(t *testing.T) (string, string) {
		db, dir := openDisk(t, Options{})
		require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
		require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1, 2}, map[string][]int64{"k": {1, 2}})))
		require.NoError(t, db.Flush())
		path := db.Stats().Types[0].Path
		require.NoError(t, db.Close())
		return dir, path
	}
	parquet := func(t *testing.T, table string) string {
		m, err := filepath.Glob(filepath.Join(table, "*.parquet"))
		require.NoError(t, err)
		require.Len(t, m, 1)
		return m[0]
	}
	t.Run("strays are removed", func(t *testing.T) {
		dir, table := setup(t)
		stray := filepath.Join(table, ".tmp-part-00000000000000000007-0.parquet")
		orphan := filepath.Join(table, "part-00000000000000000009-0.parquet")
		require.NoError(t, os.WriteFile(stray, []byte("half"), 0o644))
		require.NoError(t, os.WriteFile(orphan, []byte("never committed"), 0o644))
		db, err := Open(dir, Options{})
		require.NoError(t, err)
		defer db.Close()
		assert.NoFileExists(t, stray)
		assert.NoFileExists(t, orphan)
		assert.Equal(t, int64(2), rowsOf(t, db, "A")["d"][2]["k"])
	})
	corrupt := map[string]func(t *testing.T, dir, table string) string{
		"missing parquet file": func(t *testing.T, dir, table string) string {
			p := parquet(t, table)
			require.NoError(t, os.Remove(p))
			return filepath.Base(p)
		},
		"truncated parquet file": func(t *testing.T, dir, table string) string {
			p := parquet(t, table)
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, fi.Size()-10))
			return filepath.Base(p)
		},
		"missing delta commit": func(t *testing.T, dir, table string) string {
			p := filepath.Join(table, "_delta_log", "00000000000000000000.json")
			require.NoError(t, os.Remove(p))
			return "00000000000000000000.json"
		},
		"missing table directory": func(t *testing.T, dir, table string) string {
			require.NoError(t, os.RemoveAll(table))
			return table
		},
		"garbled manifest": func(t *testing.T, dir, table string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, manifestFile), []byte("{not json"), 0o644))
			return manifestFile
		},
		"missing manifest": func(t *testing.T, dir, table string) string {
			require.NoError(t, os.Remove(filepath.Join(dir, manifestFile)))
			return manifestFile
		},
		"missing catalog snapshot": func(t *testing.T, dir, table string) string {
			m, err := filepath.Glob(filepath.Join(dir, "catalog-*.snap"))
			require.NoError(t, err)
			require.Len(t, m, 1)
			require.NoError(t, os.Remove(m[0]))
			return filepath.Base(m[0])
		},
		"newest wal segment deleted": func(t *testing.T, dir, table string) string {
			m, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
			require.NoError(t, err)
			require.NotEmpty(t, m)
			last := m[len(m)-1]
			require.NoError(t, os.Remove(last))
			return filepath.Base(last)
		},
		"emptied wal directory": func(t *testing.T, dir, table string) string {
			m, err := filepath.Glob(filepath.Join(dir, "wal", "*"))
			require.NoError(t, err)
			require.NotEmpty(t, m)
			for _, p := range m {
				require.NoError(t, os.Remove(p))
			}
			return "wal"
		},
	}
	for name, damage := range corrupt {
		t.Run(name, func(t *testing.T) {
			dir, table := setup(t)
			names := damage(t, dir, table)
			_, err := Open(dir, Options{})
			require.ErrorIs(t, err, errs.ErrCorrupt)
			assert.Contains(t, err.Error(), names)
			// Nothing was repaired or created in passing: still refused.
			_, err = Open(dir, Options{})
			require.ErrorIs(t, err, errs.ErrCorrupt)
		})
	}
	t.Run("newer format", func(t *testing.T) {
		dir, _ := setup(t)
		data, err := os.ReadFile(filepath.Join(dir, manifestFile))
		require.NoError(t, err)
		data = []byte(strings.Replace(string(data), `"format":1`, `"format":2`, 1))
		require.NoError(t, os.WriteFile(filepath.Join(dir, manifestFile), data, 0o644))
		_, err = Open(dir, Options{})
		require.ErrorIs(t, err, errs.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "format 2")
		assert.Contains(t, err.Error(), "format 1")
	})
}

func TestMemtableBudgetHandsOverAndBoundsMemory(t *testing.T) {
	const budget = 256 << 10
	db, dir := openDisk(t, Options{Sync: wal.SyncOff, MemtableBudget: budget})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.v DOUBLE"))
	const rows = 1000
	var peak int64
	for i := range 100 {
		times := make([]int64, rows)
		ks := make([]int64, rows)
		vs := make([]float64, rows)
		for j := range times {
			times[j] = int64(i*rows + j)
			ks[j] = int64(j)
			vs[j] = float64(j) / 2
		}
		tb := &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Int64s("k", ks, nil), tablet.Doubles("v", vs, nil)}}
		require.NoError(t, db.Insert("A", fmt.Sprint("d", i%4), tb))
		peak = max(peak, db.MemoryUsage())
	}
	st := db.Stats()
	assert.Positive(t, st.Flushes, "a budget of %d bytes was passed many times", budget)
	// Two memtables at most, each at most the budget plus one batch.
	assert.LessOrEqual(t, peak, int64(2*(budget+rows*24+64<<10)))
	require.NoError(t, db.Close())
	db, err := Open(dir, Options{MemtableBudget: budget})
	require.NoError(t, err)
	defer db.Close()
	got := rowsOf(t, db, "A")
	n := 0
	for _, dev := range got {
		n += len(dev)
	}
	assert.Equal(t, 100*rows, n)
	assert.Equal(t, int64(999), got["d3"][99*rows+999]["k"])
}

func TestOptionsOutOfRange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	_, err := Open(dir, Options{MemtableBudget: -1})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.NoDirExists(t, dir, "a refused Open creates nothing")
}

func TestReservedTimeIsRefused(t *testing.T) {
	db := openMem(t, Options{AutoCreate: true})
	err := db.Insert("A", "", int64Tablet([]int64{1, 1<<63 - 1}, map[string][]int64{"k": {1, 2}}))
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "row 1")
	_, ok := db.Catalog().Type("A")
	assert.False(t, ok)
}

// TestDiskFullDuringFlush: a flush that fails at any step reports the
// error in Stats, from Flush and from the next commit; the data stays
// readable and consistent, a later Flush retries, and the database
// reopens with everything committed.
func TestDiskFullDuringFlush(t *testing.T) {
	for _, step := range []string{"write", "commit", "checkpoint"} {
		t.Run(step, func(t *testing.T) {
			db, dir := openDisk(t, Options{})
			require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
			require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1, 2}, map[string][]int64{"k": {1, 2}})))
			require.NoError(t, db.Flush())
			require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{2, 3}, map[string][]int64{"k": {20, 30}})))
			var full atomic.Bool
			full.Store(true)
			db.fault = func(s string) error {
				if s == step && full.Load() {
					return syscall.ENOSPC
				}
				return nil
			}
			err := db.Flush()
			require.ErrorIs(t, err, errs.ErrIO)
			assert.Contains(t, err.Error(), "no space left on device")
			assert.Contains(t, db.Stats().FlushError, "no space left on device")
			err = db.Insert("A", "d", int64Tablet([]int64{4}, map[string][]int64{"k": {40}}))
			require.ErrorIs(t, err, errs.ErrIO, "the next commit reports the failed flush")
			want := map[int64]map[string]any{1: {"k": int64(1)}, 2: {"k": int64(20)}, 3: {"k": int64(30)}}
			assert.Equal(t, want, rowsOf(t, db, "A")["d"], "reads are unaffected")
			strays, _ := filepath.Glob(filepath.Join(dir, tablesDir, "*", ".tmp-*"))
			assert.Empty(t, strays)

			full.Store(false) // space freed
			require.NoError(t, db.Flush())
			assert.Empty(t, db.Stats().FlushError)
			require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{4}, map[string][]int64{"k": {40}})))
			want[4] = map[string]any{"k": int64(40)}
			assert.Equal(t, want, rowsOf(t, db, "A")["d"])
			require.NoError(t, db.Close())
			db2, err := Open(dir, Options{})
			require.NoError(t, err)
			defer db2.Close()
			assert.Equal(t, want, rowsOf(t, db2, "A")["d"])
			assert.Equal(t, 1, db2.Stats().Types[0].Files, "no duplicate keys across files")
		})
	}
	t.Run("background flush", func(t *testing.T) {
		db, _ := openDisk(t, Options{Sync: wal.SyncOff, MemtableBudget: 16 << 10})
		require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
		db.fault = func(s string) error { return syscall.ENOSPC }
		var err error
		// Commits go on until the memtable is over budget while the
		// failed one waits: then they fail with the flush's error.
		for i := 0; i < 100000 && err == nil; i++ {
			err = db.Insert("A", "d", int64Tablet([]int64{int64(i)}, map[string][]int64{"k": {int64(i)}}))
		}
		require.ErrorIs(t, err, errs.ErrIO)
		assert.Contains(t, err.Error(), "no space left on device")
		assert.NotEmpty(t, db.Stats().FlushError)
		db.fault = nil
		require.NoError(t, db.Flush())
		require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{-1}, map[string][]int64{"k": {-1}})))
	})
}

// TestLaggingDeviceDoesNotRewriteOlderFiles: overlap is judged per device,
// so a device behind the others appends a file instead of rewriting the
// ones holding the others' later rows.
func TestLaggingDeviceDoesNotRewriteOlderFiles(t *testing.T) {
	db, _ := openDisk(t, Options{Sync: wal.SyncOff})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
	require.NoError(t, db.Insert("A", "ahead", int64Tablet([]int64{1000, 2000}, map[string][]int64{"k": {1, 2}})))
	require.NoError(t, db.Insert("A", "behind", int64Tablet([]int64{10, 20}, map[string][]int64{"k": {3, 4}})))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("A", "behind", int64Tablet([]int64{30, 40}, map[string][]int64{"k": {5, 6}})))
	require.NoError(t, db.Flush())
	assert.Equal(t, 2, db.Stats().Types[0].Files, "the late device's rows went into a new file")
	// A real overlap still merges.
	require.NoError(t, db.Insert("A", "behind", int64Tablet([]int64{15}, map[string][]int64{"k": {7}})))
	require.NoError(t, db.Flush())
	ts := db.Stats().Types[0]
	assert.Equal(t, 2, ts.Files)
	assert.Equal(t, int64(7), ts.Rows)
	rows := rowsOf(t, db, "A")
	assert.Len(t, rows["behind"], 5)
	assert.Equal(t, int64(7), rows["behind"][15]["k"])
}

func TestPlanFlushSplitsRowsEvenlyWithDisjointKeys(t *testing.T) {
	mem := memtable.New(memtable.Options{})
	write := func(dev string, from, n int) {
		times := make([]int64, n)
		for i := range times {
			times[i] = int64(from + i)
		}
		require.NoError(t, mem.Chunk(1, dev).Write(&tablet.Tablet{Times: times}, nil))
	}
	write("a", 0, 100)
	write("b", 0, 1000) // larger than a run's share: split by time
	write("c", 500, 50)
	var snaps newRows
	for _, d := range []string{"a", "b", "c"} {
		c, _ := mem.Lookup(1, d)
		snaps.add(d, newSnapRows(c.Snapshot()))
	}
	one := planFlush(snaps, nil, 4, 1<<20)
	require.Len(t, one, 1, "too few rows for more than one file")
	require.Len(t, one[0], 3)
	for i, pc := range one[0] {
		assert.Equal(t, piece{snaps.names[i], math.MinInt64, math.MaxInt64, snaps.rows[i]}, pc)
	}
	parts := planFlush(snaps, nil, 3, 100)
	require.Len(t, parts, 3)
	// Every key in exactly one piece, pieces in key order, shares about even.
	prevDev, prevEnd := "", int64(math.MinInt64)
	for i, run := range parts {
		rows := 0
		for _, pc := range run {
			if pc.device == prevDev {
				assert.Equal(t, prevEnd, pc.start, "run %d: %s continues where it stopped", i, pc.device)
			} else {
				assert.Equal(t, int64(math.MinInt64), pc.start)
				assert.Greater(t, pc.device, prevDev)
			}
			prevDev, prevEnd = pc.device, pc.end
			cur := pc.rows.cursor(nil, pc.start, pc.end, 1<<20)
			for {
				b, err := cur.Next()
				require.NoError(t, err)
				if b == nil {
					break
				}
				rows += b.Rows()
			}
		}
		assert.InDelta(t, 383, rows, 60, "run %d", i)
	}
	assert.Equal(t, int64(math.MaxInt64), prevEnd)
}

// TestScanKeepsItsMemtableAcrossAFlush: a scan that started on the live
// memtable goes on reading it after a flush has written it to Parquet and
// dropped it from the view, while new commits fill the next memtable from
// the block pool: the flushed memtable's memory is recycled only when the
// scan is done with it.
func TestScanKeepsItsMemtableAcrossAFlush(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		t.Run(fmt.Sprint("reuse=", reuse), func(t *testing.T) { testScanAcrossFlush(t, reuse) })
	}
}

// testScanAcrossFlush: with reuse, the batches are views of the memtable
// (Stable): they are all kept, unread, until the scan's end, and must
// still hold their rows then.
func testScanAcrossFlush(t *testing.T, reuse bool) {
	db, _ := openDisk(t, Options{DirectWriteBytes: -1, AutoCreate: true})
	wide := func(from, base int64) *tablet.Tablet {
		cols := map[string][]int64{}
		for c := range 64 {
			vals := make([]int64, 1024)
			for r := range vals {
				vals[r] = base + from + int64(r*64+c)
			}
			cols[fmt.Sprintf("c%02d", c)] = vals
		}
		return int64Tablet(seq64(from, 1024), cols)
	}
	for i := range int64(8) {
		require.NoError(t, db.Insert("W", "d", wide(i*1024, 0)))
	}
	rows, err := db.Scan(context.Background(), ScanRequest{Type: "W", BatchRows: 1024, ReuseBatches: reuse})
	require.NoError(t, err)
	defer rows.Close()
	first, ok := rows.Next()
	require.True(t, ok)
	require.Equal(t, 1024, first.Rows.Rows())
	require.True(t, first.Stable, "rows of the memtable only")

	require.NoError(t, db.Flush())
	require.Zero(t, db.Stats().ImmutableMemtables)
	for i := range int64(8) { // into the next memtable: other values, same shape
		require.NoError(t, db.Insert("W", "e", wide(i*1024, 1<<40)))
	}
	db.pool.Settle()
	require.Zero(t, db.Stats().PoolBytes, "the scan still holds the flushed memtable")
	batches := []Batch{first}
	for b, ok := rows.Next(); ok; b, ok = rows.Next() {
		batches = append(batches, b)
	}
	require.NoError(t, rows.Err())
	if !reuse {
		db.pool.Settle()
		require.Positive(t, db.Stats().PoolBytes, "the scan is done: the flushed memtable's memory is kept for the next one")
	}
	for i := range int64(8) { // more writes: with reuse, the scan's end kept the memtable
		require.NoError(t, db.Insert("W", "f", wide(i*1024, 1<<41)))
	}
	n := 0
	for _, b := range batches {
		for c := range b.Rows.Columns {
			col := &b.Rows.Columns[c]
			for r := range b.Rows.Rows() {
				row := n + r
				want := int64(row/1024*1024 + row%1024*64 + c)
				if got := col.Int64(r); got != want {
					t.Fatalf("row %d column %d: %d, want %d", row, c, got, want)
				}
			}
		}
		n += b.Rows.Rows()
	}
	require.Equal(t, 8*1024, n)
	if reuse {
		db.pool.Settle()
		require.Zero(t, db.Stats().PoolBytes, "until Close, the batches are the memtable's")
		rows.Close()
		db.pool.Settle()
		require.Positive(t, db.Stats().PoolBytes, "closed: the flushed memtable's memory is kept for the next one")
	}
}
