package segment

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// TestWrittenFileChecksTheFooterItReads: a File made by Writer.File reads
// the Parquet footer only when the library's reader needs it (STRING
// columns), and then checks it as Open does. A footer changed on disk
// since the write (one column's chunk pointed at another's of the same
// size) is corruption, not the other column's values.
func TestWrittenFileChecksTheFooterItReads(t *testing.T) {
	cols := []Column{{ID: 1, Name: "s1", Type: schema.String}, {ID: 2, Name: "s2", Type: schema.String}}
	path := filepath.Join(t.TempDir(), "part-0.parquet")
	w, err := Create(path, Layout{Columns: cols}, WriterOptions{})
	require.NoError(t, err)
	n := 100
	s1, s2, times := make([]string, n), make([]string, n), make([]int64, n)
	for i := range n {
		s1[i], s2[i], times[i] = fmt.Sprintf("x%03d", i%10), fmt.Sprintf("y%03d", i%10), int64(i)
	}
	require.NoError(t, w.Append("a", &tablet.Tablet{Times: times, Columns: []tablet.Column{tablet.Strings("s1", s1, nil), tablet.Strings("s2", s2, nil)}}))
	info, err := w.Close()
	require.NoError(t, err)
	f, err := w.File()
	require.NoError(t, err)
	defer f.Close()
	_, err = w.File()
	require.ErrorIs(t, err, errs.ErrClosed, "one File per writer: it takes the chunk table")

	// The footer stores chunk offsets as zigzag varints: s1's become s2's.
	zigzag := func(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1^v>>63)) }
	c1, c2 := f.groups[0].chunks[2], f.groups[0].chunks[3]
	require.Equal(t, c1.length, c2.length)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	size := int(binary.LittleEndian.Uint32(raw[len(raw)-8:]))
	footer := raw[len(raw)-8-size : len(raw)-8]
	changed := 0
	for _, p := range [][2]int64{{c1.offset, c2.offset}, {c1.offset + c1.pages[0].length, c2.offset + c2.pages[0].length}} {
		from, to := zigzag(p[0]), zigzag(p[1])
		require.Equal(t, len(from), len(to))
		changed += bytes.Count(footer, from)
		copy(footer, bytes.ReplaceAll(footer, from, to))
	}
	require.Positive(t, changed)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	_, err = Open(path, info.Size)
	require.ErrorIs(t, err, errs.ErrCorrupt, "Open refuses the footer")

	_, err = f.Scanner(cols[:1]).Read("a", math.MinInt64, math.MaxInt64, 0).Next()
	require.ErrorIs(t, err, errs.ErrCorrupt)
	require.ErrorContains(t, err, "bad footer")
}

// TestWrittenFileIsOpensFileWhateverTheShape: Writer.File's File is
// Open's, field by field (requireSameFile), for files written by
// AppendRuns: empty, without columns, of nulls only, wide with small row
// groups.
func TestWrittenFileIsOpensFileWhateverTheShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	wide := make([]Column, 300)
	for i := range wide {
		typ := []schema.PropertyType{schema.Double, schema.Int64, schema.Float, schema.Int32, schema.Boolean, schema.String}[i%6]
		wide[i] = Column{ID: schema.PropertyID(i + 1), Name: fmt.Sprintf("c%d", i), Type: typ}
	}
	rowsOf := func(cols []Column, n, per int, nulls bool) []row {
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{time: int64(i % per), vals: make([]any, len(cols))}
			for j, c := range cols {
				switch {
				case nulls:
				case c.Type == schema.Double:
					rows[i].vals[j] = rng.Float64() // written plain
				default:
					rows[i].vals[j] = sample(c.Type, rng.IntN(1000))
				}
			}
		}
		return rows
	}
	for _, c := range []struct {
		name    string
		l       Layout
		opts    WriterOptions
		devices int
		per     int
		nulls   bool
	}{
		{"empty", Layout{Columns: noisyCols}, WriterOptions{}, 0, 1, false},
		{"no columns", Layout{}, WriterOptions{}, 3, 10, false},
		{"nulls only", Layout{Columns: allTypes}, WriterOptions{RowGroupRows: 1000}, 2, 2500, true},
		{"wide", Layout{Columns: wide}, WriterOptions{RowGroupBytes: 1 << 20}, 3, 1000, false},
	} {
		path := filepath.Join(t.TempDir(), "part-0.parquet")
		w, err := Create(path, c.l, c.opts)
		require.NoError(t, err)
		if c.devices > 0 {
			tb := buildTablet(c.l.Columns, rowsOf(c.l.Columns, c.devices*c.per, c.per, c.nulls), 0)
			var runs []Run
			for d := range c.devices {
				runs = append(runs, Run{Device: fmt.Sprintf("dev-%03d", d), Lo: d * c.per, Hi: (d + 1) * c.per})
			}
			require.NoError(t, w.AppendRuns(runs, tb), c.name)
		}
		info, err := w.Close()
		require.NoError(t, err, c.name)
		f, err := w.File()
		require.NoError(t, err, c.name)
		opened, err := Open(path, info.Size)
		require.NoError(t, err, c.name)
		requireSameFile(t, opened, f)
		f.Close()
		opened.Close()
	}
}
