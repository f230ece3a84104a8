package segment

import "os"

// writebackBytes is how much a synced file's writer lets the kernel
// buffer before it asks for those bytes to be written out, and has what
// was written so far made durable in the background.
const writebackBytes = 8 << 20

// writeback passes writes to a file and, every writebackBytes, starts the
// kernel writing them to disk without waiting (see startWriteback) and
// has a goroutine of its own fsync the file, so that the disk works while
// the rest of the file is encoded and the final fsync has only the tail
// left to wait for. Starting the writes is not enough: an fsync still
// took about 1 ms per MiB written since the last one, however long ago
// the kernel had written them (a virtual disk whose host caches the
// writes until a flush), 40 ms at the end of each 21 MiB file of a
// 1 M-row batch with the cores idle.
type writeback struct {
	f            *os.File
	off, started int64
	kick         chan struct{} // to the fsyncing goroutine; nil until the first
	done         chan struct{} // closed when it has ended
	err          error         // its first failure, read after done
	syncs        int           // its fsyncs, read after done
}

func (b *writeback) Write(p []byte) (int, error) {
	n, err := b.f.Write(p)
	b.off += int64(n)
	if b.off-b.started >= writebackBytes {
		startWriteback(b.f, b.started, b.off-b.started)
		b.started = b.off
		b.syncLater()
	}
	return n, err
}

// syncLater has the goroutine fsync the file once more: one kick waiting
// is enough, as its fsync covers everything written before it starts.
func (b *writeback) syncLater() {
	if b.kick == nil {
		b.kick, b.done = make(chan struct{}, 1), make(chan struct{})
		go func() {
			defer close(b.done)
			for range b.kick {
				b.syncs++
				if err := backgroundSync(b.f); err != nil && b.err == nil {
					b.err = err
				}
			}
		}()
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// stop ends the fsyncing goroutine, waiting for its fsync, and returns
// its first failure: an fsync that failed may leave the next one of the
// same file reporting success (Linux reports a write-back error once), so
// the failure is the file's.
func (b *writeback) stop() error {
	if b.kick == nil {
		return nil
	}
	close(b.kick)
	<-b.done
	b.kick = nil
	return b.err
}

// backgroundSync is the fsync of the goroutine; tests replace it.
var backgroundSync = (*os.File).Sync
