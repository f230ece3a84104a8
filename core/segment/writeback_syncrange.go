//go:build linux && (amd64 || arm64 || riscv64 || loong64 || s390x)

// sync_file_range(2) by its number where the syscall package has it and
// 64-bit offsets pass in one register each (on 32-bit platforms they are
// split, and on others the call has another name and argument order).

package segment

import (
	"os"
	"syscall"
)

// startWriteback asks the kernel to start writing bytes [off, off+n) of f
// to disk, and returns without waiting for them (sync_file_range(2) with
// SYNC_FILE_RANGE_WRITE). It makes nothing durable: the fsync at the end
// of the file does. Errors are ignored for the same reason: that fsync
// reports them.
func startWriteback(f *os.File, off, n int64) {
	const syncFileRangeWrite = 2
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, fd, uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
	})
}
