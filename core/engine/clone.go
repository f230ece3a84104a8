package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/segment"
)

// Clone writes a consistent copy of the database into directory dest,
// which must not exist or be empty: every commit acknowledged before the
// call, and possibly some in flight. Parquet files, which are never
// modified, are hard-linked where dest is on the same file system; the
// manifest, the catalog snapshot, the log and the Delta logs are copied.
// The copy is a database of its own, opened like any other (its open
// replays the copied log). Flushes, checkpoints and the publication of
// direct writes wait meanwhile; other commits do not. A database in
// memory has nothing on disk to clone.
func (db *DB) Clone(dest string) (err error) {
	if db.closed.Load() {
		return fmt.Errorf("clone: %w", errs.ErrClosed)
	}
	if db.log == nil {
		return fmt.Errorf("clone: the database is in memory: %w", errs.ErrInvalidArgument)
	}
	if err := db.readOnly("clone"); err != nil {
		return err
	}
	if err := prepareCloneDir(dest); err != nil {
		return fmt.Errorf("clone to %q: %w", dest, err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dest) // it was empty or absent: nothing of the caller's
			err = fmt.Errorf("clone to %q: %w", dest, err)
		}
	}()
	// deltaMu holds off flushes, direct-write publications and
	// checkpoints: the manifest, the snapshot, the log's segments and the
	// tables' files stay as they are while they are copied. Records
	// appended meanwhile are past the copied log's end, or whole in it.
	db.deltaMu.Lock()
	defer db.deltaMu.Unlock()
	if db.closed.Load() { // Close waits for deltaMu before releasing the files
		return errs.ErrClosed
	}
	sync := db.syncing()
	if err := os.MkdirAll(filepath.Join(dest, walDir), 0o755); err != nil {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	if err := os.MkdirAll(filepath.Join(dest, tablesDir), 0o755); err != nil {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	man := *db.man
	if man.Catalog != "" {
		if err := copyFile(filepath.Join(db.path, man.Catalog), filepath.Join(dest, man.Catalog), -1, sync); err != nil {
			return err
		}
	}
	for _, f := range db.log.Files() {
		if err := copyFile(f.Path, filepath.Join(dest, walDir, filepath.Base(f.Path)), f.Size, sync); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(filepath.Join(db.path, tablesDir))
	if err != nil {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := cloneTable(filepath.Join(db.path, tablesDir, e.Name()), filepath.Join(dest, tablesDir, e.Name()), sync); err != nil {
				return err
			}
		}
	}
	// The manifest last: a clone cut short has none, and open refuses a
	// directory with data but no manifest.
	if err := man.write(dest, sync); err != nil {
		return err
	}
	if sync {
		for _, d := range []string{filepath.Join(dest, walDir), filepath.Join(dest, tablesDir), dest, filepath.Dir(filepath.Clean(dest))} {
			if err := syncDir(d); err != nil {
				return fmt.Errorf("fsync %s: %v: %w", d, err, errs.ErrIO)
			}
		}
	}
	return nil
}

// prepareCloneDir checks that dest is absent or an empty directory.
func prepareCloneDir(dest string) error {
	if dest == "" {
		return fmt.Errorf("no destination directory: %w", errs.ErrInvalidArgument)
	}
	entries, err := os.ReadDir(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%v: %w", err, errs.ErrInvalidArgument)
	case len(entries) > 0:
		return fmt.Errorf("the directory is not empty: %w", errs.ErrAlreadyExists)
	}
	return nil
}

// cloneTable copies a type's Delta log and links its Parquet files (those
// the log names, and those of direct writes the copied log may publish).
func cloneTable(src, dst string, sync bool) error {
	if err := os.MkdirAll(filepath.Join(dst, segment.LogDirName), 0o755); err != nil {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	logs, err := os.ReadDir(filepath.Join(src, segment.LogDirName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	for _, e := range logs {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if err := copyFile(filepath.Join(src, segment.LogDirName, e.Name()), filepath.Join(dst, segment.LogDirName, e.Name()), -1, sync); err != nil {
				return err
			}
		}
	}
	files, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	for _, e := range files {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if err := os.Link(from, to); err != nil {
			if err := copyFile(from, to, -1, sync); err != nil { // another file system
				return err
			}
		}
	}
	if sync {
		for _, d := range []string{filepath.Join(dst, segment.LogDirName), dst} {
			if err := syncDir(d); err != nil {
				return fmt.Errorf("fsync %s: %v: %w", d, err, errs.ErrIO)
			}
		}
	}
	return nil
}

// copyFile copies the first n bytes of src (all when n < 0) to a new file
// dst.
func copyFile(src, dst string, n int64, sync bool) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%v: %w", err, errs.ErrIO)
	}
	var r io.Reader = in
	if n >= 0 {
		r = io.LimitReader(in, n)
	}
	_, err = io.Copy(out, r)
	if err == nil && sync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %v: %w", src, err, errs.ErrIO)
	}
	return nil
}
