package segment

import (
	"hash/maphash"
	"math/bits"
	"sort"
)

// deviceIndex finds a device name's place in a file's sorted directory by
// the name's hash, in two steps:
//
//   - a blocked Bloom filter (10 bits a name, one 64-byte block a lookup,
//     the per-file filter of LSM stores such as pebble and RocksDB) rules
//     out most names the file lacks;
//   - an open-addressing table (linear probing, at most two thirds full)
//     of directory positions finds the others, each slot tagged with bits
//     of the hash so that a probe compares names only when the tags match
//     (about one probe in 2^(32-posBits)).
//
// A name present costs a filter block, a cache line or two of the table
// and one name comparison, where a binary search of a million names costs
// twenty steps of a cache miss or two; a name absent costs the filter
// block, most often, and the table's line otherwise. The filter comes
// first for its size: when each device lies in one of many files, most
// lookups are of absent names, and the filters of twenty files (1.25 MB
// for a million names) stay in the shared L3 cache where their tables
// (five times larger) mostly do not, though not in a core's L2: a read
// tests every file's first filter bit at once (FirstProbe) so that those
// misses overlap (the lookups of a point read, in a C profile over a
// million devices in twenty files: 12% of the call with the table alone,
// 8% with both, before FirstProbe).
//
// A slot is tag<<posBits | position+1 (0: empty), 4 bytes, and the table
// has 3/2 slots a name: with the filter, 7.25 bytes a name, built from the
// directory when the file is opened. A directory of 2^28 names or more
// (never written by this package's writer at its file sizes) gets no
// index and is binary-searched.
type deviceIndex struct {
	slots   []uint32
	posBits uint // bits of position+1; the tag is the other 32-posBits
	filter  []filterBlock
}

type filterBlock [8]uint64

const (
	maxIndexedNames   = 1<<28 - 1 // above it the tag would be under 4 bits
	filterBitsPerName = 10        // about 1% of absent names pass the filter
	filterProbes      = 6
)

// deviceSeed hashes every index of the process: indexes are built in
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
	x := deviceIndex{
		slots:   make([]uint32, len(names)+len(names)/2+1),
		posBits: posBits,
		filter:  make([]filterBlock, max((len(names)*filterBitsPerName+511)/512, 1)),
	}
	for p, name := range names {
		h := DeviceHash(name)
		b, bit, step := x.filterBits(h)
		for range filterProbes {
			b[bit>>6&7] |= 1 << (bit & 63)
			bit += step
		}
		i, tag := x.start(h)
		for x.slots[i] != 0 {
			i = x.next(i)
		}
		x.slots[i] = tag<<x.posBits | uint32(p+1)
	}
	return x
}

// filterBits returns hash h's filter block and the first bit and step of
// its probes (double hashing, as LevelDB's filter does): the block from
// the low 32 bits of h, the bits from the high ones.
func (x deviceIndex) filterBits(h uint64) (*filterBlock, uint32, uint32) {
	b := &x.filter[(h&0xffffffff)*uint64(len(x.filter))>>32]
	hi := uint32(h >> 32)
	return b, hi, hi>>17 | hi<<15
}

// mayHave reports false only for a hash no name of the index has. It
// tests every probe's bit, without a branch per probe: whether an absent
// name fails at the first or the fifth is a coin toss the branch
// predictor loses, and a loop of lookups without those branches overlaps
// their cache misses (100,000 absent names against a 100,000-name index:
// 21 to 15 ns a lookup).
func (x deviceIndex) mayHave(h uint64) bool {
	b, bit, step := x.filterBits(h)
	var miss uint64
	for range filterProbes {
		miss |= ^b[bit>>6&7] >> (bit & 63)
		bit += step
	}
	return miss&1 == 0
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
// directory the index was built from).
func (x deviceIndex) find(names []string, name string, h uint64) (int, bool) {
	if !x.mayHave(h) {
		return 0, false
	}
	return x.probe(names, name, h)
}

// probe is find through the table alone.
func (x deviceIndex) probe(names []string, name string, h uint64) (int, bool) {
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

// FirstProbe reports whether the first bit of the file's device filter
// that a lookup of hash h tests is set: false rules the name out. (A file
// without a filter passes every name.) A caller looking a name up in many
// files tests this in all of them first, in a loop whose loads do not
// wait for each other, so that their cache misses overlap instead of
// coming one file at a time, and then looks the name up (IndexHash) in
// the files that passed.
func (f *File) FirstProbe(h uint64) bool {
	if f.index.filter == nil {
		return true
	}
	b, bit, _ := f.index.filterBits(h)
	return b[bit>>6&7]&(1<<(bit&63)) != 0
}

// Index returns the index of device in the file's directory (Devices),
// through the file's index of its names (deviceIndex).
func (f *File) Index(device string) (int, bool) { return f.IndexHash(device, DeviceHash(device)) }

// IndexHash is Index of a device whose DeviceHash is h: a lookup of one
// name in many files hashes it once.
func (f *File) IndexHash(device string, h uint64) (int, bool) {
	if f.index.slots != nil {
		return f.index.find(f.devices, device, h)
	}
	devs := f.devices // no index: an empty or a huge directory
	if len(devs) == 0 || device < devs[0] || device > devs[len(devs)-1] {
		return 0, false
	}
	i := sort.SearchStrings(devs, device)
	return i, devs[i] == device
}
