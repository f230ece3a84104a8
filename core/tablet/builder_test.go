package tablet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/schema"
)

func TestBuilderCopiesEveryTypeWithNulls(t *testing.T) {
	valid := []bool{true, false, true, true, false, true, true, true, true, false}
	src := []Column{
		Bools("b", []bool{true, false, false, true, true, false, true, true, false, true}, valid),
		Int32s("i", []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, valid),
		Int64s("l", []int64{-1, -2, -3, -4, -5, -6, -7, -8, -9, -10}, valid),
		Floats("f", []float32{1.5, 2, 3, 4, 5, 6, 7, 8, 9, 10}, valid),
		Doubles("d", []float64{0.25, 2, 3, 4, 5, 6, 7, 8, 9, 10}, valid),
		Strings("s", []string{"a", "", "ccc", "", "e", "ff", "g", "h", "i", "j"}, valid),
		Binaries("y", [][]byte{{1}, nil, {3, 3}, {}, {5}, {6}, {7}, {8}, {9}, {10}}, valid),
		Timestamps("t", []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, valid),
		Dates("dt", []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, valid),
	}
	for _, c := range src {
		t.Run(c.Type.String(), func(t *testing.T) {
			// Copy rows 9, 8, …, 1 from a sliced column (Offset 1).
			sl := c
			sl.Offset = 1
			b := NewBuilder("out", c.Type, 2)
			for i := 8; i >= 0; i-- {
				b.Append(&sl, i)
			}
			b.AppendNull()
			out := b.Column()
			require.Equal(t, 10, b.Rows())
			tb := &Tablet{Times: make([]int64, 10), Columns: []Column{out}}
			require.NoError(t, tb.Validate())
			for k := 0; k < 9; k++ {
				i := 8 - k + 1 // row of c
				require.Equal(t, c.Valid(i), out.Valid(k), "row %d", k)
				if !c.Valid(i) {
					continue
				}
				switch {
				case c.Type == schema.Boolean:
					assert.Equal(t, c.Bool(i), out.Bool(k))
				case VarWidth(c.Type):
					assert.Equal(t, c.Bytes(i), out.Bytes(k))
				case Width(c.Type) == 8:
					assert.Equal(t, c.Int64(i), out.Int64(k))
				default:
					assert.Equal(t, c.Int32(i), out.Int32(k))
				}
			}
			assert.False(t, out.Valid(9))
		})
	}
	t.Run("no nulls, no bitmap", func(t *testing.T) {
		c := Int64s("l", []int64{1, 2}, nil)
		b := NewBuilder("l", schema.Int64, 0)
		b.Append(&c, 1)
		b.Append(&c, 0)
		out := b.Column()
		assert.Nil(t, out.Validity)
		assert.Equal(t, int64(2), out.Int64(0))
		assert.Equal(t, int64(1), out.Int64(1))
	})
}
