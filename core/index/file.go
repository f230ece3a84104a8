package index

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"

	"github.com/arcadego/arcadego/core/errs"
)

// A sidecar file lists the (key, device, time) of every row of one data
// file that holds a key, sorted by key, then device, then time. Little
// endian throughout:
//
//	"AGIX" u32(version 1) u64(entries n) u32(devices d) u32(0)
//	u32 × (d+1) device name offsets, the names, zero padding to 8 bytes
//	u32 × (n+1) key offsets, zero padding to 8 bytes
//	i64 × n times, u32 × n device numbers, the keys
//	u32 CRC-32C of everything before it
//
// It is derived data: a missing or damaged sidecar is rebuilt from its
// data file, so it is written without fsync.

const (
	fileMagic   = "AGIX"
	fileVersion = 1
	headerSize  = 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Entry is one row's key in a file being written; Device indexes the
// device names given with it.
type Entry struct {
	Key    []byte
	Device uint32
	Time   int64
}

// WriteFile sorts entries and writes them to path (through a temporary
// file and a rename, so path is whole or absent).
func WriteFile(path string, devices []string, entries []Entry) error {
	buf, err := encode(devices, entries)
	if err != nil {
		return fmt.Errorf("index: %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, buf, 0o644); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("index: write %s: %v: %w", path, err, errs.ErrIO)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("index: write %s: %v: %w", path, err, errs.ErrIO)
	}
	return nil
}

// Build sorts entries and returns them as a sidecar held in memory, for
// a database that may not write.
func Build(devices []string, entries []Entry) (*File, error) {
	buf, err := encode(devices, entries)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	f := &File{data: buf}
	if err := f.parse(); err != nil {
		return nil, fmt.Errorf("index: %v: %w", err, errs.ErrInternal)
	}
	return f, nil
}

func encode(devices []string, entries []Entry) ([]byte, error) {
	if !slices.IsSortedFunc(entries, compareEntries) {
		SortEntries(entries)
	}
	keyBytes, nameBytes := 0, 0
	for _, e := range entries {
		keyBytes += len(e.Key)
	}
	for _, d := range devices {
		nameBytes += len(d)
	}
	if keyBytes > math.MaxUint32 || nameBytes > math.MaxUint32 {
		return nil, fmt.Errorf("keys too large for one sidecar: %w", errs.ErrInvalidArgument)
	}
	n := len(entries)
	buf := make([]byte, 0, headerSize+4*(len(devices)+1)+nameBytes+8+4*(n+1)+8+12*n+keyBytes+4)
	buf = append(buf, fileMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, fileVersion)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(n))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(devices)))
	buf = binary.LittleEndian.AppendUint32(buf, 0)
	at := uint32(0)
	for _, d := range devices {
		buf = binary.LittleEndian.AppendUint32(buf, at)
		at += uint32(len(d))
	}
	buf = binary.LittleEndian.AppendUint32(buf, at)
	for _, d := range devices {
		buf = append(buf, d...)
	}
	buf = pad8(buf)
	at = 0
	for _, e := range entries {
		buf = binary.LittleEndian.AppendUint32(buf, at)
		at += uint32(len(e.Key))
	}
	buf = binary.LittleEndian.AppendUint32(buf, at)
	buf = pad8(buf)
	for _, e := range entries {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.Time))
	}
	for _, e := range entries {
		buf = binary.LittleEndian.AppendUint32(buf, e.Device)
	}
	for _, e := range entries {
		buf = append(buf, e.Key...)
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli)), nil
}

// SortEntries sorts entries by key, device and time. Most comparisons
// are decided by the keys' first 16 bytes, compared as two integers.
func SortEntries(entries []Entry) {
	type sortable struct {
		hi, lo uint64
		i      int32
	}
	order := make([]sortable, len(entries))
	for i, e := range entries {
		var p [16]byte
		copy(p[:], e.Key)
		order[i] = sortable{binary.BigEndian.Uint64(p[:8]), binary.BigEndian.Uint64(p[8:]), int32(i)}
	}
	slices.SortFunc(order, func(x, y sortable) int {
		if x.hi != y.hi {
			if x.hi < y.hi {
				return -1
			}
			return 1
		}
		if x.lo != y.lo {
			if x.lo < y.lo {
				return -1
			}
			return 1
		}
		a, b := &entries[x.i], &entries[y.i]
		if c := bytes.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if a.Device != b.Device {
			return cmp.Compare(a.Device, b.Device)
		}
		return cmp.Compare(a.Time, b.Time)
	})
	sorted := make([]Entry, len(entries))
	for k, o := range order {
		sorted[k] = entries[o.i]
	}
	copy(entries, sorted)
}

func pad8(b []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// File is an open sidecar, mapped read-only. Safe for concurrent use.
type File struct {
	data    []byte
	mapped  bool
	n       int
	devices []string
	keyOffs []byte // u32 × (n+1)
	times   []byte // i64 × n
	devs    []byte // u32 × n
	keys    []byte
}

// ErrDamaged reports a sidecar that is not whole: rebuild it.
var ErrDamaged = errors.New("index: damaged sidecar")

// OpenFile maps the sidecar at path and checks it whole. A damaged file
// is ErrDamaged (and errs.ErrCorrupt); a missing one fs.ErrNotExist.
func OpenFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("index: %s: %v: %w", path, err, errs.ErrIO)
	}
	size := st.Size()
	if size < headerSize+4 || size > math.MaxInt32*16 {
		return nil, fmt.Errorf("%w %s: %d bytes: %w", ErrDamaged, path, size, errs.ErrCorrupt)
	}
	f := &File{}
	if data, err := syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
		f.data, f.mapped = data, true
	} else if f.data, err = os.ReadFile(path); err != nil {
		return nil, fmt.Errorf("index: %s: %v: %w", path, err, errs.ErrIO)
	}
	if err := f.parse(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w %s: %v: %w", ErrDamaged, path, err, errs.ErrCorrupt)
	}
	return f, nil
}

func (f *File) parse() error {
	d := f.data
	body := d[:len(d)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(d[len(d)-4:]) {
		return errors.New("checksum mismatch")
	}
	if string(d[:4]) != fileMagic || binary.LittleEndian.Uint32(d[4:]) != fileVersion {
		return errors.New("not a sidecar of version 1")
	}
	n64 := binary.LittleEndian.Uint64(d[8:])
	nd := int(binary.LittleEndian.Uint32(d[16:]))
	if n64 > uint64(len(d)) {
		return errors.New("entry count past the end")
	}
	n := int(n64)
	at := headerSize
	need := func(k int) error {
		if k < 0 || at+k > len(body) {
			return errors.New("truncated")
		}
		return nil
	}
	if err := need(4 * (nd + 1)); err != nil {
		return err
	}
	offs := body[at : at+4*(nd+1)]
	at += 4 * (nd + 1)
	names := int(binary.LittleEndian.Uint32(offs[4*nd:]))
	if err := need(names); err != nil {
		return err
	}
	f.devices = make([]string, nd)
	for i := range nd {
		lo, hi := binary.LittleEndian.Uint32(offs[4*i:]), binary.LittleEndian.Uint32(offs[4*i+4:])
		if lo > hi || int(hi) > names {
			return errors.New("bad device offsets")
		}
		f.devices[i] = string(body[at+int(lo) : at+int(hi)])
	}
	at += names
	at = (at + 7) &^ 7
	if err := need(4 * (n + 1)); err != nil {
		return err
	}
	f.keyOffs = body[at : at+4*(n+1)]
	at += 4 * (n + 1)
	at = (at + 7) &^ 7
	if err := need(12 * n); err != nil {
		return err
	}
	f.times = body[at : at+8*n]
	at += 8 * n
	f.devs = body[at : at+4*n]
	at += 4 * n
	f.keys = body[at:]
	prev := uint32(0)
	for i := 0; i <= n; i++ {
		o := binary.LittleEndian.Uint32(f.keyOffs[4*i:])
		if o < prev || int(o) > len(f.keys) {
			return errors.New("bad key offsets")
		}
		prev = o
	}
	if int(prev) != len(f.keys) {
		return errors.New("keys do not end at the checksum")
	}
	for i := range n {
		if int(binary.LittleEndian.Uint32(f.devs[4*i:])) >= nd {
			return errors.New("device number out of range")
		}
	}
	f.n = n
	return nil
}

// Len returns the number of entries.
func (f *File) Len() int { return f.n }

func (f *File) key(i int) []byte {
	return f.keys[binary.LittleEndian.Uint32(f.keyOffs[4*i:]):binary.LittleEndian.Uint32(f.keyOffs[4*i+4:])]
}

// Search calls fn for each entry with lo <= key < hi (a nil bound is
// none), in key order.
func (f *File) Search(lo, hi []byte, fn func(device string, t int64)) {
	i := 0
	if lo != nil {
		i = sort.Search(f.n, func(i int) bool { return bytes.Compare(f.key(i), lo) >= 0 })
	}
	for ; i < f.n; i++ {
		if hi != nil && bytes.Compare(f.key(i), hi) >= 0 {
			return
		}
		fn(f.devices[binary.LittleEndian.Uint32(f.devs[4*i:])], int64(binary.LittleEndian.Uint64(f.times[8*i:])))
	}
}

// SearchKeys calls fn for each entry whose key is one of keys, which
// must be sorted: one pass that gallops from key to key, rather than a
// binary search of the whole file per key.
func (f *File) SearchKeys(keys [][]byte, fn func(device string, t int64)) {
	i := 0
	for _, k := range keys {
		i = gallop(i, f.n, func(j int) bool { return bytes.Compare(f.key(j), k) >= 0 })
		for j := i; j < f.n && bytes.Equal(f.key(j), k); j++ {
			fn(f.devices[binary.LittleEndian.Uint32(f.devs[4*j:])], int64(binary.LittleEndian.Uint64(f.times[8*j:])))
		}
	}
}

// gallop returns the least j in [i, n) with ok(j), or n; ok must be
// false then true over that range. It probes i+1, i+3, i+7, ... first,
// so nearby answers cost little.
func gallop(i, n int, ok func(int) bool) int {
	step, hi := 1, i
	for hi < n && !ok(hi) {
		i = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, n)
	return i + sort.Search(hi-i, func(j int) bool { return ok(i + j) })
}

// compareEntries orders entries by key, device number and time.
func compareEntries(a, b Entry) int {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	if a.Device != b.Device {
		return cmp.Compare(a.Device, b.Device)
	}
	return cmp.Compare(a.Time, b.Time)
}

// Devices returns the device names the entries' device numbers index,
// in name order for the sidecars the engine writes.
func (f *File) Devices() []string { return f.devices }

// Merge calls fn for every entry of files, in the order of a sidecar
// whose device numbers follow device names (key, device name, time): the
// files' sorted entries merged, not sorted again. src is the file an
// entry comes from, device its number there. The files' device lists
// must be in name order, as a sidecar of a data file's devices is.
func Merge(files []*File, fn func(src int, key []byte, device uint32, t int64)) {
	pos := make([]int, len(files))
	less := func(a, b int) bool { // entry pos[a] of files[a] before pos[b] of files[b]
		fa, fb := files[a], files[b]
		ia, ib := pos[a], pos[b]
		if c := bytes.Compare(fa.key(ia), fb.key(ib)); c != 0 {
			return c < 0
		}
		da, db := fa.devices[fa.device(ia)], fb.devices[fb.device(ib)]
		if da != db {
			return da < db
		}
		return fa.time(ia) < fb.time(ib)
	}
	for {
		best := -1
		for k := range files {
			if pos[k] < files[k].n && (best < 0 || less(k, best)) {
				best = k
			}
		}
		if best < 0 {
			return
		}
		f, i := files[best], pos[best]
		fn(best, f.key(i), f.device(i), f.time(i))
		pos[best]++
	}
}

func (f *File) device(i int) uint32 { return binary.LittleEndian.Uint32(f.devs[4*i:]) }

func (f *File) time(i int) int64 { return int64(binary.LittleEndian.Uint64(f.times[8*i:])) }

// Close unmaps the file. No Search may run during or after it.
func (f *File) Close() {
	if f.mapped && f.data != nil {
		_ = syscall.Munmap(f.data)
	}
	f.data = nil
}
