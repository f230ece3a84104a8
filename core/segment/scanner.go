package segment

import (
	"errors"
	"math"
	"sort"

	"github.com/apache/arrow/go/v17/parquet/file"

	"github.com/arcadego/arcadego/core/tablet"
)

// Scanner reads one file for a scan that visits devices in increasing
// order, as a merged scan and a flush do. It decodes a row group's
// projected columns at most once, as a whole, and serves each device's
// rows as slices of it: a file of many small devices is decoded once, not
// once per device (a Cursor per device re-decodes the row group up to the
// device's rows each time). Memory: one decoded row group. Not safe for
// concurrent use; batches it returned stay valid after it moves on.
type Scanner struct {
	f     *File
	cols  []Column
	src   []int
	pr    *file.Reader
	rg    int            // the decoded row group, -1 when none
	group *tablet.Tablet // its rows: times and cols
}

// Scanner returns a scanner of cols (matched to the file's columns by ID
// and type as Read does).
func (f *File) Scanner(cols []Column) *Scanner {
	s := &Scanner{f: f, cols: cols, src: make([]int, len(cols)), rg: -1}
	for i, col := range cols {
		s.src[i] = -1
		if j, ok := f.byID[col.ID]; ok && f.layout.Columns[j].Type == col.Type {
			s.src[i] = j
		}
	}
	return s
}

// Read returns device's rows with start <= time < end in batches of at
// most batchRows rows (<= 0: 65536), as File.Read, but through the
// scanner's decoded row groups. Reads of one scanner must come in
// increasing device order and be consumed before the next Read starts.
func (s *Scanner) Read(device string, start, end int64, batchRows int) *GroupCursor {
	if batchRows <= 0 {
		batchRows = defaultBatchRows
	}
	g := &GroupCursor{s: s, start: start, end: end, batch: batchRows}
	first, last, ok := s.f.DeviceTimes(device)
	if !ok || start >= end || last < start || first >= end {
		g.done = true
		return g
	}
	g.lo, g.hi = s.f.device(device)
	g.pos = g.lo
	groups := s.f.groups
	g.rg = sort.Search(len(groups), func(i int) bool { return groups[i].first+groups[i].rows > g.lo })
	return g
}

// GroupCursor iterates the batches of one Scanner.Read.
type GroupCursor struct {
	s          *Scanner
	start, end int64
	batch      int
	lo, hi     int64 // the device's file rows
	pos        int64 // next file row
	rg         int
	done       bool
}

// Next returns the next batch (sharing the decoded row group's memory,
// which is never changed), or nil, nil at the end.
func (g *GroupCursor) Next() (*tablet.Tablet, error) {
	groups := g.s.f.groups
	for !g.done {
		if g.rg >= len(groups) || groups[g.rg].first >= g.hi {
			g.done = true
			break
		}
		grp := &groups[g.rg]
		gend := grp.first + grp.rows
		if grp.minTime >= g.end {
			g.done = true // later row groups of the device are later still
			break
		}
		if g.pos >= min(g.hi, gend) || grp.maxTime < g.start {
			g.rg++
			g.pos = max(g.pos, gend)
			continue
		}
		t, err := g.s.decode(g.rg)
		if err != nil {
			g.done = true
			return nil, err
		}
		// The device's rows here, then the time range by binary search.
		from, to := int(g.pos-grp.first), int(min(g.hi, gend)-grp.first)
		times := t.Times[from:to]
		lo := from + sort.Search(len(times), func(i int) bool { return times[i] >= g.start })
		hi := from + sort.Search(len(times), func(i int) bool { return times[i] >= g.end })
		past := hi < to // the device's later rows are at or past end
		if lo == hi {
			if past {
				g.done = true
				break
			}
			g.pos = grp.first + int64(to)
			continue
		}
		stop := min(hi, lo+g.batch)
		g.pos = grp.first + int64(stop)
		g.done = stop == hi && past
		return t.Slice(lo, stop), nil
	}
	return nil, nil
}

// decode returns row group rg's times and projected columns, decoding them
// unless they are the last decoded.
func (s *Scanner) decode(rg int) (*tablet.Tablet, error) {
	if s.rg == rg {
		return s.group, nil
	}
	grp := &s.f.groups[rg]
	c := &Cursor{f: s.f, cols: s.cols, src: s.src, start: math.MinInt64, end: math.MaxInt64,
		batch: int(grp.rows), lo: grp.first, hi: grp.first + grp.rows, pos: grp.first, rg: rg, pr: s.pr}
	if c.pr != nil {
		c.colR = make([]file.ColumnChunkReader, len(c.cols))
		c.skip = make([]int64, len(c.cols))
		c.scratch = make([]scratch, len(c.cols))
	}
	t, err := c.Next()
	if err != nil {
		return nil, err
	}
	if t == nil || int64(t.Rows()) != grp.rows {
		return nil, s.f.corrupt("decoding a row group", errShortGroup)
	}
	s.pr, s.rg, s.group = c.pr, rg, t
	return t, nil
}

var errShortGroup = errors.New("the row group decoded to fewer rows than the footer says")
