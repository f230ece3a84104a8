package tablet

import (
	"errors"
	"reflect"
	"testing"

	"github.com/arcadego/arcadego/core/errs"
)

// FuzzDecode: any input either decodes to a valid tablet that encodes back
// to the bytes it was read from, or fails with errs.ErrCorrupt; it never
// panics. DecodeView, for encodings it trusts, does not panic either, and
// reads what Decode reads.
func FuzzDecode(f *testing.F) {
	f.Add(Append(nil, &Tablet{Times: []int64{}}), 0)
	f.Add(Append(nil, &Tablet{Times: []int64{5, 4}, TimeUnit: "us", Columns: []Column{
		Int64s("a", []int64{1, 2}, []bool{true, false}),
		Strings("s", []string{"x", "yz"}, nil),
		Binaries("b", [][]byte{nil, {1}}, []bool{false, true}),
		Bools("f", []bool{true, true}, nil),
		Doubles("d", []float64{1, 2}, nil),
	}}), 0)
	f.Add(append([]byte{0, 0, 0, 0, 0, 0, 0, 0}, Append(make([]byte, 8), &Tablet{Times: []int64{1}, Columns: []Column{Dates("d", []int32{1}, nil)}})...), 8)
	f.Fuzz(func(t *testing.T, data []byte, pos int) {
		if pos < 0 || pos > len(data) {
			return
		}
		buf := make([]byte, len(data), len(data)+8)
		copy(buf, data)
		tb, end, err := Decode(buf, pos)
		var view Tablet
		viewEnd, viewErr := -1, error(nil)
		if n, werr := EncodedWidth(buf, pos); werr == nil {
			viewEnd, viewErr = DecodeView(buf, pos, &view, make([]Column, n))
		}
		if err == nil && (viewErr != nil || viewEnd != end || !reflect.DeepEqual(*tb, view)) {
			t.Fatalf("DecodeView read another tablet (%v, end %d, not %d)", viewErr, viewEnd, end)
		}
		if err != nil {
			if !errors.Is(err, errs.ErrCorrupt) {
				t.Fatalf("error of the wrong kind: %v", err)
			}
			return
		}
		if end < pos || end > len(buf) {
			t.Fatalf("end %d outside [%d, %d]", end, pos, len(buf))
		}
		if err := tb.Validate(); err != nil {
			t.Fatalf("decoded an invalid tablet: %v", err)
		}
		again, _, err := Decode(Append(make([]byte, pos), tb), pos)
		if err != nil {
			t.Fatalf("re-encoded tablet does not decode: %v", err)
		}
		if again.Rows() != tb.Rows() || len(again.Columns) != len(tb.Columns) {
			t.Fatalf("round trip changed the shape")
		}
	})
}
