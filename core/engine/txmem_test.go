package engine

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/internal/racebuild"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestTxCopiesOfSmallTabletsStayApart: a transaction copies each tablet
// it is given (the caller reuses the buffers at once) into blocks that
// many inserts share. A thousand inserts of one reused set of buffers,
// with changing columns, row counts and nulls, now and then a tablet too
// wide for a block, and one too long, read back as inserted: in memory,
// and on disk after a reopen (the log holds the same copies). Until the
// commit, a copy is its encoding alone; the commit reads each back into
// the same column headers, whatever their number.
func TestTxCopiesOfSmallTabletsStayApart(t *testing.T) {
	for _, where := range []string{"mem", "disk"} {
		t.Run(where, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			if where == "mem" {
				dir = ""
			}
			db, err := Open(dir, Options{AutoCreate: true})
			require.NoError(t, err)
			defer func() { _ = db.Close() }()
			times, ks := make([]int64, 3), make([]int64, 3)
			bs, valid := make([]bool, 3), make([]bool, 3)
			ss := make([]string, 3)
			want := map[string]map[int64]map[string]any{}
			tx, err := db.Begin()
			require.NoError(t, err)
			for i := range 1000 {
				dev := fmt.Sprintf("dev-%02d", i%50)
				rows := 1 + i%3
				tab := &tablet.Tablet{Times: times[:rows]}
				if want[dev] == nil {
					want[dev] = map[int64]map[string]any{}
				}
				for r := range rows {
					times[r] = int64(i*10 + r)
					ks[r], bs[r], valid[r] = int64(i*100+r), (i+r)%2 == 0, (i+r)%4 != 0
					ss[r] = fmt.Sprintf("s%d.%d", i, r)
					row := map[string]any{"k": ks[r], "b": nil, "s": nil, "w0": nil, "w299": nil}
					if i%5 != 0 {
						row["s"] = ss[r]
					}
					if valid[r] {
						row["b"] = bs[r]
					}
					if i%97 == 0 {
						row["w0"], row["w299"] = int64(i), int64(i+299)
					}
					want[dev][times[r]] = row
				}
				tab.Columns = append(tab.Columns, tablet.Int64s("k", ks[:rows], nil), tablet.Bools("b", bs[:rows], valid[:rows]))
				if i%5 != 0 {
					tab.Columns = append(tab.Columns, tablet.Strings("s", ss[:rows], nil))
				}
				if i%97 == 0 { // 302 columns: more than a block serves
					for w := range 300 {
						vals := make([]int64, rows)
						for r := range vals {
							vals[r] = int64(i + w)
						}
						tab.Columns = append(tab.Columns, tablet.Int64s(fmt.Sprint("w", w), vals, nil))
					}
				}
				require.NoError(t, tx.Insert("T", dev, tab))
				// The caller's buffers are overwritten at once.
				for r := range 3 {
					times[r], ks[r], ss[r] = -1, -1, "overwritten"
				}
			}
			// 3,000 rows: an encoding over a quarter of a block, allocated
			// by itself.
			bigTimes, bigKs := make([]int64, 3000), make([]int64, 3000)
			want["dev-big"] = map[int64]map[string]any{}
			for r := range bigTimes {
				bigTimes[r], bigKs[r] = int64(r), int64(-r)
				want["dev-big"][int64(r)] = map[string]any{"k": int64(-r), "b": nil, "s": nil, "w0": nil, "w299": nil}
			}
			require.NoError(t, tx.Insert("T", "dev-big", &tablet.Tablet{Times: bigTimes, Columns: []tablet.Column{tablet.Int64s("k", bigKs, nil)}}))
			clear(bigTimes)
			clear(bigKs)
			for i, e := range tx.entries {
				// Headers (128 bytes a column) would cost more than the copy.
				require.Nil(t, e.t, "entry %d: a copy keeps only its encoding until the commit", i)
			}
			require.NoError(t, tx.Commit())
			// Of the wide tablets' columns, the first and last are compared.
			read := func() map[string]map[int64]map[string]any {
				got := rowsOf(t, db, "T")
				for _, rows := range got {
					for _, row := range rows {
						for name := range row {
							if name != "k" && name != "b" && name != "s" && name != "w0" && name != "w299" {
								delete(row, name)
							}
						}
					}
				}
				return got
			}
			assert.Equal(t, want, read())
			if dir == "" {
				return
			}
			require.NoError(t, db.Close())
			db, err = Open(dir, Options{})
			require.NoError(t, err)
			assert.Equal(t, want, read(), "after a reopen")
		})
	}
}

// TestTxSmallInsertsAllocateLittle: a small tablet copied into a
// transaction takes its memory from the transaction's blocks (it made 15
// allocations: its encoding, the tablet read back, its columns, each
// column's name again and its property ids).
func TestTxSmallInsertsAllocateLittle(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("allocation counts vary under the race detector")
	}
	db, tab := smallTabletDB(t)
	devices := make([]string, 2001)
	for i := range devices {
		devices[i] = fmt.Sprintf("dev-%d", i%100)
	}
	tx, err := db.Begin()
	require.NoError(t, err)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		tab.Times[0] = int64(i + 1)
		require.NoError(t, tx.Insert("T", devices[i], tab))
		i++
	})
	require.NoError(t, tx.Commit())
	assert.Zero(t, allocs, "allocations an insert (AllocsPerRun rounds down: 0 is fewer than one)")
	assert.Len(t, rowsOf(t, db, "T")["dev-7"], 20)
}

// TestBlockTakeHandsOutDisjointCappedRuns: runs taken from a block do not
// overlap, an append to one cannot reach the next, blocks double from the
// first size to the largest, and a request over a quarter of the largest
// is allocated by itself.
func TestBlockTakeHandsOutDisjointCappedRuns(t *testing.T) {
	var b block[int]
	a := b.take(3, 4, 64)
	assert.Equal(t, 4, b.size)
	c := b.take(1, 4, 64)
	a = append(a, 7) // past its cap: moved, c untouched
	assert.Equal(t, 0, c[0])
	assert.Equal(t, 3, cap(b.take(3, 4, 64))) // 8: the block doubled
	assert.Equal(t, 8, b.size)
	for range 20 {
		b.take(16, 4, 64)
	}
	assert.Equal(t, 64, b.size, "at most the largest")
	free := len(b.free)
	big := b.take(17, 4, 64)
	assert.Len(t, big, 17)
	assert.Equal(t, free, len(b.free), "a large request takes nothing from the block")
	seen := map[*int]bool{}
	for range 100 {
		run := b.take(5, 4, 64)
		for i := range run {
			assert.False(t, seen[&run[i]], "an element handed out twice")
			seen[&run[i]] = true
		}
	}
	_ = a
}

// smallTabletDB returns a memory database with type T, written by one
// insert of the one-row tablet of 10 BIGINT columns it returns.
func smallTabletDB(t *testing.T) (*DB, *tablet.Tablet) {
	db := openMem(t, Options{AutoCreate: true})
	cols := map[string][]int64{}
	for c := range 10 {
		cols[fmt.Sprint("c", c)] = []int64{int64(c)}
	}
	tab := int64Tablet([]int64{0}, cols)
	require.NoError(t, db.Insert("T", "warm", tab))
	return db, tab
}

// TestAutocommitsReuseTheirTransaction: an insert that is its own commit
// takes a spare transaction, not a new one, and resolves its one write
// on the stack; a spare keeps nothing of the commit before it, failed or
// not.
func TestAutocommitsReuseTheirTransaction(t *testing.T) {
	db, tab := smallTabletDB(t)
	bad := int64Tablet([]int64{1}, map[string][]int64{"c0": {1}})
	bad.Columns[0].Type = schema.Double // c0 is BIGINT
	for i := range 50 {
		require.Error(t, db.Insert("T", "dev", bad))
		tab.Times[0] = int64(i + 1)
		require.NoError(t, db.Insert("T", "dev", tab))
	}
	assert.Len(t, rowsOf(t, db, "T")["dev"], 50)
	if racebuild.Enabled {
		return // the pool drops items, and allocation counts vary, under the race detector
	}
	// What the last insert put back is zero: no database, catalog, entry,
	// property id or memory block of its commit.
	require.NoError(t, db.Insert("T", "dev", tab))
	spare := spareTxs.Get().(*Tx)
	assert.Zero(t, *spare)
	spareTxs.Put(spare)
	i := 100
	allocs := testing.AllocsPerRun(1000, func() {
		tab.Times[0] = int64(i)
		require.NoError(t, db.Insert("T", "dev", tab))
		i++
	})
	// What is left: the chunk's published state (see memtable.state).
	assert.LessOrEqual(t, allocs, 1.0, "allocations an insert")
}
