package segment

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/arcadego/arcadego/core/schema"
)

// statsColumns is how many property columns get Delta statistics: Delta
// indexes the first 32 columns by default (dataSkippingNumIndexedCols),
// and device and time take two of them.
const statsColumns = 30

// colStats accumulates one column's Delta statistics, and the sum of its
// numbers (the footer's, see Sums).
type colStats struct {
	nulls      int64
	has        bool // at least one value seen
	bad        bool // a value min/max cannot stand for (NaN, ±Inf, invalid UTF-8)
	minI, maxI int64
	minF, maxF float64
	minS, maxS string
	sumI       int64
	sumF       float64
	overflow   bool // sumI overflowed
}

func (s *colStats) addInt(v int64) {
	if !s.has || v < s.minI {
		s.minI = v
	}
	if !s.has || v > s.maxI {
		s.maxI = v
	}
	s.has = true
	sum := s.sumI + v
	s.overflow = s.overflow || v > 0 && sum < s.sumI || v < 0 && sum > s.sumI
	s.sumI = sum
}

// addFloat: a NaN makes min/max meaningless (it is neither below nor
// above anything) and JSON cannot hold an infinity, so either drops them.
func (s *colStats) addFloat(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s.bad = true
	}
	if !s.has || v < s.minF {
		s.minF = v
	}
	if !s.has || v > s.maxF {
		s.maxF = v
	}
	s.has = true
	s.sumF += v
}

// addFloats is addFloat for each of vs, in one pass.
func (s *colStats) addFloats(vs []float64) {
	if len(vs) == 0 {
		return
	}
	lo, hi, bad, sum := vs[0], vs[0], false, s.sumF
	if s.has {
		lo, hi = s.minF, s.maxF
	}
	// Plain comparisons, not the builtin min and max (which order NaN
	// and signed zeros, at three times the cost): a NaN makes the file's
	// min and max unused anyway (bad).
	for _, v := range vs {
		bad = bad || v-v != 0 // NaN or ±Inf
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
		sum += v
	}
	s.minF, s.maxF, s.has, s.bad, s.sumF = lo, hi, true, s.bad || bad, sum
}

// addString takes the least and greatest of a run of values.
func (s *colStats) addString(lo, hi []byte) {
	if !s.has || string(lo) < s.minS {
		s.minS = string(lo)
	}
	if !s.has || string(hi) > s.maxS {
		s.maxS = string(hi)
	}
	s.has = true
}

// statsJSON builds the add action's stats: numRecords, then min, max and
// null counts of device, time and the first statsColumns properties.
// Min/max are left out where a reader could misuse them: BOOLEAN and
// BINARY columns, all-null columns, floats holding a NaN or an infinity,
// strings that are not UTF-8, and dates and timestamps outside years
// 0001-9999 (which the fixed formats below cannot spell).
func statsJSON(rows int64, l Layout, dev, tm *colStats, props []colStats) string {
	type entry struct {
		name     string
		typ      schema.PropertyType
		st       *colStats
		min, max []byte // JSON values, nil = omitted
	}
	entries := []entry{{name: schema.DeviceColumn, typ: schema.String, st: dev}, {name: schema.TimeColumn, st: tm}}
	for i := range props {
		entries = append(entries, entry{name: l.Columns[i].Name, typ: l.Columns[i].Type, st: &props[i]})
	}
	for i := range entries {
		e := &entries[i]
		s := e.st
		if !s.has || s.bad {
			continue
		}
		switch {
		case e.name == schema.TimeColumn && i == 1:
			if timeIsTimestamp(l.TimeUnit) {
				e.min, e.max = timestampJSON(s.minI, l.TimeUnit, false), timestampJSON(s.maxI, l.TimeUnit, true)
			} else {
				e.min, e.max = strconv.AppendInt(nil, s.minI, 10), strconv.AppendInt(nil, s.maxI, 10)
			}
		case e.typ == schema.String:
			if utf8.ValidString(s.minS) && utf8.ValidString(s.maxS) {
				e.min, e.max = jsonString(s.minS), jsonString(s.maxS)
			}
		case e.typ == schema.Int32 || e.typ == schema.Int64 || e.typ == schema.Timestamp:
			e.min, e.max = strconv.AppendInt(nil, s.minI, 10), strconv.AppendInt(nil, s.maxI, 10)
		case e.typ == schema.Float:
			e.min, e.max = strconv.AppendFloat(nil, s.minF, 'g', -1, 32), strconv.AppendFloat(nil, s.maxF, 'g', -1, 32)
		case e.typ == schema.Double:
			e.min, e.max = strconv.AppendFloat(nil, s.minF, 'g', -1, 64), strconv.AppendFloat(nil, s.maxF, 'g', -1, 64)
		case e.typ == schema.Date:
			e.min, e.max = dateJSON(s.minI), dateJSON(s.maxI)
		}
		if e.min == nil || e.max == nil {
			e.min, e.max = nil, nil
		}
	}
	b := []byte(`{"numRecords":`)
	b = strconv.AppendInt(b, rows, 10)
	for _, part := range []string{"minValues", "maxValues", "nullCount"} {
		b = append(b, `,"`...)
		b = append(b, part...)
		b = append(b, `":{`...)
		first := true
		for _, e := range entries {
			var v []byte
			switch part {
			case "minValues":
				v = e.min
			case "maxValues":
				v = e.max
			default:
				v = strconv.AppendInt(nil, e.st.nulls, 10)
			}
			if v == nil {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, jsonString(e.name)...)
			b = append(b, ':')
			b = append(b, v...)
		}
		b = append(b, '}')
	}
	return string(append(b, '}'))
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// timestampJSON formats t (in unit "ms" or "us") the way Delta writes
// timestamp statistics: milliseconds in UTC. Delta compares microseconds,
// so a microsecond min is rounded down and a max up, or the file would
// look like it does not hold its own extreme rows.
func timestampJSON(t int64, unit string, roundUp bool) []byte {
	ms := t
	if unit == "us" {
		ms = floorDiv(t, 1000)
		if roundUp && ms*1000 != t {
			ms++
		}
	}
	tt := time.UnixMilli(ms).UTC()
	if tt.Year() < 1 || tt.Year() > 9999 {
		return nil
	}
	return jsonString(tt.Format("2006-01-02T15:04:05.000Z"))
}

func dateJSON(days int64) []byte {
	tt := time.Unix(days*86400, 0).UTC()
	if tt.Year() < 1 || tt.Year() > 9999 {
		return nil
	}
	return jsonString(tt.Format("2006-01-02"))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
