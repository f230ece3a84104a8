package engine

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
)

// fileStats is a file's Delta statistics, parsed once when first asked
// for: rows, and per column (by name) min, max and null count where the
// writer recorded them (see segment's statsJSON: the first 30 properties;
// no min or max for a float column holding a NaN or an infinity).
type fileStats struct {
	once  sync.Once
	ok    bool
	rows  int64
	min   map[string]json.RawMessage
	max   map[string]json.RawMessage
	nulls map[string]int64
}

func (f *dataFile) statsOf() *fileStats {
	s := &f.parsed
	s.once.Do(func() {
		var raw struct {
			NumRecords *int64                     `json:"numRecords"`
			MinValues  map[string]json.RawMessage `json:"minValues"`
			MaxValues  map[string]json.RawMessage `json:"maxValues"`
			NullCount  map[string]int64           `json:"nullCount"`
		}
		if f.stats == "" || json.Unmarshal([]byte(f.stats), &raw) != nil || raw.NumRecords == nil || *raw.NumRecords != f.Rows() {
			return
		}
		s.ok, s.rows, s.min, s.max, s.nulls = true, *raw.NumRecords, raw.MinValues, raw.MaxValues, raw.NullCount
	})
	return s
}

// statsCell parses a numeric min or max of a column of type t.
func statsCell(t schema.PropertyType, v json.RawMessage) (cell, bool) {
	switch t {
	case schema.Int32, schema.Int64:
		i, err := strconv.ParseInt(string(v), 10, 64)
		return cell{i: i}, err == nil
	case schema.Float: // written as a float32's shortest digits: "0.1" is float32(0.1), not 0.1
		f, err := strconv.ParseFloat(string(v), 32)
		return cell{f: f}, err == nil
	case schema.Double:
		f, err := strconv.ParseFloat(string(v), 64)
		return cell{f: f}, err == nil
	}
	return cell{}, false
}

// fromStats answers the request's aggregates (count, min, max, sum and
// mean of numbers, over all rows of all devices) for the files it can from their
// statistics, and returns which: a file qualifies when its statistics
// cover every aggregate and no memtable row of a device it holds falls in
// that device's time span in the file (a newer row there could replace
// one of the file's), and no delete waits in a memtable. The scan reads
// the others.
func (g *grouper) fromStats(ty *schema.Type, files []*dataFile, mems []*memtable.Memtable) []bool {
	for _, m := range mems {
		if len(m.Deletes(ty.ID)) > 0 {
			return nil
		}
	}
	spans := memSpansOf(ty, mems)
	taken := make([]bool, len(files))
	for i, f := range files {
		st := f.statsOf()
		if !st.ok || f.Rows() == 0 || spans.overlap(f) {
			continue
		}
		layout := f.Layout().Columns
		type fold struct {
			nonNull int64
			v       cell        // min or max
			sum     segment.Sum // sum or mean
		}
		folds := make([]fold, len(g.specs))
		ok := true
		for k := range g.specs {
			s := &g.specs[k]
			j := slices.IndexFunc(layout, func(c segment.Column) bool { return c.ID == s.id })
			if j < 0 { // the file predates the property: all null
				continue
			}
			name := layout[j].Name
			nulls, has := st.nulls[name]
			if !has {
				ok = false
				break
			}
			fd := &folds[k]
			fd.nonNull = st.rows - nulls
			if s.fn == "count" || fd.nonNull == 0 {
				continue
			}
			if s.fn == "sum" || s.fn == "mean" {
				if fd.sum = f.Sum(j); !fd.sum.Valid {
					ok = false
					break
				}
				continue
			}
			raw := st.min[name]
			if s.fn == "max" {
				raw = st.max[name]
			}
			v, parsed := statsCell(s.typ, raw)
			if raw == nil || !parsed {
				ok = false
				break
			}
			fd.v = v
		}
		if !ok {
			continue
		}
		_, _, first, _ := f.Bounds()
		gr := g.groupFor(groupKey{}, first)
		for k := range g.specs {
			a, s, fd := &gr.accs[k], &g.specs[k], folds[k]
			if fd.nonNull == 0 {
				continue
			}
			switch {
			case s.fn == "min" && (a.n == 0 || less(s.typ, fd.v, a.v)),
				s.fn == "max" && (a.n == 0 || less(s.typ, a.v, fd.v)):
				a.v = fd.v
			case s.fn == "sum" || s.fn == "mean":
				a.addSum(s, fd.sum)
			}
			a.n += fd.nonNull
		}
		taken[i] = true
		statsFilesAnswered.Add(1)
	}
	return taken
}

// memSpans is the time spans of the memtables' devices of one type.
type memSpans map[string][][2]int64

func memSpansOf(ty *schema.Type, mems []*memtable.Memtable) memSpans {
	spans := memSpans{}
	for _, m := range mems {
		names, chunks := m.Directory(ty.ID)
		for i, sum := range memtable.Summarize(chunks) {
			if sum.Rows > 0 {
				spans[names[i]] = append(spans[names[i]], [2]int64{sum.First, sum.Last})
			}
		}
	}
	return spans
}

// overlap reports whether a memtable row of one of f's devices may fall
// in that device's time span in f: a newer row there could replace or
// complete one of f's, so f's statistics do not describe what a scan
// returns of it.
func (s memSpans) overlap(f *dataFile) bool {
	for d, ss := range s {
		for _, sp := range ss {
			if f.has(d, sp[0], sp[1]) {
				return true
			}
		}
	}
	return false
}

// fileColumnNames maps property ids to f's column names (its statistics' keys).
func fileColumnNames(f *dataFile) map[schema.PropertyID]string {
	names := map[schema.PropertyID]string{}
	for _, c := range f.Layout().Columns {
		names[c.ID] = c.Name
	}
	return names
}

// statsFilesAnswered counts the files aggregates answered from statistics
// (for tests: whether the path is taken at all).
var statsFilesAnswered atomic.Int64
