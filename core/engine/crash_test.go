package engine

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/tablet"
)

// The crash test runs this test binary again as a child that commits in a
// loop and prints "ack N" after commit N returns; the parent kills it with
// SIGKILL at a random moment and checks the reopened database: every
// acknowledged commit is there and no commit is there in part.
//
// Commit N creates type T<N> with property k, writes row N into T<N>, and
// writes row N into the shared type S (device d<N%3>), so a partial commit
// shows as a type without its rows or rows without their type.
//
// Commit indexCommit also creates a UNIQUE index on S.k and one on L.k:
// its backfill, and the sidecars every flush and compaction writes after
// it, are killed too; after reopening, lookups through them must find
// exactly the rows a scan finds.
const indexCommit = 12

const (
	crashDirEnv    = "ARCADEGO_CRASH_CHILD_DIR"
	crashBudgetEnv = "ARCADEGO_CRASH_CHILD_BUDGET" // the child's memtable budget; small: flushes all the time
	crashDirectEnv = "ARCADEGO_CRASH_CHILD_DIRECT" // set: the long-format batches go straight to Parquet
	crashDevices   = 50                            // devices of each commit's long-format batch
)

// TestMain runs the crash child instead of the tests when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
	}
	os.Exit(m.Run())
}

func crashChild(dir string) {
	budget, _ := strconv.ParseInt(os.Getenv(crashBudgetEnv), 10, 64)
	db, err := Open(dir, Options{AutoCreate: true, SegmentBytes: 64 << 10, MemtableBudget: budget})
	if err != nil {
		fmt.Println("open error:", err)
		os.Exit(2)
	}
	direct := os.Getenv(crashDirectEnv) != ""
	if direct {
		db.directBytes = 512
	}
	out := bufio.NewWriter(os.Stdout)
	for n := 0; ; n++ {
		tx, err := db.Begin()
		if err == nil {
			err = tx.Exec(fmt.Sprintf("CREATE DOCUMENT TYPE T%d; CREATE PROPERTY T%d.k INT64", n, n))
		}
		if err == nil && n == indexCommit {
			err = tx.Exec("CREATE INDEX sk ON S (k) UNIQUE; CREATE INDEX lk ON L (k) NOTUNIQUE")
		}
		if err == nil {
			err = tx.Insert(fmt.Sprintf("T%d", n), "", int64Tablet([]int64{int64(n)}, map[string][]int64{"k": {int64(n)}}))
		}
		if err == nil {
			wide := make(map[string][]int64, 20)
			for j := range 20 {
				wide[fmt.Sprintf("w%d", (n+j)%50)] = []int64{int64(n)}
			}
			wide["k"] = []int64{int64(n)}
			err = tx.Insert("S", fmt.Sprintf("d%d", n%3), int64Tablet([]int64{int64(n)}, wide))
		}
		if err == nil && n > 0 {
			// Deletes: D keeps only its newest row; every tenth commit
			// deletes the previous commit's row of L's device m000, while
			// the other commits may write L straight to Parquet.
			prev, cur := int64(n-1), int64(n)
			err = tx.Delete(DeleteRequest{Type: "D", Start: &prev, End: &cur})
			if err == nil && n%10 == 0 {
				err = tx.Delete(DeleteRequest{Type: "L", Devices: []string{"m000"}, Start: &prev, End: &cur})
			}
		}
		if err == nil {
			err = tx.Insert("D", "x", int64Tablet([]int64{int64(n)}, map[string][]int64{"k": {int64(n)}}))
		}
		if err == nil {
			// A many-device commit: one long-format batch of crashDevices
			// devices, interleaved, split in the same transaction.
			devs := make([]string, 0, 2*crashDevices)
			times := make([]int64, 0, 2*crashDevices)
			rows := 2 * crashDevices // each device twice: merged by the memtable
			if direct {
				rows = crashDevices // once, out of name order: written whole, after a gather
			}
			for i := range rows {
				devs = append(devs, fmt.Sprintf("m%03d", (i*7)%crashDevices))
				times = append(times, int64(n))
			}
			ks := make([]int64, len(times))
			for i := range ks {
				ks[i] = int64(n)
			}
			long := &tablet.Tablet{Times: times, Columns: []tablet.Column{
				tablet.Strings("dev", devs, nil), tablet.Int64s("k", ks, nil)}}
			if direct { // kept until the commit: borrowed, so written whole
				err = tx.InsertLongBorrowed("L", "dev", long)
			} else {
				err = tx.InsertLong("L", "dev", long)
			}
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			fmt.Println("commit error:", err)
			os.Exit(2)
		}
		fmt.Fprintf(out, "ack %d\n", n)
		out.Flush()
		if n%25 == 24 { // kills land in compactions too
			if err := db.Compact(""); err != nil {
				fmt.Println("compact error:", err)
				os.Exit(2)
			}
		}
	}
}

func crashTrials() int {
	if n, err := strconv.Atoi(os.Getenv("ARCADEGO_CRASH_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 50
}

func TestCrashRecoveryKeepsAcknowledgedCommitsAndNoPartialOnes(t *testing.T) {
	crashTrialsWithBudget(t, crashTrials(), 0)
}

// TestCrashDuringFlushAndCheckpoint: the same with a memtable budget so
// small that the child flushes and checkpoints every few commits, so that
// most kills land in a flush (Parquet files, Delta commits) or a
// checkpoint (catalog snapshot, manifest, log deletion). Reopen must also
// find every file the manifest and the Delta logs name, and remove the
// temporary files a flush left behind.
func TestCrashDuringFlushAndCheckpoint(t *testing.T) {
	crashTrialsWithBudget(t, max(crashTrials()/2, 5), 24<<10)
}

// TestCrashDuringDirectWrites: the same with each commit's long-format
// batch written straight to Parquet, so that kills land between a direct
// write's files, its log record and its Delta commit.
func TestCrashDuringDirectWrites(t *testing.T) {
	t.Setenv(crashDirectEnv, "1")
	crashTrialsWithBudget(t, max(crashTrials()/2, 5), 24<<10)
}

func crashTrialsWithBudget(t *testing.T, trials int, budget int64) {
	total, flushed, direct := 0, 0, 0
	for trial := range trials {
		dir := filepath.Join(t.TempDir(), "db")
		acked := runAndKill(t, dir, budget, time.Duration(5+rand.IntN(120))*time.Millisecond)
		files, err := filepath.Glob(filepath.Join(dir, tablesDir, "*", "*.parquet"))
		require.NoError(t, err)
		flushed += len(files)
		for _, f := range files {
			if !strings.HasPrefix(filepath.Base(f), "part-0") { // a flush's: part-<version>-<n>
				direct++
			}
		}
		db, err := Open(dir, Options{})
		require.NoError(t, err, "trial %d: reopen", trial)
		shared := rowsOf(t, db, "S")
		long := rowsOf(t, db, "L")
		commits := 0 // the commits present: each creates its type T<n>
		for _, ty := range db.Catalog().Types() {
			if strings.HasPrefix(ty.Name, "T") {
				commits++
			}
		}
		present := 0
		for _, ty := range db.Catalog().Types() {
			if ty.Name == "S" || ty.Name == "L" || ty.Name == "D" {
				continue
			}
			n, err := strconv.Atoi(strings.TrimPrefix(ty.Name, "T"))
			require.NoError(t, err)
			present++
			assert.Equal(t, int64(n), rowsOf(t, db, ty.Name)[""][int64(n)]["k"], "trial %d: T%d has its row", trial, n)
			assert.Equal(t, int64(n), shared[fmt.Sprintf("d%d", n%3)][int64(n)]["k"], "trial %d: S has row %d", trial, n)
			for d := range crashDevices {
				row, ok := long[fmt.Sprintf("m%03d", d)][int64(n)]
				if d == 0 && (n+1)%10 == 0 && n+1 < commits {
					assert.False(t, ok, "trial %d: L m000 row %d was deleted by commit %d", trial, n, n+1)
					continue
				}
				assert.Equal(t, int64(n), row["k"], "trial %d: L m%03d has row %d", trial, d, n)
			}
		}
		// T0..T(present-1) are the commits present (each creates its type).
		rowsInL, deletedInL := 0, 0
		for _, dev := range long {
			rowsInL += len(dev)
		}
		for n := 9; n+1 < present; n += 10 {
			deletedInL++
		}
		assert.Equal(t, present*crashDevices-deletedInL, rowsInL, "trial %d: a many-device commit is whole or absent", trial)
		if present > 0 {
			assert.Equal(t, map[string]map[int64]map[string]any{"x": {int64(present - 1): {"k": int64(present - 1)}}},
				rowsOf(t, db, "D"), "trial %d: D holds the newest commit's row only", trial)
		}
		rowsInS := 0
		for _, dev := range shared {
			rowsInS += len(dev)
		}
		assert.Equal(t, present, rowsInS, "trial %d: rows of S match the committed types", trial)
		if present > indexCommit {
			s, _ := db.Catalog().Type("S")
			require.Len(t, s.Indexes(), 1, "trial %d: the index commit is there", trial)
			for n := range int64(present) {
				got, plan := whereRows(t, db, "S", cond("k", "=", n))
				require.Contains(t, plan, "index sk", "trial %d", trial)
				require.Equal(t, []string{fmt.Sprintf("d%d@%d", n%3, n)}, got, "trial %d: S.k = %d through the index", trial, n)
				got, _ = whereRows(t, db, "L", cond("k", "=", n))
				want, _ := whereRows(t, db, "L", Where{Or: []Where{cond("k", "=", n)}})
				require.Equal(t, want, got, "trial %d: L.k = %d through the index", trial, n)
			}
		}
		assert.GreaterOrEqual(t, present, acked, "trial %d: every acknowledged commit survived", trial)
		for n := range acked {
			_, ok := db.Catalog().Type(fmt.Sprintf("T%d", n))
			assert.True(t, ok, "trial %d: acknowledged commit %d lost", trial, n)
		}
		strays, err := filepath.Glob(filepath.Join(dir, tablesDir, "*", ".tmp-*"))
		require.NoError(t, err)
		tmpSidecars, err := filepath.Glob(filepath.Join(dir, tablesDir, "*", indexDir, ".tmp-*"))
		require.NoError(t, err)
		strays = append(strays, tmpSidecars...)
		assert.Empty(t, strays, "trial %d: temporary files left after reopen", trial)
		require.NoError(t, db.Close())
		total += acked
		if t.Failed() {
			return
		}
	}
	t.Logf("%d trials, %d acknowledged commits checked, %d Parquet files found after the kills, %d of direct writes", trials, total, flushed, direct)
	if os.Getenv(crashDirectEnv) != "" {
		assert.Positive(t, direct, "the children wrote nothing straight to Parquet")
	}
	if budget > 0 {
		assert.Positive(t, flushed, "the children never flushed")
	}
}

// runAndKill starts the child on dir, kills it after delay (counted from
// its first acknowledgement) and returns how many commits it acknowledged.
func runAndKill(t *testing.T, dir string, budget int64, delay time.Duration) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, fmt.Sprint(crashBudgetEnv, "=", budget))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	acked := 0
	var timer <-chan time.Time
	deadline := time.After(5 * time.Minute) // only a child that never starts: not a pace a busy machine must keep
	killed := false
	for !killed {
		select {
		case line, ok := <-lines:
			if !ok {
				require.FailNow(t, "child exited early", "acked %d", acked)
			}
			require.True(t, strings.HasPrefix(line, "ack "), "child said %q", line)
			acked++
			if timer == nil {
				timer = time.After(delay)
			}
		case <-timer:
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			killed = true
		case <-deadline:
			_ = cmd.Process.Kill()
			require.FailNow(t, "child made no progress")
		}
	}
	for line := range lines { // acknowledgements already printed before the kill
		if strings.HasPrefix(line, "ack ") {
			acked++
		}
	}
	_ = cmd.Wait()
	return acked
}
