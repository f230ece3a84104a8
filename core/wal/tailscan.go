package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// findRecord returns the first offset p >= from at which data holds a
// well-formed record (a length that fits in data and at most MaxPayload,
// and a matching CRC), or -1. Open uses it to tell a torn tail (nothing
// valid after the bad record) from corruption (something valid after it).
//
// Checking every offset naively costs the cube of the tail's length on
// random bytes (each offset whose length field happens to fit costs a CRC
// over that length). Instead the CRC of any range is derived from running
// CRC registers: with R(i) the raw register (initial value 0, no final
// inversion) after data[from:i],
//
//	crc32c(data[a:b]) = ^(R(b) ^ shift(R(a) ^ 0xffffffff, b-a))
//
// where shift feeds b-a zero bytes through a register. R(a) advances one
// byte per candidate; R(b) is rebuilt from a checkpoint kept every
// checkpointStride bytes. Short records are checked directly.
func findRecord(data []byte, from int) int {
	tail := data[from:]
	if len(tail) < frameSize {
		return -1
	}
	cps := make([]uint32, len(tail)/checkpointStride+1)
	for i := 1; i < len(cps); i++ {
		cps[i] = rawUpdate(cps[i-1], tail[(i-1)*checkpointStride:i*checkpointStride])
	}
	rawAt := func(i int) uint32 {
		c := i / checkpointStride
		return rawUpdate(cps[c], tail[c*checkpointStride:i])
	}

	ra := rawUpdate(0, tail[:8]) // R(p+8): the CRC covers kind+payload, from p+8
	for p := 0; p+frameSize <= len(tail); p++ {
		if p > 0 {
			ra = castagnoli[byte(ra)^tail[p+7]] ^ ra>>8
		}
		n := binary.LittleEndian.Uint32(tail[p:])
		if n > MaxPayload || int64(n) > int64(len(tail)-p-frameSize) {
			continue
		}
		a, b := p+8, p+frameSize+int(n)
		want := binary.LittleEndian.Uint32(tail[p+4:])
		var got uint32
		if n < directCRCBytes {
			got = crc32.Checksum(tail[a:b], castagnoli)
		} else {
			got = ^(rawAt(b) ^ shiftBytes(ra^0xffffffff, b-a))
		}
		if got == want {
			return from + p
		}
	}
	return -1
}

const (
	checkpointStride = 4096
	directCRCBytes   = 4096
)

// rawUpdate feeds p through the raw CRC-32C register r. crc32.Update
// takes and returns inverted registers; undoing both inversions keeps its
// hardware acceleration.
func rawUpdate(r uint32, p []byte) uint32 {
	return ^crc32.Update(^r, castagnoli, p)
}

// x2n[k] is x^(2^k) mod P in the reflected bit order of the register
// (bit 31 holds the coefficient of x^0).
var x2n = func() (t [64]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = mulmod(p, p)
	}
	return t
}()

// mulmod returns a·b mod P, both reflected.
func mulmod(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.Castagnoli
		} else {
			b >>= 1
		}
	}
	return p
}

// shiftBytes returns r·x^(8n) mod P: the register r after n zero bytes.
func shiftBytes(r uint32, n int) uint32 {
	for k := 3; n > 0; n, k = n>>1, k+1 { // x^(8n) = product of x^(2^k) over n's bits, shifted by 3
		if n&1 != 0 {
			r = mulmod(x2n[k], r)
		}
	}
	return r
}
