//go:build !linux

package wal

import (
	"errors"
	"os"
)

var errUnsupported = errors.New("fallocate not supported")

// fallocate is not available: the log grows its files by writing.
func fallocate(*os.File, int64, int64) error { return errUnsupported }

// fdatasync is a full fsync where the system has no fdatasync.
func fdatasync(f *os.File) error { return f.Sync() }
