package engine

import (
	"slices"
	"sort"

	"github.com/arcadego/arcadego/core/tablet"
)

// runSource yields the rows of one device from one place (a Parquet file,
// a memtable chunk) in batches sorted by time, each time at most once in
// the whole source, every batch with the same columns. nil is the end.
type runSource interface {
	Next() (*tablet.Tablet, error)
}

// merger merges the sources of one device, oldest first, into batches of
// at most batchRows rows sorted by time: per time and per column, the
// newest source's non-null value wins (a null never overwrites), as in the
// memtable. It reads each source a batch at a time and emits the rows up
// to the smallest last time among the batches in hand, so its memory is a
// few batches however long the device.
type merger struct {
	srcs      []pendingRun
	batchRows int
	out       []*tablet.Tablet // merged batches not yet returned
	runs      []*tablet.Tablet // Next's scratch
}

type pendingRun struct {
	src  runSource
	cur  *tablet.Tablet
	pos  int
	done bool
}

func newMerger(srcs []runSource, batchRows int) *merger {
	m := &merger{srcs: make([]pendingRun, len(srcs)), batchRows: batchRows}
	for i, s := range srcs {
		m.srcs[i].src = s
	}
	return m
}

// reset makes m a merger of srcs, keeping its memory.
func (m *merger) reset(srcs []runSource, batchRows int) {
	clear(m.srcs)
	m.srcs = slices.Grow(m.srcs[:0], len(srcs))[:len(srcs)]
	for i, s := range srcs {
		m.srcs[i].src = s
	}
	clear(m.out)
	m.out, m.batchRows = m.out[:0], batchRows
}

// Next returns the next merged batch, or nil at the end.
func (m *merger) Next() (*tablet.Tablet, error) {
	for len(m.out) == 0 {
		bound, live := int64(0), 0
		for i := range m.srcs {
			p := &m.srcs[i]
			for !p.done && (p.cur == nil || p.pos >= p.cur.Rows()) {
				t, err := p.src.Next()
				if err != nil {
					return nil, err
				}
				p.cur, p.pos, p.done = t, 0, t == nil
			}
			if p.done {
				continue
			}
			if last := p.cur.Times[p.cur.Rows()-1]; live == 0 || last < bound {
				bound = last
			}
			live++
		}
		if live == 0 {
			return nil, nil
		}
		// Every source's rows up to bound are in hand: merge them.
		runs := m.runs[:0]
		for i := range m.srcs {
			p := &m.srcs[i]
			if p.done {
				continue
			}
			rest := p.cur.Times[p.pos:]
			n := sort.Search(len(rest), func(k int) bool { return rest[k] > bound })
			switch {
			case n == 0:
			case p.pos == 0 && n == p.cur.Rows():
				runs = append(runs, p.cur) // whole: no slice to make (a small device's one batch)
			default:
				runs = append(runs, p.cur.Slice(p.pos, p.pos+n))
			}
			p.pos += n
		}
		merged := mergeRuns(runs)
		clear(runs)
		m.runs = runs[:0]
		m.out = m.out[:0]
		if merged.Rows() <= m.batchRows {
			m.out = append(m.out, merged)
			break
		}
		for from := 0; from < merged.Rows(); from += m.batchRows {
			m.out = append(m.out, merged.Slice(from, min(from+m.batchRows, merged.Rows())))
		}
	}
	b := m.out[0]
	if len(m.out) == 1 {
		m.out[0] = nil
		m.out = m.out[:0] // kept for the next batches
	} else {
		m.out = m.out[1:]
	}
	return b, nil
}

// mergeRuns merges runs sorted by time with unique times, oldest first,
// into one: per time and column, the newest non-null value.
func mergeRuns(runs []*tablet.Tablet) *tablet.Tablet {
	if len(runs) == 1 {
		return runs[0]
	}
	// at[s][k]: the row of runs[s] at output row k, or -1.
	at := make([][]int32, len(runs))
	pos := make([]int, len(runs))
	var times []int64
	for {
		next, any := int64(0), false
		for s, r := range runs {
			if pos[s] < r.Rows() && (!any || r.Times[pos[s]] < next) {
				next, any = r.Times[pos[s]], true
			}
		}
		if !any {
			break
		}
		for s, r := range runs {
			if pos[s] < r.Rows() && r.Times[pos[s]] == next {
				at[s] = append(at[s], int32(pos[s]))
				pos[s]++
			} else {
				at[s] = append(at[s], -1)
			}
		}
		times = append(times, next)
	}
	out := &tablet.Tablet{Times: times, Columns: make([]tablet.Column, len(runs[0].Columns))}
	for c := range out.Columns {
		ref := &runs[0].Columns[c]
		b := tablet.NewBuilder(ref.Name, ref.Type, len(times))
		for k := range times {
			s := len(runs) - 1
			for ; s >= 0; s-- {
				if i := at[s][k]; i >= 0 && runs[s].Columns[c].Valid(int(i)) {
					break
				}
			}
			if s < 0 {
				b.AppendNull()
			} else {
				b.Append(&runs[s].Columns[c], int(at[s][k]))
			}
		}
		out.Columns[c] = b.Column()
	}
	return out
}
