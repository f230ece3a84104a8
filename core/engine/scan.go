package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/memtable"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// ScanRequest selects rows of one type.
type ScanRequest struct {
	Type       string
	Devices    []string // nil: every device
	Properties []string // nil: every live property, in creation order
	Start      *int64   // nil: no lower bound; else time >= *Start
	End        *int64   // nil: no upper bound; else time < *End
	BatchRows  int      // rows per batch at most; default 65536
}

// DefaultBatchRows is the batch size of a scan that does not set one.
const DefaultBatchRows = 65536

// Batch is a run of rows of one device, sorted by time.
type Batch struct {
	Device string
	Rows   *tablet.Tablet // owns its memory
}

// Rows iterates over scan results, device by device in device order. Not
// safe for concurrent use.
type Rows struct {
	ctx        context.Context
	typ        *schema.Type
	props      []schema.Property
	refs       []memtable.ColumnRef
	devices    []string
	snaps      []memtable.Snapshot
	start, end int64
	batchRows  int

	next    int            // index of the next device to read
	cur     *tablet.Tablet // rows of devices[next-1] not yet returned
	curFrom int
	err     error
}

// Scan starts a scan. The chunks' snapshots are taken now: later commits
// are not seen.
func (db *DB) Scan(ctx context.Context, req ScanRequest) (*Rows, error) {
	if db.closed.Load() {
		return nil, fmt.Errorf("scan: %w", errs.ErrClosed)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cat := db.catalog.Load()
	ty, ok := cat.Type(req.Type)
	if !ok {
		return nil, fmt.Errorf("scan: type %q: %w", req.Type, errs.ErrNotFound)
	}
	r := &Rows{ctx: ctx, typ: ty, start: math.MinInt64, end: math.MaxInt64, batchRows: req.BatchRows}
	if req.Start != nil {
		r.start = *req.Start
	}
	if req.End != nil {
		r.end = *req.End
	}
	if r.batchRows <= 0 {
		r.batchRows = DefaultBatchRows
	}
	if req.Properties == nil {
		for _, p := range ty.Properties() {
			r.props = append(r.props, *p)
		}
	} else {
		seen := make(map[string]bool, len(req.Properties))
		for _, name := range req.Properties {
			p, ok := ty.Property(name)
			if !ok {
				return nil, fmt.Errorf("scan: property %s.%s: %w", req.Type, name, errs.ErrNotFound)
			}
			if seen[name] {
				return nil, fmt.Errorf("scan: property %q requested twice: %w", name, errs.ErrInvalidArgument)
			}
			seen[name] = true
			r.props = append(r.props, *p)
		}
	}
	r.refs = make([]memtable.ColumnRef, len(r.props))
	for i, p := range r.props {
		r.refs[i] = memtable.ColumnRef{ID: p.ID, Name: p.Name, Type: p.Type}
	}
	devices := db.mem.Devices(ty.ID)
	if req.Devices != nil {
		want := make(map[string]bool, len(req.Devices))
		for _, d := range req.Devices {
			want[d] = true
		}
		kept := devices[:0]
		for _, d := range devices {
			if want[d] {
				kept = append(kept, d)
			}
		}
		devices = kept
	}
	for _, d := range devices {
		if c, ok := db.mem.Lookup(ty.ID, d); ok {
			r.devices = append(r.devices, d)
			r.snaps = append(r.snaps, c.Snapshot())
		}
	}
	return r, nil
}

// Type returns the scanned type as of the scan's start.
func (r *Rows) Type() *schema.Type { return r.typ }

// Properties returns the result columns after device and time.
func (r *Rows) Properties() []schema.Property { return r.props }

// Next returns the next batch, or false at the end or on error.
func (r *Rows) Next() (Batch, bool) {
	for r.err == nil {
		if r.cur != nil && r.curFrom < r.cur.Rows() {
			to := min(r.curFrom+r.batchRows, r.cur.Rows())
			b := Batch{Device: r.devices[r.next-1], Rows: r.cur.Slice(r.curFrom, to)}
			r.curFrom = to
			return b, true
		}
		if r.next >= len(r.devices) {
			return Batch{}, false
		}
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("scan of %q: %v: %w", r.typ.Name, err, errs.ErrCanceled)
			break
		}
		r.cur = r.snaps[r.next].Read(r.refs, r.start, r.end)
		r.snaps[r.next] = memtable.Snapshot{}
		r.curFrom = 0
		r.next++
	}
	return Batch{}, false
}

// Err returns the error that ended the iteration, if any.
func (r *Rows) Err() error { return r.err }

// Close releases the iterator.
func (r *Rows) Close() {
	r.cur, r.snaps, r.devices, r.next = nil, nil, nil, 0
}
