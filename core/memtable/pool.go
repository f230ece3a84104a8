package memtable

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Pool keeps the value memory of retired memtables for the next ones, so
// that a write into a fresh row block lands in memory that is already
// mapped instead of in new pages the kernel must fault in and zero (with
// wide tablets that was most of a write's cost). It holds whole slabs of
// slabBytes and at most a fixed number of bytes; the rest goes back to the
// Go heap. Slabs are zeroed when they come back, by whoever releases the
// memtable (the engine's flusher), not by the writers that take them.
//
// A Pool is safe for concurrent use; several memtables may share one.
type Pool struct {
	limit   int64 // changed under mu
	pending sync.WaitGroup
	mu      sync.Mutex
	free    [][]byte
	held    atomic.Int64 // free slabs, and those a put is zeroing; changed under mu
}

// NewPool returns a pool that keeps at most limit bytes of free slabs.
func NewPool(limit int64) *Pool { return &Pool{limit: limit} }

// Bytes returns the bytes the pool holds, free for the next memtable.
func (p *Pool) Bytes() int64 {
	if p == nil {
		return 0
	}
	return p.held.Load()
}

// Drain drops the free slabs, for the collector, and keeps none given
// back later (the database is closing).
func (p *Pool) Drain() {
	if p == nil {
		return
	}
	p.Settle()
	p.mu.Lock()
	p.held.Add(-int64(len(p.free)) * slabBytes)
	p.free, p.limit = nil, 0
	p.mu.Unlock()
}

// Settle waits until the slabs given back so far are in the pool.
func (p *Pool) Settle() {
	if p != nil {
		p.pending.Wait()
	}
}

// get returns a zeroed slab of slabBytes: a kept one, or a new one.
func (p *Pool) get() []byte {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.held.Add(-slabBytes)
		p.mu.Unlock()
		return s
	}
	p.mu.Unlock()
	// Backed by uint64s: 8-byte alignment for the values carved from it.
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, slabBytes/8)))), slabBytes)
}

// put zeroes slabs and keeps as many as the limit allows.
func (p *Pool) put(slabs [][]byte) {
	p.mu.Lock()
	room := max(0, int((p.limit-p.held.Load())/slabBytes))
	keep := slabs[:min(room, len(slabs))]
	p.held.Add(int64(len(keep)) * slabBytes) // reserved: a concurrent put sees it
	p.mu.Unlock()
	for _, s := range keep {
		clear(s)
	}
	p.mu.Lock()
	p.free = append(p.free, keep...)
	p.mu.Unlock()
}

// slabSource is a memtable's link to its pool: the slabs its chunks took,
// to be given back when the memtable is released.
type slabSource struct {
	pool  *Pool
	mu    sync.Mutex
	taken [][]byte
}

func (s *slabSource) get() []byte {
	b := s.pool.get()
	s.mu.Lock()
	s.taken = append(s.taken, b)
	s.mu.Unlock()
	return b
}

// giveBack returns the slabs taken to the pool; no chunk of the memtable
// may be read or written afterwards. They are zeroed on a goroutine of
// their own: the last Release may be a reader's (a result stream released
// by a Python thread), which should not wait for a memtable's worth of
// clearing.
func (s *slabSource) giveBack() {
	s.mu.Lock()
	taken := s.taken
	s.taken = nil
	s.mu.Unlock()
	if len(taken) > 0 {
		s.pool.pending.Add(1)
		go func() {
			defer s.pool.pending.Done()
			s.pool.put(taken)
		}()
	}
}
