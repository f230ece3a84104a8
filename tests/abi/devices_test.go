package abi_test

import (
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deviceListing is a device listing, one list per column, as
// arcadego_devices writes it in JSON.
type deviceListing struct {
	Device []string `json:"device"`
	Rows   []int64  `json:"rows"`
	First  []int64  `json:"first"`
	Last   []int64  `json:"last"`
}

func devicesJSONOf(t *testing.T, db uintptr, request string) deviceListing {
	t.Helper()
	var out uintptr
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.devices(db, cstr(request), &out, e) })
	requireOK(t, code, msg, "devices")
	var l deviceListing
	require.NoError(t, json.Unmarshal([]byte(goString(out)), &l))
	lib.free(out)
	return l
}

// deviceListOf runs arcadego_device_list and reads its batch back (and
// releases it), with the columns' formats.
func deviceListOf(t *testing.T, db uintptr, request string) (deviceListing, []string) {
	t.Helper()
	sch := libc.calloc(1, unsafe.Sizeof(cSchema{}))
	defer libc.free(sch)
	arr := libc.calloc(1, unsafe.Sizeof(cArray{}))
	defer libc.free(arr)
	code, msg := callErr(t, func(e *uintptr) int32 { return lib.deviceList(db, cstr(request), sch, arr, e) })
	requireOK(t, code, msg, "device_list")
	r := &result{}
	readSchema(r, sch)
	require.Equal(t, []string{"device", "rows", "first", "last"}, r.names)
	appendBatch(r, arr)
	l := deviceListing{Device: []string{}, Rows: []int64{}, First: []int64{}, Last: []int64{}}
	for _, row := range r.rows {
		l.Device = append(l.Device, row[0].(string))
		l.Rows = append(l.Rows, row[1].(int64))
		l.First = append(l.First, row[2].(int64))
		l.Last = append(l.Last, row[3].(int64))
	}
	return l, r.formats
}

// TestDeviceListIsTheDevicesListingAsArrow: arcadego_device_list gives
// what arcadego_devices gives, as one record batch whose time columns
// have the type's time format, with or without a prefix.
func TestDeviceListIsTheDevicesListingAsArrow(t *testing.T) {
	db := openDB(t, "", `{"auto_create": true}`)
	for i, dev := range []string{"b/2", "a/1", `q"uote\`, "é-1", "", "b/1"} {
		b := exportBatch(t, 2, fixedCol("time", "tsm:UTC", []int64{int64(10 * i), int64(10*i + 5)}, nil),
			int64Col("k", []int64{1, 2}, nil))
		code, msg := insert(t, db, "Ms", dev, b)
		requireOK(t, code, msg, "insert")
	}
	b := exportBatch(t, 1, timeCol(7), int64Col("k", []int64{1}, nil))
	code, msg := insert(t, db, "Plain", "d", b)
	requireOK(t, code, msg, "insert")

	for _, c := range []struct {
		request, timeFormat string
		devices             []string
	}{
		{`{"type": "Ms"}`, "tsm:UTC", []string{"", "a/1", "b/1", "b/2", `q"uote\`, "é-1"}},
		{`{"type": "Ms", "prefix": "b/"}`, "tsm:UTC", []string{"b/1", "b/2"}},
		{`{"type": "Ms", "prefix": "zzz"}`, "tsm:UTC", []string{}},
		{`{"type": "Plain"}`, "l", []string{"d"}},
	} {
		got, formats := deviceListOf(t, db, c.request)
		assert.Equal(t, []string{"u", "l", c.timeFormat, c.timeFormat}, formats, c.request)
		assert.Equal(t, c.devices, got.Device, c.request)
		want := devicesJSONOf(t, db, c.request)
		if len(want.Device) == 0 {
			want = deviceListing{Device: []string{}, Rows: []int64{}, First: []int64{}, Last: []int64{}}
		}
		assert.Equal(t, want, got, c.request)
	}
	got, _ := deviceListOf(t, db, `{"type": "Ms", "prefix": "a/"}`)
	assert.Equal(t, deviceListing{Device: []string{"a/1"}, Rows: []int64{2}, First: []int64{10}, Last: []int64{15}}, got)
}

// TestDeviceListRefusesBadRequests: a failed call names what was wrong
// and leaves both structs released (zeroed), whatever they held.
func TestDeviceListRefusesBadRequests(t *testing.T) {
	db := openDB(t, "", `{"auto_create": true}`)
	b := exportBatch(t, 1, timeCol(7), int64Col("k", []int64{1}, nil))
	code, msg := insert(t, db, "T", "d", b)
	requireOK(t, code, msg, "insert")
	sch := libc.calloc(1, unsafe.Sizeof(cSchema{}))
	defer libc.free(sch)
	arr := libc.calloc(1, unsafe.Sizeof(cArray{}))
	defer libc.free(arr)
	for _, c := range []struct {
		request string
		code    int
		msg     string
	}{
		{`{"type": "Nope"}`, codeNotFound, "Nope"},
		{`{"prefix": "a"}`, codeInvalidArgument, `"type" is required`},
		{`{"type": "T"`, codeInvalidArgument, "device_list request"},
		{`{"type": "T", "limit": 3}`, codeInvalidArgument, "limit"},
	} {
		at[cSchema](sch).release, at[cSchema](sch).nChildren = 0xA5A5, 7 // junk a failure must clear
		at[cArray](arr).release, at[cArray](arr).length = 0xA5A5, 7
		code, msg := callErr(t, func(e *uintptr) int32 { return lib.deviceList(db, cstr(c.request), sch, arr, e) })
		assert.Equal(t, c.code, code, "%s: %s", c.request, msg)
		assert.Contains(t, msg, c.msg, c.request)
		assert.Zero(t, at[cSchema](sch).release, "%s: the schema is left released", c.request)
		assert.Zero(t, at[cArray](arr).release, "%s: the array is left released", c.request)
		assert.Zero(t, at[cSchema](sch).nChildren+at[cArray](arr).length, "%s: both are zeroed", c.request)
	}
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.deviceList(db, cstr(`{"type": "T"}`), 0, arr, e) })
	assert.Equal(t, codeInvalidArgument, code)
	assert.Contains(t, msg, "schema_out is NULL")
	code, msg = callErr(t, func(e *uintptr) int32 { return lib.deviceList(db, cstr(`{"type": "T"}`), sch, 0, e) })
	assert.Equal(t, codeInvalidArgument, code)
	assert.Contains(t, msg, "array_out is NULL")
}
