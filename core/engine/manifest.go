package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arcadego/arcadego/core/errs"
)

// manifest is the small file that says what a database directory must
// hold: the last checkpoint's position in the log, its catalog snapshot,
// the oldest log segment kept, and the Delta version each type's table had
// reached. It is replaced atomically (temporary file, fsync, rename,
// directory fsync) at creation and at every checkpoint. Reopen trusts
// nothing else: a file it names that is missing is corruption.
type manifest struct {
	Format int `json:"format"`
	// Checkpoint counts checkpoints; it names the catalog snapshot.
	Checkpoint uint64 `json:"checkpoint"`
	// End is the log position the checkpoint covers: every record before
	// it is in the Parquet files and the catalog snapshot, so replay
	// starts there.
	End      uint64 `json:"end"`
	Catalog  string `json:"catalog,omitempty"`  // snapshot file name, "" before the first checkpoint
	WALFirst uint64 `json:"wal_first"`          // oldest log segment kept
	WALLast  uint64 `json:"wal_last,omitempty"` // the active segment at the checkpoint: newer ones may exist, older ones may not be the last
	// Tables maps a type id to the Delta version its table had at the
	// checkpoint: a log that ends before it has lost a commit file.
	Tables map[uint32]int64 `json:"tables,omitempty"`
}

const (
	manifestFile = "MANIFEST"
	// formatVersion is the on-disk format this code writes and reads.
	formatVersion = 1
	tablesDir     = "types"
)

// readManifest returns the manifest of dir, or nil when it has none.
func readManifest(dir string) (*manifest, error) {
	path := filepath.Join(dir, manifestFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %v: %w", path, err, errs.ErrIO)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: not a manifest: %v: %w", path, err, errs.ErrCorrupt)
	}
	if m.Format > formatVersion {
		return nil, fmt.Errorf("%s: the database was written in format %d by a newer arcadego; this library reads format %d: %w",
			path, m.Format, formatVersion, errs.ErrInvalidArgument)
	}
	if m.Format < 1 || m.WALFirst == 0 {
		return nil, fmt.Errorf("%s: format %d, first log segment %d: %w", path, m.Format, m.WALFirst, errs.ErrCorrupt)
	}
	return &m, nil
}

// writeFileAtomic replaces dir/name with data: a temporary file, fsync,
// rename, directory fsync (the fsyncs only when sync is set).
func writeFileAtomic(dir, name string, data []byte, sync bool) error {
	tmp := filepath.Join(dir, ".tmp-"+name)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %v: %w", tmp, err, errs.ErrIO)
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil && sync {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %v: %w", filepath.Join(dir, name), err, errs.ErrIO)
	}
	return nil
}

func (m *manifest) write(dir string, sync bool) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode manifest: %v: %w", err, errs.ErrInternal)
	}
	return writeFileAtomic(dir, manifestFile, append(data, '\n'), sync)
}
