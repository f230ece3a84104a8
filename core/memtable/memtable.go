package memtable

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/arcadego/arcadego/core/schema"
)

// Options tune a memtable. Zero values take defaults.
type Options struct {
	// BlockRows is the number of rows per block: a power of two, default
	// 1024; other values are rounded up to a power of two between 8 and
	// 1<<20.
	BlockRows int
}

const defaultBlockRows = 1024

// Memtable holds the aligned chunks of every (type, device).
//
// Chunk creation takes mu for writing; finding a chunk takes it for
// reading; nothing else does, so writes to different chunks only share the
// atomic memory total. mem is the sum of the chunks' MemoryUsage: each
// chunk adds its own delta to it once per Write.
type Memtable struct {
	blockRows int
	mem       atomic.Int64

	mu    sync.RWMutex
	types map[schema.TypeID]map[string]*Chunk
}

// New returns an empty memtable.
func New(opts Options) *Memtable {
	br := opts.BlockRows
	if br <= 0 {
		br = defaultBlockRows
	}
	br = min(max(nextPow2(br), minTimeRows), maxBlockRows)
	return &Memtable{blockRows: br, types: map[schema.TypeID]map[string]*Chunk{}}
}

// Chunk returns the chunk of (typ, device), creating it if absent.
func (m *Memtable) Chunk(typ schema.TypeID, device string) *Chunk {
	if c, ok := m.Lookup(typ, device); ok {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	devs := m.types[typ]
	if devs == nil {
		devs = map[string]*Chunk{}
		m.types[typ] = devs
	}
	c := devs[device]
	if c == nil {
		c = newChunk(m.blockRows, &m.mem)
		devs[device] = c
	}
	return c
}

// Lookup returns the chunk of (typ, device) if it exists.
func (m *Memtable) Lookup(typ schema.TypeID, device string) (*Chunk, bool) {
	m.mu.RLock()
	c, ok := m.types[typ][device]
	m.mu.RUnlock()
	return c, ok
}

// Devices returns the devices that have a chunk of typ, sorted.
func (m *Memtable) Devices(typ schema.TypeID) []string {
	m.mu.RLock()
	devs := make([]string, 0, len(m.types[typ]))
	for d := range m.types[typ] {
		devs = append(devs, d)
	}
	m.mu.RUnlock()
	slices.Sort(devs)
	return devs
}

// Types returns the types that have a chunk, in no particular order.
func (m *Memtable) Types() []schema.TypeID {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]schema.TypeID, 0, len(m.types))
	for t := range m.types {
		out = append(out, t)
	}
	return out
}

// MemoryUsage returns the estimated bytes held by all chunks.
func (m *Memtable) MemoryUsage() int64 { return m.mem.Load() }

// Clone returns a deep copy that shares no mutable memory with m. It may
// run while m is written: each chunk is copied as of one moment (holding
// that chunk's writer lock briefly), not the memtable as a whole.
func (m *Memtable) Clone() *Memtable {
	nm := &Memtable{blockRows: m.blockRows, types: map[schema.TypeID]map[string]*Chunk{}}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for typ, devs := range m.types {
		nd := make(map[string]*Chunk, len(devs))
		for d, c := range devs {
			cc := c.Clone()
			cc.total = &nm.mem
			nm.mem.Add(cc.mem.Load())
			nd[d] = cc
		}
		nm.types[typ] = nd
	}
	return nm
}

// Clear drops every chunk. The caller must own m exclusively: no
// concurrent writers, readers or snapshots of its chunks. Chunks obtained
// before are emptied and detached (their later writes are not counted in
// m); m is usable afterwards.
func (m *Memtable) Clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, devs := range m.types {
		for _, c := range devs {
			c.Clear()
			c.total = nil
		}
	}
	m.types = map[schema.TypeID]map[string]*Chunk{}
	m.mem.Store(0)
}
