package tablet

import (
	"github.com/arcadego/arcadego/core/schema"
)

// Builder builds a column row by row, copying values from other columns of
// its type: what a merge of several sorted runs needs. The zero Builder is
// not usable; see NewBuilder.
type Builder struct {
	col   Column
	n     int
	nulls int
	valid []byte
}

// NewBuilder returns a builder of a column called name of type typ, sized
// for rows rows (it grows past that if needed).
func NewBuilder(name string, typ schema.PropertyType, rows int) *Builder {
	b := &Builder{col: Column{Name: name, Type: typ}, valid: make([]byte, 0, (rows+7)/8)}
	switch {
	case typ == schema.Boolean:
		b.col.Values = make([]byte, 0, (rows+7)/8)
	case VarWidth(typ):
		b.col.Offsets = make([]int32, 1, rows+1)
		b.col.Data = []byte{}
	default:
		b.col.Values = make([]byte, 0, rows*Width(typ))
	}
	return b
}

// Append copies row i of src, which has the builder's type, null or not.
func (b *Builder) Append(src *Column, i int) {
	if !src.Valid(i) {
		b.AppendNull()
		return
	}
	b.grow(true)
	switch typ := b.col.Type; {
	case typ == schema.Boolean:
		if src.Bool(i) {
			b.col.Values[b.n>>3] |= 1 << (b.n & 7)
		}
	case VarWidth(typ):
		b.col.Data = append(b.col.Data, src.Bytes(i)...)
		b.col.Offsets = append(b.col.Offsets, int32(len(b.col.Data)))
	default:
		w := Width(typ)
		at := (src.Offset + i) * w
		b.col.Values = append(b.col.Values, src.Values[at:at+w]...)
	}
	b.n++
}

// AppendNull appends a null.
func (b *Builder) AppendNull() {
	b.grow(false)
	switch typ := b.col.Type; {
	case VarWidth(typ):
		b.col.Offsets = append(b.col.Offsets, int32(len(b.col.Data)))
	case typ != schema.Boolean:
		b.col.Values = append(b.col.Values, make([]byte, Width(typ))...)
	}
	b.nulls++
	b.n++
}

// grow makes room in the bitmaps for row b.n and marks its validity.
func (b *Builder) grow(valid bool) {
	if b.n&7 == 0 {
		b.valid = append(b.valid, 0)
		if b.col.Type == schema.Boolean {
			b.col.Values = append(b.col.Values, 0)
		}
	}
	if valid {
		b.valid[b.n>>3] |= 1 << (b.n & 7)
	}
}

// Rows returns the number of rows appended.
func (b *Builder) Rows() int { return b.n }

// Column returns the built column (Validity nil when it holds no null).
// The builder must not be used afterwards.
func (b *Builder) Column() Column {
	c := b.col
	if b.nulls > 0 {
		c.Validity = b.valid
	}
	return c
}

// Gather returns a copy of t holding its rows in the order of rows (each an
// index into t, any number of times), its columns built with Builder.
func (t *Tablet) Gather(rows []int32) *Tablet {
	out := &Tablet{Times: make([]int64, len(rows)), Columns: make([]Column, len(t.Columns)), TimeUnit: t.TimeUnit, TimeZone: t.TimeZone}
	for k, r := range rows {
		out.Times[k] = t.Times[r]
	}
	for j := range t.Columns {
		src := &t.Columns[j]
		if w := Width(src.Type); w == 4 || w == 8 {
			out.Columns[j] = gatherFixed(src, rows, w)
			continue
		}
		b := NewBuilder(src.Name, src.Type, len(rows))
		for _, r := range rows {
			b.Append(src, int(r))
		}
		out.Columns[j] = b.Column()
	}
	return out
}

// gatherFixed is Gather for a column of 4- or 8-byte values: a load and a
// store per row instead of the Builder's appends. Null rows hold zeros.
func gatherFixed(src *Column, rows []int32, w int) Column {
	out := Column{Name: src.Name, Type: src.Type, Values: make([]byte, len(rows)*w)}
	off := src.Offset
	// Rows usually come in runs of consecutive indexes (a device's rows,
	// say): one copy per run.
	for k := 0; k < len(rows); {
		r, n := rows[k], 1
		for k+n < len(rows) && rows[k+n] == r+int32(n) {
			n++
		}
		copy(out.Values[k*w:(k+n)*w], src.Values[(off+int(r))*w:(off+int(r)+n)*w])
		k += n
	}
	if src.Validity == nil {
		return out
	}
	valid := make([]byte, (len(rows)+7)/8)
	nulls := 0
	for k, r := range rows {
		if src.Valid(int(r)) {
			valid[k>>3] |= 1 << (k & 7)
		} else {
			nulls++
			clear(out.Values[k*w : k*w+w])
		}
	}
	if nulls > 0 {
		out.Validity = valid
	}
	return out
}
