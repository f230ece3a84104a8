package schema

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

// model is the reference the catalog is compared against: plain maps,
// rebuilt by deep copy, no sharing, no cleverness.
type model struct {
	version             uint64
	lastT, lastP, lastI uint32
	types               map[string]*mType
	indexOwner          map[string]string // index name → type name
}

type mType struct {
	id                 uint32
	props              map[string]mProp
	indexes            []mIndex
	timeSet            bool
	timeUnit, timeZone string
}

type mProp struct {
	id uint32
	pt PropertyType
}

type mIndex struct {
	id     uint32
	name   string
	unique bool
	props  []uint32
}

func newModel() *model {
	return &model{types: map[string]*mType{}, indexOwner: map[string]string{}}
}

func (m *model) clone() *model {
	c := *m
	c.types = map[string]*mType{}
	for k, t := range m.types {
		tc := *t
		tc.props = maps.Clone(t.props)
		tc.indexes = slices.Clone(t.indexes)
		c.types[k] = &tc
	}
	c.indexOwner = maps.Clone(m.indexOwner)
	return &c
}

func badName(s string) bool { return nameProblem(s) != "" }

// apply returns the error kind the operation must fail with, or nil, and
// whether it changed anything.
func (m *model) apply(op Op) (error, bool) {
	switch op.Kind {
	case CreateType:
		if badName(op.Type) {
			return errs.ErrInvalidArgument, false
		}
		if m.types[op.Type] != nil {
			if op.IfNotExists {
				return nil, false
			}
			return errs.ErrAlreadyExists, false
		}
		m.lastT++
		m.types[op.Type] = &mType{id: m.lastT, props: map[string]mProp{}}
	case DropType:
		if badName(op.Type) {
			return errs.ErrInvalidArgument, false
		}
		t := m.types[op.Type]
		if t == nil {
			if op.IfExists {
				return nil, false
			}
			return errs.ErrNotFound, false
		}
		for _, ix := range t.indexes {
			delete(m.indexOwner, ix.name)
		}
		delete(m.types, op.Type)
	case CreateProperty:
		if badName(op.Property) || op.Property == "time" || op.Property == "device" || badName(op.Type) {
			return errs.ErrInvalidArgument, false
		}
		t := m.types[op.Type]
		if t == nil {
			return errs.ErrNotFound, false
		}
		if _, ok := t.props[op.Property]; ok {
			if op.IfNotExists {
				return nil, false
			}
			return errs.ErrAlreadyExists, false
		}
		if op.PropertyType < Boolean || op.PropertyType > Date {
			return errs.ErrInvalidArgument, false
		}
		m.lastP++
		t.props[op.Property] = mProp{id: m.lastP, pt: op.PropertyType}
	case DropProperty:
		if badName(op.Property) || badName(op.Type) {
			return errs.ErrInvalidArgument, false
		}
		t := m.types[op.Type]
		if t == nil {
			return errs.ErrNotFound, false
		}
		p, ok := t.props[op.Property]
		if !ok {
			if op.IfExists {
				return nil, false
			}
			return errs.ErrNotFound, false
		}
		for _, ix := range t.indexes {
			if slices.Contains(ix.props, p.id) {
				return errs.ErrInvalidArgument, false
			}
		}
		delete(t.props, op.Property)
	case CreateIndex:
		if (op.Index != "" && badName(op.Index)) || len(op.Properties) == 0 {
			return errs.ErrInvalidArgument, false
		}
		seen := map[string]bool{}
		for _, p := range op.Properties {
			if badName(p) || seen[p] {
				return errs.ErrInvalidArgument, false
			}
			seen[p] = true
		}
		if badName(op.Type) {
			return errs.ErrInvalidArgument, false
		}
		t := m.types[op.Type]
		if t == nil {
			return errs.ErrNotFound, false
		}
		name := op.Index
		if name == "" {
			name = op.Type + "[" + strings.Join(op.Properties, ",") + "]"
			if len(name) > 256 {
				return errs.ErrInvalidArgument, false
			}
		}
		if _, ok := m.indexOwner[name]; ok {
			if op.IfNotExists {
				return nil, false
			}
			return errs.ErrAlreadyExists, false
		}
		var ids []uint32
		for _, p := range op.Properties {
			mp, ok := t.props[p]
			if !ok {
				return errs.ErrNotFound, false
			}
			ids = append(ids, mp.id)
		}
		m.lastI++
		t.indexes = append(t.indexes, mIndex{id: m.lastI, name: name, unique: op.Unique, props: ids})
		m.indexOwner[name] = op.Type
	case DropIndex:
		if badName(op.Index) || (op.Type != "" && badName(op.Type)) {
			return errs.ErrInvalidArgument, false
		}
		owner, ok := m.indexOwner[op.Index]
		if !ok {
			if op.IfExists {
				return nil, false
			}
			return errs.ErrNotFound, false
		}
		if op.Type != "" && op.Type != owner {
			return errs.ErrInvalidArgument, false
		}
		t := m.types[owner]
		t.indexes = slices.DeleteFunc(t.indexes, func(ix mIndex) bool { return ix.name == op.Index })
		delete(m.indexOwner, op.Index)
	case SetTime:
		if badName(op.Type) {
			return errs.ErrInvalidArgument, false
		}
		t := m.types[op.Type]
		if t == nil {
			return errs.ErrNotFound, false
		}
		switch op.TimeUnit {
		case "", "s", "ms", "us", "ns":
		default:
			return errs.ErrInvalidArgument, false
		}
		if op.TimeZone != "" && (op.TimeUnit == "" || badName(op.TimeZone)) {
			return errs.ErrInvalidArgument, false
		}
		if t.timeSet {
			if t.timeUnit == op.TimeUnit && t.timeZone == op.TimeZone {
				return nil, false
			}
			return errs.ErrInvalidArgument, false
		}
		t.timeSet, t.timeUnit, t.timeZone = true, op.TimeUnit, op.TimeZone
	default:
		return errs.ErrInvalidArgument, false
	}
	return nil, true
}

// dump renders the model exactly as dump renders a catalog.
func (m *model) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "version=%d last=%d/%d/%d len=%d\n", m.version, m.lastT, m.lastP, m.lastI, len(m.types))
	names := slices.Collect(maps.Keys(m.types))
	sort.Strings(names)
	for _, name := range names {
		t := m.types[name]
		fmt.Fprintf(&b, "type %q id=%d time=%v/%q/%q\n", name, t.id, t.timeSet, t.timeUnit, t.timeZone)
		props := slices.Collect(maps.Keys(t.props))
		sort.Slice(props, func(i, j int) bool { return t.props[props[i]].id < t.props[props[j]].id })
		for _, p := range props {
			fmt.Fprintf(&b, "  prop %q id=%d %s\n", p, t.props[p].id, t.props[p].pt)
		}
		for _, ix := range t.indexes {
			fmt.Fprintf(&b, "  index %q id=%d unique=%v on=%v\n", ix.name, ix.id, ix.unique, ix.props)
		}
	}
	return b.String()
}

// randomOp draws from small pools of names so that operations collide
// often: existing and missing objects, reserved and invalid names.
func randomOp(rng *rand.Rand) Op {
	pick := func(pool ...string) string { return pool[rng.IntN(len(pool))] }
	typ := func() string { return pick("A", "B", "C", "D", "A", "B", "", "a\x01") }
	prop := func() string {
		if rng.IntN(3) == 0 { // enough names to make types wider than propMapMin
			return fmt.Sprintf("p%d", rng.IntN(12))
		}
		return pick("k", "v", "w", "x", "y", "k", "v", "time", "")
	}
	op := Op{
		Kind:        OpKind(1 + rng.IntN(int(SetTime))),
		IfExists:    rng.IntN(3) == 0,
		IfNotExists: rng.IntN(3) == 0,
	}
	if rng.IntN(100) == 0 {
		op.Kind = SetTTL + 1
	}
	switch op.Kind {
	case CreateType, DropType:
		op.Type = typ()
	case CreateProperty:
		op.Type, op.Property = typ(), prop()
		op.PropertyType = PropertyType(rng.IntN(int(Date) + 2))
	case DropProperty:
		op.Type, op.Property = typ(), prop()
	case CreateIndex:
		op.Type, op.Index = typ(), pick("", "", "i1", "i2", "A[k]")
		for range 1 + rng.IntN(3) {
			op.Properties = append(op.Properties, prop())
		}
		if rng.IntN(20) == 0 {
			op.Properties = nil
		}
		op.Unique = rng.IntN(2) == 0
	case DropIndex:
		op.Type, op.Index = pick("", "", "A", "B"), pick("i1", "i2", "A[k]", "B[v]", "A[k,v]", "")
	case SetTime:
		op.Type = typ()
		op.TimeUnit = pick("", "s", "ms", "us", "ns", "h")
		op.TimeZone = pick("", "", "UTC", "+01:00")
	}
	return op
}

// TestAgainstModel runs random operation sequences on the catalog and on
// the model and compares outcomes after every operation. Changes are
// published or thrown away at random, sometimes published mid-way; every
// published version must keep its contents to the end, and must come back
// the same from its ops (replay) and from its snapshot.
func TestAgainstModel(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			cur, m := Empty(), newModel()
			type published struct {
				c    *Catalog
				dump string
			}
			var history []published
			for round := range 150 {
				ch := cur.Edit()
				work := m.clone()
				work.version = m.version + 1
				changed := false
				for i := range 1 + rng.IntN(8) {
					op := randomOp(rng)
					wantKind, wantChanged := work.apply(op)
					err := ch.Apply(op)
					if wantKind == nil {
						require.NoError(t, err, "round %d op %d %+v", round, i, op)
					} else {
						require.Error(t, err, "round %d op %d %+v", round, i, op)
						require.True(t, errors.Is(err, wantKind), "round %d op %d %+v: got %v, want %v", round, i, op, err, wantKind)
					}
					changed = changed || wantChanged
					if rng.IntN(4) == 0 {
						c := ch.Catalog() // publish mid-way: later ops must not touch it
						history = append(history, published{c, dump(c)})
					}
					if changed {
						require.Equal(t, work.dump(), dump(&ch.work), "round %d op %d %+v", round, i, op)
					}
				}
				if !changed {
					require.Same(t, cur, ch.Catalog())
					continue
				}
				if rng.IntN(4) == 0 {
					continue // rolled back: cur and m stay
				}
				next := ch.Catalog()
				require.Equal(t, work.dump(), dump(next), "round %d", round)

				replay := cur.Edit()
				ops, rest, err := DecodeOps(AppendOps(nil, ch.Ops()))
				require.NoError(t, err)
				require.Empty(t, rest)
				for _, op := range ops {
					require.NoError(t, replay.Apply(op), "replay %+v", op)
				}
				require.Equal(t, dump(next), dump(replay.Catalog()), "round %d replay", round)

				snap, err := DecodeCatalog(AppendCatalog(nil, next))
				require.NoError(t, err)
				require.Equal(t, dump(next), dump(snap), "round %d snapshot", round)

				cur, m = next, work
				history = append(history, published{cur, dump(cur)})
			}
			for i, h := range history {
				assert.Equal(t, h.dump, dump(h.c), "published version %d changed later", i)
			}
		})
	}
}
