package segment

import (
	"sort"

	"github.com/arcadego/arcadego/core/tablet"
)

// Lasts is what a latest-values query needs of a file, per entry of its
// device directory: the time of the device's last row and, per column,
// its last non-null value and that value's time. A file never changes, so
// it is computed once, by decoding each row group once.
type Lasts struct {
	Latest []int64         // per entry: the time of its last row
	Values []tablet.Column // per column: a row per entry, null where the entry has no value
	Times  [][]int64       // per column and entry: the value's time (0 where null)
}

// Lasts reads the file's Lasts of cols (columns the file lacks are null).
func (f *File) Lasts(cols []Column) (*Lasts, error) {
	s := f.Scanner(cols)
	n := len(f.devices)
	out := &Lasts{Latest: make([]int64, n), Values: make([]tablet.Column, len(cols)), Times: make([][]int64, len(cols))}
	builders := make([]*tablet.Builder, len(cols))
	for k, c := range cols {
		builders[k] = tablet.NewBuilder(c.Name, c.Type, n)
		out.Times[k] = make([]int64, n)
	}
	// group returns the decoded row group holding file row r, and its
	// first row. Entries come in row order, so this decodes each group
	// once, but for an entry whose later rows hold no value of a column.
	group := func(r int64) (*tablet.Tablet, int64, error) {
		rg := sort.Search(len(f.groups), func(i int) bool { return f.groups[i].first+f.groups[i].rows > r })
		t, err := s.decode(rg)
		return t, f.groups[rg].first, err
	}
	for i := range n {
		a, b := f.starts[i], f.starts[i+1]
		if a == b {
			continue
		}
		t, first, err := group(b - 1)
		if err != nil {
			return nil, err
		}
		out.Latest[i] = t.Times[b-1-first]
		for k := range cols {
			found := false
			for r := b - 1; r >= a && !found; {
				t, first, err := group(r)
				if err != nil {
					return nil, err
				}
				c := &t.Columns[k]
				lo := max(a, first)
				for x := r; x >= lo; x-- {
					if c.Valid(int(x - first)) {
						builders[k].Append(c, int(x-first))
						out.Times[k][i], found = t.Times[x-first], true
						break
					}
				}
				r = lo - 1
			}
			if !found {
				builders[k].AppendNull()
			}
		}
	}
	for k := range cols {
		out.Values[k] = builders[k].Column()
	}
	return out, nil
}
