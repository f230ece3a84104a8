//go:build !(linux && (amd64 || arm64 || riscv64 || loong64 || s390x))

package segment

import "os"

// startWriteback does nothing where sync_file_range(2) does not exist or
// is not called here (see writeback_syncrange.go): the background fsyncs
// and the one at the end of the file write everything.
func startWriteback(*os.File, int64, int64) {}
