package schema

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

const baseScript = `
CREATE DOCUMENT TYPE A;
CREATE PROPERTY A.k INT64;
CREATE PROPERTY A.v STRING;
CREATE PROPERTY A.w DOUBLE;
CREATE INDEX ON A (k) NOTUNIQUE;
CREATE INDEX byvw ON A (v, w) UNIQUE;
CREATE TYPE B;
CREATE PROPERTY B.k INT32;
`

func TestApply(t *testing.T) {
	long := strings.Repeat("n", MaxNameLen)
	cases := []struct {
		name  string
		op    Op
		kind  error    // nil: success
		msg   []string // what the error must name
		noop  bool     // success without a recorded op
		check func(t *testing.T, c *Catalog)
	}{
		// CreateType
		{name: "create type", op: Op{Kind: CreateType, Type: "C"}, check: func(t *testing.T, c *Catalog) {
			typ, ok := c.Type("C")
			require.True(t, ok)
			assert.Equal(t, TypeID(3), typ.ID)
			assert.Empty(t, typ.Properties())
		}},
		{name: "create type unicode", op: Op{Kind: CreateType, Type: "Größe [x]"}},
		{name: "create type exists", op: Op{Kind: CreateType, Type: "A"}, kind: errs.ErrAlreadyExists, msg: []string{`create type "A"`}},
		{name: "create type if not exists", op: Op{Kind: CreateType, Type: "A", IfNotExists: true}, noop: true},
		{name: "create type empty name", op: Op{Kind: CreateType}, kind: errs.ErrInvalidArgument, msg: []string{"invalid type name", "empty"}},
		{name: "create type control char", op: Op{Kind: CreateType, Type: "a\tb"}, kind: errs.ErrInvalidArgument, msg: []string{`"a\tb"`}},
		{name: "create type named time", op: Op{Kind: CreateType, Type: "time"}},
		// DropType
		{name: "drop type", op: Op{Kind: DropType, Type: "A"}, check: func(t *testing.T, c *Catalog) {
			_, ok := c.Type("A")
			assert.False(t, ok)
			_, ok = c.TypeByID(1)
			assert.False(t, ok)
			_, _, ok = c.IndexByName("byvw")
			assert.False(t, ok, "the type's indexes go with it")
			assert.Equal(t, 1, c.Len())
		}},
		{name: "drop type missing", op: Op{Kind: DropType, Type: "Z"}, kind: errs.ErrNotFound, msg: []string{`drop type "Z"`}},
		{name: "drop type if exists", op: Op{Kind: DropType, Type: "Z", IfExists: true}, noop: true},
		{name: "drop type bad name", op: Op{Kind: DropType, Type: "\x00"}, kind: errs.ErrInvalidArgument},
		// CreateProperty
		{name: "create property", op: Op{Kind: CreateProperty, Type: "B", Property: "when", PropertyType: Timestamp}, check: func(t *testing.T, c *Catalog) {
			typ, _ := c.Type("B")
			p, ok := typ.Property("when")
			require.True(t, ok)
			assert.Equal(t, PropertyID(5), p.ID, "property ids are catalog-wide")
			assert.Equal(t, Timestamp, p.Type)
			assert.Equal(t, []string{"k", "when"}, propNames(typ))
		}},
		{name: "create property exists", op: Op{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64}, kind: errs.ErrAlreadyExists, msg: []string{`"k"`, `"A"`}},
		{name: "create property if not exists other type", op: Op{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: String, IfNotExists: true}, noop: true},
		{name: "create property missing type", op: Op{Kind: CreateProperty, Type: "Z", Property: "k", PropertyType: Int64}, kind: errs.ErrNotFound, msg: []string{`"Z"`, `"k"`}},
		{name: "create property missing type if not exists", op: Op{Kind: CreateProperty, Type: "Z", Property: "k", PropertyType: Int64, IfNotExists: true}, kind: errs.ErrNotFound},
		{name: "create property reserved time", op: Op{Kind: CreateProperty, Type: "A", Property: "time", PropertyType: Int64}, kind: errs.ErrInvalidArgument, msg: []string{`"time" is reserved`}},
		{name: "create property reserved device", op: Op{Kind: CreateProperty, Type: "A", Property: "device", PropertyType: String}, kind: errs.ErrInvalidArgument, msg: []string{`"device" is reserved`}},
		{name: "create property bad type", op: Op{Kind: CreateProperty, Type: "A", Property: "z"}, kind: errs.ErrInvalidArgument, msg: []string{"PropertyType(0)", `"z"`}},
		{name: "create property type out of range", op: Op{Kind: CreateProperty, Type: "A", Property: "z", PropertyType: Date + 1}, kind: errs.ErrInvalidArgument},
		{name: "create property empty name", op: Op{Kind: CreateProperty, Type: "A", PropertyType: Int64}, kind: errs.ErrInvalidArgument, msg: []string{"invalid property name"}},
		{name: "create property long name", op: Op{Kind: CreateProperty, Type: "A", Property: long, PropertyType: Int64}},
		{name: "create property too long name", op: Op{Kind: CreateProperty, Type: "A", Property: long + "x", PropertyType: Int64}, kind: errs.ErrInvalidArgument},
		// DropProperty
		{name: "drop property", op: Op{Kind: DropProperty, Type: "B", Property: "k"}, check: func(t *testing.T, c *Catalog) {
			typ, _ := c.Type("B")
			_, ok := typ.Property("k")
			assert.False(t, ok)
			_, ok = typ.PropertyByID(4)
			assert.False(t, ok)
			assert.Empty(t, typ.Properties())
		}},
		{name: "drop property used by index", op: Op{Kind: DropProperty, Type: "A", Property: "w"}, kind: errs.ErrInvalidArgument, msg: []string{`"w"`, `index "byvw"`}},
		{name: "drop property missing", op: Op{Kind: DropProperty, Type: "A", Property: "z"}, kind: errs.ErrNotFound, msg: []string{`"z"`, `"A"`}},
		{name: "drop property if exists", op: Op{Kind: DropProperty, Type: "A", Property: "z", IfExists: true}, noop: true},
		{name: "drop property missing type", op: Op{Kind: DropProperty, Type: "Z", Property: "k", IfExists: true}, kind: errs.ErrNotFound, msg: []string{`"Z"`}},
		// CreateIndex
		{name: "create index generated name", op: Op{Kind: CreateIndex, Type: "A", Properties: []string{"w", "k"}, Unique: true}, check: func(t *testing.T, c *Catalog) {
			ix, typ, ok := c.IndexByName("A[w,k]")
			require.True(t, ok)
			assert.Equal(t, "A", typ.Name)
			assert.Equal(t, IndexID(3), ix.ID)
			assert.True(t, ix.Unique)
			assert.Equal(t, []PropertyID{3, 1}, ix.Properties, "key order as given")
			assert.Len(t, typ.Indexes(), 3)
		}},
		{name: "create index named", op: Op{Kind: CreateIndex, Type: "B", Index: "Bk", Properties: []string{"k"}}, check: func(t *testing.T, c *Catalog) {
			ix, typ, ok := c.IndexByName("Bk")
			require.True(t, ok)
			assert.Equal(t, "B", typ.Name)
			assert.False(t, ix.Unique)
		}},
		{name: "create index name taken in other type", op: Op{Kind: CreateIndex, Type: "B", Index: "byvw", Properties: []string{"k"}}, kind: errs.ErrAlreadyExists, msg: []string{`"byvw"`, `on "A"`}},
		{name: "create index generated name taken", op: Op{Kind: CreateIndex, Type: "A", Properties: []string{"k"}, Unique: true}, kind: errs.ErrAlreadyExists, msg: []string{`"A[k]"`}},
		{name: "create index if not exists", op: Op{Kind: CreateIndex, Type: "A", Properties: []string{"k"}, IfNotExists: true}, noop: true},
		{name: "create index missing property", op: Op{Kind: CreateIndex, Type: "A", Properties: []string{"k", "zz"}}, kind: errs.ErrNotFound, msg: []string{`property "zz"`, `"A"`}},
		{name: "create index duplicate property", op: Op{Kind: CreateIndex, Type: "A", Properties: []string{"k", "v", "k"}}, kind: errs.ErrInvalidArgument, msg: []string{`"k" listed twice`}},
		{name: "create index no properties", op: Op{Kind: CreateIndex, Type: "A", Index: "x"}, kind: errs.ErrInvalidArgument, msg: []string{"no properties"}},
		{name: "create index missing type", op: Op{Kind: CreateIndex, Type: "Z", Properties: []string{"k"}}, kind: errs.ErrNotFound, msg: []string{`"Z"`}},
		{name: "create index bad name", op: Op{Kind: CreateIndex, Type: "A", Index: "a\nb", Properties: []string{"k"}}, kind: errs.ErrInvalidArgument, msg: []string{"invalid index name"}},
		{name: "create index bad property name", op: Op{Kind: CreateIndex, Type: "A", Properties: []string{""}}, kind: errs.ErrInvalidArgument, msg: []string{"invalid property name"}},
		{name: "create index generated name too long", op: Op{Kind: CreateIndex, Type: "A", Properties: []string{"k", long}}, kind: errs.ErrInvalidArgument, msg: []string{"give the index a name"}},
		// DropIndex
		{name: "drop index without type", op: Op{Kind: DropIndex, Index: "byvw"}, check: func(t *testing.T, c *Catalog) {
			_, _, ok := c.IndexByName("byvw")
			assert.False(t, ok)
			typ, _ := c.Type("A")
			assert.Len(t, typ.Indexes(), 1)
			_, ok = typ.Index("byvw")
			assert.False(t, ok)
		}},
		{name: "drop index with its type", op: Op{Kind: DropIndex, Type: "A", Index: "A[k]"}},
		{name: "drop index other type", op: Op{Kind: DropIndex, Type: "B", Index: "byvw"}, kind: errs.ErrInvalidArgument, msg: []string{`"byvw"`, `"B"`, `type "A"`}},
		{name: "drop index missing", op: Op{Kind: DropIndex, Index: "nope"}, kind: errs.ErrNotFound, msg: []string{`"nope"`}},
		{name: "drop index if exists", op: Op{Kind: DropIndex, Index: "nope", IfExists: true}, noop: true},
		{name: "drop index empty name", op: Op{Kind: DropIndex}, kind: errs.ErrInvalidArgument},
		// SetTime
		{name: "set time", op: Op{Kind: SetTime, Type: "A", TimeUnit: "ms", TimeZone: "UTC"}, check: func(t *testing.T, c *Catalog) {
			typ, _ := c.Type("A")
			assert.True(t, typ.TimeSet)
			assert.Equal(t, "ms", typ.TimeUnit)
			assert.Equal(t, "UTC", typ.TimeZone)
		}},
		{name: "set time plain int64", op: Op{Kind: SetTime, Type: "B"}, check: func(t *testing.T, c *Catalog) {
			typ, _ := c.Type("B")
			assert.True(t, typ.TimeSet)
			assert.Equal(t, "", typ.TimeUnit)
		}},
		{name: "set time bad unit", op: Op{Kind: SetTime, Type: "A", TimeUnit: "min"}, kind: errs.ErrInvalidArgument, msg: []string{`"min"`}},
		{name: "set time zone without unit", op: Op{Kind: SetTime, Type: "A", TimeZone: "UTC"}, kind: errs.ErrInvalidArgument, msg: []string{"needs a unit"}},
		{name: "set time bad zone", op: Op{Kind: SetTime, Type: "A", TimeUnit: "s", TimeZone: "U\nTC"}, kind: errs.ErrInvalidArgument},
		{name: "set time missing type", op: Op{Kind: SetTime, Type: "Z", TimeUnit: "s"}, kind: errs.ErrNotFound, msg: []string{`"Z"`}},
		// Unknown kind
		{name: "unknown kind", op: Op{Kind: 0, Type: "A"}, kind: errs.ErrInvalidArgument, msg: []string{"unknown operation kind 0"}},
		{name: "unknown kind high", op: Op{Kind: SetTTL + 1, Type: "A"}, kind: errs.ErrInvalidArgument},
	}
	base := build(t, Empty(), baseScript)
	require.Equal(t, uint64(1), base.Version())
	baseDump := dump(base)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := base.Edit()
			err := ch.Apply(tc.op)
			switch {
			case tc.kind != nil:
				require.Error(t, err)
				assert.ErrorIs(t, err, tc.kind)
				for _, m := range tc.msg {
					assert.Contains(t, err.Error(), m)
				}
				assert.Empty(t, ch.Ops())
				assert.Same(t, base, ch.Catalog())
			case tc.noop:
				require.NoError(t, err)
				assert.Empty(t, ch.Ops())
				assert.Same(t, base, ch.Catalog())
			default:
				require.NoError(t, err)
				require.Len(t, ch.Ops(), 1)
				c := ch.Catalog()
				assert.NotSame(t, base, c)
				assert.Equal(t, base.Version()+1, c.Version())
				assert.NotContains(t, dump(c), "!", "lookups agree")
				if tc.check != nil {
					tc.check(t, c)
				}
			}
			assert.Equal(t, baseDump, dump(base), "the base catalog never changes")
		})
	}
}

func propNames(t *Type) []string {
	var out []string
	for _, p := range t.Properties() {
		out = append(out, p.Name)
	}
	return out
}

func TestSetTimeTwice(t *testing.T) {
	base := build(t, Empty(), "CREATE TYPE A")
	ch := base.Edit()
	require.NoError(t, ch.Apply(Op{Kind: SetTime, Type: "A", TimeUnit: "us", TimeZone: "Europe/Paris"}))
	require.NoError(t, ch.Apply(Op{Kind: SetTime, Type: "A", TimeUnit: "us", TimeZone: "Europe/Paris"}))
	assert.Len(t, ch.Ops(), 1, "setting the same values again is a no-op")
	err := ch.Apply(Op{Kind: SetTime, Type: "A", TimeUnit: "ns"})
	assert.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.ErrorContains(t, err, `to unit "ns" zone ""`)
	assert.ErrorContains(t, err, `already unit "us" zone "Europe/Paris"`)
}

func TestIDsAreStable(t *testing.T) {
	script := baseScript + `; DROP PROPERTY B.k; CREATE PROPERTY B.k INT64; CREATE INDEX ON B (k) UNIQUE; DROP TYPE A; CREATE TYPE A`
	one := build(t, Empty(), script)
	two := build(t, Empty(), script)
	assert.Equal(t, dump(one), dump(two))

	// The same ops replayed through their encoding give the same ids too.
	ops, err := ParseScript(script)
	require.NoError(t, err)
	ch := Empty().Edit()
	for _, op := range ops {
		require.NoError(t, ch.Apply(op))
	}
	decoded, rest, err := DecodeOps(AppendOps(nil, ch.Ops()))
	require.NoError(t, err)
	require.Empty(t, rest)
	replay := Empty().Edit()
	for _, op := range decoded {
		require.NoError(t, replay.Apply(op))
	}
	assert.Equal(t, dump(one), dump(replay.Catalog()))
}

func TestIDsAreNeverReused(t *testing.T) {
	c := build(t, Empty(), "CREATE TYPE A; CREATE PROPERTY A.k INT64; CREATE INDEX i ON A (k) UNIQUE; CREATE TYPE B; CREATE PROPERTY B.k INT64")
	a, _ := c.Type("A")
	b, _ := c.Type("B")
	ak, _ := a.Property("k")
	bk, _ := b.Property("k")
	assert.NotEqual(t, ak.ID, bk.ID, "property ids are unique across the catalog")
	assert.Equal(t, TypeID(1), a.ID, "ids start at 1")
	assert.Equal(t, PropertyID(1), ak.ID)

	c = build(t, c, "DROP INDEX i; DROP PROPERTY A.k; CREATE PROPERTY A.k INT64; CREATE INDEX i ON A (k) UNIQUE; DROP TYPE B; CREATE TYPE B")
	a, _ = c.Type("A")
	b, _ = c.Type("B")
	ak2, _ := a.Property("k")
	ix, _ := a.Index("i")
	assert.Equal(t, PropertyID(3), ak2.ID, "a re-created property is a new column")
	assert.Equal(t, IndexID(2), ix.ID)
	assert.Equal(t, TypeID(3), b.ID)
	_, ok := a.PropertyByID(ak.ID)
	assert.False(t, ok)
	lt, lp, li := c.LastIDs()
	assert.Equal(t, []uint32{3, 3, 2}, []uint32{uint32(lt), uint32(lp), uint32(li)})
}

func TestVersion(t *testing.T) {
	e := Empty()
	assert.Equal(t, uint64(0), e.Version())
	assert.Equal(t, 0, e.Len())

	ch := e.Edit()
	assert.Same(t, e, ch.Catalog(), "no ops: the base itself")
	require.NoError(t, ch.Apply(Op{Kind: DropType, Type: "X", IfExists: true}))
	assert.Same(t, e, ch.Catalog(), "only no-ops: the base itself")

	require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "A"}))
	require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "B"}))
	c1 := ch.Catalog()
	assert.Equal(t, uint64(1), c1.Version(), "one per change, not per op")
	assert.Same(t, c1, ch.Catalog(), "stable until the next Apply")
	require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "C"}))
	assert.Equal(t, uint64(1), ch.Catalog().Version())

	c2 := build(t, c1, "CREATE TYPE D")
	assert.Equal(t, uint64(2), c2.Version())
	assert.Same(t, c1, c1.Edit().Base())

	// Continue extends an unpublished result: one commit, one version.
	ch = c2.Continue()
	require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "E"}))
	c3 := ch.Catalog()
	assert.Equal(t, uint64(2), c3.Version())
	_, ok := c3.Type("E")
	assert.True(t, ok)
	_, ok = c2.Type("E")
	assert.False(t, ok, "Continue does not modify its base either")
}

func TestImmutability(t *testing.T) {
	base := build(t, Empty(), baseScript)
	baseDump := dump(base)
	ch := base.Edit()
	require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "A", Property: "x", PropertyType: Int32}))
	mid := ch.Catalog()
	midDump := dump(mid)

	// Edit the same type and the same tables after publishing mid.
	for _, op := range []Op{
		{Kind: CreateProperty, Type: "A", Property: "y", PropertyType: Int32},
		{Kind: DropIndex, Index: "byvw"},
		{Kind: DropProperty, Type: "A", Property: "v"},
		{Kind: CreateIndex, Type: "A", Index: "byx", Properties: []string{"x"}},
		{Kind: SetTime, Type: "A", TimeUnit: "s"},
		{Kind: DropType, Type: "B"},
		{Kind: CreateType, Type: "C"},
	} {
		require.NoError(t, ch.Apply(op))
	}
	final := ch.Catalog()
	assert.Equal(t, midDump, dump(mid), "a published catalog is unchanged by later Apply")
	assert.Equal(t, baseDump, dump(base), "the base is unchanged")
	assert.NotEqual(t, midDump, dump(final))

	// A later change on the final catalog leaves it alone too.
	finalDump := dump(final)
	build(t, final, "DROP TYPE A; CREATE TYPE B; CREATE PROPERTY C.z BOOL")
	assert.Equal(t, finalDump, dump(final))
}

func TestCopyOnFirstWrite(t *testing.T) {
	base := build(t, Empty(), baseScript)
	a0, _ := base.Type("A")
	b0, _ := base.Type("B")
	ch := base.Edit()
	require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "A", Property: "x", PropertyType: Int32}))
	a1, _ := ch.work.Type("A")
	assert.NotSame(t, a0, a1, "first edit copies the type")
	require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "A", Property: "y", PropertyType: Int32}))
	require.NoError(t, ch.Apply(Op{Kind: CreateIndex, Type: "A", Properties: []string{"x", "y"}}))
	a2, _ := ch.work.Type("A")
	assert.Same(t, a1, a2, "later edits in the same change reuse the copy")

	c := ch.Catalog()
	b1, _ := c.Type("B")
	assert.Same(t, b0, b1, "untouched types are shared")
	require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "A", Property: "z", PropertyType: Int32}))
	a3, _ := ch.work.Type("A")
	assert.NotSame(t, a2, a3, "after publishing, the next edit copies again")
	assert.Len(t, a2.Properties(), 5)
	assert.Len(t, a3.Properties(), 6)
}

// TestFailedApplyChangesNothing checks, in the middle of a change and
// without publishing (which would hide in-place edits), that every failing
// operation leaves the work catalog and the op list as they were.
func TestFailedApplyChangesNothing(t *testing.T) {
	base := build(t, Empty(), baseScript)
	ch := base.Edit()
	for _, op := range []Op{
		{Kind: CreateProperty, Type: "A", Property: "x", PropertyType: Int32},
		{Kind: CreateType, Type: "C"},
		{Kind: CreateProperty, Type: "C", Property: "c", PropertyType: Date},
	} {
		require.NoError(t, ch.Apply(op))
	}
	before := dump(&ch.work)
	opsBefore := len(ch.Ops())
	failing := []Op{
		{Kind: CreateType, Type: "C"},
		{Kind: CreateProperty, Type: "A", Property: "x", PropertyType: Int32},
		{Kind: CreateProperty, Type: "A", Property: "time", PropertyType: Int64},
		{Kind: CreateProperty, Type: "C", Property: "q"},
		{Kind: DropProperty, Type: "A", Property: "k"},
		{Kind: CreateIndex, Type: "A", Properties: []string{"x", "nope"}},
		{Kind: CreateIndex, Type: "C", Properties: []string{"c", "c"}},
		{Kind: CreateIndex, Type: "C", Index: "byvw", Properties: []string{"c"}},
		{Kind: DropIndex, Type: "C", Index: "byvw"},
		{Kind: SetTime, Type: "C", TimeUnit: "h"},
		{Kind: DropType, Type: "Q"},
	}
	for _, op := range failing {
		require.Error(t, ch.Apply(op), "%+v", op)
		assert.Equal(t, before, dump(&ch.work), "%+v", op)
		assert.Len(t, ch.Ops(), opsBefore)
	}
}

func TestOpsAreRecordedNormalized(t *testing.T) {
	ch := Empty().Edit()
	props := []string{"k"}
	for _, op := range []Op{
		{Kind: CreateType, Type: "A", Property: "junk", IfExists: true, TimeUnit: "ms"},
		{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64, Index: "junk"},
		{Kind: CreateIndex, Type: "A", Properties: props, Unique: true},
	} {
		require.NoError(t, ch.Apply(op))
	}
	props[0] = "changed"
	assert.Equal(t, []Op{
		{Kind: CreateType, Type: "A"},
		{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64},
		{Kind: CreateIndex, Type: "A", Properties: []string{"k"}, Unique: true},
	}, ch.Ops())
}

func TestTypesSortedByName(t *testing.T) {
	c := build(t, Empty(), "CREATE TYPE b; CREATE TYPE A; CREATE TYPE `Ä`; CREATE TYPE a")
	var names []string
	for _, typ := range c.Types() {
		names = append(names, typ.Name)
	}
	assert.Equal(t, []string{"A", "a", "b", "Ä"}, names)
	assert.Equal(t, 4, c.Len())
}

func TestWideType(t *testing.T) {
	ch := Empty().Edit()
	require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "W"}))
	for i := range 40 {
		require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "W", Property: fmt.Sprintf("c%d", i), PropertyType: Double}))
	}
	wide := ch.Catalog()
	c := build(t, wide, "DROP PROPERTY W.c3; DROP PROPERTY W.c39; CREATE PROPERTY W.c3 INT32; CREATE PROPERTY W.c40 INT32")
	assert.NotContains(t, dump(c), "!", "lookups agree")
	typ, _ := c.Type("W")
	require.Len(t, typ.Properties(), 40)
	p, ok := typ.Property("c3")
	require.True(t, ok)
	assert.Equal(t, PropertyID(41), p.ID)
	_, ok = typ.Property("c39")
	assert.False(t, ok)
	old, _ := wide.Type("W")
	p, ok = old.Property("c39")
	require.True(t, ok, "the earlier version keeps its properties")
	assert.Equal(t, PropertyID(40), p.ID)
	_, ok = old.Property("c40")
	assert.False(t, ok)
}

// TestReadersDuringChanges has readers walk published catalogs while a
// writer builds and publishes new versions from them; the race detector
// checks that no published structure is written.
func TestReadersDuringChanges(t *testing.T) {
	var cur atomic.Pointer[Catalog]
	cur.Store(build(t, Empty(), baseScript))
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				c := cur.Load()
				if d := dump(c); strings.Contains(d, "!") {
					t.Errorf("inconsistent catalog:\n%s", d)
					return
				}
			}
		}()
	}
	for i := range 200 {
		ch := cur.Load().Edit()
		name := fmt.Sprintf("T%d", i%7)
		_ = ch.Apply(Op{Kind: DropType, Type: name, IfExists: true})
		require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: name}))
		require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "A", Property: fmt.Sprintf("p%d", i), PropertyType: Int64}))
		require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: name, Property: "k", PropertyType: Int64}))
		require.NoError(t, ch.Apply(Op{Kind: CreateIndex, Type: name, Properties: []string{"k"}}))
		cur.Store(ch.Catalog())
	}
	close(done)
	wg.Wait()
	assert.Equal(t, uint64(201), cur.Load().Version())
}

// TestWideChangeAddsEveryPropertyAndLeavesTheBaseAlone: a change that
// adds many properties to a type that has some finds them all, in creation
// order, while the catalog it started from keeps its own.
func TestWideChangeAddsEveryPropertyAndLeavesTheBaseAlone(t *testing.T) {
	const n = 1000
	for _, existing := range []int{0, 3, 12} {
		t.Run(fmt.Sprint("existing=", existing), func(t *testing.T) {
			ch := Empty().Edit()
			require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "W"}))
			for i := range existing {
				require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "W", Property: fmt.Sprint("e", i), PropertyType: Int64}))
			}
			base := ch.Catalog()
			ch = base.Edit()
			ch.Grow(n)
			for i := range n {
				require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "W", Property: fmt.Sprint("p", i), PropertyType: Int32}))
			}
			w, _ := ch.Catalog().Type("W")
			props := w.Properties()
			require.Len(t, props, existing+n)
			assert.Equal(t, existing+n, w.NumProperties())
			for i, p := range props {
				if i > 0 {
					assert.Less(t, props[i-1].ID, p.ID, "creation order")
				}
				q, ok := w.Property(p.Name)
				require.True(t, ok)
				assert.Same(t, p, q)
				q, ok = w.PropertyByID(p.ID)
				require.True(t, ok)
				assert.Same(t, p, q)
			}
			old, _ := base.Type("W")
			assert.Len(t, old.Properties(), existing, "the base catalog is untouched")
			_, ok := old.Property("p0")
			assert.False(t, ok)
		})
	}
}

// TestAddingAPropertyCostsLogWidth: a change that adds one property to a
// type copies the paths of two tries, not the type's properties: on a type
// of 10,000 properties it allocates about what it does on one of 100. The
// depth of one new name's path depends on the process's hash seed, so the
// test averages over many names; copying the properties would cost
// thousands of allocations, not a few more.
func TestAddingAPropertyCostsLogWidth(t *testing.T) {
	const names = 64
	allocs := map[int]float64{}
	for _, width := range []int{100, 10_000} {
		ch := Empty().Edit()
		require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "W"}))
		for i := range width {
			require.NoError(t, ch.Apply(Op{Kind: CreateProperty, Type: "W", Property: fmt.Sprint("p", i), PropertyType: Int64}))
		}
		base := ch.Catalog()
		for i := range names {
			name := fmt.Sprint("new", i)
			allocs[width] += testing.AllocsPerRun(4, func() {
				ch := base.Edit()
				if err := ch.Apply(Op{Kind: CreateProperty, Type: "W", Property: name, PropertyType: Int64}); err != nil {
					t.Fatal(err)
				}
				ch.Catalog()
			}) / names
		}
	}
	t.Logf("mean allocations by width: %v", allocs)
	assert.LessOrEqual(t, allocs[10_000], allocs[100]+8, "mean allocations by width: %v", allocs)
}
