package engine

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestOneConversionRule: lossless widening is accepted and stored as the
// property's type; anything that could change a value is refused, naming
// the column (or the time column), and changes nothing.
func TestOneConversionRule(t *testing.T) {
	db := openMem(t, Options{})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.n INT64; CREATE PROPERTY A.x DOUBLE; "+
		"CREATE PROPERTY A.i INT32; CREATE PROPERTY A.f FLOAT"))
	ts := func(times ...int64) *tablet.Tablet {
		return &tablet.Tablet{Times: times, TimeUnit: "us", TimeZone: "UTC"}
	}
	first := ts(1)
	first.Columns = []tablet.Column{tablet.Int32s("n", []int32{-7}, nil), tablet.Floats("x", []float32{0.5}, nil)}
	require.NoError(t, db.Insert("A", "d", first))

	ok := []struct {
		name string
		t    *tablet.Tablet
		time int64
		n, x any
	}{
		{"INT32 into INT64, nulls kept", func() *tablet.Tablet {
			t := ts(2)
			t.Columns = []tablet.Column{tablet.Int32s("n", []int32{math.MaxInt32}, nil), tablet.Int32s("x", []int32{0}, []bool{false})}
			return t
		}(), 2, int64(math.MaxInt32), nil},
		{"exact INT64 into DOUBLE", func() *tablet.Tablet {
			t := ts(3)
			t.Columns = []tablet.Column{tablet.Int64s("x", []int64{-(1 << 53)}, nil)}
			return t
		}(), 3, nil, float64(-(1 << 53))},
		{"nanoseconds into microseconds, whole", &tablet.Tablet{Times: []int64{4000}, TimeUnit: "ns", TimeZone: "UTC",
			Columns: []tablet.Column{tablet.Int64s("n", []int64{4}, nil)}}, 4, int64(4), nil},
		{"seconds into microseconds", &tablet.Tablet{Times: []int64{5}, TimeUnit: "s", TimeZone: "UTC",
			Columns: []tablet.Column{tablet.Int64s("n", []int64{5}, nil)}}, 5_000_000, int64(5), nil},
		{"INT64 that fits into INT32, DOUBLE exact in FLOAT", func() *tablet.Tablet {
			t := ts(7)
			t.Columns = []tablet.Column{tablet.Int64s("i", []int64{math.MinInt32}, nil), tablet.Doubles("f", []float64{0.5}, nil)}
			return t
		}(), 7, nil, nil},
		{"another zone: the same instants", &tablet.Tablet{Times: []int64{6}, TimeUnit: "ms", TimeZone: "Europe/Paris",
			Columns: []tablet.Column{tablet.Int64s("n", []int64{6}, nil)}}, 6000, int64(6), nil},
	}
	for _, c := range ok {
		require.NoError(t, db.Insert("A", "d", c.t), c.name)
		row := rowsOf(t, db, "A")["d"][c.time]
		require.NotNil(t, row, c.name)
		assert.Equal(t, c.n, row["n"], c.name)
		assert.Equal(t, c.x, row["x"], c.name)
	}

	bad := []struct {
		name    string
		t       *tablet.Tablet
		mention string
	}{
		{"DOUBLE into INT64", func() *tablet.Tablet {
			t := ts(10)
			t.Columns = []tablet.Column{tablet.Doubles("n", []float64{2}, nil)}
			return t
		}(), `column "n"`},
		{"INT64 into DOUBLE past 2^53", func() *tablet.Tablet {
			t := ts(10, 11)
			t.Columns = []tablet.Column{tablet.Int64s("x", []int64{1, 1<<53 + 1}, nil)}
			return t
		}(), "row 1"},
		{"INT64 past INT32", func() *tablet.Tablet {
			t := ts(10)
			t.Columns = []tablet.Column{tablet.Int64s("i", []int64{math.MaxInt32 + 1}, nil)}
			return t
		}(), "does not fit in INT32"},
		{"DOUBLE not exact in FLOAT", func() *tablet.Tablet {
			t := ts(10)
			t.Columns = []tablet.Column{tablet.Doubles("f", []float64{0.1}, nil)}
			return t
		}(), "not exact in a FLOAT"},
		{"plain integers into a timestamp type", &tablet.Tablet{Times: []int64{10},
			Columns: []tablet.Column{tablet.Int64s("n", []int64{1}, nil)}}, "do not say their unit"},
		{"nanoseconds with a remainder", &tablet.Tablet{Times: []int64{10_001}, TimeUnit: "ns", TimeZone: "UTC"}, "whole number"},
		{"seconds that overflow", &tablet.Tablet{Times: []int64{math.MaxInt64 / 10}, TimeUnit: "s", TimeZone: "UTC"}, "does not fit"},
		{"wall-clock times into instants", &tablet.Tablet{Times: []int64{10}, TimeUnit: "us"}, "wall-clock"},
	}
	for _, c := range bad {
		version, appends := db.Catalog().Version(), db.LogStats().Appends
		err := db.Insert("A", "d", c.t)
		require.ErrorIs(t, err, errs.ErrInvalidArgument, c.name)
		assert.Contains(t, err.Error(), c.mention, c.name)
		assert.Equal(t, version, db.Catalog().Version(), c.name)
		assert.Equal(t, appends, db.LogStats().Appends, c.name)
	}
	rows := rowsOf(t, db, "A")["d"]
	assert.Len(t, rows, 7)
	assert.Equal(t, int32(math.MinInt32), rows[7]["i"])
	assert.Equal(t, float32(0.5), rows[7]["f"])

	// The first insert declares the kind, plain int64 included: a later
	// timestamp insert cannot reinterpret the rows stored.
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE B"))
	require.NoError(t, db.Insert("B", "d", &tablet.Tablet{Times: []int64{1}}))
	err := db.Insert("B", "d", &tablet.Tablet{Times: []int64{2}, TimeUnit: "ms"})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "int64")
}

// TestLogsWithoutTimeDeclarationsReplay: logs written before a type's first
// insert declared its time kind hold inserts without that declaration;
// they still commit and replay, the entry declaring the kind.
func TestLogsWithoutTimeDeclarationsReplay(t *testing.T) {
	db, dir := openDisk(t, Options{})
	require.NoError(t, db.Exec("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"))
	// An insert as an older version logged it: the entry alone, no SetTime
	// (appended to the log directly: a live commit refuses it, see below).
	tb := int64Tablet([]int64{1, 2}, map[string][]int64{"k": {10, 20}})
	e := entry{typ: "A", device: "d", t: tb, enc: encodeEntry("A", "d", tb)}
	require.ErrorIs(t, db.commit(db.pending, nil, nil, []entry{e}, nil, nil), errs.ErrConflict)
	_, err := db.log.AppendParts(recordCommit, recordParts(nil, []entry{e}, nil, nil)...)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	again, err := Open(dir, Options{})
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, map[string]map[int64]map[string]any{"d": {1: {"k": int64(10)}, 2: {"k": int64(20)}}}, rowsOf(t, again, "A"))
	ty, _ := again.Catalog().Type("A")
	assert.True(t, ty.TimeSet, "the replayed entry declared the time kind")
	assert.Equal(t, "", ty.TimeUnit)
}
