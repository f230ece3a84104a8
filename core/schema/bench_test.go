package schema

import (
	"fmt"
	"strings"
	"testing"
)

// catalogWithTypes builds a catalog of n types, each with one property and
// one index, in one change.
func catalogWithTypes(b testing.TB, n int) *Catalog {
	ch := Empty().Edit()
	for i := range n {
		name := fmt.Sprintf("T%d", i)
		for _, op := range []Op{
			{Kind: CreateType, Type: name},
			{Kind: CreateProperty, Type: name, Property: "k", PropertyType: Int64},
			{Kind: CreateIndex, Type: name, Properties: []string{"k"}},
		} {
			if err := ch.Apply(op); err != nil {
				b.Fatal(err)
			}
		}
	}
	return ch.Catalog()
}

// BenchmarkAutocommitCreateType measures one autocommit statement group
// (CREATE TYPE + CREATE PROPERTY + CREATE INDEX, published) on a catalog
// that already has N types. Publishing copies only touched paths, so the
// cost should stay flat as N grows.
func BenchmarkAutocommitCreateType(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("types=%d", n), func(b *testing.B) {
			base := catalogWithTypes(b, n)
			ops := []Op{
				{Kind: CreateType, Type: "New"},
				{Kind: CreateProperty, Type: "New", Property: "k", PropertyType: Int64},
				{Kind: CreateIndex, Type: "New", Properties: []string{"k"}},
			}
			b.ReportAllocs()
			for b.Loop() {
				ch := base.Edit()
				for _, op := range ops {
					if err := ch.Apply(op); err != nil {
						b.Fatal(err)
					}
				}
				if ch.Catalog().Len() != n+1 {
					b.Fatal("not published")
				}
			}
		})
	}
}

// BenchmarkAddProperties measures one change that adds N properties to an
// existing type (the catalog side of a wide tablet with auto-create).
func BenchmarkAddProperties(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("props=%d", n), func(b *testing.B) {
			base := catalogWithTypes(b, 100)
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("c%d", i)
			}
			b.ReportAllocs()
			for b.Loop() {
				ch := base.Edit()
				for _, name := range names {
					if err := ch.Apply(Op{Kind: CreateProperty, Type: "T7", Property: name, PropertyType: Double}); err != nil {
						b.Fatal(err)
					}
				}
				ch.Catalog()
			}
		})
	}
}

func BenchmarkParseScript(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("types=%d", n), func(b *testing.B) {
			var sb strings.Builder
			for i := range n {
				fmt.Fprintf(&sb, "CREATE DOCUMENT TYPE A%d IF NOT EXISTS;\nCREATE PROPERTY A%d.k INT64;\nCREATE INDEX ON A%d (k) NOTUNIQUE;\n", i, i, i)
			}
			src := sb.String()
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				ops, err := ParseScript(src)
				if err != nil || len(ops) != 3*n {
					b.Fatal(err)
				}
			}
		})
	}
}
