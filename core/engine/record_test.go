package engine

import (
	"bytes"

	"github.com/arcadego/arcadego/core/schema"
)

// encodeRecord returns the record of recordParts as one buffer, as the
// log stores it.
func encodeRecord(ops []schema.Op, entries []entry, attached ...attachment) []byte {
	return bytes.Join(recordParts(ops, entries, attached, nil), nil)
}
