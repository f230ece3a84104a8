package memtable

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/arcadego/arcadego/core/schema"
)

// A tombstone deletes the rows written before it in its time range, in
// snapshots taken after it; rows written after it, and snapshots taken
// before it, are untouched.
func TestChunkDeleteKeepsLaterRowsAndEarlierSnapshots(t *testing.T) {
	ids := []schema.PropertyID{1}
	refs := []ColumnRef{{ID: 1, Name: "c1", Type: schema.Int64}}
	for _, order := range []string{"in order", "out of order"} {
		t.Run(order, func(t *testing.T) {
			m := New(Options{BlockRows: 8})
			c := m.Chunk(1, "d")
			times := seq(0, 20)
			if order == "out of order" {
				times[3], times[15] = times[15], times[3]
			}
			if err := c.Write(int64Tablet(times, ids, nil), ids); err != nil {
				t.Fatal(err)
			}
			before := c.Snapshot()
			m.Delete(1, DeleteRange{Device: "d", Start: 5, End: 12}, true)
			// Rewritten after the delete: stays.
			if err := c.Write(int64Tablet([]int64{7, 30}, ids, nil), ids); err != nil {
				t.Fatal(err)
			}
			after := c.Snapshot()
			assert.Len(t, before.Read(refs, minTime, math.MaxInt64).Times, 20)
			assert.False(t, before.HasDeletes())
			got := after.Read(refs, minTime, math.MaxInt64).Times
			want := []int64{0, 1, 2, 3, 4, 7, 12, 13, 14, 15, 16, 17, 18, 19, 30}
			assert.Equal(t, want, got)
			assert.True(t, after.HasDeletes())
			// A cursor in small batches sees the same.
			var batched []int64
			cur := after.Cursor(refs, minTime, math.MaxInt64, 3)
			for b := cur.Next(); b != nil; b = cur.Next() {
				batched = append(batched, b.Times...)
			}
			assert.Equal(t, want, batched)
			assert.Equal(t, []DeleteRange{{Device: "d", Start: 5, End: 12}}, m.Deletes(1))
			assert.Empty(t, m.Deletes(2))
		})
	}
}

func TestMemtableDeleteEveryDevice(t *testing.T) {
	ids := []schema.PropertyID{1}
	refs := []ColumnRef{{ID: 1, Name: "c1", Type: schema.Int64}}
	m := New(Options{})
	for _, d := range []string{"a", "b"} {
		if err := m.Chunk(1, d).Write(int64Tablet(seq(0, 10), ids, nil), ids); err != nil {
			t.Fatal(err)
		}
	}
	m.Delete(1, DeleteRange{All: true, Start: 0, End: 5}, false)
	for _, d := range []string{"a", "b"} {
		c, _ := m.Lookup(1, d)
		assert.Equal(t, []int64{5, 6, 7, 8, 9}, c.Snapshot().Read(refs, minTime, math.MaxInt64).Times, d)
	}
	assert.Empty(t, m.Deletes(1), "not recorded for older sources")
	// A device created after the delete is untouched.
	if err := m.Chunk(1, "c").Write(int64Tablet(seq(0, 3), ids, nil), ids); err != nil {
		t.Fatal(err)
	}
	c, _ := m.Lookup(1, "c")
	assert.Len(t, c.Snapshot().Read(refs, minTime, math.MaxInt64).Times, 3)
}
