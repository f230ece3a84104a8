package segment

import (
	"hash/maphash"
	"sort"
)

// deviceFilter is a blocked Bloom filter of a file's device names, the
// per-file filter LSM stores such as pebble and RocksDB keep for point
// lookups: a read of one device among a million, spread over many files,
// rules out most files with one cache line each instead of a binary
// search of each file's directory (a cache miss or two a step).
//
// Each name sets filterProbes bits inside one 512-bit block picked by its
// hash; with filterBitsPerName bits a name, about 1% of absent names pass.
type deviceFilter struct {
	blocks [][8]uint64
}

const (
	filterBitsPerName = 10
	filterProbes      = 6
)

// filterSeed hashes every filter of the process: filters are built in
// memory from the device directories, never stored.
var filterSeed = maphash.MakeSeed()

func newDeviceFilter(names []string) deviceFilter {
	n := (len(names)*filterBitsPerName + 511) / 512
	f := deviceFilter{blocks: make([][8]uint64, max(n, 1))}
	for _, name := range names {
		b, h, delta := f.locate(name)
		for range filterProbes {
			b[h>>6&7] |= 1 << (h & 63)
			h += delta
		}
	}
	return f
}

// locate returns name's block and the first probe and step of its bits
// (double hashing, as LevelDB's filter does).
func (f deviceFilter) locate(name string) (*[8]uint64, uint32, uint32) {
	return f.locateHash(DeviceHash(name))
}

// locateHash is locate of the name whose DeviceHash is h.
func (f deviceFilter) locateHash(h uint64) (*[8]uint64, uint32, uint32) {
	block := &f.blocks[(h>>32)*uint64(len(f.blocks))>>32]
	lo := uint32(h)
	return block, lo, lo>>17 | lo<<15
}

// DeviceHash is the hash of a device name that MayHaveHash takes: hashed
// once, a name is looked for in many files' filters.
func DeviceHash(name string) uint64 { return maphash.String(filterSeed, name) }

// mayHave reports false only for a name the filter was not built with.
func (f deviceFilter) mayHave(name string) bool {
	return f.mayHaveHash(DeviceHash(name))
}

func (f deviceFilter) mayHaveHash(hash uint64) bool {
	b, h, delta := f.locateHash(hash)
	for range filterProbes {
		if b[h>>6&7]&(1<<(h&63)) == 0 {
			return false
		}
		h += delta
	}
	return true
}

// MayHave reports whether the file may hold rows of device: false means
// it holds none. The filter is built from the directory by Open.
func (f *File) MayHave(device string) bool {
	f.filterOnce.Do(func() { f.filter = newDeviceFilter(f.devices) })
	return f.filter.mayHave(device)
}

// MayHaveHash is MayHave of the device whose DeviceHash is h.
func (f *File) MayHaveHash(h uint64) bool {
	f.filterOnce.Do(func() { f.filter = newDeviceFilter(f.devices) })
	return f.filter.mayHaveHash(h)
}

// Index returns the index of device in the file's directory (Devices):
// a name the filter rules out costs a block of it (one cache line), the
// others a comparison with the directory's bounds and a binary search.
// The filter comes first: a point read looks in every file, most of
// which it rules out, and each bound is a name to fetch from memory.
func (f *File) Index(device string) (int, bool) { return f.IndexHash(device, DeviceHash(device)) }

// IndexHash is Index of a device whose DeviceHash is h: a lookup of one
// name in many files hashes it once.
func (f *File) IndexHash(device string, h uint64) (int, bool) {
	devs := f.devices
	if len(devs) == 0 || !f.MayHaveHash(h) || device < devs[0] || device > devs[len(devs)-1] {
		return 0, false
	}
	i := sort.SearchStrings(devs, device)
	return i, devs[i] == device
}
