package segment

import (
	"fmt"
	"slices"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/tablet"
)

// Run is the rows [Lo, Hi) of one device in a tablet given to AppendRuns.
type Run struct {
	Device string
	Lo, Hi int
}

// AppendRuns adds the rows of many devices held in one tablet: each run's
// rows in strictly increasing time, runs in strictly increasing device
// order after the previous call's (a device may continue in the next run
// if its times do), wherever they lie in t. It writes the same file as one
// Append per run, but copies each column once per row group, run by run,
// instead of slicing the tablet per device, which for many small devices
// is most of the work; nor need the caller put the runs in order first.
// A violation is an error (errs.ErrInvalidArgument) naming it, and leaves
// the Writer as it was.
func (w *Writer) AppendRuns(runs []Run, t *tablet.Tablet) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("segment: %s: append after close: %w", w.path, errs.ErrClosed)
	}
	if err := w.checkRuns(runs, t); err != nil {
		return err
	}
	// Room for every run's device at once: growing these by doubling
	// cost a large batch more fresh memory than its values.
	w.devices = slices.Grow(w.devices, len(runs))
	w.deviceRows = slices.Grow(w.deviceRows, len(runs))
	w.deviceSpans = slices.Grow(w.deviceSpans, len(runs))
	// Runs [pending, i) are booked in the row group but their columns not
	// yet copied: copy them before anything reads the columns.
	pending := 0
	copyPending := func(to int) {
		for c := range w.cols {
			var st *colStats
			if c < len(w.propStats) {
				st = &w.propStats[c]
			}
			b, col := &w.cols[c], &t.Columns[c]
			if col.Validity == nil && tablet.Width(b.typ) > 0 {
				b.addRuns(col, runs[pending:to], st)
				continue
			}
			for k := pending; k < to; {
				lo, hi := runs[k].Lo, runs[k].Hi
				for k++; k < to && runs[k].Lo == hi; k++ { // adjacent in t: one copy
					hi = runs[k].Hi
				}
				if hi > lo {
					b.add(col, lo, hi-lo, st)
				}
			}
		}
		pending = to
	}
	for i, r := range runs {
		lo, hi, device := r.Lo, r.Hi, r.Device
		n := hi - lo
		if n == 0 {
			continue
		}
		last := len(w.devices) - 1
		same := last >= 0 && w.devices[last] == device
		if !same && len(w.times) > 0 && len(w.times) >= w.opts.RowGroupRows/4 {
			copyPending(i)
			if err := w.flush(); err != nil {
				return err
			}
		}
		// The run fits the row group if Append would take it whole.
		if len(w.times)+n > w.opts.RowGroupRows || w.rowsBytes(t, lo, n) > w.opts.RowGroupBytes-w.bytes {
			// A run that does not fit the row group: Append splits it.
			copyPending(i)
			if err := w.Append(device, t.Slice(lo, hi)); err != nil {
				return err
			}
			pending = i + 1
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
			copyPending(i + 1)
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	copyPending(len(runs))
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
func (w *Writer) checkRuns(runs []Run, t *tablet.Tablet) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("segment: %s: %s: %w", w.path, fmt.Sprintf(format, args...), errs.ErrInvalidArgument)
	}
	if len(runs) == 0 {
		return nil
	}
	end := 0
	for _, r := range runs {
		if r.Hi < r.Lo {
			return bad("device %q: run [%d, %d) is reversed", r.Device, r.Lo, r.Hi)
		}
		if r.Lo < 0 || r.Hi > len(t.Times) {
			return bad("device %q: run [%d, %d) outside the tablet's %d rows", r.Device, r.Lo, r.Hi, len(t.Times))
		}
		end = max(end, r.Hi)
	}
	// Columns and buffers, once for every run (checked up to the last row).
	if err := w.check(runs[0].Device, &tablet.Tablet{Times: t.Times[:0], Columns: t.Columns}); err != nil {
		return err
	}
	for i := range t.Columns {
		if err := checkBuffers(&t.Columns[i], end); err != nil {
			return bad("column %d (%q): %v", i, t.Columns[i].Name, err)
		}
	}
	prev, prevTime, havePrev := "", int64(0), false
	if last := len(w.devices) - 1; last >= 0 {
		prev, prevTime, havePrev = w.devices[last], w.lastTime, true
	}
	for _, r := range runs {
		device, lo, hi := r.Device, r.Lo, r.Hi
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
