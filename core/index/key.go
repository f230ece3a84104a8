package index

import (
	"encoding/binary"
	"math"

	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// A key is the concatenation of its properties' components, each 0x00
// for a null or 0x01 then the value's encoding, which sorts bytewise as
// the values sort and ends where it ends, so that a prefix of a key is
// the key of a prefix of the properties, and nulls sort first:
//
//	integers, timestamps, dates: 8 bytes big endian, sign bit flipped
//	floats: the float64's bits, big endian, negatives inverted, the sign
//	        bit of the others set; -0 is +0 and every NaN one NaN, last
//	booleans: one byte, 0 or 1
//	strings, binaries: the bytes, 0x00 written 0x00 0xFF, then 0x00 0x01

// AppendInt appends the encoding of an integer.
func AppendInt(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

// AppendFloat appends the encoding of a float.
func AppendFloat(dst []byte, v float64) []byte {
	switch {
	case v == 0:
		v = 0 // -0 is +0, as in comparisons
	case math.IsNaN(v):
		v = math.NaN()
	}
	b := math.Float64bits(v)
	if b&(1<<63) != 0 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(dst, b)
}

// AppendBool appends the encoding of a boolean.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendBytes appends the encoding of a string or binary value.
func AppendBytes(dst []byte, v []byte) []byte {
	for _, c := range v {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 1)
}

// AppendColumn appends the component of row i of c (0x00 for a null,
// 0x01 and the value's encoding otherwise); false when it is null.
func AppendColumn(dst []byte, c *tablet.Column, i int) ([]byte, bool) {
	if !c.Valid(i) {
		return append(dst, 0), false
	}
	dst = append(dst, 1)
	switch c.Type {
	case schema.Int32, schema.Date:
		return AppendInt(dst, int64(c.Int32(i))), true
	case schema.Int64, schema.Timestamp:
		return AppendInt(dst, c.Int64(i)), true
	case schema.Float:
		return AppendFloat(dst, float64(c.Float(i))), true
	case schema.Double:
		return AppendFloat(dst, c.Double(i)), true
	case schema.Boolean:
		return AppendBool(dst, c.Bool(i)), true
	}
	return AppendBytes(dst, c.Bytes(i)), true
}

// PrefixEnd returns the least key greater than every key that starts
// with p, or nil (no bound) when there is none.
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
