package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/tablet"
)

// A commit record's payload:
//
//	byte version (1), schema ops (schema.AppendOps), uvarint entries,
//	per entry: pad to 8, string type, string device, pad to 8, tablet
//
// Entries are encoded at Insert time on their own (starting at offset 0)
// and copied into the record at 8-aligned positions, which keeps the
// tablet's internal alignment, so decoding shares the record's memory.
const recordVersion = 1

func encodeEntry(typ, device string, t *tablet.Tablet) []byte {
	buf := make([]byte, 0, 2*binary.MaxVarintLen64+len(typ)+len(device)+7+tablet.AppendSize(t))
	buf = appendString(buf, typ)
	buf = appendString(buf, device)
	buf = padTo(buf, 8)
	return tablet.Append(buf, t)
}

// entryTabletPos returns where the tablet starts in an encoded entry.
func entryTabletPos(enc []byte) int {
	pos := 0
	for range 2 {
		n, k := binary.Uvarint(enc[pos:])
		pos += k + int(n)
	}
	return (pos + 7) &^ 7
}

// recordParts returns a commit record as parts to write one after the
// other: the head, then per entry its padding and its encoding. An entry
// encoded at Insert is written from that encoding; a borrowed entry is
// encoded here as parts that reference the caller's buffers, so a bulk
// insert's data is not copied on its way to the log.
func recordParts(ops []schema.Op, entries []entry) [][]byte {
	head := []byte{recordVersion}
	head = schema.AppendOps(head, ops)
	head = binary.AppendUvarint(head, uint64(len(entries)))
	parts := make([][]byte, 0, 1+4*len(entries))
	parts = append(parts, head)
	pos := len(head)
	pad := func() {
		if n := -pos & 7; n > 0 {
			parts = append(parts, zeros[:n])
			pos += n
		}
	}
	for _, e := range entries {
		pad()
		if e.enc != nil {
			parts = append(parts, e.enc)
			pos += len(e.enc)
			continue
		}
		names := appendString(appendString(nil, e.typ), e.device)
		parts = append(parts, names)
		pos += len(names)
		pad()
		parts, pos = tablet.AppendParts(parts, pos, e.t)
	}
	return parts
}

var zeros [8]byte

type record struct {
	ops     []schema.Op
	entries []entry
}

// decodeRecord decodes a commit record; tablets share buf's memory.
func decodeRecord(buf []byte) (record, error) {
	var r record
	if len(buf) == 0 || buf[0] != recordVersion {
		return r, fmt.Errorf("commit record: unknown version: %w", errs.ErrCorrupt)
	}
	ops, rest, err := schema.DecodeOps(buf[1:])
	if err != nil {
		return r, fmt.Errorf("commit record: %w", err)
	}
	r.ops = ops
	pos := len(buf) - len(rest)
	n, k := binary.Uvarint(buf[pos:])
	if k <= 0 || n > uint64(len(buf)) {
		return r, fmt.Errorf("commit record: bad entry count: %w", errs.ErrCorrupt)
	}
	pos += k
	for range n {
		pos = (pos + 7) &^ 7
		var e entry
		var ok bool
		if e.typ, pos, ok = readString(buf, pos); !ok {
			return r, fmt.Errorf("commit record: bad type name: %w", errs.ErrCorrupt)
		}
		if e.device, pos, ok = readString(buf, pos); !ok {
			return r, fmt.Errorf("commit record: bad device: %w", errs.ErrCorrupt)
		}
		pos = (pos + 7) &^ 7
		if pos > len(buf) {
			return r, fmt.Errorf("commit record: truncated: %w", errs.ErrCorrupt)
		}
		e.t, pos, err = tablet.Decode(buf, pos)
		if err != nil {
			return r, fmt.Errorf("commit record: %w", err)
		}
		r.entries = append(r.entries, e)
	}
	if pos != len(buf) {
		return r, fmt.Errorf("commit record: %d trailing bytes: %w", len(buf)-pos, errs.ErrCorrupt)
	}
	return r, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func readString(buf []byte, pos int) (string, int, bool) {
	if pos > len(buf) {
		return "", pos, false
	}
	n, k := binary.Uvarint(buf[pos:])
	if k <= 0 || n > uint64(len(buf)-pos-k) {
		return "", pos, false
	}
	pos += k
	return string(buf[pos : pos+int(n)]), pos + int(n), true
}

func padTo(dst []byte, align int) []byte {
	for len(dst)%align != 0 {
		dst = append(dst, 0)
	}
	return dst
}
