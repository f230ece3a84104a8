package cdata

import (
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

type listedDevice struct {
	name              string
	rows, first, last int64
}

var listed = []listedDevice{
	{"a", 3, 10, 30},
	{"plant-7/dev-\"q\"", 1, -5, -5},
	{"", 0, 0, 0}, // a device may be named ""
	{"ünïcode", 1 << 40, math.MinInt64, math.MaxInt64},
}

func nameBytes(ds []listedDevice) int {
	n := 0
	for _, d := range ds {
		n += len(d.name)
	}
	return n
}

func rowOf(ds []listedDevice) DeviceRow {
	return func(i int) (string, int64, int64, int64) {
		d := ds[i]
		return d.name, d.rows, d.first, d.last
	}
}

// readDeviceList reads an exported listing back from its structs.
func readDeviceList(t *testing.T, a *Array, large bool) []listedDevice {
	t.Helper()
	require.Equal(t, int64(4), a.NChildren)
	require.Equal(t, int64(1), a.NBuffers)
	assert.Zero(t, words(a.Buffers, 1)[0], "a struct array has no validity")
	n := int(a.Length)
	kids := words(a.Children, 4)
	for i, c := range kids {
		ca := at[Array](c)
		assert.Equal(t, a.Length, ca.Length, "column %d", i)
		assert.Zero(t, ca.NullCount, "column %d", i)
		assert.Zero(t, ca.Offset, "column %d", i)
		assert.Equal(t, arrayChildRelease, ca.Release, "column %d", i)
		assert.Equal(t, a.PrivateData, ca.PrivateData, "column %d", i)
		assert.Zero(t, words(ca.Buffers, ca.NBuffers)[0], "column %d has no validity", i)
	}
	name := at[Array](kids[0])
	require.Equal(t, int64(3), name.NBuffers)
	nb := words(name.Buffers, 3)
	offs := make([]int64, n+1)
	for i := range offs {
		if large {
			offs[i] = unsafe.Slice(at[int64](nb[1]), n+1)[i]
		} else {
			offs[i] = int64(unsafe.Slice(at[int32](nb[1]), n+1)[i])
		}
	}
	ints := func(c int) []int64 {
		ca := at[Array](kids[c])
		require.Equal(t, int64(2), ca.NBuffers)
		return unsafe.Slice(at[int64](words(ca.Buffers, 2)[1]), n)
	}
	rows, first, last := ints(1), ints(2), ints(3)
	var got []listedDevice
	for i := range n {
		got = append(got, listedDevice{string(bytesAt(nb[2]+uintptr(offs[i]), offs[i+1]-offs[i])), rows[i], first[i], last[i]})
	}
	return got
}

func TestExportDeviceList(t *testing.T) {
	for _, c := range []struct {
		unit, zone, timeFormat string
		large                  bool
	}{
		{"", "", "l", false},
		{"ms", "UTC", "tsm:UTC", false},
		{"ns", "", "tsn:", true},
	} {
		t.Run(c.timeFormat, func(t *testing.T) {
			var keep arena
			g := newGoMemory()
			l, err := newDeviceList(c.unit, c.zone, nameBytes(listed), c.large) // large: as if the names passed 2 GiB
			require.NoError(t, err)
			s, a := keep.schema(), keep.array()
			require.NoError(t, l.ExportSchema(&g.Memory, Addr(s)))
			require.NoError(t, l.ExportBatch(&g.Memory, len(listed), rowOf(listed), Addr(a)))

			var names, formats []string
			for _, addr := range words(s.Children, s.NChildren) {
				cs := at[Schema](addr)
				names = append(names, cString(cs.Name))
				formats = append(formats, cString(cs.Format))
				assert.Zero(t, cs.Flags, "not nullable")
				assert.Zero(t, cs.Dictionary)
			}
			nameFormat := "u"
			if c.large {
				nameFormat = "U"
			}
			assert.Equal(t, []string{"device", "rows", "first", "last"}, names)
			assert.Equal(t, []string{nameFormat, "l", c.timeFormat, c.timeFormat}, formats)

			assert.Equal(t, int64(len(listed)), a.Length)
			assert.Equal(t, arrayRelease, a.Release)
			assert.Equal(t, listed, readDeviceList(t, a, c.large))

			// The root and each column hold one reference on each block.
			assert.Equal(t, int64(5), g.refs(t, s.PrivateData), "the schema's block")
			block := a.PrivateData
			assert.Equal(t, int64(5), g.refs(t, block))
			for range 5 {
				g.Unref(block)
			}
			assert.Len(t, g.blocks, 1, "the batch's block is freed, the schema's is not")
			runtime.KeepAlive(&keep)
		})
	}
}

func TestExportDeviceListEmpty(t *testing.T) {
	var keep arena
	g := newGoMemory()
	l, err := NewDeviceList("us", "", 0)
	require.NoError(t, err)
	a := keep.array()
	require.NoError(t, l.ExportBatch(&g.Memory, 0, rowOf(nil), Addr(a)))
	assert.Zero(t, a.Length)
	assert.Empty(t, readDeviceList(t, a, false))
	name := at[Array](words(a.Children, 4)[0])
	nb := words(name.Buffers, 3)
	assert.NotZero(t, nb[1], "an empty utf8 array still has its one offset")
	assert.Zero(t, *at[int32](nb[1]))
	runtime.KeepAlive(&keep)
}

// TestExportDeviceListRefusesMiscountedNames: names that do not take the
// bytes counted are a caller's bug, refused with nothing left allocated.
func TestExportDeviceListRefusesMiscountedNames(t *testing.T) {
	for _, count := range []int{nameBytes(listed) - 1, nameBytes(listed) + 1} {
		var keep arena
		g := newGoMemory()
		l, err := NewDeviceList("", "", count)
		require.NoError(t, err)
		a := keep.array()
		err = l.ExportBatch(&g.Memory, len(listed), rowOf(listed), Addr(a))
		require.ErrorIs(t, err, errs.ErrInternal)
		assert.Contains(t, err.Error(), "bytes")
		assert.Empty(t, g.blocks, "the block is freed")
		assert.Zero(t, a.Release, "out is left untouched")
		runtime.KeepAlive(&keep)
	}
	_, err := NewDeviceList("weeks", "", 0)
	require.ErrorIs(t, err, errs.ErrInternal)

	// A utf8 schema cannot take names past its int32 offsets.
	var keep arena
	g := newGoMemory()
	l, err := newDeviceList("", "", math.MaxInt32+1, false)
	require.NoError(t, err)
	err = l.ExportBatch(&g.Memory, 1, rowOf(listed), Addr(keep.array()))
	require.ErrorIs(t, err, errs.ErrInternal)
	assert.Contains(t, err.Error(), "int32 offsets")
	assert.Empty(t, g.blocks, "nothing is allocated")
	runtime.KeepAlive(&keep)
}

func TestExportDeviceListOutOfMemory(t *testing.T) {
	var keep arena
	g := newGoMemory()
	g.fail = true
	l, err := NewDeviceList("", "", nameBytes(listed))
	require.NoError(t, err)
	err = l.ExportBatch(&g.Memory, len(listed), rowOf(listed), Addr(keep.array()))
	require.ErrorIs(t, err, errs.ErrInternal)
	assert.Contains(t, err.Error(), "out of memory")
	runtime.KeepAlive(&keep)
}

func TestDeviceListTakesLargeUTF8PastInt32Offsets(t *testing.T) {
	for _, c := range []struct {
		bytes int
		large bool
	}{{math.MaxInt32, false}, {math.MaxInt32 + 1, true}} {
		l, err := NewDeviceList("", "", c.bytes)
		require.NoError(t, err)
		assert.Equal(t, c.large, l.large, "%d bytes of names", c.bytes)
	}
}
