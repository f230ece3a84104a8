package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dump renders every observable part of c, in a fixed order, and checks
// the lookups against each other: two catalogs with the same dump are the
// same to every reader.
func dump(c *Catalog) string {
	var b strings.Builder
	lt, lp, li := c.LastIDs()
	fmt.Fprintf(&b, "version=%d last=%d/%d/%d len=%d\n", c.Version(), lt, lp, li, c.Len())
	for _, t := range c.Types() {
		fmt.Fprintf(&b, "type %q id=%d time=%v/%q/%q\n", t.Name, t.ID, t.TimeSet, t.TimeUnit, t.TimeZone)
		if byID, ok := c.TypeByID(t.ID); !ok || byID != t {
			fmt.Fprintf(&b, "  !TypeByID(%d) mismatch\n", t.ID)
		}
		if byName, ok := c.Type(t.Name); !ok || byName != t {
			fmt.Fprintf(&b, "  !Type(%q) mismatch\n", t.Name)
		}
		for _, p := range t.Properties() {
			fmt.Fprintf(&b, "  prop %q id=%d %s\n", p.Name, p.ID, p.Type)
			if q, ok := t.Property(p.Name); !ok || q != p {
				fmt.Fprintf(&b, "  !Property(%q) mismatch\n", p.Name)
			}
			if q, ok := t.PropertyByID(p.ID); !ok || q != p {
				fmt.Fprintf(&b, "  !PropertyByID(%d) mismatch\n", p.ID)
			}
		}
		for _, ix := range t.Indexes() {
			fmt.Fprintf(&b, "  index %q id=%d unique=%v on=%v\n", ix.Name, ix.ID, ix.Unique, ix.Properties)
			if j, jt, ok := c.IndexByName(ix.Name); !ok || j != ix || jt != t {
				fmt.Fprintf(&b, "  !IndexByName(%q) mismatch\n", ix.Name)
			}
			if j, ok := t.Index(ix.Name); !ok || j != ix {
				fmt.Fprintf(&b, "  !Index(%q) mismatch\n", ix.Name)
			}
		}
	}
	return b.String()
}

// build applies script to base as one published change.
func build(t testing.TB, base *Catalog, script string) *Catalog {
	t.Helper()
	ops, err := ParseScript(script)
	require.NoError(t, err)
	ch := base.Edit()
	for _, op := range ops {
		require.NoError(t, ch.Apply(op), "%+v", op)
	}
	return ch.Catalog()
}
