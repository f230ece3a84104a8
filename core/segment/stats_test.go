package segment

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
)

type deltaStats struct {
	NumRecords int64                      `json:"numRecords"`
	MinValues  map[string]json.RawMessage `json:"minValues"`
	MaxValues  map[string]json.RawMessage `json:"maxValues"`
	NullCount  map[string]int64           `json:"nullCount"`
}

func parseStats(t *testing.T, s string) deltaStats {
	var st deltaStats
	dec := json.NewDecoder(stringsReader(s))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&st), s)
	return st
}

func raw(m map[string]json.RawMessage) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func TestStatsValues(t *testing.T) {
	l := Layout{TimeUnit: "", Columns: allTypes}
	// Two devices; values chosen so min and max come from different
	// devices and rows, with nulls in every column but one.
	mk := func(tm int64, vals ...any) row { return row{time: tm, vals: vals} }
	data := map[string][]row{
		"b-dev": {
			mk(-5, true, int32(7), int64(math.MaxInt64), float32(1.5), 2.25, "zeta", []byte{9}, int64(-1), int32(0)),
			mk(3, nil, int32(-2147483648), int64(4), nil, -0.5, "éclair", nil, nil, int32(-365)),
		},
		"a-dev": {
			mk(10, false, nil, int64(math.MinInt64), float32(-0.1), math.SmallestNonzeroFloat64, nil, []byte{1}, int64(1_700_000_000_000_000_001), nil),
			mk(11, nil, int32(9), nil, float32(3e38), nil, "alpha", nil, int64(5), int32(2932896)),
		},
	}
	_, info := writeFile(t, l, WriterOptions{RowGroupRows: 2}, data, 2, 0)
	st := parseStats(t, info.Stats)
	assert.EqualValues(t, 4, st.NumRecords)
	assert.Equal(t, map[string]string{
		"device": `"a-dev"`, "time": "-5", "i32": "-2147483648", "i64": "-9223372036854775808",
		"f32": "-0.1", "f64": "-0.5", "s": `"alpha"`, "ts": "-1", "d": `"1969-01-01"`,
	}, raw(st.MinValues))
	assert.Equal(t, map[string]string{
		"device": `"b-dev"`, "time": "11", "i32": "9", "i64": "9223372036854775807",
		"f32": "3e+38", "f64": "2.25", "s": `"éclair"`, "ts": "1700000000000000001", "d": `"9999-12-31"`,
	}, raw(st.MaxValues))
	assert.Equal(t, map[string]int64{
		"device": 0, "time": 0, "b": 2, "i32": 1, "i64": 1, "f32": 1, "f64": 1, "s": 1, "bin": 2, "ts": 1, "d": 1,
	}, st.NullCount)
}

func TestStatsOmissions(t *testing.T) {
	cols := []Column{
		{ID: 1, Name: "nan", Type: schema.Double},
		{ID: 2, Name: "inf", Type: schema.Float},
		{ID: 3, Name: "empty", Type: schema.Int64},
		{ID: 4, Name: "ok", Type: schema.Double},
	}
	mk := func(tm int64, vals ...any) row { return row{time: tm, vals: vals} }
	data := map[string][]row{"d": {
		mk(1, 1.0, float32(2), nil, 0.5),
		mk(2, math.NaN(), float32(math.Inf(1)), nil, nil),
		mk(3, 3.0, nil, nil, 1.5),
	}}
	_, info := writeFile(t, Layout{Columns: cols}, WriterOptions{}, data, 3, 0)
	st := parseStats(t, info.Stats)
	for _, name := range []string{"nan", "inf", "empty"} {
		assert.NotContains(t, st.MinValues, name)
		assert.NotContains(t, st.MaxValues, name)
	}
	assert.Equal(t, "0.5", string(st.MinValues["ok"]))
	assert.Equal(t, "1.5", string(st.MaxValues["ok"]))
	assert.Equal(t, map[string]int64{"device": 0, "time": 0, "nan": 0, "inf": 1, "empty": 3, "ok": 1}, st.NullCount)
}

func TestStatsTimestampRounding(t *testing.T) {
	cases := []struct {
		unit     string
		min, max int64
		wantMin  string
		wantMax  string
	}{
		{"ms", 1_700_000_000_123, 1_700_000_000_124, `"2023-11-14T22:13:20.123Z"`, `"2023-11-14T22:13:20.124Z"`},
		{"us", 1_700_000_000_123_999, 1_700_000_000_124_001, `"2023-11-14T22:13:20.123Z"`, `"2023-11-14T22:13:20.125Z"`},
		{"us", 1_700_000_000_123_000, 1_700_000_000_124_000, `"2023-11-14T22:13:20.123Z"`, `"2023-11-14T22:13:20.124Z"`},
		{"us", -1_001, -999, `"1969-12-31T23:59:59.998Z"`, `"1970-01-01T00:00:00.000Z"`},
		{"s", 5, 7, "5", "7"},
		{"ns", -3, 1_700_000_000_123_456_789, "-3", "1700000000123456789"},
		{"", 0, 1, "0", "1"},
		{"ms", math.MinInt64, 0, "", ""}, // year out of range: omitted
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %d %d", tc.unit, tc.min, tc.max), func(t *testing.T) {
			data := map[string][]row{"d": {{time: tc.min}, {time: tc.max}}}
			_, info := writeFile(t, Layout{TimeUnit: tc.unit}, WriterOptions{}, data, 2, 0)
			st := parseStats(t, info.Stats)
			if tc.wantMin == "" {
				assert.NotContains(t, st.MinValues, "time")
				assert.NotContains(t, st.MaxValues, "time")
				return
			}
			assert.Equal(t, tc.wantMin, string(st.MinValues["time"]))
			assert.Equal(t, tc.wantMax, string(st.MaxValues["time"]))
			assert.Equal(t, tc.min, info.MinTime)
			assert.Equal(t, tc.max, info.MaxTime)
		})
	}
}

func TestStatsFirst30Columns(t *testing.T) {
	cols := make([]Column, 35)
	for i := range cols {
		cols[i] = Column{ID: schema.PropertyID(i + 1), Name: fmt.Sprintf("c%02d", i), Type: schema.Int32}
	}
	rows := makeRows(cols, 3, 0, 1, patterns["none"])
	_, info := writeFile(t, Layout{Columns: cols}, WriterOptions{}, map[string][]row{"d": rows}, 3, 0)
	st := parseStats(t, info.Stats)
	assert.Len(t, st.NullCount, 32)
	assert.Len(t, st.MinValues, 32)
	assert.Contains(t, st.NullCount, "c29")
	assert.NotContains(t, st.NullCount, "c30")
}

func TestStatsStringEscapes(t *testing.T) {
	cols := []Column{{ID: 1, Name: `we"ird<name>`, Type: schema.String}}
	data := map[string][]row{`dev"\` + "\n": {{time: 1, vals: []any{"a<b>&\"c\"\t"}}}, "bad\xff": {{time: 1, vals: []any{"x"}}}}
	_, info := writeFile(t, Layout{Columns: cols}, WriterOptions{}, data, 1, 0)
	st := parseStats(t, info.Stats)
	assert.NotContains(t, st.MinValues, "device", "max device is not UTF-8: no device bounds")
	var s string
	require.NoError(t, json.Unmarshal(st.MinValues[`we"ird<name>`], &s))
	assert.Equal(t, "a<b>&\"c\"\t", s)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
