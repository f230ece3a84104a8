package cdata

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/arcadego/arcadego/core/errs"
)

// A device listing leaves as one record batch of four columns: "device"
// (utf8; large_utf8 when the names pass utf8's int32 offsets), "rows"
// (int64), and "first" and "last", the least and greatest time, in the
// format of the type's time column. It is written as a scan batch is (one
// block, every byte set), but plainly: a name per row, no dictionary, no
// nulls.

// DeviceRow returns device i of a listing.
type DeviceRow func(i int) (name string, rows, first, last int64)

// DeviceList is the layout of one listing's batch: its schema, and the
// width of its name offsets.
type DeviceList struct {
	schema    Result
	nameBytes int  // the names' bytes, all rows together
	large     bool // names need int64 offsets
}

// NewDeviceList returns the schema of a listing whose names take
// nameBytes bytes, for a type of time unit unit and zone zone.
func NewDeviceList(unit, zone string, nameBytes int) (*DeviceList, error) {
	return newDeviceList(unit, zone, nameBytes, nameBytes > math.MaxInt32)
}

func newDeviceList(unit, zone string, nameBytes int, large bool) (*DeviceList, error) {
	timeFormat, ok := timeFormats[unit]
	if !ok {
		return nil, fmt.Errorf("device list: unknown time unit %q: %w", unit, errs.ErrInternal)
	}
	if unit != "" {
		timeFormat += zone
	}
	l := &DeviceList{nameBytes: nameBytes, large: large}
	nameFormat := deviceValueFormat
	if l.large {
		nameFormat = "U"
	}
	l.schema.add("device", nameFormat, "", 0)
	l.schema.add("rows", "l", "", 0)
	l.schema.add("first", timeFormat, "", 0)
	l.schema.add("last", timeFormat, "", 0)
	return l, nil
}

// ExportSchema writes the listing's schema into the struct ArrowSchema at
// out (>= 4096).
func (l *DeviceList) ExportSchema(mem *Memory, out uintptr) error {
	return l.schema.ExportSchema(mem, out)
}

// ExportBatch writes the n devices that row returns, in order, as one
// struct array into the struct ArrowArray at out (>= 4096). Their names
// must take the bytes given to NewDeviceList.
func (l *DeviceList) ExportBatch(mem *Memory, n int, row DeviceRow, out uintptr) error {
	nameBytes := l.nameBytes
	if n < 0 || nameBytes < 0 {
		return fmt.Errorf("device list of %d devices and %d bytes of names: %w", n, nameBytes, errs.ErrInternal)
	}
	if !l.large && nameBytes > math.MaxInt32 {
		return fmt.Errorf("device list: %d bytes of names pass the int32 offsets of its utf8 schema: %w", nameBytes, errs.ErrInternal)
	}
	const k = 4
	offWidth := uintptr(4)
	if l.large {
		offWidth = 8
	}
	un := uintptr(n)
	size := sizeofWord + k*sizeofWord + k*sizeofArray // root buffers, children, structs
	size += 3*sizeofWord + align8(offWidth*(un+1)) + align8(uintptr(nameBytes))
	size += 3 * (2*sizeofWord + 8*un)
	b, err := newBlock(mem, size, 1+k)
	if err != nil {
		return err
	}
	rootBufs := b.take(sizeofWord) // the struct's validity: NULL
	kids := b.take(k * sizeofWord)
	slots := words(kids, k)
	for i := range slots {
		slots[i] = b.take(sizeofArray)
	}
	child := func(i int, bufs ...uintptr) {
		p := b.take(uintptr(len(bufs)) * sizeofWord)
		ptrs := words(p, int64(len(bufs)))
		for j, x := range bufs {
			ptrs[j] = x
		}
		*at[Array](slots[i]) = Array{
			Length:      int64(n),
			NBuffers:    int64(len(bufs)),
			Buffers:     p,
			Release:     mem.ArrayChildRelease,
			PrivateData: b.base,
		}
	}

	offs, ob := b.buffer(int(offWidth) * (n + 1))
	data, db := b.buffer(nameBytes)
	rows, rb := b.buffer(8 * n)
	first, fb := b.buffer(8 * n)
	last, lb := b.buffer(8 * n)
	ints := func(buf []byte) []int64 { return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(buf))), n) }
	rv, fv, lv := ints(rb), ints(fb), ints(lb)
	var o32 []int32
	var o64 []int64
	if l.large {
		o64 = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(ob))), n+1)
		o64[0] = 0
	} else {
		o32 = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(ob))), n+1)
		o32[0] = 0
	}
	used := 0
	for i := range n {
		name, r, f, la := row(i)
		if len(name) > nameBytes-used {
			b.free()
			return fmt.Errorf("device list: the names take more than the %d bytes counted: %w", nameBytes, errs.ErrInternal)
		}
		used += copy(db[used:], name)
		if l.large {
			o64[i+1] = int64(used)
		} else {
			o32[i+1] = int32(used)
		}
		rv[i], fv[i], lv[i] = r, f, la
	}
	if used != nameBytes {
		b.free()
		return fmt.Errorf("device list: the names take %d bytes, not the %d counted: %w", used, nameBytes, errs.ErrInternal)
	}
	child(0, 0, offs, data)
	child(1, 0, rows)
	child(2, 0, first)
	child(3, 0, last)
	*at[Array](out) = Array{
		Length:      int64(n),
		NBuffers:    1,
		NChildren:   k,
		Buffers:     rootBufs,
		Children:    kids,
		Release:     mem.ArrayRelease,
		PrivateData: b.base,
	}
	return nil
}
