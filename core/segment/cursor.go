package segment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"unsafe"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"

	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

const defaultBatchRows = 65536

// Read returns the rows of device with start <= time < end, in time order,
// in batches of at most batchRows rows (<= 0: 65536; a batch never spans
// two row groups, so it may be shorter), columns in cols
// order: a column the file lacks (by ID) or holds with another type reads
// as all null. Only the needed columns and row groups are read: the device
// directory gives the device's rows, row groups wholly before start or
// after end are skipped by their time statistics, and within the others
// [start, end) is found by binary search in each batch of time values.
// Memory: a batch per column, plus the compressed column chunk being read
// (whole chunks are read so that their checksum can be verified).
func (f *File) Read(device string, cols []Column, start, end int64, batchRows int) *Cursor {
	if batchRows <= 0 {
		batchRows = defaultBatchRows
	}
	c := &Cursor{f: f, cols: cols, start: start, end: end, batch: batchRows, src: make([]int, len(cols))}
	for i, col := range cols {
		c.src[i] = -1
		if j, ok := f.byID[col.ID]; ok && f.layout.Columns[j].Type == col.Type {
			c.src[i] = j
		}
	}
	c.lo, c.hi = f.device(device)
	c.pos = c.lo
	c.rg = sort.Search(len(f.groups), func(i int) bool { return f.groups[i].first+f.groups[i].rows > c.lo })
	if first, last, ok := f.DeviceTimes(device); !ok || start >= end || last < start || first >= end {
		c.done = true
	}
	return c
}

// Cursor iterates the batches of one Read. It is not safe for concurrent
// use; distinct Cursors of one File are independent.
type Cursor struct {
	f          *File
	cols       []Column
	src        []int // layout index of each col in the file, -1: reads as null
	start, end int64
	batch      int
	lo, hi     int64 // the device's file rows
	pos        int64 // file row of the next time value to read
	rg         int   // current row group
	done       bool
	err        error

	pr      *file.Reader // opened on the first row group read
	open    bool         // readers of row group rg are set up
	timeR   *file.Int64ColumnChunkReader
	colR    []file.ColumnChunkReader // nil until first needed
	skip    []int64                  // rows each colR must skip before its next read
	times   []int64
	scratch []scratch // per column, so columns can be decoded in parallel
}

// Next returns the next batch (a fresh tablet owning its memory; Validity
// nil when the batch has no null), or nil, nil at the end. A read failure
// is an error of kind errs.ErrCorrupt (or errs.ErrIO) naming the file;
// the Cursor then stays failed.
func (c *Cursor) Next() (t *tablet.Tablet, err error) {
	if c.err != nil {
		return nil, c.err
	}
	defer func() {
		if r := recover(); r != nil { // the decoders can panic on garbage
			err = fmt.Errorf("%v", r)
		}
		if err != nil {
			c.err = c.f.corrupt(fmt.Sprintf("reading row group %d", c.rg), err)
			t, err = nil, c.err
		}
	}()
	for !c.done {
		if !c.open {
			if c.rg >= len(c.f.groups) || c.f.groups[c.rg].first >= c.hi {
				c.done = true
				break
			}
			g := &c.f.groups[c.rg]
			if g.minTime >= c.end { // the device's later rows are later still
				c.done = true
				break
			}
			if g.maxTime < c.start {
				c.pos = min(c.hi, g.first+g.rows)
				c.rg++
				continue
			}
			if err := c.openGroup(); err != nil {
				return nil, err
			}
		}
		g := &c.f.groups[c.rg]
		n := int(min(int64(c.batch), min(c.hi, g.first+g.rows)-c.pos))
		if n == 0 {
			c.open = false
			c.rg++
			continue
		}
		times, err := c.readTimes(n)
		if err != nil {
			return nil, err
		}
		c.pos += int64(n)
		lo := sort.Search(n, func(i int) bool { return times[i] >= c.start })
		hi := sort.Search(n, func(i int) bool { return times[i] >= c.end })
		if hi < n {
			c.done = true // times only grow
		}
		if lo == hi {
			for j := range c.skip {
				c.skip[j] += int64(n)
			}
			continue
		}
		out := &tablet.Tablet{Times: append([]int64(nil), times[lo:hi]...), Columns: make([]tablet.Column, len(c.cols)), TimeUnit: c.f.layout.TimeUnit}
		if err := c.readColumns(out, lo, hi, n); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, nil
}

// parallelValues is the batch size, in values, from which a batch's
// columns are decoded by several goroutines: decompression dominates a
// scan, and columns decompress independently.
const parallelValues = 1 << 15

// readColumns reads rows [lo, hi) of the n-row batch just read into out's
// columns, and skips the batch's other rows.
func (c *Cursor) readColumns(out *tablet.Tablet, lo, hi, n int) error {
	workers := 1
	if (hi-lo)*len(c.cols) >= parallelValues {
		workers = par.CPUs(len(c.cols))
	}
	return errors.Join(par.Do(len(c.cols), workers, func(_, j int) (err error) {
		c.skip[j] += int64(lo)
		if out.Columns[j], err = c.readColumn(j, hi-lo); err != nil {
			return err
		}
		c.skip[j] += int64(n - hi)
		return nil
	})...)
}

// openGroup sets up the readers of row group c.rg, positioned at c.pos.
func (c *Cursor) openGroup() error {
	f := c.f
	if c.pr == nil {
		meta, err := f.metadata()
		if err != nil {
			return err
		}
		src := checkedReader{io.NewSectionReader(f.f, 0, f.size), f.chunks}
		pr, err := file.NewParquetReader(src, file.WithMetadata(meta), file.WithReadProps(f.props))
		if err != nil {
			return err
		}
		c.pr = pr
		c.colR = make([]file.ColumnChunkReader, len(c.cols))
		c.skip = make([]int64, len(c.cols))
		c.scratch = make([]scratch, len(c.cols))
	}
	g := &f.groups[c.rg]
	cr, err := c.pr.RowGroup(c.rg).Column(1)
	if err != nil {
		return err
	}
	tr, ok := cr.(*file.Int64ColumnChunkReader)
	if !ok {
		return fmt.Errorf("time column is %T", cr)
	}
	c.pos = max(c.pos, g.first)
	var ts scratch
	if err := c.skipRows(tr, c.pos-g.first, &ts); err != nil {
		return err
	}
	c.timeR = tr
	for j := range c.colR {
		c.colR[j] = nil
		c.skip[j] = c.pos - g.first
	}
	c.open = true
	return nil
}

// skipRows skips n rows of r.
func (c *Cursor) skipRows(r file.ColumnChunkReader, n int64, s *scratch) error {
	if n == 0 {
		return nil
	}
	var got int64
	var err error
	switch r := r.(type) {
	case *file.BooleanColumnChunkReader:
		got, err = r.Skip(n)
	case *file.Int32ColumnChunkReader:
		got, err = r.Skip(n)
	case *file.Int64ColumnChunkReader:
		got, err = r.Skip(n)
	case *file.Float32ColumnChunkReader:
		got, err = r.Skip(n)
	case *file.Float64ColumnChunkReader:
		got, err = r.Skip(n)
	case *file.ByteArrayColumnChunkReader:
		// Not r.Skip: it decodes ByteArray headers into a []byte scratch
		// shared with the levels, and the write barrier then finds level
		// bits where it expects pointers ("found bad pointer in Go heap").
		s.ba = grow(s.ba, int(min(n, 1024)))
		s.defs = grow(s.defs, len(s.ba))
		for got < n {
			k, _, rerr := r.ReadBatch(min(n-got, int64(len(s.ba))), s.ba, s.defs, nil)
			if rerr != nil || k == 0 {
				err = rerr
				break
			}
			got += k
		}
		clear(s.ba) // do not keep the page alive
	default:
		return fmt.Errorf("unexpected column reader %T", r)
	}
	if err == nil && got != n {
		err = fmt.Errorf("skipped %d rows of %d", got, n)
	}
	return err
}

func (c *Cursor) readTimes(n int) ([]int64, error) {
	if cap(c.times) < n {
		c.times = make([]int64, n)
	}
	times := c.times[:n]
	for got := 0; got < n; {
		total, _, err := c.timeR.ReadBatch(int64(n-got), times[got:], nil, nil)
		if err != nil {
			return nil, err
		}
		if total == 0 {
			return nil, fmt.Errorf("time column ends %d rows early", n-got)
		}
		got += int(total)
	}
	return times, nil
}

// scratch holds a Cursor's decode buffers, reused across batches.
type scratch struct {
	defs  []int16
	bools []bool
	ba    []parquet.ByteArray
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// readColumn reads the next n rows of cols[j] into a fresh column.
func (c *Cursor) readColumn(j, n int) (tablet.Column, error) {
	col := c.cols[j]
	out := tablet.Column{Name: col.Name, Type: col.Type}
	if c.src[j] < 0 {
		return nullColumn(out, n), nil
	}
	if c.colR[j] == nil {
		r, err := c.pr.RowGroup(c.rg).Column(2 + c.src[j])
		if err != nil {
			return out, err
		}
		c.colR[j] = r
	}
	r := c.colR[j]
	s := &c.scratch[j]
	if err := c.skipRows(r, c.skip[j], s); err != nil {
		return out, err
	}
	c.skip[j] = 0
	s.defs = grow(s.defs, n)
	var vals int // non-null values read
	read := func(batch func(rows int64, defs []int16) (int64, int, error)) error {
		for got := 0; got < n; {
			total, v, err := batch(int64(n-got), s.defs[got:])
			if err != nil {
				return err
			}
			if total == 0 {
				return fmt.Errorf("column %q ends %d rows early", col.Name, n-got)
			}
			got += int(total)
			vals += v
		}
		return nil
	}
	var err error
	switch r := r.(type) {
	case *file.BooleanColumnChunkReader:
		s.bools = grow(s.bools, n)
		err = read(func(k int64, d []int16) (int64, int, error) { return r.ReadBatch(k, s.bools[vals:], d, nil) })
	// Fixed-width values are decoded straight into the result's buffer
	// (little endian, as the platforms Go and Arrow share here), densely,
	// then spread over the rows if some are null.
	case *file.Int32ColumnChunkReader:
		v := valuesAs[int32](&out, n)
		err = read(func(k int64, d []int16) (int64, int, error) { return r.ReadBatch(k, v[vals:], d, nil) })
	case *file.Int64ColumnChunkReader:
		v := valuesAs[int64](&out, n)
		err = read(func(k int64, d []int16) (int64, int, error) { return r.ReadBatch(k, v[vals:], d, nil) })
	case *file.Float32ColumnChunkReader:
		v := valuesAs[float32](&out, n)
		err = read(func(k int64, d []int16) (int64, int, error) { return r.ReadBatch(k, v[vals:], d, nil) })
	case *file.Float64ColumnChunkReader:
		v := valuesAs[float64](&out, n)
		err = read(func(k int64, d []int16) (int64, int, error) { return r.ReadBatch(k, v[vals:], d, nil) })
	case *file.ByteArrayColumnChunkReader:
		// Values point into the page buffer, which the next page read
		// replaces: copy them out batch by batch.
		s.ba = grow(s.ba, n)
		out.Offsets = make([]int32, 1, n+1)
		err = read(func(k int64, d []int16) (int64, int, error) {
			total, v, err := r.ReadBatch(k, s.ba, d, nil)
			for _, b := range s.ba[:v] {
				if len(out.Data)+len(b) > math.MaxInt32 {
					return 0, 0, fmt.Errorf("column %q: a batch holds more than 2 GiB; read fewer rows", col.Name)
				}
				out.Data = append(out.Data, b...)
				out.Offsets = append(out.Offsets, int32(len(out.Data)))
			}
			return total, v, err
		})
	default:
		err = fmt.Errorf("unexpected column reader %T", r)
	}
	if err != nil {
		return out, err
	}
	defs := s.defs[:n]
	if vals < n {
		out.Validity = make([]byte, (n+7)/8)
		k := 0
		for i, d := range defs {
			if d != 0 {
				out.Validity[i>>3] |= 1 << (i & 7)
				k++
			}
		}
		if k != vals {
			return out, fmt.Errorf("column %q: %d values for %d defined rows", col.Name, vals, k)
		}
	}
	// Spread the dense values over the rows (nulls get zero values).
	valid := func(i int) bool { return vals == n || defs[i] != 0 }
	switch col.Type {
	case schema.Boolean:
		out.Values = make([]byte, (n+7)/8)
		for i, k := 0, 0; i < n; i++ {
			if valid(i) {
				if s.bools[k] {
					out.Values[i>>3] |= 1 << (i & 7)
				}
				k++
			}
		}
	case schema.Int32, schema.Date, schema.Float:
		if vals < n {
			spread(valuesAs[int32](&out, n), defs, vals)
		}
	case schema.Int64, schema.Timestamp, schema.Double:
		if vals < n {
			spread(valuesAs[int64](&out, n), defs, vals)
		}
	case schema.String, schema.Binary:
		if vals < n { // repeat the previous end at each null
			dense := out.Offsets
			out.Offsets = make([]int32, n+1)
			for i, k := 0, 0; i < n; i++ {
				if valid(i) {
					k++
				}
				out.Offsets[i+1] = dense[k]
			}
		}
		if out.Data == nil {
			out.Data = []byte{}
		}
	}
	return out, nil
}

// valuesAs returns out.Values as n values of T, allocating it if needed.
func valuesAs[T int32 | int64 | float32 | float64](out *tablet.Column, n int) []T {
	var zero T
	if out.Values == nil {
		out.Values = make([]byte, n*int(unsafe.Sizeof(zero)))
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&out.Values[0])), n)
}

// spread moves the first vals values of v to the rows whose definition
// level is set, back to front (a value only moves up), zeroing the others.
func spread[T int32 | int64](v []T, defs []int16, vals int) {
	k := vals - 1
	for i := len(v) - 1; i >= 0; i-- {
		if defs[i] != 0 {
			v[i] = v[k]
			k--
		} else {
			v[i] = 0
		}
	}
}

// nullColumn fills out with n nulls.
func nullColumn(out tablet.Column, n int) tablet.Column {
	out.Validity = make([]byte, (n+7)/8)
	switch {
	case out.Type == schema.Boolean:
		out.Values = make([]byte, (n+7)/8)
	case tablet.VarWidth(out.Type):
		out.Offsets = make([]int32, n+1)
		out.Data = []byte{}
	default:
		out.Values = make([]byte, n*tablet.Width(out.Type))
	}
	return out
}
