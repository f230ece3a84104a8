package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// strictBuffers hands out fresh memory, scribbles over what is given
// back, and panics on a Put of memory it did not hand out or got back
// already: a batch read after its memory went back shows the scribbles.
type strictBuffers struct {
	mu    sync.Mutex
	held  map[*byte]bool
	gets  int
	bytes int // handed out, in all
}

func (s *strictBuffers) Get(n int) []byte {
	b := make([]byte, n+1)[:n] // n+1: a distinct address even for n = 0
	s.mu.Lock()
	if s.held == nil {
		s.held = map[*byte]bool{}
	}
	s.held[&b[:1][0]] = true
	s.gets++
	s.bytes += n
	s.mu.Unlock()
	return b
}

func (s *strictBuffers) Put(b []byte) {
	s.mu.Lock()
	ok := s.held[&b[:1][0]]
	delete(s.held, &b[:1][0])
	s.mu.Unlock()
	if !ok {
		panic("Put of memory not handed out, or given back twice")
	}
	for i := range b {
		b[i] = 0xa5
	}
}

// xkRows is n rows from time t0 on, of a random DOUBLE x and an INT64 k
// of five values.
func xkRows(rng *rand.Rand, n int, t0 int64) *tablet.Tablet {
	times, xs, ks := make([]int64, n), make([]float64, n), make([]int64, n)
	for i := range n {
		times[i], xs[i], ks[i] = t0+int64(i), rng.Float64(), int64(rng.IntN(5))
	}
	return &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("x", xs, nil), tablet.Int64s("k", ks, nil)}}
}

type scannedRow struct {
	device string
	time   int64
	x, k   any
}

// scanAll returns the rows of a scan in the order they come.
func scanAll(t *testing.T, db *DB, req ScanRequest) ([]scannedRow, error) {
	t.Helper()
	rows, err := db.Scan(context.Background(), req)
	require.NoError(t, err)
	defer rows.Close()
	var out []scannedRow
	for b, ok := rows.Next(); ok; b, ok = rows.Next() {
		for i, tm := range b.Rows.Times {
			out = append(out, scannedRow{b.Device, tm, b.Rows.Columns[0].Value(i), b.Rows.Columns[1].Value(i)})
		}
	}
	return out, rows.Err()
}

// TestFilteredScansComeInOrder: filtered scans, with devices read ahead
// among others that are not (small ones, those in two files or with rows
// in the memtable), give the rows of the unfiltered scan that pass, in
// its order, once each: with deletes waiting on the files, device
// prefixes, time ranges and batch sizes, batches reused (their memory
// scribbled over once given back) or not.
func TestFilteredScansComeInOrder(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(99, 4))
	rows := func(n int, t0 int64) *tablet.Tablet { return xkRows(rng, n, t0) }
	sizes := []int{10, 5000, 3, 70_000, 200, 9000, 1, 66_000, 4096, 4095, 100, 130_000, 7, 20_000, 50}
	for d := range 60 {
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), rows(sizes[d%len(sizes)], int64(d*7))))
	}
	require.NoError(t, db.Flush())
	for _, d := range []int{5, 13, 40} {
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), rows(300, 500_000))) // a second file
	}
	require.NoError(t, db.Flush())
	from, to := int64(1000), int64(3000)
	require.NoError(t, db.Delete(DeleteRequest{Type: "A", Devices: []string{"d01", "d03", "d22"}, Start: &from, End: &to}))
	from2, to2 := int64(60_000), int64(60_500)
	require.NoError(t, db.Delete(DeleteRequest{Type: "A", Start: &from2, End: &to2}))
	for _, d := range []int{17, 33} {
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), rows(40, 100))) // the memtable
	}
	w := Where{And: []Where{{Cond: &Cond{Property: "x", Op: ">", Value: 0.6}}, {Cond: &Cond{Property: "k", Op: "!=", Value: int64(2)}}}}
	at := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		prefix     string
		start, end *int64
		batch      int
	}{
		{"", nil, nil, 0},
		{"", nil, nil, 333},
		{"d1", nil, nil, 1000},
		{"", at(50), at(65_600), 0},
		{"", at(2000), nil, 4096},
		{"d", nil, at(70_000), 65536},
	} {
		requireFiltered(t, db, ScanRequest{Type: "A", DevicePrefix: c.prefix, Start: c.start, End: c.end, BatchRows: c.batch}, w,
			func(r scannedRow) bool { return r.x.(float64) > 0.6 && r.k.(int64) != 2 })
	}
}

// requireFiltered checks that req with filter w returns the rows of req
// that keep accepts, with batches of fresh memory and of reused buffers
// (strict ones, every one given back).
func requireFiltered(t *testing.T, db *DB, req ScanRequest, w Where, keep func(scannedRow) bool) {
	t.Helper()
	all, err := scanAll(t, db, req)
	require.NoError(t, err)
	var want []scannedRow
	for _, r := range all {
		if keep(r) {
			want = append(want, r)
		}
	}
	for _, reuse := range []bool{false, true} {
		bufs := &strictBuffers{}
		req := req
		req.Where, req.ReuseBatches = &w, reuse
		if reuse {
			req.Buffers = bufs
		}
		got, err := scanAll(t, db, req)
		require.NoError(t, err)
		require.Equal(t, want, got, "%+v reuse %v", req, reuse)
		require.Empty(t, bufs.held, "every buffer given back")
	}
}

// TestSmallDevicesDecodeEachRowGroupOnce: a filtered scan of many small
// devices, read from row groups decoded whole for all the devices they
// hold, decodes each row group as often as an unfiltered scan: once (no
// second set of scanners reads them ahead).
func TestSmallDevicesDecodeEachRowGroupOnce(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	for d := range 1000 {
		times, xs := make([]int64, 300), make([]float64, 300)
		for i := range times {
			times[i], xs[i] = int64(i), float64(i%10)
		}
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%04d", d), &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("x", xs, nil)}}))
	}
	require.NoError(t, db.Flush())
	var gets []int
	for _, where := range []*Where{nil, {Cond: &Cond{Property: "x", Op: ">", Value: 5.0}}} {
		bufs := &strictBuffers{}
		rows, err := db.Scan(context.Background(), ScanRequest{Type: "A", Where: where, ReuseBatches: true, Buffers: bufs})
		require.NoError(t, err)
		for _, ok := rows.Next(); ok; _, ok = rows.Next() {
		}
		require.NoError(t, rows.Err())
		rows.Close()
		gets = append(gets, bufs.gets)
	}
	require.Positive(t, gets[0])
	require.Equal(t, gets[0], gets[1], "buffers taken without and with a filter")
}

// TestReadAheadErrorsComeInOrder: a damaged page in a device read ahead
// ends the scan after every row before it, with ErrCorrupt, once; and a
// scan canceled while a device is read ahead ends with ErrCanceled,
// every buffer given back.
func TestReadAheadErrorsComeInOrder(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	var want []scannedRow
	for d := range 20 {
		times, xs, ks := make([]int64, 5000), make([]float64, 5000), make([]int64, 5000)
		for i := range times {
			times[i], xs[i] = int64(i), float64((i*7+d)%10)
			if xs[i] > 4 {
				want = append(want, scannedRow{fmt.Sprintf("d%02d", d), times[i], xs[i], int64(0)})
			}
		}
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Doubles("x", xs, nil), tablet.Int64s("k", ks, nil)}}))
	}
	require.NoError(t, db.Flush())
	w := &Where{Cond: &Cond{Property: "x", Op: ">", Value: 4.0}}
	for stop := 1; stop < 30; stop += 7 {
		ctx, cancel := context.WithCancel(context.Background())
		bufs := &strictBuffers{}
		rows, err := db.Scan(ctx, ScanRequest{Type: "A", Where: w, ReuseBatches: true, Buffers: bufs, BatchRows: 1000})
		require.NoError(t, err)
		for range stop {
			_, ok := rows.Next()
			require.True(t, ok)
		}
		cancel()
		_, ok := rows.Next()
		require.False(t, ok)
		require.ErrorIs(t, rows.Err(), errs.ErrCanceled)
		require.Empty(t, bufs.held, "every buffer given back")
		rows.Close()
	}

	// A byte of the time column's chunk of the middle row group changed.
	ty, _ := db.catalog.Load().Type("A")
	files, mems := db.pin(ty.ID)
	path := files[0].Path()
	unpin(files, mems)
	corruptTimes(t, path, func(groups int) int { return groups / 2 })
	for _, reuse := range []bool{false, true} {
		got, err := scanAll(t, db, ScanRequest{Type: "A", Where: w, ReuseBatches: reuse, BatchRows: 500})
		require.ErrorIs(t, err, errs.ErrCorrupt, "reuse %v", reuse)
		require.Less(t, len(got), len(want))
		require.Equal(t, want[:len(got)], got, "reuse %v: the rows before the damage, in order", reuse)
	}
}

// TestFilteredScanReadsTheNextDeviceAhead: a filtered scan of many
// devices reads each next device's first batch on a goroutine. The rows
// are the model's whether the batches are reused (their memory given
// back to Buffers, which scribbles over it) or not, with devices that
// cannot be read ahead (memtable rows, several files) among them; a scan
// closed after any batch gives every buffer back.
func TestFilteredScanReadsTheNextDeviceAhead(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(12, 4))
	rows := func(n int, t0 int64) *tablet.Tablet { return xkRows(rng, n, t0) }
	// d01 starts 1,536 rows before the end of the first row group
	// (65,536 rows): its first window, read ahead, is small, and its
	// second is read while d02's first is read ahead, at once.
	for d := range 30 {
		n := []int{64_000, 70_000, 70_000}[min(d, 2)]
		if d > 2 {
			n = 500 + d*300
		}
		require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), rows(n, 0)))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("A", "d07", rows(300, 100_000))) // a second file
	require.NoError(t, db.Flush())
	require.NoError(t, db.Insert("A", "d11", rows(50, 200)))    // the memtable overwrites
	require.NoError(t, db.Insert("A", "d29", rows(50, 50_000))) // the last device
	all := rowsOf(t, db, "A")
	w := Where{And: []Where{{Cond: &Cond{Property: "x", Op: ">", Value: 0.7}}, {Cond: &Cond{Property: "k", Op: "!=", Value: int64(2)}}}}
	want := map[string]map[int64]map[string]any{}
	for dev, byTime := range all {
		for tm, r := range byTime {
			if r["x"].(float64) > 0.7 && r["k"].(int64) != 2 {
				if want[dev] == nil {
					want[dev] = map[int64]map[string]any{}
				}
				want[dev][tm] = r
			}
		}
	}
	for _, reuse := range []bool{false, true} {
		bufs := &strictBuffers{}
		scan, err := db.Scan(context.Background(), ScanRequest{Type: "A", Where: &w, ReuseBatches: reuse, Buffers: bufs, BatchRows: 700})
		require.NoError(t, err)
		got := map[string]map[int64]map[string]any{}
		batches := 0
		for b, ok := scan.Next(); ok; b, ok = scan.Next() {
			batches++
			for i, tm := range b.Rows.Times {
				if got[b.Device] == nil {
					got[b.Device] = map[int64]map[string]any{}
				}
				got[b.Device][tm] = map[string]any{"x": b.Rows.Columns[0].Value(i), "k": b.Rows.Columns[1].Value(i)}
			}
		}
		require.NoError(t, scan.Err())
		scan.Close()
		require.Equal(t, want, got, "reuse %v", reuse)
		require.Empty(t, bufs.held, "reuse %v: every buffer given back", reuse)
		// Closed after any batch, a read ahead in flight or not.
		for stop := range min(batches, 12) {
			bufs := &strictBuffers{}
			scan, err := db.Scan(context.Background(), ScanRequest{Type: "A", Where: &w, ReuseBatches: reuse, Buffers: bufs, BatchRows: 700})
			require.NoError(t, err)
			for range stop + 1 {
				_, ok := scan.Next()
				require.True(t, ok)
			}
			scan.Close()
			require.Empty(t, bufs.held, "reuse %v, closed after %d batches", reuse, stop+1)
		}
	}
}

// TestReadAheadDevicesInSeveralFiles: devices whose rows three flushes
// split between three files, at later times each, are read ahead too
// (through a merger of their files), and a filtered scan of them, with
// deletes waiting on the files, time ranges and small batches, returns
// the rows of the unfiltered scan that the filter keeps, every buffer
// given back.
func TestReadAheadDevicesInSeveralFiles(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(7, 7))
	for step := range 3 {
		for d := range 12 {
			n := 5000 + rng.IntN(3000)
			require.NoError(t, db.Insert("A", fmt.Sprintf("d%02d", d), xkRows(rng, n, int64(step)*100_000)))
		}
		require.NoError(t, db.Flush())
	}
	from, to := int64(1000), int64(101_000)
	require.NoError(t, db.Delete(DeleteRequest{Type: "A", Devices: []string{"d02", "d03", "d07"}, Start: &from, End: &to}))
	w := Where{And: []Where{{Cond: &Cond{Property: "x", Op: ">", Value: 0.5}}, {Cond: &Cond{Property: "k", Op: "!=", Value: int64(2)}}}}

	scan, err := db.Scan(context.Background(), ScanRequest{Type: "A", Where: &w})
	require.NoError(t, err)
	_, ok := scan.Next()
	require.True(t, ok)
	merged := 0
	for _, a := range scan.aheads {
		if _, ok := a.src.(*merger); ok {
			merged++
		}
	}
	ahead := len(scan.aheads)
	scan.Close()
	require.Positive(t, merged, "devices in several files read ahead, of %d read ahead", ahead)

	at := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		start, end *int64
		batch      int
	}{{nil, nil, 0}, {nil, nil, 333}, {at(3000), at(205_000), 1000}, {nil, nil, 7000}} {
		requireFiltered(t, db, ScanRequest{Type: "A", Start: c.start, End: c.end, BatchRows: c.batch}, w,
			func(r scannedRow) bool { return r.x.(float64) > 0.5 && r.k.(int64) != 2 })
	}
}

// Waits says yes for a scan that reads files of 65,536 rows or more, not
// for a memtable's rows, a small file or a point read; FlushedRows counts
// the rows of the type's files.
func TestScanWaitsOnlyForLargeFiles(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	rng := rand.New(rand.NewPCG(1, 1))
	waits := func(req ScanRequest) bool {
		req.Type = "A"
		scan, err := db.Scan(context.Background(), req)
		require.NoError(t, err)
		defer scan.Close()
		return scan.Waits()
	}
	require.NoError(t, db.Insert("A", "d0", xkRows(rng, 1000, 0)))
	assert.False(t, waits(ScanRequest{}), "memtable rows only")
	assert.Zero(t, db.FlushedRows("A"))
	require.NoError(t, db.Flush())
	assert.Equal(t, int64(1000), db.FlushedRows("A"))
	assert.False(t, waits(ScanRequest{}), "a small file")
	require.NoError(t, db.Insert("A", "d1", xkRows(rng, WaitRows, 0)))
	require.NoError(t, db.Flush())
	assert.Equal(t, int64(1000+WaitRows), db.FlushedRows("A"))
	assert.True(t, waits(ScanRequest{}), "every device of large files")
	assert.True(t, waits(ScanRequest{DevicePrefix: "d"}), "a prefix's devices")
	assert.False(t, waits(ScanRequest{Devices: []string{"d1"}}), "a point read")
	assert.Zero(t, db.FlushedRows("nope"))
}
