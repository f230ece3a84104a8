package segment

import "os"

// writebackBytes is how much a synced file's writer lets the kernel
// buffer before it asks for those bytes to be written out.
const writebackBytes = 8 << 20

// writeback passes writes to a file and, every writebackBytes, starts the
// kernel writing them to disk without waiting (see startWriteback), so
// that the disk works while the rest of the file is encoded and the final
// fsync has only the tail left to wait for.
type writeback struct {
	f            *os.File
	off, started int64
}

func (b *writeback) Write(p []byte) (int, error) {
	n, err := b.f.Write(p)
	b.off += int64(n)
	if b.off-b.started >= writebackBytes {
		startWriteback(b.f, b.started, b.off-b.started)
		b.started = b.off
	}
	return n, err
}
