package segment

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	pqschema "github.com/apache/arrow/go/v17/parquet/schema"
	"github.com/golang/snappy"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// WriterOptions tune a Writer; zero values take the defaults.
type WriterOptions struct {
	RowGroupRows  int   // rows per row group at most; default 65536
	RowGroupBytes int64 // values bytes buffered per row group at most (so a 10,000-column type gets small row groups); default 32 MiB
	Sync          bool  // fsync the file before the rename and the directory after it
	PageBytes     int64 // data page size in bytes, about; default 8 KiB
}

const (
	defaultRowGroupRows  = 65536
	defaultRowGroupBytes = 32 << 20
)

// FileInfo is what the Delta log needs of a written file.
type FileInfo struct {
	Name                 string // base name of path
	Size                 int64  // exact file size in bytes
	Rows                 int64
	MinDevice, MaxDevice string
	MinTime, MaxTime     int64
	Stats                string // the Delta add action's stats JSON
	Fsyncs               int    // of the file (some while it was written) and its directory
}

// Writer writes one file. It is not safe for concurrent use. A full row
// group is encoded and written by a goroutine of its own while the next
// one is built (so a long write keeps two cores busy); the row group's
// buffers then come back for the one after.
type Writer struct {
	path, tmp string
	layout    Layout
	opts      WriterOptions
	f         *os.File
	wb        *writeback // between f and out when Sync
	out       *sink
	schema    *pqschema.GroupNode       // the Parquet schema
	props     *parquet.WriterProperties // by start: for the footer's column metadata
	plain     []bool                    // by start: layout column i is written uncompressed
	err       error                     // sticky: the first failure
	done      bool                      // Close succeeded
	made      bool                      // File was called

	*rowGroupBuf                   // the row group being built
	spare        *rowGroupBuf      // the buffers of the last row group written
	inflight     chan rowGroupDone // the row group being written, if any
	enc          chunkEncoder      // of the row group being written

	// The whole file.
	groups       []rowGroup
	metas        [][]chunkMeta // per row group, per column chunk: for the footer
	devices      []string
	deviceRows   []int64
	deviceSpans  [][2]int64 // first and last time of each device
	rows         int64
	lastTime     int64
	devStats     colStats
	timeStats    colStats
	propStats    []colStats // the first statsColumns columns
	timePageRows int        // rows per page of the time column
	fixedPerRow  int64      // value bytes of one row, variable-width data aside
	hasVar       bool       // some column is String or Binary
}

// rowGroupBuf holds the rows of one row group until it is written.
type rowGroupBuf struct {
	dict   []string // the buffered rows' devices, in order
	devIdx []int32  // device of each buffered row: an index into dict
	times  []int64
	cols   []colBuf
	bytes  int64 // value bytes buffered
	minT   int64
	maxT   int64
}

func newRowGroupBuf(l Layout) *rowGroupBuf {
	b := &rowGroupBuf{cols: make([]colBuf, len(l.Columns))}
	for i, c := range l.Columns {
		b.cols[i].typ = c.Type
	}
	return b
}

func (b *rowGroupBuf) reset() {
	clear(b.dict) // drop the references to device names
	b.dict, b.devIdx, b.times, b.bytes = b.dict[:0], b.devIdx[:0], b.times[:0], 0
	for i := range b.cols {
		b.cols[i].reset()
	}
}

// rowGroupDone is what the goroutine writing a row group hands back.
type rowGroupDone struct {
	buf *rowGroupBuf // reset, for a later row group
	err error
}

// sink counts the bytes written, so that each column chunk's offset is
// known.
type sink struct {
	w *bufio.Writer
	n int64
}

func (s *sink) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

// Create starts writing the file that will be named path; it writes to a
// temporary name in the same directory (".tmp-"+base) until Close.
func Create(path string, l Layout, opts WriterOptions) (*Writer, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	if opts.PageBytes <= 0 {
		opts.PageBytes = 8 << 10
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = defaultRowGroupRows
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = defaultRowGroupBytes
	}
	sc, err := l.parquetSchema()
	if err != nil {
		return nil, fmt.Errorf("segment: %s: schema: %v: %w", path, err, errs.ErrInvalidArgument)
	}
	w := &Writer{
		path:        path,
		tmp:         filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path)),
		layout:      l,
		opts:        opts,
		rowGroupBuf: newRowGroupBuf(l),
		propStats:   make([]colStats, min(len(l.Columns), statsColumns)),
	}
	w.timePageRows = timePageRows(opts.PageBytes)
	w.fixedPerRow = 8 // time
	for _, c := range l.Columns {
		w.fixedPerRow += int64(max(tablet.Width(c.Type), 4)) // offsets or a byte per bool, roughly
		w.hasVar = w.hasVar || tablet.VarWidth(c.Type)
	}
	w.f, err = os.OpenFile(w.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("segment: create %s: %v: %w", w.tmp, err, errs.ErrIO)
	}
	var dst io.Writer = w.f
	if opts.Sync {
		w.wb = &writeback{f: w.f}
		dst = w.wb
	}
	w.out = &sink{w: bufio.NewWriterSize(dst, 1<<20)}
	w.schema = sc
	return w, nil
}

// start writes the file's magic and settles its writer properties, at the
// first row group (or at Close of a file without rows): columns whose
// buffered values Snappy does not shrink are written uncompressed (see
// plainColumns). The properties are what the footer's column metadata
// says of the chunks (codec, encodings, statistics); encode.go writes the
// chunks to match.
func (w *Writer) start() {
	opts := w.opts
	props := []parquet.WriterProperty{
		// Snappy, not zstd: the v17 zstd codec allocates GOMAXPROCS
		// encoders per page (11.5 GB for 2,000 columns). On doubles it
		// costs little and gains much when values repeat: 1M random
		// doubles kept their 8 MiB, 1M doubles of one decimal between 20
		// and 25 went from 8 MiB to 2.2 MiB.
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithCreatedBy("arcadego (parquet-go version 17.0.0)"),
		parquet.WithMaxRowGroupLength(int64(opts.RowGroupRows)),
		// Small pages: a time range decodes only the pages holding it
		// (fastChunk skips the others without decompressing them).
		parquet.WithDataPageSize(opts.PageBytes),
		// Dictionaries only where values repeat: the device (runs of one
		// name) and strings (statuses, labels).
		parquet.WithDictionaryDefault(false),
		parquet.WithDictionaryFor(schema.DeviceColumn, true),
		// Parquet row-group statistics for device and time only: the
		// properties' are in the Delta log, per file, for the first 30;
		// per row group they were half of the time of a reopen (thrift
		// reads each min and max through a fresh buffer).
		parquet.WithStats(false),
		parquet.WithStatsFor(schema.DeviceColumn, true),
		parquet.WithStatsFor(schema.TimeColumn, true),
		// Times of regular series cost next to nothing in deltas (a page
		// of a one-second series is a header), and decode faster than
		// PLAIN through Snappy, whose short back-references were most of
		// a range aggregate's time. Every Parquet reader knows it.
		parquet.WithEncodingFor(schema.TimeColumn, parquet.Encodings.DeltaBinaryPacked),
	}
	for _, c := range w.layout.Columns {
		if c.Type == schema.String {
			props = append(props, parquet.WithDictionaryFor(c.Name, true))
		}
	}
	w.plain = w.plainColumns()
	for i, plain := range w.plain {
		if plain {
			props = append(props, parquet.WithCompressionFor(w.layout.Columns[i].Name, compress.Codecs.Uncompressed))
		}
	}
	w.props = parquet.NewWriterProperties(props...)
	// Into the bufio buffer, which cannot fail.
	_, _ = w.out.Write(magic)
}

// maxRowGroups is the most row groups a file may hold: the footer numbers
// them in an int16, and delta-rs refuses a file with more.
const maxRowGroups = math.MaxInt16

// magic starts and ends a Parquet file.
var magic = []byte("PAR1")

// plainColumns says, per layout column, whether it is a fixed-width
// property column that Snappy shrinks by less than a tenth, judged on a
// sample of the buffered rows (random-looking doubles, say). Written
// uncompressed they cost the same bytes, and a read takes their values
// from the page as they are instead of through a decompression, which
// copies every byte once more; a read of a few rows of a page (a
// filtered scan) takes only those.
func (w *Writer) plainColumns() []bool {
	plain := make([]bool, len(w.layout.Columns))
	var enc []byte
	for i := range w.layout.Columns {
		sample := w.cols[i].fixedBytes(plainSample)
		if len(sample) < plainSample/2 {
			continue // too few rows to judge: Snappy, as before
		}
		enc = snappy.Encode(enc[:cap(enc)], sample)
		plain[i] = len(enc)*10 > len(sample)*9
	}
	return plain
}

// plainSample is the bytes of a column plainColumns compresses to judge it.
const plainSample = 16 << 10

// Append adds the rows of one device: t.Columns match the layout's columns
// in order and type (names are not compared: the layout's are written),
// t.Times strictly increasing. Successive calls have device >= the
// previous call's device; for an equal device, times strictly after the
// previous call's. A violation is an error (errs.ErrInvalidArgument)
// naming it, and leaves the Writer usable. Rows are buffered and written
// as a row group when RowGroupRows or RowGroupBytes is reached (row groups
// may span devices).
func (w *Writer) Append(device string, t *tablet.Tablet) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("segment: %s: append after close: %w", w.path, errs.ErrClosed)
	}
	if err := w.check(device, t); err != nil {
		return err
	}
	n := len(t.Times)
	if n == 0 {
		return nil
	}
	if last := len(w.devices) - 1; last >= 0 && w.devices[last] == device {
		w.deviceRows[last] += int64(n)
		w.deviceSpans[last][1] = t.Times[n-1]
	} else {
		// A new device starts a new row group once the current one is a
		// quarter full: a large device then has row groups of its own,
		// whose time statistics prune a time range within it, while small
		// devices still share one.
		if len(w.times) > 0 && len(w.times) >= w.opts.RowGroupRows/4 {
			if err := w.flush(); err != nil {
				return err
			}
		}
		w.devices = append(w.devices, device)
		w.deviceRows = append(w.deviceRows, int64(n))
		w.deviceSpans = append(w.deviceSpans, [2]int64{t.Times[0], t.Times[n-1]})
		w.devStats.addString([]byte(device), []byte(device))
	}
	w.lastTime = t.Times[n-1]
	w.rows += int64(n)
	for from := 0; from < n; {
		// Take as many rows as fit the row group's row and byte budgets.
		room := w.opts.RowGroupBytes - w.bytes
		k := min(n-from, w.opts.RowGroupRows-len(w.times), int(min(room/w.fixedPerRow, int64(n))))
		if w.hasVar { // and the strings' bytes: the largest k that fits, by binary search
			k = sort.Search(k, func(k int) bool { return w.rowsBytes(t, from, k+1) > room })
		}
		if k == 0 {
			if len(w.times) > 0 { // the next row opens a new row group
				if err := w.flush(); err != nil {
					return err
				}
				continue
			}
			k = 1 // a row larger than the budget gets a row group of its own
		}
		if len(w.dict) == 0 || w.dict[len(w.dict)-1] != device {
			w.dict = append(w.dict, device)
		}
		idx := int32(len(w.dict) - 1)
		for range k {
			w.devIdx = append(w.devIdx, idx)
		}
		for _, tm := range t.Times[from : from+k] {
			w.timeStats.addInt(tm)
		}
		if len(w.times) == 0 {
			w.minT, w.maxT = t.Times[from], t.Times[from]
		}
		for _, tm := range t.Times[from : from+k] {
			w.minT, w.maxT = min(w.minT, tm), max(w.maxT, tm)
		}
		w.times = append(w.times, t.Times[from:from+k]...)
		w.bytes += 8 * int64(k)
		for i := range w.cols {
			var st *colStats
			if i < len(w.propStats) {
				st = &w.propStats[i]
			}
			w.bytes += w.cols[i].add(&t.Columns[i], from, k, st)
		}
		from += k
		if len(w.times) >= w.opts.RowGroupRows || w.bytes >= w.opts.RowGroupBytes {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowsBytes is what rows [from, from+k) of t add to the row group's bytes.
func (w *Writer) rowsBytes(t *tablet.Tablet, from, k int) int64 {
	b := int64(k) * w.fixedPerRow
	for i := range t.Columns {
		if c := &t.Columns[i]; tablet.VarWidth(c.Type) {
			b += int64(c.Offsets[c.Offset+from+k] - c.Offsets[c.Offset+from])
		}
	}
	return b
}

// check validates an Append before anything is buffered, so that a
// rejected call leaves the Writer as it was.
func (w *Writer) check(device string, t *tablet.Tablet) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("segment: %s: device %q: %s: %w", w.path, device, fmt.Sprintf(format, args...), errs.ErrInvalidArgument)
	}
	if len(t.Columns) != len(w.layout.Columns) {
		return bad("%d columns, the layout has %d", len(t.Columns), len(w.layout.Columns))
	}
	n := len(t.Times)
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Type != w.layout.Columns[i].Type {
			return bad("column %d (%q) is %s, the layout's %q is %s", i, c.Name, c.Type, w.layout.Columns[i].Name, w.layout.Columns[i].Type)
		}
		if err := checkBuffers(c, n); err != nil {
			return bad("column %d (%q): %v", i, c.Name, err)
		}
	}
	for i := 1; i < n; i++ {
		if t.Times[i] <= t.Times[i-1] {
			return bad("time %d at row %d is not after %d", t.Times[i], i, t.Times[i-1])
		}
	}
	if last := len(w.devices) - 1; last >= 0 {
		prev := w.devices[last]
		switch {
		case device < prev:
			return bad("comes after device %q", prev)
		case device == prev && n > 0 && t.Times[0] <= w.lastTime:
			return bad("time %d is not after the previous call's %d", t.Times[0], w.lastTime)
		}
	}
	return nil
}

// checkBuffers checks that c's buffers hold n rows, so that a bad tablet
// is an error and not a panic (tablet.Validate does more: names, UTF-8).
func checkBuffers(c *tablet.Column, n int) error {
	if c.Offset < 0 || c.Offset > tablet.MaxOffset-n {
		return fmt.Errorf("bad offset %d", c.Offset)
	}
	end := c.Offset + n
	if c.Validity != nil && len(c.Validity)*8 < end {
		return fmt.Errorf("validity has %d bits, need %d", len(c.Validity)*8, end)
	}
	switch {
	case c.Type == schema.Boolean:
		if len(c.Values)*8 < end {
			return fmt.Errorf("values have %d bits, need %d", len(c.Values)*8, end)
		}
	case tablet.VarWidth(c.Type):
		if len(c.Offsets) < end+1 {
			return fmt.Errorf("%d offsets, need %d", len(c.Offsets), end+1)
		}
		for i := c.Offset; i < end; i++ {
			if c.Offsets[i] < 0 || c.Offsets[i] > c.Offsets[i+1] || int(c.Offsets[i+1]) > len(c.Data) {
				return fmt.Errorf("value offsets out of order or past the data at row %d", i-c.Offset)
			}
		}
	default:
		if wd := tablet.Width(c.Type); len(c.Values) < end*wd {
			return fmt.Errorf("values have %d bytes, need %d", len(c.Values), end*wd)
		}
	}
	return nil
}

// flush writes the buffered rows as one row group, one column chunk after
// the other, recording each chunk's length and CRC.
func (w *Writer) flush() error {
	if err := w.wait(); err != nil {
		return err
	}
	if w.props == nil {
		w.start()
	}
	full := w.rowGroupBuf
	if w.spare == nil {
		w.spare = newRowGroupBuf(w.layout)
	}
	w.rowGroupBuf, w.spare = w.spare, nil
	done := make(chan rowGroupDone, 1)
	w.inflight = done
	go func() {
		err := w.writeRowGroup(full)
		full.reset()
		done <- rowGroupDone{buf: full, err: err}
	}()
	return nil
}

// wait waits for the row group being written, if any: its error becomes
// the Writer's, its buffers the spare ones.
func (w *Writer) wait() error {
	if w.inflight == nil {
		return w.err
	}
	d := <-w.inflight
	w.inflight, w.spare = nil, d.buf
	if d.err != nil && w.err == nil {
		w.err = fmt.Errorf("segment: write %s: %v: %w", w.tmp, d.err, errs.ErrIO)
	}
	return w.err
}

// writeRowGroup encodes and writes the row group of b, on the goroutine
// flush started: it alone uses the encoder, the sink, groups and metas
// until wait. Each chunk is encoded whole (with its pages' lengths, values
// and CRCs, for the footer's page index), then written.
func (w *Writer) writeRowGroup(b *rowGroupBuf) (err error) {
	defer func() {
		if r := recover(); r != nil { // bounds checks: a bug, not a crash of the process
			err = fmt.Errorf("encoding a row group: %v", r)
		}
	}()
	rows := len(b.times)
	g := rowGroup{rows: int64(rows), minTime: b.minT, maxTime: b.maxT, chunks: make([]chunk, 0, 2+len(b.cols))}
	metas := make([]chunkMeta, 0, 2+len(b.cols))
	e := &w.enc
	for i := -2; i < len(b.cols); i++ {
		switch i {
		case -2:
			e.reset(true)
			e.encodeDevices(b.dict, b.devIdx, w.opts.PageBytes)
		case -1:
			e.reset(true)
			e.encodeTimes(b.times, w.timePageRows)
		default:
			e.reset(!w.plain[i])
			e.encodeProperty(&b.cols[i], rows, w.opts.PageBytes)
		}
		pages := e.pages
		if i == -1 { // the time column: each page's first time
			at := int64(0)
			for k := range pages {
				if pages[k].values > 0 {
					pages[k].first = b.times[at]
				}
				at += pages[k].values
			}
		}
		start := w.out.n
		if _, err := w.out.Write(e.buf); err != nil {
			return err
		}
		g.chunks = append(g.chunks, chunk{offset: start, length: int64(len(e.buf)), crc: crc32.Checksum(e.buf, castagnoli), pages: pages})
		m := e.meta
		m.dataOffset += start
		if m.dictOffset >= 0 {
			m.dictOffset += start
		}
		metas = append(metas, m)
	}
	if cap(e.buf) > 8<<20 { // do not keep a wide chunk's buffers
		e.buf, e.body, e.zbody = nil, nil, nil
	}
	w.groups = append(w.groups, g)
	w.metas = append(w.metas, metas)
	return nil
}

// timePageRows is the rows per page of the time column: as many as a
// page of pageBytes holds of PLAIN int64s, at most 1024 (delta-encoded
// regular times take so few bytes that a page cut by size would hold the
// whole row group, which a short time range would then decode whole).
func timePageRows(pageBytes int64) int { return int(max(1, min(1024, pageBytes/8))) }

// Close writes the last row group and the footer (with the arcadego
// key-value metadata), fsyncs (if Sync), renames to path, fsyncs the
// directory (if Sync), and returns what the Delta log needs. A Writer with
// no rows still writes a valid file. After a failed Close, call Abort.
func (w *Writer) Close() (*FileInfo, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.done {
		return nil, fmt.Errorf("segment: %s: closed twice: %w", w.path, errs.ErrClosed)
	}
	if len(w.times) > 0 {
		if err := w.flush(); err != nil {
			return nil, err
		}
	}
	if err := w.wait(); err != nil {
		return nil, err
	}
	if len(w.groups) > maxRowGroups {
		w.err = fmt.Errorf("segment: %s: %d row groups, more than the %d a file may hold (the footer numbers them in an int16): %w",
			w.path, len(w.groups), maxRowGroups, errs.ErrInvalidArgument)
		return nil, w.err
	}
	if err := w.finish(); err != nil {
		w.err = fmt.Errorf("segment: write %s: %v: %w", w.tmp, err, errs.ErrIO)
		return nil, w.err
	}
	w.done = true
	info := &FileInfo{Name: filepath.Base(w.path), Size: w.out.n, Rows: w.rows}
	if w.opts.Sync {
		info.Fsyncs = w.wb.syncs + 2 // and the last one, and the directory's
	}
	if len(w.devices) > 0 {
		info.MinDevice, info.MaxDevice = w.devices[0], w.devices[len(w.devices)-1]
		info.MinTime, info.MaxTime = w.timeStats.minI, w.timeStats.maxI
	}
	info.Stats = statsJSON(w.rows, w.layout, &w.devStats, &w.timeStats, w.propStats)
	return info, nil
}

// File returns the file a successful Close wrote, ready for reading: the
// File that Open makes of it, built from what the writer knows instead of
// reading and decoding the footer back (for a file of 500,000 devices, a
// tenth of the time of writing it). The Parquet footer itself is read only
// if the library's reader is needed (File.metadata).
func (w *Writer) File() (*File, error) {
	if !w.done || w.made {
		return nil, fmt.Errorf("segment: %s: File before a successful Close, or twice: %w", w.path, errs.ErrClosed)
	}
	w.made = true // the File takes the chunk table
	fh, err := os.Open(w.path)
	if err != nil {
		return nil, fmt.Errorf("segment: open %s: %v: %w", w.path, err, errs.ErrIO)
	}
	f := &File{path: w.path, f: fh, size: w.out.n, props: parquet.NewReaderProperties(nil), layout: Layout{TimeUnit: w.layout.TimeUnit}}
	if len(w.layout.Columns) > 0 {
		f.layout.Columns = slices.Clone(w.layout.Columns)
	}
	// The names are copied into one string, as Open's are: the writer's
	// may be views of memory its caller reuses.
	size := 0
	for _, d := range w.devices {
		size += len(d)
	}
	var names strings.Builder
	names.Grow(size)
	for _, d := range w.devices {
		names.WriteString(d)
	}
	all := names.String()
	f.devices = make([]string, len(w.devices))
	f.starts = make([]int64, len(w.devices)+1)
	for i, d := range w.devices {
		f.devices[i], all = all[:len(d)], all[len(d):]
		f.starts[i+1] = f.starts[i] + w.deviceRows[i]
	}
	f.spans = slices.Clone(w.deviceSpans)
	// The chunk table as decodeChunks and checkChunks make it; the
	// writer is done with its groups.
	f.groups = w.groups
	f.chunks = make(map[int64]chunk)
	first, seq := int64(0), 0
	for i := range f.groups {
		g := &f.groups[i]
		g.first = first
		first += g.rows
		for j := range g.chunks {
			c := &g.chunks[j]
			c.plain = j >= 2 && w.plain[j-2]
			for k := range c.pages {
				c.pages[k].seq = seq
				seq++
			}
			f.chunks[c.offset] = *c
		}
	}
	f.checked = make([]atomic.Uint32, (seq+31)/32)
	f.headers = make([]atomic.Uint64, seq)
	f.valuesAt = make([]atomic.Uint32, seq)
	if f.sums, err = decodeSums(encodeSums(w.layout, w.propStats), len(w.layout.Columns)); err != nil {
		fh.Close()
		return nil, fmt.Errorf("segment: %s: %w", w.path, err)
	}
	f.indexColumns()
	f.ready()
	return f, nil
}

func (w *Writer) finish() (err error) {
	defer func() {
		if r := recover(); r != nil { // the library's metadata builder panics on some failures
			err = fmt.Errorf("parquet footer: %v", r)
		}
	}()
	if w.props == nil {
		w.start()
	}
	layout := encodeLayout(w.layout)
	devices := encodeDevices(w.devices, w.deviceRows, w.deviceSpans)
	chunks := encodeChunks(w.groups)
	kvs := metadata.NewKeyValueMetadata()
	for _, kv := range [][2]string{
		{keyFormat, formatVersion}, {keyLayout, layout}, {keyDevices, devices},
		{keyChunks, chunks}, {keyCRC, metaCRC(layout, devices, chunks)},
		{keySums, encodeSums(w.layout, w.propStats)},
	} {
		if err := kvs.Append(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if err := w.writeFooter(kvs); err != nil {
		return err
	}
	if err := w.out.w.Flush(); err != nil {
		return err
	}
	if w.opts.Sync {
		if err := w.wb.stop(); err != nil {
			return err
		}
		if err := w.f.Sync(); err != nil {
			return err
		}
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	w.f = nil
	if err := os.Rename(w.tmp, w.path); err != nil {
		return err
	}
	if w.opts.Sync {
		return syncDir(filepath.Dir(w.path))
	}
	return nil
}

// writeFooter writes the Parquet footer: the file metadata, built by the
// library from what each chunk's encoding recorded (metas) and the writer
// properties (codecs, encodings), then its length and the magic.
func (w *Writer) writeFooter(kv metadata.KeyValueMetadata) error {
	fb := metadata.NewFileMetadataBuilder(pqschema.NewSchema(w.schema), w.props, kv)
	for gi, metas := range w.metas {
		rb := fb.AppendRowGroup()
		var total int64
		for _, m := range metas {
			cb := rb.NextColumnChunk()
			if m.hasStats {
				st := m.stats
				st.ApplyStatSizeLimits(int(w.props.MaxStatsSizeFor(cb.Descr().Path())))
				cb.SetStats(st)
			}
			info := metadata.ChunkMetaInfo{NumValues: m.values, DictPageOffset: max(m.dictOffset, 0), IndexPageOffset: -1,
				DataPageOffset: m.dataOffset, CompressedSize: m.compressed, UncompressedSize: m.uncompressed}
			stats := metadata.EncodingStats{DataEncodingStats: map[parquet.Encoding]int32{m.dataEncoding: m.dataPages}}
			if m.hasDictionary {
				stats.DictEncodingStats = map[parquet.Encoding]int32{m.dictionaryKind: 1}
			}
			if err := cb.Finish(info, m.hasDictionary, false, stats, nil); err != nil {
				return err
			}
			total += m.uncompressed
		}
		rb.SetNumRows(int(w.groups[gi].rows))
		if err := rb.Finish(total, int16(gi)); err != nil {
			return err
		}
	}
	md, err := fb.Finish()
	if err != nil {
		return err
	}
	n, err := md.WriteTo(w.out, nil)
	if err != nil {
		return err
	}
	tail := binary.LittleEndian.AppendUint32(nil, uint32(n))
	_, err = w.out.Write(append(tail, magic...))
	return err
}

// Abort removes the temporary file; safe after a failed Append or Close,
// a no-op after a successful Close.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	_ = w.wait() // the goroutine writing a row group is done with the file
	if w.wb != nil {
		_ = w.wb.stop() // and so is the one fsyncing it
	}
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	os.Remove(w.tmp)
	if w.err == nil {
		w.err = fmt.Errorf("segment: %s: aborted: %w", w.path, errs.ErrClosed)
	}
}

// syncDir fsyncs a directory, making the entries made in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
