package index

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Mem is the part of an index that covers one memtable: sorted runs of
// entries, immutable once published, so that searches take no lock. Add
// merges the newest runs while the newer is at least half the older, so
// there are O(log n) runs and each entry is copied O(log n) times.
// Writers must be serialized by the caller (the engine applies commits in
// order); searches may run at any time.
type Mem struct {
	mu   sync.Mutex // partial
	runs atomic.Pointer[[][]MemEntry]
	// partial lists rows written with some but not all of a
	// multi-property key: their key depends on older sources, so every
	// search returns them as candidates.
	partial []Row
	bytes   atomic.Int64
}

// MemEntry is one row's key in a memtable.
type MemEntry struct {
	Key    string
	Device string
	Time   int64
}

// Row names a row: its device and time.
type Row struct {
	Device string
	Time   int64
}

func compareMem(a, b MemEntry) int {
	if c := strings.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	if c := strings.Compare(a.Device, b.Device); c != 0 {
		return c
	}
	return cmp.Compare(a.Time, b.Time)
}

// Add adds entries (which it sorts and keeps).
func (m *Mem) Add(entries []MemEntry) {
	if len(entries) == 0 {
		return
	}
	slices.SortFunc(entries, compareMem)
	var runs [][]MemEntry
	if p := m.runs.Load(); p != nil {
		runs = slices.Clone(*p)
	}
	runs = append(runs, entries)
	for len(runs) > 1 && 2*len(runs[len(runs)-1]) >= len(runs[len(runs)-2]) {
		a, b := runs[len(runs)-2], runs[len(runs)-1]
		merged := make([]MemEntry, 0, len(a)+len(b))
		i, j := 0, 0
		for i < len(a) && j < len(b) {
			if compareMem(a[i], b[j]) <= 0 {
				merged = append(merged, a[i])
				i++
			} else {
				merged = append(merged, b[j])
				j++
			}
		}
		merged = append(append(merged, a[i:]...), b[j:]...)
		runs = append(runs[:len(runs)-2], merged)
	}
	size := int64(0)
	for _, e := range entries {
		size += int64(len(e.Key)) + 40
	}
	m.bytes.Add(size)
	m.runs.Store(&runs)
}

// AddPartial records a row written with part of a multi-property key.
func (m *Mem) AddPartial(r Row) {
	m.mu.Lock()
	m.partial = append(m.partial, r)
	m.mu.Unlock()
	m.bytes.Add(int64(len(r.Device)) + 24)
}

// Bytes estimates the memory the part holds.
func (m *Mem) Bytes() int64 { return m.bytes.Load() }

// SearchKeys calls fn for each entry whose key is one of keys, which must
// be sorted, and for each partial row, as File.SearchKeys.
func (m *Mem) SearchKeys(keys [][]byte, fn func(device string, t int64)) {
	if p := m.runs.Load(); p != nil {
		for _, run := range *p {
			i := 0
			for _, k := range keys {
				i = gallop(i, len(run), func(j int) bool { return run[j].Key >= string(k) })
				for j := i; j < len(run) && run[j].Key == string(k); j++ {
					fn(run[j].Device, run[j].Time)
				}
			}
		}
	}
	m.eachPartial(fn)
}

// Search calls fn for each entry with lo <= key < hi (a nil bound is
// none), and for each partial row.
func (m *Mem) Search(lo, hi []byte, fn func(device string, t int64)) {
	if p := m.runs.Load(); p != nil {
		for _, run := range *p {
			i := 0
			if lo != nil {
				i, _ = slices.BinarySearchFunc(run, lo, func(e MemEntry, k []byte) int { return strings.Compare(e.Key, string(k)) })
			}
			for ; i < len(run); i++ {
				if hi != nil && run[i].Key >= string(hi) {
					break
				}
				fn(run[i].Device, run[i].Time)
			}
		}
	}
	m.eachPartial(fn)
}

// eachPartial calls fn for each partial row: candidates of every search.
func (m *Mem) eachPartial(fn func(device string, t int64)) {
	m.mu.Lock()
	partial := m.partial
	m.mu.Unlock()
	for _, r := range partial {
		fn(r.Device, r.Time)
	}
}
