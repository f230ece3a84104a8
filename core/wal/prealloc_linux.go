package wal

import (
	"errors"
	"os"
	"syscall"
)

// errUnsupported: the file system cannot preallocate.
var errUnsupported = errors.New("fallocate not supported")

// fallocate allocates [off, off+n) of f, extending its size (mode 0: the
// new bytes read as zeros).
func fallocate(f *os.File, off, n int64) error {
	for {
		err := syscall.Fallocate(int(f.Fd()), 0, off, n)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS):
			return errUnsupported
		}
		return err
	}
}

// fdatasync flushes f's data and the metadata needed to read it back, not
// its times.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
