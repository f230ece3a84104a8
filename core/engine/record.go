package engine

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
)

// A commit record's payload:
//
//	byte version (1 or 2), schema ops (schema.AppendOps), uvarint entries,
//	per entry: pad to 8, string type, string device, pad to 8, tablet;
//	versions 2 and 3: uvarint attachments, per attachment: uvarint type
//	id, uvarint files, per file: string path, uvarint size, string stats;
//	version 3: the deletes (see delete.go)
//
// Entries are encoded at Insert time on their own (starting at offset 0)
// and copied into the record at 8-aligned positions, which keeps the
// tablet's internal alignment, so decoding shares the record's memory.
// An attachment is a direct write (see direct.go): Parquet files already
// in the type's table directory, which the commit adds to its Delta log.
// A commit without either is written as version 1, as before they existed.
const (
	recordVersion       = 1
	recordVersionAttach = 2
	recordVersionDelete = 3
)

// attachment is a direct write's part of a commit record.
type attachment struct {
	typ   schema.TypeID
	files []segment.AddFile // Path, Size and Stats
}

// entrySize is an upper bound of the bytes of an insert's log entry:
// its head (appendEntryHead) and its tablet.
func entrySize(typ, device string, t *tablet.Tablet) int {
	return 2*binary.MaxVarintLen64 + len(typ) + len(device) + 7 + tablet.AppendSize(t)
}

// appendEntryHead appends an entry's type and device, padded for its
// tablet.
func appendEntryHead(buf []byte, typ, device string) []byte {
	buf = appendString(buf, typ)
	buf = appendString(buf, device)
	return padTo(buf, 8)
}

// entryHeadLen returns the length of appendEntryHead(nil, typ, device):
// where the tablet starts in an entry's encoding.
func entryHeadLen(typ, device string) int {
	var tmp [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(tmp[:], uint64(len(typ))) + len(typ) + binary.PutUvarint(tmp[:], uint64(len(device))) + len(device)
	return (n + 7) &^ 7
}

// recordParts returns a commit record as parts to write one after the
// other: the head, then per entry its padding and its encoding. An entry
// encoded at Insert is written from that encoding; a borrowed entry is
// encoded here as parts that reference the caller's buffers, so a bulk
// insert's data is not copied on its way to the log.
func recordParts(ops []schema.Op, entries []entry, attached []attachment, dels []txDelete) [][]byte {
	version := byte(recordVersion)
	switch {
	case len(dels) > 0:
		version = recordVersionDelete
	case len(attached) > 0:
		version = recordVersionAttach
	}
	head := []byte{version}
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
	if version >= recordVersionAttach {
		tail := appendAttachments(nil, attached)
		if version == recordVersionDelete {
			tail = appendDeletes(tail, dels)
		}
		parts = append(parts, tail)
	}
	return parts
}

func appendAttachments(dst []byte, attached []attachment) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(attached)))
	for _, a := range attached {
		dst = binary.AppendUvarint(dst, uint64(a.typ))
		dst = binary.AppendUvarint(dst, uint64(len(a.files)))
		for _, f := range a.files {
			dst = appendString(dst, f.Path)
			dst = binary.AppendUvarint(dst, uint64(f.Size))
			dst = appendString(dst, f.Stats)
		}
	}
	return dst
}

func decodeAttachments(buf []byte, pos int) ([]attachment, int, error) {
	bad := fmt.Errorf("commit record: bad attachment: %w", errs.ErrCorrupt)
	uvarint := func() (uint64, bool) {
		if pos > len(buf) {
			return 0, false
		}
		v, k := binary.Uvarint(buf[pos:])
		if k <= 0 {
			return 0, false
		}
		pos += k
		return v, true
	}
	n, ok := uvarint()
	if !ok || n > uint64(len(buf)) {
		return nil, pos, bad
	}
	out := make([]attachment, 0, n)
	for range n {
		typ, ok1 := uvarint()
		files, ok2 := uvarint()
		if !ok1 || !ok2 || typ > math.MaxUint32 || files > uint64(len(buf)) {
			return nil, pos, bad
		}
		a := attachment{typ: schema.TypeID(typ)}
		for range files {
			var f segment.AddFile
			if f.Path, pos, ok = readString(buf, pos); !ok {
				return nil, pos, bad
			}
			size, ok := uvarint()
			if !ok || size > math.MaxInt64 {
				return nil, pos, bad
			}
			f.Size = int64(size)
			if f.Stats, pos, ok = readString(buf, pos); !ok {
				return nil, pos, bad
			}
			a.files = append(a.files, f)
		}
		out = append(out, a)
	}
	return out, pos, nil
}

var zeros [8]byte

type record struct {
	ops      []schema.Op
	entries  []entry
	attached []attachment
	deletes  []txDelete
}

// decodeRecord decodes a commit record; tablets share buf's memory.
func decodeRecord(buf []byte) (record, error) {
	var r record
	if len(buf) == 0 || buf[0] < recordVersion || buf[0] > recordVersionDelete {
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
	if buf[0] >= recordVersionAttach {
		if r.attached, pos, err = decodeAttachments(buf, pos); err != nil {
			return r, err
		}
	}
	if buf[0] == recordVersionDelete {
		if r.deletes, pos, err = decodeDeletes(buf, pos, len(r.entries)); err != nil {
			return r, err
		}
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
