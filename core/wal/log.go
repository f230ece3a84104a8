package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arcadego/arcadego/core/errs"
)

// LSN is the position of a record: an opaque number, strictly increasing in
// append order (across segments too). Its encoding is not promised.
type LSN uint64

// Stats counts the log's work since Open.
type Stats struct {
	Appends   uint64
	Fsyncs    uint64 // file fsyncs (data and directory)
	Bytes     uint64 // record bytes appended, framing included
	Segments  int    // live segment files
	LiveBytes int64  // bytes in live segment files
	Truncated uint64 // bytes of torn tail cut off by Open
}

// Log is a write-ahead log in a directory of segment files. It is safe for
// concurrent use. The caller owns the directory: the log assumes no other
// process writes it (the engine locks the directory).
//
// Invariants:
//   - segs holds the live segments, oldest first, with consecutive
//     numbers; the last one is the active segment, open as f. Records are
//     only ever written at the end of the active segment.
//   - written is the position just past the last record; durable <= written,
//     and every record with LSN < durable has been covered by an fsync
//     (records found by Open count as durable). Both only grow.
//   - Once failure is set (a write or fsync failed) it never clears: after a
//     failed fsync the kernel may have dropped the dirty pages and marked
//     them clean, so a retried fsync could succeed without the data ever
//     reaching the disk. The log must be reopened, which re-reads the files.
//
// Lock order: mu, then fileMu; syncMu is never held with either. A sync
// leader holds neither mu nor syncMu while it fsyncs, so appends go on
// during an fsync and their Syncs join the next one.
type Log struct {
	dir  string
	opts Options

	// mu guards f, segs, buf and the preallocation fields, and orders
	// appends.
	mu   sync.Mutex
	f    *os.File
	segs []segment
	buf  []byte // frame scratch for Append
	// loaded holds segments Open read and checked, for the replay that
	// follows: each segment is read and its checksums computed once.
	// Dropped by the replay, or by the first Append.
	loaded map[uint64][]byte

	// The active segment is preallocated ahead of its records (alloc is
	// its size on disk), so that most commits leave its size alone, and
	// commits are made durable with fdatasync: with the size unchanged it
	// has no inode update to journal (0.10 against 0.17 ms a commit here,
	// measured with 200-byte records). fdatasync is always enough for the
	// records: it flushes the metadata needed to read them back, a size
	// change included (fdatasync(2)); only times are left behind.
	alloc      int64
	noPrealloc bool // fallocate is not supported here

	// fileMu keeps a segment file open while a leader fsyncs it without mu:
	// the leader holds it shared, rotation holds it exclusively to close the
	// old file.
	fileMu sync.RWMutex

	written atomic.Uint64 // changed only under mu
	durable atomic.Uint64
	closed  atomic.Bool // set once, under mu
	failure atomic.Pointer[error]

	// syncMu and cond guard syncing: an fsync by a group-commit leader (or
	// Close) is in flight. Followers wait on cond.
	syncMu  sync.Mutex
	cond    *sync.Cond
	syncing bool

	stop, done chan struct{} // the SyncNormal flusher; nil in other modes

	appends, fsyncs, bytes, truncated atomic.Uint64
}

// segment is one live segment file. size is where its valid records end;
// for the active segment, the next record's offset.
type segment struct {
	seq  uint64
	size int64
}

// syncFile is the fsync used for every file and directory (dataOnly: an
// fdatasync, for a file whose size is already durable); tests replace it
// to inject failures.
var syncFile = func(f *os.File, dataOnly bool) error {
	if dataOnly {
		return fdatasync(f)
	}
	return f.Sync()
}

// preallocBytes is how far ahead of its records the active segment is
// allocated at a time.
const preallocBytes = 1 << 20

// Open opens or creates the log in dir (the directory must exist). It
// checks every segment, truncating a torn tail of the last one; corruption
// elsewhere is an error (kind errs.ErrCorrupt) naming the file and offset.
// Opening a log that has segments creates no file.
func Open(dir string, opts Options) (*Log, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open wal %s: %w", dir, errs.ErrNotFound)
	}
	if err != nil {
		return nil, ioErr("open", err)
	}
	var seqs []uint64
	for _, e := range entries {
		if seq, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)

	l := &Log{dir: dir, opts: opts}
	l.cond = sync.NewCond(&l.syncMu)
	if seqs, err = l.dropCheckpointed(seqs); err != nil {
		return nil, err
	}
	if len(seqs) == 0 {
		if opts.ReadOnly {
			return nil, fmt.Errorf("open wal %s read-only: no segment: %w", dir, errs.ErrNotFound)
		}
		if l.f, err = l.createSegment(1); err != nil {
			return nil, err
		}
		l.segs = []segment{{1, headerSize}}
	} else if err := l.load(seqs); err != nil {
		if l.f != nil {
			l.f.Close()
		}
		return nil, err
	}
	last := l.segs[len(l.segs)-1]
	l.alloc = last.size
	l.written.Store(pos(last.seq, last.size))
	l.durable.Store(l.written.Load())
	if opts.Sync == SyncNormal && !opts.ReadOnly {
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.flusher()
	}
	return l, nil
}

// dropCheckpointed enforces Options.First on the segment numbers found:
// segment First must be there, and older ones are deleted.
func (l *Log) dropCheckpointed(seqs []uint64) ([]uint64, error) {
	if last := l.opts.Last; last > 0 && (len(seqs) == 0 || seqs[len(seqs)-1] < last) {
		missing := last
		if len(seqs) > 0 && seqs[len(seqs)-1] >= l.opts.First {
			missing = seqs[len(seqs)-1] + 1
		}
		return nil, corrupt(l.path(missing), 0, fmt.Sprintf("missing: the last checkpoint saw the log reach segment %d", last))
	}
	first := l.opts.First
	if first == 0 {
		return seqs, nil
	}
	i, found := slices.BinarySearch(seqs, first)
	if !found {
		return nil, corrupt(l.path(first), 0, "missing: the last checkpoint kept the log from this segment on")
	}
	if i == 0 || l.opts.ReadOnly {
		return seqs[i:], nil
	}
	for _, seq := range seqs[:i] {
		if err := os.Remove(l.path(seq)); err != nil {
			return nil, ioErr("remove checkpointed segment", err)
		}
	}
	if l.opts.Sync != SyncOff {
		if err := l.syncDir(); err != nil {
			return nil, err
		}
	}
	return seqs[i:], nil
}

// SegmentFile is a live segment and how many of its bytes hold records.
type SegmentFile struct {
	Path string
	Size int64
}

// Files returns the live segments, oldest first, each with the bytes that
// hold its records as of now (the active one's preallocated tail left
// out): what a copy of the log up to End needs.
func (l *Log) Files() []SegmentFile {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]SegmentFile, len(l.segs))
	for i, s := range l.segs {
		out[i] = SegmentFile{Path: l.path(s.seq), Size: s.size}
	}
	return out
}

// keepLoaded bounds the bytes of segments that Open keeps for the replay:
// memory held during the replay on top of the memtable it fills.
const keepLoaded = 32 << 20

// load validates the existing segments and opens the last one.
func (l *Log) load(seqs []uint64) error {
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			return fmt.Errorf("wal segment %s at offset 0: missing, yet %s and %s exist: %w",
				l.path(seqs[i-1]+1), segmentName(seqs[i-1]), segmentName(seqs[i]), errs.ErrCorrupt)
		}
	}
	var buf []byte
	var kept int64
	l.loaded = map[uint64][]byte{}
	for i, seq := range seqs {
		last := i == len(seqs)-1
		// Up to keepLoaded bytes of segments are read into buffers of their
		// own and kept for the replay; the rest share one buffer and are
		// read again then.
		var own []byte
		into := &buf
		if kept < keepLoaded {
			into = &own
		}
		size, f, err := l.loadSegment(seq, last, into)
		if err != nil {
			return err
		}
		if into == &own && int64(len(own)) >= size {
			l.loaded[seq] = own[:size]
			kept += size
		}
		l.segs = append(l.segs, segment{seq, size})
		if last {
			l.f = f
		}
	}
	return nil
}

// loadSegment validates one segment and returns where its records end. The
// last segment may have a torn tail, which is cut off; it is returned open.
func (l *Log) loadSegment(seq uint64, last bool, buf *[]byte) (size int64, _ *os.File, err error) {
	path := l.path(seq)
	flag := os.O_RDONLY
	if last && !l.opts.ReadOnly {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return 0, nil, ioErr("open segment", err)
	}
	defer func() {
		if err != nil || !last {
			f.Close()
		}
	}()
	data, err := readFile(f, buf)
	if err != nil {
		return 0, nil, err
	}

	if len(data) < headerSize {
		// A crash right after creating the file leaves it empty, or
		// holding part of its header: start it afresh.
		want := encodeHeader(seq)
		if !last || !(bytes.Equal(data, want[:len(data)]) || allZero(data)) {
			return 0, nil, corrupt(path, 0, fmt.Sprintf("segment header is %d of %d bytes", len(data), headerSize))
		}
		if l.opts.ReadOnly { // being created by the writer: no record yet
			return headerSize, f, nil
		}
		if _, err := f.WriteAt(want, 0); err != nil {
			return 0, nil, ioErr("rewrite segment header", err)
		}
		if l.opts.Sync != SyncOff {
			if err := l.fsync(f); err != nil {
				return 0, nil, err
			}
		}
		return headerSize, f, nil
	}
	if off, problem, ok := checkHeader(data[:headerSize], seq); !ok {
		return 0, nil, corrupt(path, off, problem)
	}

	bad, _ := scanRecords(data, true, func(int, byte, []byte) error { return nil })
	if l.opts.ReadOnly {
		switch {
		case bad == nil:
			return int64(len(data)), f, nil
		case last: // the writer's next record, not whole yet, or its preallocated tail
			return int64(bad.off), f, nil
		}
		return 0, nil, corrupt(path, bad.off, bad.reason)
	}
	if bad == nil {
		// A session with sync off may have left this segment in the page
		// cache only; replay treats its records as durable, so make them so.
		if l.opts.Sync != SyncOff {
			if err := l.fsync(f); err != nil {
				return 0, nil, err
			}
		}
		return int64(len(data)), f, nil
	}
	if !last {
		return 0, nil, corrupt(path, bad.off, bad.reason)
	}
	if next := findRecord(data, bad.off+1); next >= 0 {
		return 0, nil, corrupt(path, bad.off, fmt.Sprintf("%s, yet a valid record follows at offset %d", bad.reason, next))
	}
	// A torn tail: the write of the last records was cut short.
	if err := f.Truncate(int64(bad.off)); err != nil {
		return 0, nil, ioErr("truncate torn tail", err)
	}
	if l.opts.Sync != SyncOff {
		if err := l.fsync(f); err != nil {
			return 0, nil, err
		}
	}
	l.truncated.Add(uint64(len(data) - bad.off))
	return int64(bad.off), f, nil
}

// readFile reads all of f into *buf, growing it as needed.
func readFile(f *os.File, buf *[]byte) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, ioErr("stat segment", err)
	}
	n := int(fi.Size())
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	data := (*buf)[:n]
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, ioErr("read segment", err)
	}
	return data, nil
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// Replay calls fn for each record in order. Call it before the first Append.
// An error from fn stops the replay and is returned as is.
//
// Each payload is a fresh allocation that fn may keep; its first byte is
// 8-byte aligned, so fixed-width values can be read in place.
func (l *Log) Replay(fn func(lsn LSN, kind byte, payload []byte) error) error {
	return l.ReplayFrom(0, fn)
}

// ReplayFrom is Replay of the records at or after from: the records
// before it (which a checkpoint covers) are checked but not copied. The
// first replay after Open uses the segments Open read and checked (up to
// keepLoaded bytes of them), instead of reading them and computing their
// checksums a second time.
func (l *Log) ReplayFrom(from LSN, fn func(lsn LSN, kind byte, payload []byte) error) error {
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		return l.closedErr()
	}
	segs := slices.Clone(l.segs)
	loaded := l.loaded
	l.loaded = nil
	l.mu.Unlock()

	var buf []byte
	for _, s := range segs {
		path := l.path(s.seq)
		data, checked := loaded[s.seq]
		delete(loaded, s.seq) // its memory goes with this segment's replay
		if !checked || int64(len(data)) != s.size {
			checked = false
			f, err := os.Open(path)
			if err != nil {
				return ioErr("open segment", err)
			}
			if cap(buf) < int(s.size) {
				buf = make([]byte, s.size)
			}
			data = buf[:s.size]
			_, err = io.ReadFull(f, data)
			f.Close()
			if err != nil {
				return ioErr("read segment", err)
			}
		}
		if off, problem, ok := checkHeader(data[:headerSize], s.seq); !ok {
			return corrupt(path, off, problem)
		}
		bad, err := scanRecords(data, !checked, func(off int, kind byte, payload []byte) error {
			lsn := LSN(pos(s.seq, int64(off)))
			if lsn < from {
				return nil
			}
			return fn(lsn, kind, alignedCopy(payload))
		})
		if err != nil {
			return err
		}
		if bad != nil { // the file changed since Open checked it
			return corrupt(path, bad.off, bad.reason)
		}
	}
	return nil
}

// Append writes one record (not yet durable) and returns its LSN. Records
// are written in call order. payload may be reused once Append returns.
// A failed write fails the log, as a failed fsync does.
func (l *Log) Append(kind byte, payload []byte) (LSN, error) {
	return l.AppendParts(kind, payload)
}

// AppendParts appends one record whose payload is the concatenation of
// parts, as Append does, without joining them in memory first: a large
// part is written straight from the caller's memory, which saves a copy of
// a bulk insert's data. The parts may be reused once it returns.
func (l *Log) AppendParts(kind byte, parts ...[]byte) (LSN, error) {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if size > MaxPayload {
		return 0, fmt.Errorf("wal append of %d bytes: exceeds MaxPayload (%d): %w", size, MaxPayload, errs.ErrInvalidArgument)
	}
	n := int64(frameSize + size)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loaded = nil // a replay after this reads the files again
	if err := l.usable(); err != nil {
		return 0, err
	}
	cur := &l.segs[len(l.segs)-1]
	if cur.size > headerSize && cur.size+n > l.opts.SegmentBytes {
		if err := l.rotate(); err != nil {
			return 0, err
		}
		cur = &l.segs[len(l.segs)-1]
	}
	l.preallocate(cur.size + n)
	if err := l.writeFrame(cur.size, kind, parts); err != nil {
		return 0, l.fail(ioErr("write", err))
	}
	lsn := pos(cur.seq, cur.size)
	cur.size += n
	l.written.Store(pos(cur.seq, cur.size))
	l.appends.Add(1)
	l.bytes.Add(uint64(n))
	return LSN(lsn), nil
}

// preallocate makes the active segment at least end bytes long on disk,
// growing it by preallocBytes beyond: zeros that the records overwrite,
// which Open takes for a torn tail of nothing. It is an optimization
// only: when fallocate fails (unsupported, or no room for the margin) the
// write goes on and extends the file itself. Called with mu held.
func (l *Log) preallocate(end int64) {
	if end <= l.alloc || l.noPrealloc || l.opts.Sync == SyncOff {
		return
	}
	size := end + preallocBytes
	switch err := fallocate(l.f, l.alloc, size-l.alloc); {
	case err == nil:
		l.alloc = size
	case errors.Is(err, errUnsupported):
		l.noPrealloc = true
	}
}

// directPart is the size from which a part is written from the caller's
// memory instead of being gathered into l.buf with its neighbours.
const directPart = 64 << 10

// writeFrame writes a record frame at off in as few writes as small parts
// allow. Called with mu held.
func (l *Log) writeFrame(off int64, kind byte, parts [][]byte) error {
	l.buf = appendFrameHeader(l.buf[:0], kind, parts)
	flush := func() error {
		if len(l.buf) == 0 {
			return nil
		}
		_, err := l.f.WriteAt(l.buf, off)
		off += int64(len(l.buf))
		l.buf = l.buf[:0]
		return err
	}
	for _, p := range parts {
		if len(p) < directPart {
			// Write out what is gathered every directPart bytes, so that
			// a record of many small parts neither grows l.buf to its size
			// by doubling (copying it twice over) nor holds it twice.
			if len(l.buf)+len(p) > cap(l.buf) && len(l.buf) >= directPart {
				if err := flush(); err != nil {
					return err
				}
			}
			l.buf = append(l.buf, p...)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if _, err := l.f.WriteAt(p, off); err != nil {
			return err
		}
		off += int64(len(p))
	}
	err := flush()
	if cap(l.buf) > 1<<20 { // do not pin a large record's buffer
		l.buf = nil
	}
	return err
}

// Sync returns once the record at lsn is as durable as the sync mode
// promises. Concurrent callers share one fsync (group commit).
//
// In SyncFull it waits for an fsync that began after the record was
// written: one caller leads and fsyncs everything written so far, the
// others wait for it, and a caller whose record is already covered
// returns at once. In SyncNormal and SyncOff it returns at once.
func (l *Log) Sync(lsn LSN) error {
	if l.closed.Load() {
		return l.closedErr()
	}
	if err := l.failed(); err != nil {
		return err
	}
	if l.opts.Sync != SyncFull {
		return nil
	}
	if uint64(lsn) >= l.written.Load() {
		return fmt.Errorf("wal sync of lsn %d: past the end of the log: %w", lsn, errs.ErrInvalidArgument)
	}
	return l.groupSync(uint64(lsn))
}

// SyncNow is Sync in every mode but off: it returns once the record at
// lsn is on disk even with SyncNormal, for a commit that makes something
// else durable (a Parquet file and its Delta commit) which must not
// outlive the record naming it. With SyncOff nothing is made durable.
func (l *Log) SyncNow(lsn LSN) error {
	if l.closed.Load() {
		return l.closedErr()
	}
	if err := l.failed(); err != nil {
		return err
	}
	if l.opts.Sync == SyncOff {
		return nil
	}
	if uint64(lsn) >= l.written.Load() {
		return fmt.Errorf("wal sync of lsn %d: past the end of the log: %w", lsn, errs.ErrInvalidArgument)
	}
	return l.groupSync(uint64(lsn))
}

// groupSync returns once durable > lsn, leading an fsync when none is in
// flight and following the running one otherwise.
func (l *Log) groupSync(lsn uint64) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	for {
		switch {
		case lsn < l.durable.Load():
			return nil
		case l.failed() != nil:
			return l.failed()
		case l.closed.Load():
			return l.closedErr()
		case l.syncing:
			l.cond.Wait()
			continue
		}
		l.syncing = true
		l.syncMu.Unlock()
		err := l.syncActive()
		l.syncMu.Lock()
		l.syncing = false
		l.cond.Broadcast()
		if err != nil {
			return err
		}
	}
}

// syncActive fsyncs the active segment and advances durable to what was
// written before the fsync began. The caller must be the leader.
func (l *Log) syncActive() error {
	l.mu.Lock()
	f, target := l.f, l.written.Load()
	l.fileMu.RLock()
	l.mu.Unlock()
	err := l.fsyncFile(f, true)
	l.fileMu.RUnlock()
	if err != nil {
		return err
	}
	l.advanceDurable(target)
	return nil
}

func (l *Log) advanceDurable(to uint64) {
	for {
		d := l.durable.Load()
		if to <= d || l.durable.CompareAndSwap(d, to) {
			return
		}
	}
}

// flusher is SyncNormal's background fsync.
func (l *Log) flusher() {
	defer close(l.done)
	t := time.NewTicker(l.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if w := l.written.Load(); w > l.durable.Load() {
				if err := l.groupSync(w - 1); err != nil {
					return // failed or closed: later calls report it
				}
			}
		}
	}
}

// Rotate closes the current segment and starts a new one, returning the
// LSN at which the new segment starts.
func (l *Log) Rotate() (LSN, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return 0, err
	}
	if err := l.rotate(); err != nil {
		return 0, err
	}
	return LSN(l.written.Load()), nil
}

// rotate makes the old segment durable (so a later fsync of the new one
// covers everything before it), then switches to a new segment. Called
// with mu held.
func (l *Log) rotate() error {
	old := l.f
	cur := l.segs[len(l.segs)-1]
	if l.alloc > cur.size {
		// Only the active segment may end in preallocated zeros: cut
		// them before the fsync that makes the segment final.
		if err := old.Truncate(cur.size); err != nil {
			return l.fail(ioErr("truncate segment", err))
		}
	}
	if l.opts.Sync != SyncOff {
		if err := l.fsync(old); err != nil {
			return err
		}
		l.advanceDurable(l.written.Load())
	}
	f, err := l.createSegment(cur.seq + 1)
	if err != nil {
		return err
	}
	l.f = f
	l.alloc = headerSize
	l.segs = append(l.segs, segment{cur.seq + 1, headerSize})
	l.written.Store(pos(cur.seq+1, headerSize))
	l.fileMu.Lock() // wait for a leader still fsyncing old
	// The data is already fsynced (or the mode does not care), so a close
	// error has nothing left to tell.
	_ = old.Close()
	l.fileMu.Unlock()
	return nil
}

// createSegment creates segment seq with its header and makes its
// directory entry durable.
func (l *Log) createSegment(seq uint64) (*os.File, error) {
	if seq > maxSeq {
		return nil, fmt.Errorf("wal %s: segment numbers exhausted: %w", l.dir, errs.ErrInternal)
	}
	path := l.path(seq)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, ioErr("create segment", err)
	}
	if _, err = f.WriteAt(encodeHeader(seq), 0); err != nil {
		err = ioErr("write segment header", err)
	} else if l.opts.Sync != SyncOff {
		err = l.syncDir()
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}

// DeleteBefore deletes the segments numbered below first, as a checkpoint
// that recorded KeptFrom's answer does: a rotation in between cannot make
// it delete a segment the checkpoint kept. The active segment is never
// deleted; Rotate first to release it. Do not run it concurrently with
// Replay.
func (l *Log) DeleteBefore(first uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for n < len(l.segs)-1 && l.segs[n].seq < first {
		n++
	}
	return l.deleteOldest(n)
}

// deleteOldest deletes the n oldest segments. Called with mu held.
func (l *Log) deleteOldest(n int) error {
	if err := l.usable(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	// Oldest first, so a crash midway leaves no gap in the numbers.
	for ; n > 0; n-- {
		if err := os.Remove(l.path(l.segs[0].seq)); err != nil {
			return ioErr("remove segment", err)
		}
		l.segs = l.segs[1:]
	}
	if l.opts.Sync != SyncOff {
		return l.syncDir()
	}
	return nil
}

// End returns the position just past the last record appended: the LSN
// of the next record, comparable with record LSNs. Called right after an
// Append by the only appender, it is where that record ends.
func (l *Log) End() LSN { return LSN(l.written.Load()) }

// Durable returns the position up to which records are known to be on
// disk.
func (l *Log) Durable() LSN { return LSN(l.durable.Load()) }

// Active returns the number of the segment appends go to.
func (l *Log) Active() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segs[len(l.segs)-1].seq
}

// KeptFrom returns the number of the oldest segment that holds a record at
// or after lsn, or the active segment: what a checkpoint ending at lsn
// keeps (DeleteBefore deletes the ones before it).
func (l *Log) KeptFrom(lsn LSN) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segs[l.covered(lsn)].seq
}

// covered returns how many segments, oldest first, hold only records
// before lsn, the active one excepted. Called with mu held.
func (l *Log) covered(lsn LSN) int {
	n := 0
	for n < len(l.segs)-1 && uint64(lsn) >= pos(l.segs[n].seq, l.segs[n].size) {
		n++
	}
	return n
}

// Locate returns the segment file and byte offset of the record at lsn,
// for messages that must name where a record is.
func (l *Log) Locate(lsn LSN) (path string, offset int64) {
	return l.path(uint64(lsn) >> offsetBits), int64(uint64(lsn) & (1<<offsetBits - 1))
}

// Stats returns counters. It works after Close too.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	segs := len(l.segs)
	var live int64
	for _, s := range l.segs {
		live += s.size
	}
	l.mu.Unlock()
	return Stats{
		Appends:   l.appends.Load(),
		Fsyncs:    l.fsyncs.Load(),
		Bytes:     l.bytes.Load(),
		Segments:  segs,
		LiveBytes: live,
		Truncated: l.truncated.Load(),
	}
}

// Close syncs (unless SyncOff) and closes the log. Later calls return errs.ErrClosed.
// If the log has failed, Close releases it and returns the failure.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		return l.closedErr()
	}
	l.closed.Store(true)
	l.mu.Unlock()
	if l.stop != nil {
		close(l.stop)
		<-l.done
	}

	// Take the leader's seat for good, so no fsync runs on a closed file.
	l.syncMu.Lock()
	for l.syncing {
		l.cond.Wait()
	}
	l.syncing = true
	l.syncMu.Unlock()

	var err error
	if l.opts.Sync != SyncOff && l.written.Load() > l.durable.Load() {
		err = l.syncActive()
	}
	if err == nil {
		err = l.failed()
	}
	// Leave no preallocated zeros behind. Not fsynced: the records are,
	// and Open cuts zeros after them anyway.
	l.mu.Lock()
	if cur := l.segs[len(l.segs)-1]; l.alloc > cur.size {
		_ = l.f.Truncate(cur.size)
	}
	l.mu.Unlock()
	if cerr := l.f.Close(); cerr != nil && err == nil {
		err = ioErr("close segment", cerr)
	}

	l.syncMu.Lock()
	l.syncing = false
	l.cond.Broadcast()
	l.syncMu.Unlock()
	return err
}

// usable reports why the log cannot take writes. Called with mu held.
func (l *Log) usable() error {
	if l.closed.Load() {
		return l.closedErr()
	}
	if l.opts.ReadOnly {
		return fmt.Errorf("wal %s: opened read-only: %w", l.dir, errs.ErrInvalidArgument)
	}
	return l.failed()
}

func (l *Log) closedErr() error { return fmt.Errorf("wal %s: %w", l.dir, errs.ErrClosed) }

func (l *Log) failed() error {
	if p := l.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records the log's first failure and returns it.
func (l *Log) fail(err error) error {
	l.failure.CompareAndSwap(nil, &err)
	return l.failed()
}

// fsync fsyncs f, failing the log for good if that fails, and refusing to
// try once it has failed.
func (l *Log) fsync(f *os.File) error { return l.fsyncFile(f, false) }

// fsyncFile is fsync, or fdatasync when dataOnly.
func (l *Log) fsyncFile(f *os.File, dataOnly bool) error {
	if err := l.failed(); err != nil {
		return err
	}
	l.fsyncs.Add(1)
	if err := syncFile(f, dataOnly); err != nil {
		return l.fail(fmt.Errorf("wal fsync of %s failed, the log is unusable until reopened: %w: %w", f.Name(), errs.ErrIO, err))
	}
	return nil
}

func (l *Log) syncDir() error {
	d, err := os.Open(l.dir)
	if err != nil {
		return ioErr("open directory", err)
	}
	defer d.Close()
	return l.fsync(d)
}

func (l *Log) path(seq uint64) string { return filepath.Join(l.dir, segmentName(seq)) }

func corrupt(path string, off int, problem string) error {
	return fmt.Errorf("wal segment %s at offset %d: %s: %w", path, off, problem, errs.ErrCorrupt)
}

func ioErr(op string, err error) error { return fmt.Errorf("wal %s: %w: %w", op, errs.ErrIO, err) }
