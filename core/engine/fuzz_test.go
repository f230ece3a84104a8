package engine

import (
	"errors"
	"reflect"
	"testing"

	"github.com/arcadego/arcadego/core/errs"
	"github.com/arcadego/arcadego/core/schema"
	"github.com/arcadego/arcadego/core/segment"
	"github.com/arcadego/arcadego/core/tablet"
)

// FuzzDecodeRecord: any payload either decodes to a record that encodes
// back to the same bytes, or fails with errs.ErrCorrupt; it never panics.
// Seeds are real commit records.
func FuzzDecodeRecord(f *testing.F) {
	strs := tablet.Strings("s", []string{"a", "", "ccc"}, []bool{true, false, true})
	full := &tablet.Tablet{Times: []int64{3, 1, 2}, Columns: []tablet.Column{
		tablet.Int64s("i", []int64{1, 2, 3}, nil), strs,
		tablet.Bools("b", []bool{true, false, true}, nil),
		tablet.Int32s("n", []int32{7, 8, 9}, []bool{false, true, true}),
	}, TimeUnit: "ms", TimeZone: "UTC"}
	ops := []schema.Op{
		{Kind: schema.CreateType, Type: "T"},
		{Kind: schema.CreateProperty, Type: "T", Property: "i", PropertyType: schema.Int64},
		{Kind: schema.CreateIndex, Type: "T", Properties: []string{"i"}},
	}
	f.Add(encodeRecord(nil, nil))
	f.Add(encodeRecord(ops, nil))
	f.Add(encodeRecord(ops, []entry{{enc: encodeEntry("T", "dev", full)}}))
	f.Add(encodeRecord(nil, []entry{
		{enc: encodeEntry("T", "", &tablet.Tablet{Times: []int64{}})},
		{enc: encodeEntry("U", "d", full)},
	}))
	f.Add(encodeRecord(ops, []entry{{enc: encodeEntry("T", "dev", full)}},
		attachment{typ: 3, files: []segment.AddFile{{Path: "part-x-0.parquet", Size: 4096, Stats: `{"numRecords":3}`}, {Path: "part-x-1.parquet", Size: 5}}}))
	f.Fuzz(func(t *testing.T, payload []byte) {
		// Decoding shares memory with its input and the log hands over
		// 8-aligned payloads: do the same.
		buf := make([]byte, len(payload), len(payload)+8)
		copy(buf, payload)
		rec, err := decodeRecord(buf)
		if err != nil {
			if !errors.Is(err, errs.ErrCorrupt) {
				t.Fatalf("error of the wrong kind: %v", err)
			}
			return
		}
		entries := make([]entry, len(rec.entries))
		for i, e := range rec.entries {
			if err := e.t.Validate(); err != nil {
				t.Fatalf("decoded an invalid tablet: %v", err)
			}
			entries[i] = entry{enc: encodeEntry(e.typ, e.device, e.t)}
		}
		again, err := decodeRecord(encodeRecord(rec.ops, entries, rec.attached...))
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !reflect.DeepEqual(again.attached, rec.attached) {
			t.Fatalf("attachments changed in a round trip: %v, then %v", rec.attached, again.attached)
		}
	})
}

// encodeEntry is an insert's log entry in a buffer of its own, as a
// transaction's copy of a tablet writes it.
func encodeEntry(typ, device string, t *tablet.Tablet) []byte {
	return new(txMemory).copyOf(typ, device, t)
}
