package schema

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

var sampleOps = []Op{
	{Kind: CreateType, Type: "A", IfNotExists: true},
	{Kind: DropType, Type: "Größe", IfExists: true},
	{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64},
	{Kind: CreateProperty, Type: "A", Property: "d", PropertyType: Date, IfNotExists: true},
	{Kind: DropProperty, Type: "A", Property: "k", IfExists: true},
	{Kind: CreateIndex, Type: "A", Properties: []string{"k", "v"}, Unique: true},
	{Kind: CreateIndex, Type: "A", Index: "named", Properties: []string{"k"}, IfNotExists: true},
	{Kind: DropIndex, Type: "A", Index: "A[k,v]"},
	{Kind: DropIndex, Index: "named", IfExists: true},
	{Kind: SetTime, Type: "A", TimeUnit: "ms", TimeZone: "Europe/Paris"},
	{Kind: SetTime, Type: "B"},
}

func TestOpsRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		ops  []Op
	}{
		{"none", nil},
		{"one", sampleOps[:1]},
		{"every kind", sampleOps},
		{"long name", []Op{{Kind: CreateType, Type: string(bytes.Repeat([]byte("x"), 300))}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix")
			buf := AppendOps(bytes.Clone(prefix), tc.ops)
			require.Equal(t, prefix, buf[:len(prefix)], "appends")
			buf = append(buf, "tail"...)
			got, rest, err := DecodeOps(buf[len(prefix):])
			require.NoError(t, err)
			assert.Equal(t, tc.ops, got)
			assert.Equal(t, []byte("tail"), rest)
		})
	}
}

func TestOpsCompact(t *testing.T) {
	buf := AppendOps(nil, []Op{{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64}})
	assert.Len(t, buf, 8, "count, kind, flags, 2 strings of 1 byte, type byte")
}

func TestDecodeOpsRejectsTruncation(t *testing.T) {
	buf := AppendOps(nil, sampleOps)
	for n := range len(buf) {
		_, _, err := DecodeOps(buf[:n])
		require.Error(t, err, "prefix of %d bytes", n)
		assert.ErrorIs(t, err, errs.ErrCorrupt, "prefix of %d bytes", n)
	}
}

func TestDecodeOpsRejectsGarbage(t *testing.T) {
	cases := []struct {
		name string
		buf  []byte
		msg  string
	}{
		{"empty", nil, "bad varint"},
		{"unknown kind", []byte{1, 9, 0, 0}, "unknown operation kind 9"},
		{"zero kind", []byte{1, 0, 0, 0}, "unknown operation kind 0"},
		{"unknown flags", []byte{1, byte(CreateType), 0x80, 1, 'A'}, "unknown flags"},
		{"bad property type", []byte{1, byte(CreateProperty), 0, 1, 'A', 1, 'k', 10}, "bad property type 10"},
		{"zero property type", []byte{1, byte(CreateProperty), 0, 1, 'A', 1, 'k', 0}, "bad property type 0"},
		{"huge count", binary.AppendUvarint(nil, 1<<62), "exceeds"},
		{"huge string", append([]byte{1, byte(CreateType), 0}, binary.AppendUvarint(nil, 1<<40)...), "exceeds"},
		{"huge index list", []byte{1, byte(CreateIndex), 0, 1, 'A', 0, 0xff, 0xff, 0x03}, "exceeds"},
		{"overlong varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "bad varint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops, rest, err := DecodeOps(tc.buf)
			require.Error(t, err)
			assert.ErrorIs(t, err, errs.ErrCorrupt)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Nil(t, ops)
			assert.Equal(t, tc.buf, rest)
		})
	}
}

// FuzzDecodeOps checks that no input panics, that errors are ErrCorrupt,
// and that whatever decodes survives a re-encoding unchanged.
func FuzzDecodeOps(f *testing.F) {
	f.Add(AppendOps(nil, sampleOps))
	f.Add(AppendOps(nil, nil))
	f.Add(AppendOps(nil, sampleOps[5:6]))
	f.Add([]byte{})
	f.Add([]byte{1, byte(CreateIndex), 0, 1, 'A', 0, 0xff, 0xff, 0x03})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, buf []byte) {
		ops, rest, err := DecodeOps(buf)
		if err != nil {
			require.ErrorIs(t, err, errs.ErrCorrupt)
			return
		}
		require.LessOrEqual(t, len(rest), len(buf))
		again, rest2, err := DecodeOps(AppendOps(nil, ops))
		require.NoError(t, err)
		require.Empty(t, rest2)
		require.Equal(t, ops, again)
		// Applying decoded garbage must fail cleanly, never panic.
		ch := Empty().Edit()
		for _, op := range ops {
			_ = ch.Apply(op)
		}
	})
}

func snapshotCatalog(t testing.TB) *Catalog {
	c := build(t, Empty(), baseScript)
	c = build(t, c, `DROP PROPERTY B.k; CREATE PROPERTY B.k2 BINARY; CREATE INDEX i2 ON B (k2) UNIQUE;
		CREATE TYPE Gone; DROP TYPE Gone; CREATE TYPE `+"`Größe 温度`"+`; CREATE PROPERTY `+"`Größe 温度`.`ä`"+` BOOL`)
	ch := c.Edit()
	require.NoError(t, ch.Apply(Op{Kind: SetTime, Type: "A", TimeUnit: "ns", TimeZone: "UTC"}))
	require.NoError(t, ch.Apply(Op{Kind: SetTime, Type: "B"}))
	return ch.Catalog()
}

func TestCatalogSnapshotRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		c    *Catalog
	}{
		{"empty", Empty()},
		{"built", snapshotCatalog(t)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			buf := AppendCatalog(nil, tc.c)
			got, err := DecodeCatalog(buf)
			require.NoError(t, err)
			assert.Equal(t, dump(tc.c), dump(got))
			assert.Equal(t, buf, AppendCatalog(nil, got), "deterministic encoding")

			// The counters survive: new objects after a restore get fresh ids.
			script := "CREATE TYPE N; CREATE PROPERTY N.p INT32; CREATE INDEX ON N (p) UNIQUE"
			assert.Equal(t, dump(build(t, tc.c, script)), dump(build(t, got, script)))
		})
	}
	c := snapshotCatalog(t)
	assert.Equal(t, uint64(3), c.Version())
	lt, lp, li := c.LastIDs()
	assert.Equal(t, []uint32{4, 6, 3}, []uint32{uint32(lt), uint32(lp), uint32(li)})
}

func TestDecodeCatalogRejects(t *testing.T) {
	good := AppendCatalog(nil, snapshotCatalog(t))
	small := AppendCatalog(nil, build(t, Empty(), `CREATE TYPE X1; CREATE TYPE X2;
		CREATE PROPERTY X1.p1 INT64; CREATE PROPERTY X1.p2 INT64; CREATE PROPERTY X2.tim0 INT64;
		CREATE INDEX j1 ON X1 (p1) UNIQUE; CREATE INDEX j2 ON X1 (p2) UNIQUE`))
	replace := func(buf []byte, old, new string) []byte {
		require.Equal(t, len(old), len(new))
		require.Equal(t, 1, bytes.Count(buf, []byte(old)), old)
		return bytes.Replace(bytes.Clone(buf), []byte(old), []byte(new), 1)
	}
	cases := []struct {
		name string
		buf  []byte
		msg  string
	}{
		{"bad magic", append([]byte("XCAT"), good[4:]...), "not a catalog snapshot"},
		{"bad format", append([]byte("ACAT\x03"), good[5:]...), "unknown snapshot format 3"},
		{"trailing byte", append(bytes.Clone(good), 0), "1 bytes after the snapshot"},
		{"invalid name", replace(good, "Größe 温度", "Größe \x01\x01\x01\x01\x01\x01"), "control character"},
		{"bad property type", replace(good, "\x02k2\x07", "\x02k2\x0b"), "bad type 11"},
		{"bad time unit", replace(good, "\x02ns", "\x02hh"), "bad time settings"},
		{"duplicate type", replace(small, "X2", "X1"), `type "X1" twice`},
		{"duplicate property", replace(small, "p2", "p1"), `property "p1" twice`},
		{"duplicate index", replace(small, "j2", "j1"), `index "j1" twice`},
		{"reserved property", replace(small, "tim0", "time"), `reserved property name "time"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCatalog(tc.buf)
			require.Error(t, err)
			assert.ErrorIs(t, err, errs.ErrCorrupt)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	for n := range len(good) {
		_, err := DecodeCatalog(good[:n])
		require.ErrorIs(t, err, errs.ErrCorrupt, "prefix of %d bytes", n)
	}
}

func FuzzDecodeCatalog(f *testing.F) {
	f.Add(AppendCatalog(nil, Empty()))
	f.Add(AppendCatalog(nil, snapshotCatalog(f)))
	f.Fuzz(func(t *testing.T, buf []byte) {
		c, err := DecodeCatalog(buf)
		if err != nil {
			require.ErrorIs(t, err, errs.ErrCorrupt)
			return
		}
		again, err := DecodeCatalog(AppendCatalog(nil, c))
		require.NoError(t, err)
		require.Equal(t, dump(c), dump(again))
		require.NotContains(t, dump(c), "!")
	})
}
