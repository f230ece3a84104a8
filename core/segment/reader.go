package segment

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
)

// File is an open file written by Writer: made by Open, which parses its
// footer once, or by Writer.File, which knows it. It is safe for
// concurrent use by any number of Cursors.
type File struct {
	path     string
	f        *os.File
	data     []byte // the file mapped read-only, for the fast path; nil if mmap failed
	size     int64
	meta     *metadata.FileMetaData // nil until metadata reads it, if Writer.File made the File
	metaOnce sync.Once
	metaErr  error
	props    *parquet.ReaderProperties
	layout   Layout
	byID     map[schema.PropertyID]int // layout index of each column id
	devices  []string
	starts   []int64    // starts[i]: first row of devices[i]; starts[len]: rows
	spans    [][2]int64 // spans[i]: first and last time of devices[i]
	groups   []rowGroup
	chunks   map[int64]chunk // by offset, for checkedReader
	sums     []Sum           // of the first layout columns (none in older files)
	// checked has a bit per page (page.seq), set once the page's CRC has
	// matched: like a block cache's blocks, a page read again (from the
	// mapping or the OS page cache) is not checked again by this process.
	checked []atomic.Uint32
	// headers keeps each data page's header once decoded (see
	// pageHeaderAt), by page.seq; 0: not yet.
	headers []atomic.Uint64
	// valuesAt keeps, by page.seq, where the values of a plain,
	// uncompressed page with a value in every row start after its header,
	// plus one (0: not such a page, or not decoded yet): a point read of
	// a page already checked then reads its rows' values alone (see
	// readValues).
	valuesAt []atomic.Uint32

	index deviceIndex // of devices, built by ready
}

// pageChecked reports whether page seq's CRC has matched before.
func (f *File) pageChecked(seq int) bool {
	return f.checked[seq/32].Load()&(1<<(seq%32)) != 0
}

func (f *File) markChecked(seq int) { f.checked[seq/32].Or(1 << (seq % 32)) }

// Sum returns the sum of layout column i's values in the file (see Sum).
func (f *File) Sum(i int) Sum {
	if i < 0 || i >= len(f.sums) {
		return Sum{}
	}
	return f.sums[i]
}

// Open opens a file written by Writer for reading. size is the size the
// Delta log recorded: a file of another size, a missing file, a bad footer
// or missing/garbled arcadego metadata is an error of kind errs.ErrCorrupt
// naming the path (errs.ErrIO for other I/O failures).
func Open(path string, size int64) (_ *File, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) { // the log names it: it must be there
			return nil, fmt.Errorf("segment: %s is missing: %w", path, errs.ErrCorrupt)
		}
		return nil, fmt.Errorf("segment: open %s: %v: %w", path, err, errs.ErrIO)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("segment: stat %s: %v: %w", path, err, errs.ErrIO)
	}
	if st.Size() != size {
		f.Close()
		return nil, fmt.Errorf("segment: %s has %d bytes, the log says %d: %w", path, st.Size(), size, errs.ErrCorrupt)
	}
	sf := &File{path: path, f: f, size: size}
	if err := sf.load(); err != nil {
		f.Close()
		if errors.Is(err, errs.ErrIO) {
			return nil, fmt.Errorf("segment: %s: %w", path, err)
		}
		return nil, fmt.Errorf("segment: %s: bad footer: %v: %w", path, err, errs.ErrCorrupt)
	}
	sf.ready()
	return sf, nil
}

// indexColumns maps each layout column's id to its index (byID).
func (f *File) indexColumns() {
	f.byID = make(map[schema.PropertyID]int, len(f.layout.Columns))
	for i, c := range f.layout.Columns {
		f.byID[c.ID] = i
	}
}

// ready finishes a File whose directory and chunk table are loaded.
func (f *File) ready() {
	// The device table is built now, with the directory at hand (files
	// are opened in parallel), not by a first point read, which would
	// wait for the tables of every file it looks in.
	f.index = newDeviceIndex(f.devices)
	// The fast path reads pages straight from a mapping of the file: no
	// read(2) per run of pages and no copy out of the page cache. Our
	// files are never changed in place; if one shrinks under us anyway,
	// the fault is turned into a panic (see fastChunk) and reported as
	// corruption. Without a mapping the fast path reads with ReadAt.
	if f.size > 0 && int64(int(f.size)) == f.size {
		if data, err := syscall.Mmap(int(f.f.Fd()), 0, int(f.size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
			f.data = data
		}
	}
}

// metadata returns the Parquet footer, for the library's reader. A File
// that Writer.File made reads it on first use, with every check Open makes
// (against the arcadego metadata and the chunk table), and checks that the
// layout and chunk table found are the ones in hand: a footer changed
// since the write is corruption, not another column's pages.
func (f *File) metadata() (*metadata.FileMetaData, error) {
	f.metaOnce.Do(func() {
		if f.meta != nil {
			return
		}
		read := &File{path: f.path, f: f.f, size: f.size}
		err := read.load()
		same := reflect.DeepEqual(read.layout, f.layout) && len(read.groups) == len(f.groups) &&
			(len(f.groups) == 0 || reflect.DeepEqual(read.groups, f.groups))
		if err == nil && !same {
			err = errors.New("footer differs from the file written")
		}
		switch {
		case errors.Is(err, errs.ErrIO):
			f.metaErr = fmt.Errorf("segment: %s: %w", f.path, err)
		case err != nil:
			f.metaErr = fmt.Errorf("segment: %s: bad footer: %v: %w", f.path, err, errs.ErrCorrupt)
		default:
			f.meta = read.meta
		}
	})
	return f.meta, f.metaErr
}

// load parses the footer and checks it against the arcadego metadata.
func (f *File) load() (err error) {
	defer func() {
		if r := recover(); r != nil { // garbage can make the Thrift decoder panic
			err = fmt.Errorf("%v", r)
		}
	}()
	// Parquet's reader only looks at the end: check the leading magic too.
	magic := make([]byte, 4)
	if _, err := f.f.ReadAt(magic, 0); err != nil || string(magic) != "PAR1" {
		return errors.New("no leading PAR1 magic")
	}
	rd, err := file.NewParquetReader(io.NewSectionReader(f.f, 0, f.size))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%v: %w", err, errs.ErrIO)
		}
		return err
	}
	f.meta = rd.MetaData()
	kv := f.meta.KeyValueMetadata()
	get := func(k string) (string, error) {
		v := kv.FindValue(k)
		if v == nil {
			return "", fmt.Errorf("no %s metadata", k)
		}
		return *v, nil
	}
	var vals [5]string
	for i, k := range []string{keyFormat, keyLayout, keyDevices, keyChunks, keyCRC} {
		if vals[i], err = get(k); err != nil {
			return err
		}
	}
	if vals[0] != formatVersion {
		return fmt.Errorf("unknown %s %q", keyFormat, vals[0])
	}
	if metaCRC(vals[1], vals[2], vals[3]) != vals[4] {
		return errors.New("arcadego metadata checksum mismatch")
	}
	if f.layout, err = decodeLayout(vals[1], f.meta.Schema); err != nil {
		return err
	}
	if f.devices, f.starts, f.spans, err = decodeDevices(vals[2]); err != nil {
		return err
	}
	ncols := 2 + len(f.layout.Columns)
	if f.groups, err = decodeChunks(vals[3], ncols); err != nil {
		return err
	}
	if err := f.checkChunks(); err != nil {
		return err
	}
	pages := 0
	for _, g := range f.groups {
		for _, c := range g.chunks {
			pages += len(c.pages)
		}
	}
	f.checked = make([]atomic.Uint32, (pages+31)/32)
	f.headers = make([]atomic.Uint64, pages)
	f.valuesAt = make([]atomic.Uint32, pages)
	if v := kv.FindValue(keySums); v != nil {
		if f.sums, err = decodeSums(*v, len(f.layout.Columns)); err != nil {
			return err
		}
	}
	f.indexColumns()
	// Read whole column chunks (the default), so checkedReader sees each
	// one in a single ReadAt and can verify its checksum.
	f.props = parquet.NewReaderProperties(nil)
	return nil
}

// checkChunks checks that the Parquet row groups are the ones the chunk
// table describes: the same rows, and chunks at the same offsets with the
// same lengths, value counts and types, Snappy-compressed or not
// compressed (chunk.plain), ending at the footer.
func (f *File) checkChunks() error {
	rows := f.starts[len(f.starts)-1]
	if f.meta.NumRows != rows {
		return fmt.Errorf("footer has %d rows, the device directory %d", f.meta.NumRows, rows)
	}
	if len(f.meta.RowGroups) != len(f.groups) {
		return fmt.Errorf("footer has %d row groups, the chunk table %d", len(f.meta.RowGroups), len(f.groups))
	}
	f.chunks = make(map[int64]chunk)
	end := int64(4)
	var total int64
	for i, g := range f.groups {
		rg := f.meta.RowGroup(i)
		if rg.NumRows() != g.rows || rg.NumColumns() != len(g.chunks) {
			return fmt.Errorf("row group %d does not match the chunk table", i)
		}
		total += g.rows
		for j, c := range g.chunks {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return err
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
			codec := cc.Compression()
			if start != c.offset || cc.TotalCompressedSize() != c.length || cc.NumValues() != g.rows ||
				codec != compress.Codecs.Snappy && codec != compress.Codecs.Uncompressed ||
				cc.Type() != f.meta.Schema.Column(j).PhysicalType() {
				return fmt.Errorf("row group %d column %d does not match the chunk table", i, j)
			}
			f.groups[i].chunks[j].plain = codec == compress.Codecs.Uncompressed
			f.chunks[c.offset] = f.groups[i].chunks[j]
			end = c.offset + c.length
		}
	}
	if total != rows {
		return fmt.Errorf("chunk table has %d rows, the device directory %d", total, rows)
	}
	if footer := f.size - 8 - int64(f.meta.Size()); end != footer {
		return fmt.Errorf("column chunks end at %d, the footer starts at %d", end, footer)
	}
	return nil
}

// Close closes the file. Nothing may read it after: its mapping is gone.
func (f *File) Close() error {
	if f.data != nil {
		_ = syscall.Munmap(f.data)
		f.data = nil
	}
	return f.f.Close()
}

// Path returns the path given to Open.
func (f *File) Path() string { return f.path }

// Rows returns the number of rows.
func (f *File) Rows() int64 { return f.starts[len(f.starts)-1] }

// Layout returns the layout as written (column ids, names, types). The
// caller must not modify it.
func (f *File) Layout() Layout { return f.layout }

// Devices returns the distinct devices, sorted. The caller must not modify it.
func (f *File) Devices() []string { return f.devices }

// Bounds returns the least and greatest device and time (zeros when empty).
func (f *File) Bounds() (minDevice, maxDevice string, minTime, maxTime int64) {
	if len(f.devices) == 0 {
		return "", "", 0, 0
	}
	minTime, maxTime = f.groups[0].minTime, f.groups[0].maxTime
	for _, g := range f.groups[1:] {
		minTime, maxTime = min(minTime, g.minTime), max(maxTime, g.maxTime)
	}
	return f.devices[0], f.devices[len(f.devices)-1], minTime, maxTime
}

// DeviceTimes returns the first and last time of device's rows in the
// file; ok is false when the file has none.
func (f *File) DeviceTimes(device string) (first, last int64, ok bool) {
	i, ok := f.Index(device)
	if !ok {
		return 0, 0, false
	}
	return f.spans[i][0], f.spans[i][1], true
}

// DeviceAt returns the rows and the first and last time of the file's
// device i (an index into Devices): no search, for a walk of them all.
func (f *File) DeviceAt(i int) (rows, first, last int64) {
	return f.starts[i+1] - f.starts[i], f.spans[i][0], f.spans[i][1]
}

// DeviceRows returns the number of rows of device in the file.
func (f *File) DeviceRows(device string) int64 {
	lo, hi := f.device(device)
	return hi - lo
}

// device returns the file rows [lo, hi) of device (empty if absent).
func (f *File) device(device string) (lo, hi int64) {
	i, ok := f.Index(device)
	if !ok {
		return 0, 0
	}
	return f.starts[i], f.starts[i+1]
}

// corrupt wraps a read failure: an I/O error stays one, anything else (a
// bad page, a checksum mismatch, a decoder panic) is corruption.
func (f *File) corrupt(what string, err error) error {
	if errors.Is(err, errs.ErrIO) || errors.Is(err, errs.ErrCorrupt) {
		return fmt.Errorf("segment: %s: %s: %w", f.path, what, err)
	}
	return fmt.Errorf("segment: %s: %s: %v: %w", f.path, what, err, errs.ErrCorrupt)
}

// checkedReader is the file as the Parquet reader sees it: each read of a
// whole column chunk is checked against the chunk's CRC-32C (Parquet page
// checksums are not supported by this Parquet library).
type checkedReader struct {
	*io.SectionReader
	chunks map[int64]chunk
}

func (r checkedReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.SectionReader.ReadAt(p, off)
	if err != nil && !(err == io.EOF && n == len(p)) {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, fmt.Errorf("short read at %d: %w", off, errs.ErrCorrupt)
		}
		return n, fmt.Errorf("read at %d: %v: %w", off, err, errs.ErrIO)
	}
	if c, ok := r.chunks[off]; ok && int64(n) >= c.length {
		if crc32.Checksum(p[:c.length], castagnoli) != c.crc {
			return 0, fmt.Errorf("column chunk at %d: checksum mismatch: %w", off, errs.ErrCorrupt)
		}
	}
	return n, nil
}
