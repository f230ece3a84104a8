// Package arrowbridge owns the translation between Go-side Arrow record
// batches and the engine's tablets: the type mapping, the time column,
// validity bitmaps, dictionary decoding and string layouts on the way in
// (ToTablet), and the Arrow schema and records of scan results on the way
// out (ResultSchema, ToRecord) for Go programs. Batches that come through
// the C Data Interface reach ToTablet through internal/cdata, which also
// writes the C ABI's results itself, with the same Arrow types.
//
// Arrow → property types (ToTablet):
//
//	bool                                    BOOLEAN   (borrowed, bit offset kept)
//	int32, date32, int64, float32, float64  INT32, DATE, INT64, FLOAT, DOUBLE (borrowed)
//	int8, int16, uint8, uint16              INT32     (widened copy)
//	uint32                                  INT64     (widened copy)
//	uint64                                  INT64     (borrowed; error if a value exceeds MaxInt64)
//	timestamp[unit, zone]                   TIMESTAMP (ns borrowed; other units scaled, overflow checked)
//	date64                                  DATE      (whole days only, as Arrow requires; range checked)
//	utf8, binary                            STRING, BINARY (borrowed)
//	large_utf8, large_binary                STRING, BINARY (data borrowed, offsets narrowed)
//	string_view, binary_view                STRING, BINARY (copied into offsets + data)
//	fixed_size_binary                       BINARY    (data borrowed, offsets built)
//	dictionary<any index, supported value>  the value's type (decoded copy)
//
// The null type, float16, decimals, intervals, durations and nested types
// are rejected with errs.ErrInvalidArgument naming the column.
//
// Borrowing: a tablet from ToTablet points into the record's buffers
// wherever the layout already matches, so the caller keeps the record alive
// and unmodified until the tablet is consumed. Converted columns are fresh
// Go memory that still borrows the record's validity bitmap: they start at
// bit offset (array offset mod 8) so the bitmap is sliced, never shifted.
//
// Results (ToRecord) are the opposite: every buffer is allocated from the
// caller's allocator and copied, so a record can outlive the tablet.
// Their device column is dictionary-encoded (DeviceType): a record holds
// one device, so its dictionary is that one name and every index is 0.
//
// This package must not use cgo (the C Data Interface lives in
// internal/cdata) and
// must not depend on the engine: it sees only tablets and properties.
package arrowbridge
