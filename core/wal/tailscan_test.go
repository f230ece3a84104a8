package wal

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveFindRecord is findRecord's specification: try every offset.
func naiveFindRecord(data []byte, from int) int {
	for p := from; p+frameSize <= len(data); p++ {
		if _, reason := frameAt(data, p, true); reason == "" {
			return p
		}
	}
	return -1
}

func TestRangeCRCFromRegisters(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 20000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for range 500 {
		a := r.IntN(len(data))
		b := a + r.IntN(len(data)-a+1)
		want := crc32.Checksum(data[a:b], castagnoli)
		got := ^(rawUpdate(0, data[:b]) ^ shiftBytes(rawUpdate(0, data[:a])^0xffffffff, b-a))
		require.Equal(t, want, got, "crc of [%d,%d)", a, b)
	}
}

func TestFindRecordMatchesNaiveScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	random := func(n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		return p
	}
	// A small length field makes random bytes pass the length check often,
	// exercising both the direct and the register-derived CRC paths.
	smallLengths := func(n int) []byte {
		p := random(n)
		for i := 0; i+4 <= n; i += 7 {
			p[i+2], p[i+3] = 0, 0
		}
		return p
	}
	frame := func(n int) []byte { return appendFrame(nil, byte(n), random(n)) }
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"zeros", make([]byte, 9000)},
		{"random", random(30000)},
		{"small lengths", smallLengths(30000)},
		{"small frame after garbage", cat(random(777), frame(10), random(50))},
		{"large frame after garbage", cat(random(5000), frame(9000))},
		{"large frame at the very end", cat(smallLengths(3000), frame(20000))},
		{"empty frame after zeros", cat(make([]byte, 100), frame(0))},
		{"frame cut by one byte", cat(random(100), frame(5000))[:5100+frameSize-1]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, from := range []int{0, 1, 13, len(c.data) / 2} {
				if from > len(c.data) {
					continue
				}
				assert.Equal(t, naiveFindRecord(c.data, from), findRecord(c.data, from), "from %d", from)
			}
		})
	}
}
