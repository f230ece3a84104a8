// Package gcpace paces Go's garbage collector for a process whose heap is
// mostly memtables. With the default GOGC=100 the heap may grow to twice
// what was live at the last collection; when most of what is live is
// memtable data that stays until it is flushed, that doubles the
// memtables' memory for nothing. When enabled, gcpace sets the runtime's
// soft memory limit after every collection: the most the open databases'
// memtables have held plus a headroom of half their budgets, or what is
// live plus the larger of half that headroom and what is live beyond the
// memtables' most (GOGC=100's room for the rest of the heap), whichever is
// more. The memtables count once; the limit stays put while they fill and
// empty, so the collector does not run more often than it must; and
// between two collections the heap may always grow by a quarter of the
// budgets at least. The rest of the heap is measured against the
// memtables' most, not their current size: a collection during a large
// write finds the new rows live before the memtable counts them.
//
// It owns the process's memory limit while enabled, so only a process
// whose Go runtime serves the engine alone should enable it (the C
// library does, unless GOMEMLIMIT is set or the caller sets a limit of its
// own). It must not touch anything else of the runtime.
package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Source is an open database as gcpace sees it.
type Source interface {
	// MemoryUsage returns the bytes its memtables hold now.
	MemoryUsage() int64
	// Budget returns the bytes at which its live memtable is handed over.
	Budget() int64
}

// minHeadroom is added to the headroom the budgets give (half their sum)
// for what is neither a memtable nor live: the garbage of flushes and
// scans between two collections.
const minHeadroom = 16 << 20

var (
	watched func() // tests: called, under mu, after each collection's update or not

	mu      sync.Mutex
	enabled bool
	epoch   int                  // a collection watcher of an older Enable stops
	sources = map[Source]int64{} // the most its memtables held at a collection
)

// Track adds an open database; Untrack removes it. Cheap, and harmless
// when pacing is off.
func Track(s Source) {
	mu.Lock()
	sources[s] = 0
	mu.Unlock()
}

// Untrack removes a database added by Track.
func Untrack(s Source) {
	mu.Lock()
	delete(sources, s)
	mu.Unlock()
}

// Enable starts pacing: the memory limit is set now and after every
// collection. Enabling twice is one enabling.
func Enable() {
	mu.Lock()
	defer mu.Unlock()
	if enabled {
		return
	}
	enabled = true
	epoch++
	watch(epoch)
	updateLocked()
}

// Disable stops pacing and lifts the limit gcpace set (the caller may set
// its own after).
func Disable() {
	mu.Lock()
	defer mu.Unlock()
	if !enabled {
		return
	}
	enabled = false
	debug.SetMemoryLimit(math.MaxInt64)
}

// Enabled reports whether pacing is on.
func Enabled() bool {
	mu.Lock()
	defer mu.Unlock()
	return enabled
}

// sentinel is an object whose finalizer runs after each collection that
// finds it unreachable; the finalizer makes the next one. It holds a
// pointer so that it is not batched with other tiny objects, whose
// finalizers may wait for their neighbours.
type sentinel struct {
	self *sentinel
	pad  [8]byte
}

// watch arms a sentinel for the next collection.
func watch(e int) {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		if enabled && e == epoch {
			updateLocked()
			watch(e)
		}
		if watched != nil {
			watched()
		}
	})
}

var samples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// updateLocked sets the limit from the last collection's figures.
func updateLocked() {
	metrics.Read(samples)
	var vals [5]uint64
	for i, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			vals[i] = s.Value.Uint64()
		}
	}
	live, total, objects, free, released := vals[0], vals[1], vals[2], vals[3], vals[4]
	// The runtime's own memory (stacks, metadata, span waste) counts
	// toward the limit too: what total holds besides the heap's objects
	// and its free pages.
	overhead := int64(total) - int64(objects) - int64(free) - int64(released)
	var peaks, budgets int64
	for s, peak := range sources {
		peak = max(peak, s.MemoryUsage())
		sources[s] = peak
		peaks += peak
		budgets += s.Budget()
	}
	debug.SetMemoryLimit(Limit(int64(live), peaks, budgets, max(overhead, 0)))
}

// Limit is the memory limit for a heap of live bytes whose memtables have
// held up to peaks bytes, open databases of the given total budget, and
// the runtime's overhead.
func Limit(live, peaks, budgets, overhead int64) int64 {
	headroom := budgets/2 + minHeadroom
	other := max(live-peaks, 0)
	return max(peaks+headroom, live+max(headroom/2, other)) + overhead
}
