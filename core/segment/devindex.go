package segment

import (
	"hash/maphash"
	"math/bits"
	"sort"
)

// deviceIndex finds a device name's place in a file's sorted directory by
// the name's hash: an open-addressing table (linear probing, at most two
// thirds full) of directory positions, each slot tagged with bits of the
// hash so that a probe compares names only when the tags match (about one
// probe in 2^(32-posBits)). Looking a name up costs a cache line or two
// and, when it is there, one name comparison; a binary search of a
// million names costs twenty steps of a cache miss or two. The table also
// rules names out: an absent name ends at an empty slot, most often in
// the same cache line, as the per-file Bloom filters of LSM stores
// (pebble, RocksDB) do, but with the name's place found in the same step.
// That matters for a point read over many files: one of a million devices
// spread over twenty files, or a device present in every one of them.
//
// A slot is tag<<posBits | position+1 (0: empty), 4 bytes, and the table
// has 3/2 slots a name: 6 bytes a name, built from the directory when the
// file is opened. A directory of 2^28 names or more (never written by this
// package's writer at its file sizes) gets no table and is binary-searched.
type deviceIndex struct {
	slots   []uint32
	posBits uint // bits of position+1; the tag is the other 32-posBits
}

// maxIndexedNames: above it the tag would be under 4 bits.
const maxIndexedNames = 1<<28 - 1

// deviceSeed hashes every table of the process: tables are built in
// memory from the device directories, never stored.
var deviceSeed = maphash.MakeSeed()

// DeviceHash is the hash of a device name that IndexHash takes: hashed
// once, a name is looked for in many files.
func DeviceHash(name string) uint64 { return maphash.String(deviceSeed, name) }

func newDeviceIndex(names []string) deviceIndex {
	if len(names) == 0 || len(names) > maxIndexedNames {
		return deviceIndex{}
	}
	return buildDeviceIndex(names, uint(bits.Len(uint(len(names)))))
}

// buildDeviceIndex is newDeviceIndex with positions of posBits bits (at
// least enough for len(names)).
func buildDeviceIndex(names []string, posBits uint) deviceIndex {
	x := deviceIndex{slots: make([]uint32, len(names)+len(names)/2+1), posBits: posBits}
	for p, name := range names {
		i, tag := x.start(DeviceHash(name))
		for x.slots[i] != 0 {
			i = x.next(i)
		}
		x.slots[i] = tag<<x.posBits | uint32(p+1)
	}
	return x
}

// start returns the first slot to probe for hash h and h's tag: the slot
// from the high 32 bits (a multiply, not a modulo), the tag from the top
// of the low 32.
func (x deviceIndex) start(h uint64) (int, uint32) {
	return int((h >> 32) * uint64(len(x.slots)) >> 32), uint32(h) >> x.posBits
}

func (x deviceIndex) next(i int) int {
	if i++; i == len(x.slots) {
		return 0
	}
	return i
}

// find returns the position of name, whose DeviceHash is h, in names (the
// directory the table was built from).
func (x deviceIndex) find(names []string, name string, h uint64) (int, bool) {
	i, tag := x.start(h)
	for s := x.slots[i]; s != 0; s = x.slots[i] {
		if s>>x.posBits == tag {
			if p := int(s&(1<<x.posBits-1)) - 1; names[p] == name {
				return p, true
			}
		}
		i = x.next(i)
	}
	return 0, false
}

// Index returns the index of device in the file's directory (Devices),
// through the file's hash table of its names (deviceIndex).
func (f *File) Index(device string) (int, bool) { return f.IndexHash(device, DeviceHash(device)) }

// IndexHash is Index of a device whose DeviceHash is h: a lookup of one
// name in many files hashes it once.
func (f *File) IndexHash(device string, h uint64) (int, bool) {
	if f.index.slots != nil {
		return f.index.find(f.devices, device, h)
	}
	devs := f.devices // no table: an empty or a huge directory
	if len(devs) == 0 || device < devs[0] || device > devs[len(devs)-1] {
		return 0, false
	}
	i := sort.SearchStrings(devs, device)
	return i, devs[i] == device
}
