package segment

import (
	"fmt"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// AppendRuns adds the rows of many devices held in one tablet: device i's
// rows are t's rows [bounds[i], bounds[i+1]), each run in strictly
// increasing time, devices in strictly increasing order after the
// previous call's. It writes the same file as one Append per device, but
// copies each column once per row group instead of once per device, which
// for many small devices is most of the work. A violation is an error
// (errs.ErrInvalidArgument) naming it, and leaves the Writer as it was.
func (w *Writer) AppendRuns(devices []string, bounds []int, t *tablet.Tablet) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("segment: %s: append after close: %w", w.path, errs.ErrClosed)
	}
	if err := w.checkRuns(devices, bounds, t); err != nil {
		return err
	}
	if len(devices) == 0 {
		return nil
	}
	// Rows [pending, next) are booked in the row group but their columns
	// not yet copied: copy them before anything reads the columns.
	pending := bounds[0]
	copyPending := func(to int) {
		if to > pending {
			for i := range w.cols {
				var st *colStats
				if i < len(w.propStats) {
					st = &w.propStats[i]
				}
				w.cols[i].add(&t.Columns[i], pending, to-pending, st)
			}
		}
		pending = to
	}
	for i, device := range devices {
		lo, hi := bounds[i], bounds[i+1]
		n := hi - lo
		if n == 0 {
			continue
		}
		last := len(w.devices) - 1
		same := last >= 0 && w.devices[last] == device
		if !same && len(w.times) > 0 && len(w.times) >= w.opts.RowGroupRows/4 {
			copyPending(lo)
			if err := w.flush(); err != nil {
				return err
			}
		}
		// The run fits the row group if Append would take it whole.
		if len(w.times)+n > w.opts.RowGroupRows || w.rowsBytes(t, lo, n) > w.opts.RowGroupBytes-w.bytes {
			// A run that does not fit the row group: Append splits it.
			copyPending(lo)
			if err := w.Append(device, t.Slice(lo, hi)); err != nil {
				return err
			}
			pending = hi
			continue
		}
		if same {
			w.deviceRows[last] += int64(n)
			w.deviceSpans[last][1] = t.Times[hi-1]
		} else {
			w.devices = append(w.devices, device)
			w.deviceRows = append(w.deviceRows, int64(n))
			w.deviceSpans = append(w.deviceSpans, [2]int64{t.Times[lo], t.Times[hi-1]})
			w.devStats.addString([]byte(device), []byte(device))
		}
		if len(w.dict) == 0 || w.dict[len(w.dict)-1] != device {
			w.dict = append(w.dict, device)
		}
		idx := int32(len(w.dict) - 1)
		for range n {
			w.devIdx = append(w.devIdx, idx)
		}
		if len(w.times) == 0 {
			w.minT, w.maxT = t.Times[lo], t.Times[lo]
		}
		for _, tm := range t.Times[lo:hi] {
			w.timeStats.addInt(tm)
			w.minT, w.maxT = min(w.minT, tm), max(w.maxT, tm)
		}
		w.times = append(w.times, t.Times[lo:hi]...)
		w.lastTime = t.Times[hi-1]
		w.rows += int64(n)
		w.bytes += w.runBytes(t, lo, n)
		if len(w.times) >= w.opts.RowGroupRows || w.bytes >= w.opts.RowGroupBytes {
			copyPending(hi)
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	copyPending(bounds[len(bounds)-1])
	return nil
}

// runBytes is what rows [from, from+n) of t add to the row group's bytes,
// counted as Append counts them (the time, then what colBuf.add returns).
func (w *Writer) runBytes(t *tablet.Tablet, from, n int) int64 {
	b := 8 * int64(n)
	for i := range t.Columns {
		c := &t.Columns[i]
		switch {
		case tablet.VarWidth(c.Type) && c.Validity == nil:
			b += int64(c.Offsets[c.Offset+from+n]-c.Offsets[c.Offset+from]) + 4*int64(n)
		case tablet.VarWidth(c.Type): // a null's slot may span bytes, which are not written
			for i := from; i < from+n; i++ {
				if c.Valid(i) {
					b += int64(c.Offsets[c.Offset+i+1] - c.Offsets[c.Offset+i])
				}
			}
			b += 4 * int64(n)
		case tablet.Width(c.Type) > 0:
			b += int64(tablet.Width(c.Type)) * int64(n)
		default: // Boolean
			b += int64(n)
		}
	}
	return b
}

// checkRuns validates an AppendRuns before anything is buffered.
func (w *Writer) checkRuns(devices []string, bounds []int, t *tablet.Tablet) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("segment: %s: %s: %w", w.path, fmt.Sprintf(format, args...), errs.ErrInvalidArgument)
	}
	if len(bounds) != len(devices)+1 {
		return bad("%d run bounds for %d devices", len(bounds), len(devices))
	}
	if len(devices) == 0 {
		return nil
	}
	if bounds[0] < 0 || bounds[len(bounds)-1] > len(t.Times) {
		return bad("runs [%d, %d) outside the tablet's %d rows", bounds[0], bounds[len(bounds)-1], len(t.Times))
	}
	// Columns and buffers, once for every run (checked up to the last row).
	if err := w.check(devices[0], &tablet.Tablet{Times: t.Times[:0], Columns: t.Columns}); err != nil {
		return err
	}
	end := bounds[len(bounds)-1]
	for i := range t.Columns {
		if err := checkBuffers(&t.Columns[i], end); err != nil {
			return bad("column %d (%q): %v", i, t.Columns[i].Name, err)
		}
	}
	prev, prevTime, havePrev := "", int64(0), false
	if last := len(w.devices) - 1; last >= 0 {
		prev, prevTime, havePrev = w.devices[last], w.lastTime, true
	}
	for i, device := range devices {
		lo, hi := bounds[i], bounds[i+1]
		if hi < lo {
			return bad("device %q: run [%d, %d) is reversed", device, lo, hi)
		}
		for k := lo + 1; k < hi; k++ {
			if t.Times[k] <= t.Times[k-1] {
				return bad("device %q: time %d at row %d is not after %d", device, t.Times[k], k, t.Times[k-1])
			}
		}
		if hi == lo {
			continue
		}
		switch {
		case havePrev && device < prev:
			return bad("device %q comes after device %q", device, prev)
		case havePrev && device == prev && t.Times[lo] <= prevTime:
			return bad("device %q: time %d is not after the previous rows' %d", device, t.Times[lo], prevTime)
		}
		prev, prevTime, havePrev = device, t.Times[hi-1], true
	}
	return nil
}
