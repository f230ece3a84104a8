package flatjson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parsed is what Parse read, as decoded gives it.
func parsed(s string) (map[string]any, bool) {
	out := map[string]any{}
	ok := Parse(s, func(key string, v Value) bool {
		switch v.Kind {
		case String:
			out[key] = v.Str
		case Int:
			out[key] = v.Int
		case Bool:
			out[key] = v.Bool
		case Strings:
			list := make([]any, len(v.Strs))
			for i, x := range v.Strs {
				list[i] = x
			}
			out[key] = list
		}
		return true
	})
	return out, ok
}

// decoded is s as encoding/json reads it into a map, integers as int64.
func decoded(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the value")
	}
	for k, v := range out { // an integer as the int64 a request field gets
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				out[k] = i
			}
		}
	}
	return out, nil
}

// check: whatever Parse accepts, encoding/json reads alike.
func check(t *testing.T, s string) bool {
	got, ok := parsed(s)
	if !ok {
		return false
	}
	want, err := decoded(s)
	require.NoError(t, err, "Parse took %q, which encoding/json refuses", s)
	require.Equal(t, want, got, "%q", s)
	return true
}

func TestParseReadsRequests(t *testing.T) {
	for _, s := range []string{
		`{"type": "M", "devices": ["plant-07/dev-0000007"]}`,
		` {"type":"A","devices":[],"properties":["k","s"],"start":-5,"end":0,"batch_rows":65536,"with_device":false} `,
		"{\n\t\"type\": \"é名\", \"with_device\": true}\r\n",
		`{}`,
		`{"start": -9223372036854775808, "end": 9223372036854775807}`,
	} {
		assert.True(t, check(t, s), "%q is read", s)
	}
	got, _ := parsed(`{"devices": []}`)
	assert.NotNil(t, got["devices"], "[] is an empty list, not an absent one")
}

func TestParseLeavesTheRestToEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"type": "a\"b"}`,                 // an escape
		`{"type": "a\u0041"}`,              // an escape
		"{\"type\": \"a\x01\"}",            // a control character (an error there)
		`{"where": {"property": "x"}}`,     // a nested object
		`{"start": 1.5}`, `{"start": 1e3}`, // not integers
		`{"start": 01}`, `{"start": -}`, // not numbers
		`{"start": 9223372036854775808}`, // past int64
		`{"type": null}`,                 // null
		`{"type": "a", "type": "b"}`,     // a duplicate key
		`{"devices": ["a", 1]}`,          // a list of not only strings
		`{"type": "a",}`, `{"type" "a"}`, `{"type": "a"`, `{"type": "a"} x`, `[]`, ``,
		`{"ok": truex}`, `{"ok": tru}`,
		"{\"type\": \"\xff\"}", // not UTF-8
	} {
		_, ok := parsed(s)
		assert.False(t, ok, "%q", s)
	}
}

// TestParseAgreesWithEncodingJSON: random requests, many of them broken
// a byte at a time; every one Parse takes, encoding/json reads alike.
func TestParseAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{`"a"`, `"dev-7/x"`, `"é"`, `""`, `0`, `-0`, `12`, `-9`, `true`, `false`, `null`, `1.5`,
		`[]`, `["a"]`, `["a", "b"]`, `{}`, `"a\"b"`, `9223372036854775807`, `99999999999999999999`}
	keys := []string{"type", "devices", "start", "end", "with_device", "x", "é"}
	read := 0
	for range 20000 {
		var b strings.Builder
		b.WriteString("{")
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteString([]string{",", ", ", ",\n"}[rng.IntN(3)])
			}
			fmt.Fprintf(&b, "%q:%s%s", keys[rng.IntN(len(keys))], []string{"", " "}[rng.IntN(2)], pieces[rng.IntN(len(pieces))])
		}
		b.WriteString("}")
		s := b.String()
		if rng.IntN(3) == 0 { // break it: a byte changed, dropped or doubled
			i := rng.IntN(len(s))
			switch rng.IntN(3) {
			case 0:
				const bytes = `{}[]",: -01ex\`
				s = s[:i] + string(bytes[rng.IntN(len(bytes))]) + s[i+1:]
			case 1:
				s = s[:i] + s[i+1:]
			default:
				s = s[:i] + s[i:i+1] + s[i:]
			}
		}
		if check(t, s) {
			read++
		}
	}
	assert.Greater(t, read, 2000, "Parse reads the common requests")
}

func FuzzParse(f *testing.F) {
	f.Add(`{"type": "M", "devices": ["d"], "start": 0, "with_device": false}`)
	f.Add(`{"a": [], "b": -0}`)
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}

// TestLoneSurrogate: a \u escape of half a surrogate pair without its
// other half is found; pairs, other escapes and an escaped backslash
// before a "u" are not.
func TestLoneSurrogate(t *testing.T) {
	for s, want := range map[string]string{
		`{"devices": ["a\ud800"]}`:         `\ud800`,
		`{"devices": ["a\uDFFF"]}`:         `\uDFFF`,
		`{"type": "\ud83d\u0041"}`:         `\ud83d`,
		`{"type": "\ud83d"}`:               `\ud83d`,
		`{"type": "x\ud83d\ude00\udc00"}`:  `\udc00`,
		`{"type": "\ud83d\ude00"}`:         "",
		`{"type": "\u00e9\u0041\ufffd"}`:   "",
		`{"type": "\\ud800"}`:              "",
		`{"type": "\\\ud800"}`:             `\ud800`,
		`{"type": "\"\ud800"}`:             `\ud800`,
		`{"type": "plain", "devices": []}`: "",
		`{"type": "cut \ud8`:               "",
		`{"type": "cut \ud83d\ude`:         `\ud83d`,
	} {
		assert.Equal(t, want, LoneSurrogate(s), s)
	}
}
