package segment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/arcadego/arcadego/core/errs"
)

// AddFile is an active file of a table.
type AddFile struct {
	Path             string // relative to the table dir, e.g. "part-00000000000000000003-0.parquet"
	Size             int64
	ModificationTime int64 // ms since epoch
	Stats            string
}

// Metadata is a table's metaData action.
type Metadata struct {
	ID           string // the table's id (a random UUID made at creation; keep it across commits)
	Name         string // the type's name (informational)
	SchemaString string
	CreatedTime  int64 // ms
}

// Commit is what one new version of the log holds.
type Commit struct {
	Metadata   *Metadata // non-nil: write a metaData action (required in version 0, with protocol)
	Adds       []AddFile
	Removes    []string // paths of active files to remove
	AppID      string   // when non-empty: a txn action {"appId":AppID,"version":TxnVersion}
	TxnVersion int64
	// Marks, when not empty: more txn actions, {"appId":key,"version":value}
	// each (a writer's other positions; TxnVersion reads them back).
	Marks map[string]int64
}

// Table is one Delta table (a type's directory): its replayed log. It is
// not safe for concurrent use: callers serialize Commit with everything
// else.
type Table struct {
	dir     string
	version int64
	meta    *Metadata
	files   map[string]AddFile
	sorted  []AddFile // files sorted by path; nil: to rebuild
	txns    map[string]int64
}

const logDirName = "_delta_log"

// LogDirName is the directory of a table's Delta log.
const LogDirName = logDirName

// versionName is the file name of version v: 20 digits and ".json".
func versionName(v int64) string { return fmt.Sprintf("%020d.json", v) }

// The actions, with exactly the fields Delta's kernel-based readers
// require (a missing one fails them) and those we read back.
type (
	protocolAction struct {
		MinReaderVersion *int `json:"minReaderVersion"`
		MinWriterVersion *int `json:"minWriterVersion"`
	}
	formatSpec struct {
		Provider string            `json:"provider"`
		Options  map[string]string `json:"options"`
	}
	metaDataAction struct {
		ID               string            `json:"id"`
		Name             string            `json:"name"`
		Format           formatSpec        `json:"format"`
		SchemaString     string            `json:"schemaString"`
		PartitionColumns []string          `json:"partitionColumns"`
		Configuration    map[string]string `json:"configuration"`
		CreatedTime      int64             `json:"createdTime"`
	}
	addAction struct {
		Path             string            `json:"path"`
		PartitionValues  map[string]string `json:"partitionValues"`
		Size             *int64            `json:"size"`
		ModificationTime int64             `json:"modificationTime"`
		DataChange       bool              `json:"dataChange"`
		Stats            string            `json:"stats,omitempty"`
	}
	removeAction struct {
		Path                 string            `json:"path"`
		DeletionTimestamp    int64             `json:"deletionTimestamp"`
		DataChange           bool              `json:"dataChange"`
		ExtendedFileMetadata bool              `json:"extendedFileMetadata"`
		PartitionValues      map[string]string `json:"partitionValues"`
		Size                 int64             `json:"size"`
	}
	txnAction struct {
		AppID       string `json:"appId"`
		Version     *int64 `json:"version"`
		LastUpdated int64  `json:"lastUpdated"`
	}
	commitInfoAction struct {
		Timestamp  int64  `json:"timestamp"`
		Operation  string `json:"operation"`
		EngineInfo string `json:"engineInfo"`
	}
	// action is one line: exactly one field is set.
	action struct {
		CommitInfo *commitInfoAction `json:"commitInfo,omitempty"`
		Protocol   *protocolAction   `json:"protocol,omitempty"`
		MetaData   *metaDataAction   `json:"metaData,omitempty"`
		Txn        *txnAction        `json:"txn,omitempty"`
		Remove     *removeAction     `json:"remove,omitempty"`
		Add        *addAction        `json:"add,omitempty"`
	}
)

// OpenTable reads dir/_delta_log/NNNNNNNNNNNNNNNNNNNN.json from version 0
// up (a missing dir or empty _delta_log is a table with Version -1). A gap
// in the versions, an unparsable line, an unknown or invalid action, an
// add without size, or a remove of a file not active is errs.ErrCorrupt
// naming the file. minVersion: the caller knows versions up to minVersion
// were committed; a log ending below it is ErrCorrupt naming the missing
// file (-1 skips the check). Other files in _delta_log are ignored.
func OpenTable(dir string, minVersion int64) (*Table, error) {
	t := &Table{dir: dir, version: -1, files: map[string]AddFile{}, txns: map[string]int64{}}
	logDir := filepath.Join(dir, logDirName)
	entries, err := os.ReadDir(logDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("segment: read %s: %v: %w", logDir, err, errs.ErrIO)
	}
	var versions []int64
	for _, e := range entries {
		name := e.Name()
		if len(name) != 25 || !strings.HasSuffix(name, ".json") || e.IsDir() {
			continue
		}
		v, err := strconv.ParseInt(name[:20], 10, 64)
		if err != nil || v < 0 || name[0] == '+' {
			continue
		}
		versions = append(versions, v)
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i] < versions[j] })
	for i, v := range versions {
		if v != int64(i) { // version i is missing
			return nil, fmt.Errorf("segment: %s is missing (found version %d): %w",
				filepath.Join(logDir, versionName(int64(i))), v, errs.ErrCorrupt)
		}
	}
	if last := int64(len(versions)) - 1; last < minVersion {
		return nil, fmt.Errorf("segment: %s is missing (version %d was committed): %w",
			filepath.Join(logDir, versionName(last+1)), minVersion, errs.ErrCorrupt)
	}
	for _, v := range versions {
		path := filepath.Join(logDir, versionName(v))
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("segment: read %s: %v: %w", path, err, errs.ErrIO)
		}
		if err := t.replay(v, data); err != nil {
			return nil, fmt.Errorf("segment: %s: %v: %w", path, err, errs.ErrCorrupt)
		}
	}
	return t, nil
}

// replay applies version v's actions to t.
func (t *Table) replay(v int64, data []byte) error {
	var sawProtocol, sawMeta bool
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			return fmt.Errorf("line %d is empty", i+1)
		}
		a, err := parseAction(line)
		if err != nil {
			return fmt.Errorf("line %d: %v", i+1, err)
		}
		switch {
		case a.Protocol != nil:
			p := a.Protocol
			if p.MinReaderVersion == nil || p.MinWriterVersion == nil {
				return fmt.Errorf("line %d: protocol without versions", i+1)
			}
			if *p.MinReaderVersion != 1 { // reader features we do not implement
				return fmt.Errorf("line %d: unsupported minReaderVersion %d", i+1, *p.MinReaderVersion)
			}
			sawProtocol = true
		case a.MetaData != nil:
			m := a.MetaData
			if m.ID == "" || m.SchemaString == "" || m.Format.Provider != "parquet" || len(m.PartitionColumns) != 0 {
				return fmt.Errorf("line %d: invalid metaData (id, schemaString, parquet format, no partitions)", i+1)
			}
			t.meta = &Metadata{ID: m.ID, Name: m.Name, SchemaString: m.SchemaString, CreatedTime: m.CreatedTime}
			sawMeta = true
		case a.Add != nil:
			ad := a.Add
			if ad.Path == "" || ad.Size == nil || *ad.Size < 0 {
				return fmt.Errorf("line %d: add without path or size", i+1)
			}
			if len(ad.PartitionValues) != 0 {
				return fmt.Errorf("line %d: add %q has partition values", i+1, ad.Path)
			}
			t.files[ad.Path] = AddFile{Path: ad.Path, Size: *ad.Size, ModificationTime: ad.ModificationTime, Stats: ad.Stats}
		case a.Remove != nil:
			if _, ok := t.files[a.Remove.Path]; !ok {
				return fmt.Errorf("line %d: remove of %q, which is not active", i+1, a.Remove.Path)
			}
			delete(t.files, a.Remove.Path)
		case a.Txn != nil:
			if a.Txn.AppID == "" || a.Txn.Version == nil {
				return fmt.Errorf("line %d: txn without appId or version", i+1)
			}
			t.txns[a.Txn.AppID] = *a.Txn.Version
		}
	}
	if v == 0 && (!sawProtocol || !sawMeta) {
		return errors.New("version 0 lacks protocol or metaData")
	}
	t.version = v
	t.sorted = nil
	return nil
}

// parseAction decodes one line, which must be an object of exactly one
// known action.
func parseAction(line []byte) (*action, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, err
	}
	if len(raw) != 1 {
		return nil, fmt.Errorf("%d actions on one line", len(raw))
	}
	a := &action{}
	for k, v := range raw {
		var dst any
		switch k {
		case "commitInfo":
			// Free-form: other writers put other fields here.
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil || m == nil {
				return nil, errors.New("commitInfo is not an object")
			}
			a.CommitInfo = &commitInfoAction{}
			return a, nil
		case "protocol":
			a.Protocol = &protocolAction{}
			dst = a.Protocol
		case "metaData":
			a.MetaData = &metaDataAction{}
			dst = a.MetaData
		case "add":
			a.Add = &addAction{}
			dst = a.Add
		case "remove":
			a.Remove = &removeAction{}
			dst = a.Remove
		case "txn":
			a.Txn = &txnAction{}
			dst = a.Txn
		default:
			return nil, fmt.Errorf("unknown action %q", k)
		}
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return nil, fmt.Errorf("action %q is null", k)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return nil, fmt.Errorf("action %q: %v", k, err)
		}
	}
	return a, nil
}

// Dir returns the table directory.
func (t *Table) Dir() string { return t.dir }

// Version returns the last version replayed or committed (-1: none).
func (t *Table) Version() int64 { return t.version }

// Metadata returns the table's metadata (nil before version 0). The
// caller must not modify it.
func (t *Table) Metadata() *Metadata { return t.meta }

// Files returns the active files, sorted by path, in a slice the caller owns.
func (t *Table) Files() []AddFile {
	if t.sorted == nil {
		t.sorted = make([]AddFile, 0, len(t.files))
		for _, f := range t.files {
			t.sorted = append(t.sorted, f)
		}
		sort.Slice(t.sorted, func(i, j int) bool { return t.sorted[i].Path < t.sorted[j].Path })
	}
	return append([]AddFile(nil), t.sorted...)
}

// TxnVersion returns the version of the last txn action of appID.
func (t *Table) TxnVersion(appID string) (int64, bool) {
	v, ok := t.txns[appID]
	return v, ok
}

// validPath accepts the file names we write: no directories and nothing
// that would need URI escaping in the log, or that readers hide.
func validPath(p string) bool {
	if p == "" || p[0] == '.' || p[0] == '_' {
		return false
	}
	for _, r := range p {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Commit writes version Version()+1: a temporary file in _delta_log,
// fsync (if sync), link(2) to the final name (an existing name is
// errs.ErrConflict: a version is never overwritten), remove the temporary
// file, fsync _delta_log (if sync; a new _delta_log or table dir also gets
// its parent fsynced). Then t's state is updated. A failed Commit leaves t
// unchanged and no new version file. An invalid commit (version 0 without
// Metadata, a remove of an inactive file, a bad or duplicate add) is
// errs.ErrInvalidArgument.
func (t *Table) Commit(c Commit, sync bool) error {
	v := t.version + 1
	content, err := t.encode(v, c)
	if err != nil {
		return err
	}
	logDir := filepath.Join(t.dir, logDirName)
	final := filepath.Join(logDir, versionName(v))
	ioErr := func(what string, err error) error {
		return fmt.Errorf("segment: commit %s: %s: %v: %w", final, what, err, errs.ErrIO)
	}
	if err := makeDirs(t.dir, logDir, sync); err != nil {
		return ioErr("create log dir", err)
	}
	tmp, err := os.CreateTemp(logDir, ".tmp-"+versionName(v)+"-*")
	if err != nil {
		return ioErr("create temporary file", err)
	}
	_, err = tmp.Write(content)
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), final)
	}
	os.Remove(tmp.Name())
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("segment: commit %s: version %d exists: %w", final, v, errs.ErrConflict)
		}
		return ioErr("write", err)
	}
	if sync {
		if err := syncDir(logDir); err != nil {
			os.Remove(final) // best effort: the commit did not happen
			return ioErr("sync log dir", err)
		}
	}
	t.apply(v, c)
	return nil
}

// makeDirs creates the table and log dirs if needed, fsyncing the parent
// of each one created when sync is set.
func makeDirs(dir, logDir string, sync bool) error {
	if _, err := os.Stat(logDir); err == nil {
		return nil
	}
	_, err := os.Stat(dir)
	newDir := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	if newDir {
		if err := syncDir(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// encode validates c against t and returns version v's file content.
func (t *Table) encode(v int64, c Commit) ([]byte, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("segment: commit %s version %d: %s: %w", t.dir, v, fmt.Sprintf(format, args...), errs.ErrInvalidArgument)
	}
	now := time.Now().UnixMilli()
	lines := []action{{CommitInfo: &commitInfoAction{Timestamp: now, Operation: "WRITE", EngineInfo: "arcadego"}}}
	if v == 0 {
		if c.Metadata == nil {
			return nil, bad("version 0 needs metadata")
		}
		one, two := 1, 2
		lines = append(lines, action{Protocol: &protocolAction{MinReaderVersion: &one, MinWriterVersion: &two}})
	}
	if m := c.Metadata; m != nil {
		if m.ID == "" || m.SchemaString == "" {
			return nil, bad("metadata needs an id and a schema")
		}
		if t.meta != nil && m.ID != t.meta.ID {
			return nil, bad("table id %q would change to %q", t.meta.ID, m.ID)
		}
		lines = append(lines, action{MetaData: &metaDataAction{
			ID: m.ID, Name: m.Name, Format: formatSpec{Provider: "parquet", Options: map[string]string{}},
			SchemaString: m.SchemaString, PartitionColumns: []string{}, Configuration: map[string]string{},
			CreatedTime: m.CreatedTime,
		}})
	}
	if c.AppID != "" {
		ver := c.TxnVersion
		lines = append(lines, action{Txn: &txnAction{AppID: c.AppID, Version: &ver, LastUpdated: now}})
	}
	for _, app := range slices.Sorted(maps.Keys(c.Marks)) {
		if app == "" || app == c.AppID {
			return nil, bad("mark %q: an empty appId or the commit's own", app)
		}
		ver := c.Marks[app]
		lines = append(lines, action{Txn: &txnAction{AppID: app, Version: &ver, LastUpdated: now}})
	}
	removed := make(map[string]bool, len(c.Removes))
	for _, p := range c.Removes {
		f, ok := t.files[p]
		if !ok || removed[p] {
			return nil, bad("remove of %q, which is not active", p)
		}
		removed[p] = true
		lines = append(lines, action{Remove: &removeAction{
			Path: p, DeletionTimestamp: now, DataChange: true, ExtendedFileMetadata: true,
			PartitionValues: map[string]string{}, Size: f.Size,
		}})
	}
	added := make(map[string]bool, len(c.Adds))
	for _, f := range c.Adds {
		if !validPath(f.Path) || f.Size < 0 {
			return nil, bad("add of %q (size %d): not a plain file name or negative size", f.Path, f.Size)
		}
		if _, active := t.files[f.Path]; added[f.Path] || active {
			return nil, bad("add of %q, which is already active", f.Path)
		}
		added[f.Path] = true
		size := f.Size
		lines = append(lines, action{Add: &addAction{
			Path: f.Path, PartitionValues: map[string]string{}, Size: &size,
			ModificationTime: f.ModificationTime, DataChange: true, Stats: f.Stats,
		}})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // one object per line, newline-terminated
	enc.SetEscapeHTML(false)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return nil, bad("%v", err)
		}
	}
	return b.Bytes(), nil
}

// apply updates t after version v was written.
func (t *Table) apply(v int64, c Commit) {
	if m := c.Metadata; m != nil {
		cp := *m
		t.meta = &cp
	}
	for _, p := range c.Removes {
		delete(t.files, p)
	}
	for _, f := range c.Adds {
		t.files[f.Path] = f
	}
	if c.AppID != "" {
		t.txns[c.AppID] = c.TxnVersion
	}
	for app, ver := range c.Marks {
		t.txns[app] = ver
	}
	t.version = v
	t.sorted = nil
}

// RemoveStrays deletes the files of the table dir that no active add
// names (temporary files and Parquet files of commits that never
// happened; subdirectories and _delta_log are left alone, except
// temporary files of failed commits in _delta_log), and returns the names
// removed. Call it when no Writer of this table is open. Files removed by
// a commit are strays too: no time travel past the current version.
func (t *Table) RemoveStrays() ([]string, error) {
	active := make(map[string]bool, len(t.files))
	for p := range t.files {
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
		active[p] = true
	}
	var removed []string
	remove := func(dir, name, shown string) error {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("segment: remove stray %s: %v: %w", filepath.Join(dir, name), err, errs.ErrIO)
		}
		removed = append(removed, shown)
		return nil
	}
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("segment: read %s: %v: %w", t.dir, err, errs.ErrIO)
	}
	for _, e := range entries {
		if e.IsDir() || active[e.Name()] {
			continue
		}
		if err := remove(t.dir, e.Name(), e.Name()); err != nil {
			return removed, err
		}
	}
	logDir := filepath.Join(t.dir, logDirName)
	logEntries, err := os.ReadDir(logDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return removed, fmt.Errorf("segment: read %s: %v: %w", logDir, err, errs.ErrIO)
	}
	for _, e := range logEntries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), ".tmp-") {
			if err := remove(logDir, e.Name(), filepath.Join(logDirName, e.Name())); err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}
