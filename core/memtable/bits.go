package memtable

import "sync/atomic"

// Bitmaps inside the chunk are []uint64 words: bit i is bit i%64 of word
// i/64, which on a little-endian machine is exactly the Arrow LSB-first
// byte layout. The writer sets bits with atomic OR (a bit of a new row can
// share a word with rows a reader is reading) and never clears one; readers
// load words atomically.

func wordsFor(bits int) int { return (bits + 63) >> 6 }

// bitAt reports bit i of an LSB-first byte bitmap.
func bitAt(b []byte, i int) bool { return b[i>>3]>>(i&7)&1 != 0 }

// anyBit reports whether any of bits [from, from+n) of b is set.
func anyBit(b []byte, from, n int) bool {
	end := from + n
	for from < end && from&7 != 0 {
		if bitAt(b, from) {
			return true
		}
		from++
	}
	for ; from+8 <= end; from += 8 {
		if b[from>>3] != 0 {
			return true
		}
	}
	for ; from < end; from++ {
		if bitAt(b, from) {
			return true
		}
	}
	return false
}

// loadBit reports bit i of a word bitmap, loading the word atomically.
func loadBit(w []uint64, i int) bool { return atomic.LoadUint64(&w[i>>6])>>(i&63)&1 != 0 }

// orBits sets bit db+k of dst for every set bit sb+k of src, k < count,
// with one atomic OR per touched word.
func orBits(dst []uint64, db int, src []byte, sb, count int) {
	var acc uint64
	wi := db >> 6
	for k := 0; k < count; k++ {
		if !bitAt(src, sb+k) {
			continue
		}
		d := db + k
		if d>>6 != wi {
			if acc != 0 {
				atomic.OrUint64(&dst[wi], acc)
			}
			acc, wi = 0, d>>6
		}
		acc |= 1 << (d & 63)
	}
	if acc != 0 {
		atomic.OrUint64(&dst[wi], acc)
	}
}

// setBits sets bits [from, to) of dst.
func setBits(dst []uint64, from, to int) {
	for from < to {
		wi := from >> 6
		end := min(to, (wi+1)<<6)
		mask := ^uint64(0) << (from & 63)
		if end&63 != 0 {
			mask &= 1<<(end&63) - 1
		}
		atomic.OrUint64(&dst[wi], mask)
		from = end
	}
}

// nextPow2 returns the smallest power of two >= n (1 for n <= 1).
func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
