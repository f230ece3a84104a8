package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

func TestLimit(t *testing.T) {
	cases := []struct {
		name                           string
		live, peaks, budgets, overhead int64
		want                           int64
	}{
		// Memtables at their most, little else: they count once, plus
		// half the budgets and the margin.
		{"memtables full", 180 * mib, 168 * mib, 64 * mib, 8 * mib, 168*mib + 48*mib + 8*mib},
		// Memtables flushed since their most: the limit stays.
		{"memtables emptied", 90 * mib, 168 * mib, 64 * mib, 8 * mib, 168*mib + 48*mib + 8*mib},
		// No database open: a small heap gets the margin.
		{"nothing open", 4 * mib, 0, 0, 2 * mib, max(16*mib, 4*mib+8*mib) + 2*mib},
		// A large heap besides the memtables keeps GOGC=100's room.
		{"large rest", 1000 * mib, 100 * mib, 64 * mib, 0, 1000*mib + 900*mib},
	}
	for _, c := range cases {
		got := Limit(c.live, c.peaks, c.budgets, c.overhead)
		assert.Equal(t, c.want, got, c.name)
		// Whatever the figures, the heap may grow by a quarter of the
		// budgets (plus half the margin) before the next collection.
		assert.GreaterOrEqual(t, got-c.live-c.overhead, c.budgets/4+minHeadroom/2, c.name)
	}
}

type fakeDB struct{ mem, budget int64 }

func (f *fakeDB) MemoryUsage() int64 { return f.mem }
func (f *fakeDB) Budget() int64      { return f.budget }

// collect runs collections until the watcher has run once, and returns
// the memory limit then. It waits on the watcher, not on the clock.
func collect(t *testing.T) int64 {
	ran := make(chan struct{}, 1)
	mu.Lock()
	watched = func() {
		select {
		case ran <- struct{}{}:
		default:
		}
	}
	mu.Unlock()
	defer func() {
		mu.Lock()
		watched = nil
		mu.Unlock()
	}()
	for {
		runtime.GC()
		select {
		case <-ran:
			return debug.SetMemoryLimit(-1)
		default:
			runtime.Gosched()
		}
	}
}

func TestPacingFollowsTheMemtables(t *testing.T) {
	t.Cleanup(func() {
		Disable()
		debug.SetMemoryLimit(math.MaxInt64)
	})
	db := &fakeDB{mem: 300 * mib, budget: 64 * mib}
	Track(db)
	defer Untrack(db)

	Enable()
	require.True(t, Enabled())
	limit := collect(t)
	assert.GreaterOrEqual(t, limit, int64(300*mib+48*mib), "the memtables' most plus half the budget")
	assert.Less(t, limit, int64(1<<40))

	// The memtables empty: the limit keeps their most.
	db.mem = 0
	assert.GreaterOrEqual(t, collect(t), int64(300*mib+48*mib))

	// Untracked, the database no longer counts.
	Untrack(db)
	assert.Less(t, collect(t), int64(300*mib))

	// Disabled, the limit is lifted and collections leave it alone.
	Disable()
	require.False(t, Enabled())
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(123 * mib) // the caller's own
	assert.Equal(t, int64(123*mib), collect(t))
}
