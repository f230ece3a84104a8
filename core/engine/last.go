package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/internal/par"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
)

// LastRequest asks for the latest values of a type's devices: per device
// and property, the last non-null value and its time.
type LastRequest struct {
	Type         string
	Properties   []string // nil: every property
	Devices      []string // nil: every device (of DevicePrefix)
	DevicePrefix string
}

// LastTimeSuffix names the column of the time of a property's last value:
// "temperature_time".
const LastTimeSuffix = "_time"

// Last returns, per device in name order, one row: the time of its latest
// row, then for each property its last non-null value and that value's
// time (INT64 in the type's time unit; both null when the device has no
// value of it). It reads backward from each device's last time (known from
// the device directories, as Devices does): the last row first, then
// windows reaching four times further back, until every property has a
// value or the device's first row is reached. A device whose properties
// are all set in its latest rows costs one point read. Where the devices
// are many for their rows (fewer than lastScanRows rows each), the
// files' summaries (lastFromFiles) or one scan of their rows are cheaper
// than a read per device, and are taken instead. The rows come in batches
// of many devices, a device per row (Batch.Devices).
func (db *DB) Last(ctx context.Context, req LastRequest) ([]Batch, *schema.Type, []schema.Property, error) {
	ty, ok := db.catalog.Load().Type(req.Type)
	if !ok {
		if err := schema.ValidateName("type", req.Type); err != nil {
			return nil, nil, nil, fmt.Errorf("last: %w", err)
		}
		return nil, nil, nil, fmt.Errorf("last: type %q: %w", req.Type, errs.ErrNotFound)
	}
	var props []schema.Property
	if req.Properties == nil {
		for _, p := range ty.Properties() {
			props = append(props, *p)
		}
	} else {
		for i, name := range req.Properties {
			p, ok := ty.Property(name)
			if !ok {
				return nil, nil, nil, fmt.Errorf("last: property %s.%s: %w", req.Type, name, errs.ErrNotFound)
			}
			if slices.Contains(req.Properties[:i], name) {
				return nil, nil, nil, fmt.Errorf("last: property %q requested twice: %w", name, errs.ErrInvalidArgument)
			}
			props = append(props, *p)
		}
	}
	if req.Devices == nil && db.manyDevices(ty.ID, req.DevicePrefix) {
		out, ok, err := db.lastFromFiles(ctx, ty, req.DevicePrefix, props)
		if err == nil && !ok {
			out, err = db.lastByScan(ctx, req, props)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		return out, ty, props, nil
	}
	var infos []DeviceInfo
	if req.Devices == nil {
		var err error
		if infos, err = db.Devices(req.Type, req.DevicePrefix); err != nil {
			return nil, nil, nil, fmt.Errorf("last: %w", err)
		}
	} else {
		// Each named device looked up in the directories, not every
		// device listed.
		for _, d := range req.Devices {
			if err := validateDevice(d); err != nil {
				return nil, nil, nil, fmt.Errorf("last: %w", err)
			}
		}
		for _, d := range slices.Compact(slices.Sorted(slices.Values(req.Devices))) {
			if !strings.HasPrefix(d, req.DevicePrefix) {
				continue
			}
			some, _, err := db.devices(req.Type, d, true)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("last: %w", err)
			}
			infos = append(infos, some...)
		}
	}
	// One read per device costs about what reading lastScanRows rows
	// does: past that many devices per row, a scan of every row is cheaper.
	var rowCount int64
	for _, in := range infos {
		rowCount += in.Rows
	}
	if int64(len(infos))*lastScanRows > rowCount {
		out, err := db.lastByScan(ctx, req, props)
		if err != nil {
			return nil, nil, nil, err
		}
		return out, ty, props, nil
	}
	lb := newLastBuilder(props)
	if err := db.addLasts(ctx, lb, req.Type, infos); err != nil {
		return nil, nil, nil, err
	}
	lb.emit()
	return lb.out, ty, props, nil
}

// addLasts adds to lb the row of each device of infos, each read by
// itself (lastOf).
func (db *DB) addLasts(ctx context.Context, lb *lastBuilder, typ string, infos []DeviceInfo) error {
	for _, in := range infos {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("last of %q stopped: %w", typ, errs.ErrCanceled)
		}
		latest, ok, err := db.lastOf(ctx, typ, in, lb.names, lb.held)
		if err != nil {
			return err
		}
		if ok {
			lb.add(in.Name, latest)
		}
	}
	return nil
}

// lastOf reads device in's latest values into held (empty on entry):
// see Last. It returns the time of the device's latest row; ok is false
// when the device has no row (all deleted or expired).
func (db *DB) lastOf(ctx context.Context, typ string, in DeviceInfo, names []string, held []heldValue) (latest int64, ok bool, err error) {
	left := len(held)
	end := in.Last + 1 // exclusive; Last is the greatest time any source holds
	width := int64(1)
	for {
		start := max(in.First, end-width)
		if end-width > end { // underflow
			start = in.First
		}
		rows, err := db.Scan(ctx, ScanRequest{Type: typ, Devices: []string{in.Name}, Properties: names, Start: &start, End: &end})
		if err != nil {
			return 0, false, fmt.Errorf("last: %w", err)
		}
		var batches []*tablet.Tablet
		for b, more := rows.Next(); more; b, more = rows.Next() {
			batches = append(batches, b.Rows)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, false, fmt.Errorf("last: %w", err)
		}
		// The latest row's time is wanted even with no property (left 0).
		for bi := len(batches) - 1; bi >= 0 && (left > 0 || !ok); bi-- {
			b := batches[bi]
			if !ok && b.Rows() > 0 {
				latest, ok = b.Times[b.Rows()-1], true
			}
			for k := range held {
				if held[k].found {
					continue
				}
				if r, valid := lastValidRow(&b.Columns[k], b.Rows()); valid {
					held[k].hold(&b.Columns[k], r, b.Times[r])
					left--
				}
			}
		}
		if left == 0 && ok || start <= in.First {
			break
		}
		end, width = start, width*4
	}
	return latest, ok, nil
}

// lastValidRow returns c's last valid row among its first n.
func lastValidRow(c *tablet.Column, n int) (int, bool) {
	for r := n - 1; r >= 0; r-- {
		if c.Valid(r) {
			return r, true
		}
	}
	return 0, false
}

// propLast is a file's summary of one property: per entry of its device
// directory, the last non-null value (null where none) and its time.
type propLast struct {
	vals  tablet.Column
	times []int64
}

// lastsOf returns the file's summary of its devices' latest values: per
// directory entry, the time of its last row and, per property of props,
// its propLast. Parts not read before are read together, in one pass
// over the file (segment.File.Lasts), and kept while the file lives: a
// file never changes, so the summary never goes stale (16 bytes a device
// and property asked, 8 for the times).
func (f *dataFile) lastsOf(props []schema.Property) ([]int64, []propLast, error) {
	f.lastsMu.Lock()
	var missing []segment.Column
	for _, p := range props {
		if _, ok := f.lasts[p.ID]; !ok {
			missing = append(missing, segment.Column{ID: p.ID, Name: p.Name, Type: p.Type})
		}
	}
	read := f.latest == nil || len(missing) > 0
	f.lastsMu.Unlock()
	if read {
		l, err := f.Lasts(missing)
		if err != nil {
			return nil, nil, err
		}
		f.lastsMu.Lock()
		if f.lasts == nil {
			f.lasts = map[schema.PropertyID]propLast{}
		}
		f.latest = l.Latest
		for k, c := range missing {
			f.lasts[c.ID] = propLast{vals: l.Values[k], times: l.Times[k]}
		}
		f.lastsMu.Unlock()
	}
	f.lastsMu.Lock()
	defer f.lastsMu.Unlock()
	out := make([]propLast, len(props))
	for k, p := range props {
		out[k] = f.lasts[p.ID]
	}
	return f.latest, out, nil
}

// lastFromFiles is Last of every device of ty (or of prefix) from the
// files' summaries (lastsOf), merged by device: the latest time is the
// largest of the device's files, each property's value the one of the
// latest time (no key is in two files). A device with rows in a memtable
// is read by itself instead (lastOf, which merges its memtable rows over
// its files' rows), in its place in name order. ok is false, and nothing
// is done, when a delete waits to be applied to the files, or when the
// memtables hold so many of the devices that a scan of every row costs
// less than their reads (the lastScanRows reckoning of Last).
func (db *DB) lastFromFiles(ctx context.Context, ty *schema.Type, prefix string, props []schema.Property) ([]Batch, bool, error) {
	files, mems := db.pin(ty.ID)
	defer unpin(files, mems)
	var fresh []string // the devices of prefix with rows in a memtable, sorted
	for _, m := range mems {
		if len(m.Deletes(ty.ID)) > 0 {
			return nil, false, nil
		}
		fresh = append(fresh, m.DevicesWithPrefix(ty.ID, prefix)...)
	}
	if len(mems) > 1 {
		slices.Sort(fresh)
		fresh = slices.Compact(fresh)
	}
	fileRows := rowsIn(files)
	if int64(len(fresh))*lastScanRows > fileRows {
		return nil, false, nil
	}
	cutoff := ttlCutoff(ty, time.Now()) // expired rows are not latest values
	// File i's latest times and its summaries of props.
	latests := make([][]int64, len(files))
	sums := make([][]propLast, len(files))
	failed := par.Do(len(files), runtime.GOMAXPROCS(0), func(_, i int) (err error) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped: %w", errs.ErrCanceled)
		}
		latests[i], sums[i], err = files[i].lastsOf(props)
		return err
	})
	if err := errors.Join(failed...); err != nil {
		return nil, false, fmt.Errorf("last: %w", err)
	}
	lists := make([]deviceList, len(files))
	for i, f := range files {
		devs := f.Devices()
		base, _ := slices.BinarySearch(devs, prefix)
		lists[i] = deviceList{names: memtable.PrefixRange(devs[base:], prefix), file: int32(i), base: int32(base)}
	}
	names, ends, hits := mergeDevices(lists)
	lb := newLastBuilder(props)
	// readFresh adds the fresh devices up to upTo (all that are left, with
	// all), each by its own read; it reports whether upTo was one.
	readFresh := func(upTo string, all bool) (bool, error) {
		hit := false
		for len(fresh) > 0 && (all || fresh[0] <= upTo) {
			d := fresh[0]
			fresh = fresh[1:]
			hit = hit || d == upTo
			infos, _, err := db.devices(ty.Name, d, true)
			if err != nil {
				return false, fmt.Errorf("last: %w", err)
			}
			if err := db.addLasts(ctx, lb, ty.Name, infos); err != nil {
				return false, err
			}
		}
		return hit, nil
	}
	from := int32(0)
	for n, name := range names {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, false, fmt.Errorf("last of %q stopped: %w", ty.Name, errs.ErrCanceled)
		}
		hs := hits[from:ends[n]]
		from = ends[n]
		if len(fresh) > 0 {
			read, err := readFresh(name, false)
			if err != nil {
				return nil, false, err
			}
			if read {
				continue
			}
		}
		latest := int64(math.MinInt64)
		for _, h := range hs {
			latest = max(latest, latests[h.file][h.index])
		}
		if latest < cutoff {
			continue // every row expired
		}
		for k := range props {
			best, bestT := -1, int64(0)
			for j, h := range hs {
				l := &sums[h.file][k]
				if t := l.times[h.index]; l.vals.Valid(int(h.index)) && t >= cutoff && (best < 0 || t > bestT) {
					best, bestT = j, t
				}
			}
			if best >= 0 {
				h := hs[best]
				lb.held[k].hold(&sums[h.file][k].vals, int(h.index), bestT)
			}
		}
		lb.add(name, latest)
	}
	if _, err := readFresh("", true); err != nil { // the devices after the files' last
		return nil, false, err
	}
	lb.emit()
	return lb.out, true, nil
}

// manyDevices reports, without listing the devices, that a type's
// devices (those of prefix) are many for their rows, as Last's choice
// below reckons: its largest file alone lists enough devices for all the
// rows of its files. Memtable rows are left out: the memtable budget
// bounds them, and lastFromFiles weighs the devices they belong to.
func (db *DB) manyDevices(typ schema.TypeID, prefix string) bool {
	files, mems := db.pin(typ)
	defer unpin(files, mems)
	var most, rows int64
	for _, f := range files {
		most = max(most, int64(len(memtable.PrefixRange(f.Devices(), prefix))))
		rows += f.Rows()
	}
	return most*lastScanRows > rows
}

// lastScanRows: see Last. A device's point read cost about 20 µs at a
// million devices, a scan's row about 30 ns. (A variable for tests.)
var lastScanRows int64 = 700

// heldValue is a property's last value of the device lastByScan is at,
// copied out of a batch whose buffers the scan reuses: one row in buffers
// reused from device to device.
type heldValue struct {
	col   tablet.Column
	found bool
	time  int64
}

func (h *heldValue) hold(c *tablet.Column, r int, t int64) {
	h.found, h.time = true, t
	switch typ := h.col.Type; {
	case tablet.VarWidth(typ):
		h.col.Data = append(h.col.Data[:0], c.Bytes(r)...)
		h.col.Offsets = append(h.col.Offsets[:0], 0, int32(len(h.col.Data)))
	case typ == schema.Boolean:
		h.col.Values = append(h.col.Values[:0], 0)
		if c.Bool(r) {
			h.col.Values[0] = 1
		}
	default:
		w := tablet.Width(typ)
		at := (c.Offset + r) * w
		h.col.Values = append(h.col.Values[:0], c.Values[at:at+w]...)
	}
}

// lastBuilder builds Last's rows of many devices, one row a device, into
// batches of lastBatchDevices rows (Batch.Devices): a device costs no
// allocation of its own.
type lastBuilder struct {
	props   []schema.Property
	names   []string // the props' names
	held    []heldValue
	vals    []*tablet.Builder
	times   [][]int64
	found   [][]bool
	devices []string
	latest  []int64
	out     []Batch
}

// lastBatchDevices is the most rows of a batch of latest values (a
// variable for tests). Large: a result of one batch has one device
// dictionary, which pyarrow need not unify across batches (a million
// names took it 0.15-0.4 s).
var lastBatchDevices = 1 << 20

func newLastBuilder(props []schema.Property) *lastBuilder {
	b := &lastBuilder{props: props, names: make([]string, len(props)), held: make([]heldValue, len(props))}
	for k, p := range props {
		b.names[k] = p.Name
		b.held[k].col = tablet.Column{Name: p.Name, Type: p.Type}
	}
	b.reset()
	return b
}

func (b *lastBuilder) reset() {
	b.vals = make([]*tablet.Builder, len(b.props))
	b.times = make([][]int64, len(b.props))
	b.found = make([][]bool, len(b.props))
	for k, p := range b.props {
		b.vals[k] = tablet.NewBuilder(p.Name, p.Type, 0)
	}
	b.devices, b.latest = nil, nil
}

// add ends a device: its row, from the held values, which it clears.
func (b *lastBuilder) add(device string, latest int64) {
	b.devices = append(b.devices, device)
	b.latest = append(b.latest, latest)
	for k := range b.held {
		h := &b.held[k]
		if h.found {
			b.vals[k].Append(&h.col, 0)
		} else {
			b.vals[k].AppendNull()
		}
		b.times[k] = append(b.times[k], h.time)
		b.found[k] = append(b.found[k], h.found)
		h.found, h.time = false, 0
	}
	if len(b.devices) == lastBatchDevices {
		b.emit()
	}
}

// emit ends the batch being built.
func (b *lastBuilder) emit() {
	if len(b.devices) == 0 {
		return
	}
	t := &tablet.Tablet{Times: b.latest, Columns: make([]tablet.Column, 0, 2*len(b.props))}
	for k, p := range b.props {
		t.Columns = append(t.Columns, b.vals[k].Column(), tablet.Int64s(p.Name+LastTimeSuffix, b.times[k], b.found[k]))
	}
	b.out = append(b.out, Batch{Devices: b.devices, Rows: t, Stable: true})
	b.reset()
}

// lastByScan is Last for many devices: one scan of their rows (props),
// keeping per device each property's last value.
func (db *DB) lastByScan(ctx context.Context, req LastRequest, props []schema.Property) ([]Batch, error) {
	lb := newLastBuilder(props)
	rows, err := db.Scan(ctx, ScanRequest{Type: req.Type, Devices: req.Devices, DevicePrefix: req.DevicePrefix, Properties: lb.names, ReuseBatches: true})
	if err != nil {
		return nil, fmt.Errorf("last: %w", err)
	}
	defer rows.Close()
	device, latest, started := "", int64(0), false
	for b, ok := rows.Next(); ok; b, ok = rows.Next() {
		t := b.Rows
		if t.Rows() == 0 {
			continue
		}
		if !started || device != b.Device {
			if started {
				lb.add(device, latest)
			}
			device, started = b.Device, true
		}
		latest = t.Times[t.Rows()-1] // a device's batches come in time order
		for k := range props {
			if r, valid := lastValidRow(&t.Columns[k], t.Rows()); valid {
				lb.held[k].hold(&t.Columns[k], r, t.Times[r])
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("last: %w", err)
	}
	if started {
		lb.add(device, latest)
	}
	lb.emit()
	return lb.out, nil
}
