package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// On-disk layout; doc.go describes it in prose.
const (
	headerSize    = 16 // magic(4) version(4) segment number(8)
	frameSize     = 9  // length(4) crc(4) kind(1), then the payload
	formatVersion = 1

	// An LSN is segment number<<offsetBits | offset of the record's frame.
	offsetBits = 40
	maxSeq     = 1<<(64-offsetBits) - 1

	// maxSegmentBytes keeps every offset below 1<<offsetBits: a segment
	// may overshoot SegmentBytes by one record of at most MaxPayload.
	maxSegmentBytes = 1 << 39

	defaultSegmentBytes = 64 << 20
)

// MaxPayload is the largest payload Append accepts. It also bounds the
// record lengths Open believes, so garbage rarely passes for a record header.
const MaxPayload = 1 << 30

var magic = [4]byte{'A', 'G', 'W', 'L'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// pos packs a segment number and an offset into the LSN space.
func pos(seq uint64, off int64) uint64 { return seq<<offsetBits | uint64(off) }

func segmentName(seq uint64) string { return fmt.Sprintf("%06d.wal", seq) }

// parseSegmentName returns the number of a segment file name. Only the
// canonical spelling counts, so "1.wal" and "0000001.wal" are not segments.
func parseSegmentName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, ".wal")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || seq == 0 || seq > maxSeq || segmentName(seq) != name {
		return 0, false
	}
	return seq, true
}

func encodeHeader(seq uint64) []byte {
	h := make([]byte, headerSize)
	copy(h, magic[:])
	binary.LittleEndian.PutUint32(h[4:], formatVersion)
	binary.LittleEndian.PutUint64(h[8:], seq)
	return h
}

// checkHeader returns the offset and description of the first problem in
// a full-length segment header, or ok.
func checkHeader(h []byte, seq uint64) (off int, problem string, ok bool) {
	if !bytes.Equal(h[:4], magic[:]) {
		return 0, fmt.Sprintf("bad magic %q", h[:4]), false
	}
	if v := binary.LittleEndian.Uint32(h[4:]); v != formatVersion {
		return 4, fmt.Sprintf("unsupported format version %d", v), false
	}
	if s := binary.LittleEndian.Uint64(h[8:]); s != seq {
		return 8, fmt.Sprintf("header says segment %d, file name says %d", s, seq), false
	}
	return 0, "", true
}

// appendFrameHeader appends the header of a record whose payload is
// parts: length, CRC-32C over kind and payload, kind.
func appendFrameHeader(dst []byte, kind byte, parts [][]byte) []byte {
	size := 0
	crc := crc32.Update(0, castagnoli, []byte{kind})
	for _, p := range parts {
		size += len(p)
		crc = crc32.Update(crc, castagnoli, p)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(size))
	dst = binary.LittleEndian.AppendUint32(dst, crc)
	return append(dst, kind)
}

// badRecord is where and why a segment stops holding valid records.
type badRecord struct {
	off    int
	reason string
}

// scanRecords walks the records of a segment image (header included),
// calling fn for each valid one, and returns the first invalid record, or
// nil when the records reach exactly to the end of data. payload aliases
// data.
func scanRecords(data []byte, verify bool, fn func(off int, kind byte, payload []byte) error) (*badRecord, error) {
	off := headerSize
	for off < len(data) {
		n, reason := frameAt(data, off, verify)
		if reason != "" {
			return &badRecord{off, reason}, nil
		}
		end := off + frameSize + n
		if err := fn(off, data[off+8], data[off+frameSize:end]); err != nil {
			return nil, err
		}
		off = end
	}
	return nil, nil
}

// frameAt checks the record at data[off:] and returns its payload length,
// or a description of what is wrong with it. Without verify it skips the
// checksum: for bytes this process has checked already.
func frameAt(data []byte, off int, verify bool) (int, string) {
	rest := len(data) - off
	if rest < frameSize {
		return 0, fmt.Sprintf("truncated record header (%d of %d bytes)", rest, frameSize)
	}
	n := binary.LittleEndian.Uint32(data[off:])
	if n > MaxPayload {
		return 0, fmt.Sprintf("record length %d exceeds MaxPayload", n)
	}
	if int64(n) > int64(rest-frameSize) {
		return 0, fmt.Sprintf("record length %d runs past the end of the file (%d bytes left)", n, rest-frameSize)
	}
	end := off + frameSize + int(n)
	if !verify {
		return int(n), ""
	}
	if got, want := crc32.Checksum(data[off+8:end], castagnoli), binary.LittleEndian.Uint32(data[off+4:]); got != want {
		return 0, fmt.Sprintf("checksum mismatch (stored %#08x, computed %#08x)", want, got)
	}
	return int(n), ""
}

// alignedCopy returns a fresh copy of p whose first byte is 8-byte
// aligned, so callers may view it as []int64 without copying. Go's
// allocator aligns a block whose size is a multiple of 8 to 8 bytes (size
// classes are multiples of 8 and the tiny allocator aligns by size), hence
// the rounded capacity.
func alignedCopy(p []byte) []byte {
	b := make([]byte, len(p), (len(p)+7)&^7)
	copy(b, p)
	return b
}
