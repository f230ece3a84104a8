// Package flatjson reads the common shape of the C ABI's JSON requests
// quickly: one object whose values are strings without escapes, integers,
// booleans, or arrays of such strings. It refuses anything else (an
// escape, a nested object, a number with a fraction, null, a duplicate
// key, bad UTF-8), and the caller then decodes the request with
// encoding/json, which also gives the errors: this package never decides
// that a request is wrong, only that it is not one it reads. It must
// accept nothing that encoding/json would read differently. LoneSurrogate
// finds an escape that encoding/json reads, but as another character.
package flatjson

import (
	"strconv"
	"unicode/utf8"
)

// Kind is the kind of a Value.
type Kind uint8

const (
	String  Kind = iota + 1 // Str
	Int                     // Int
	Bool                    // Bool
	Strings                 // Strs, never nil ([] is empty, not absent)
)

// Value is one member's value.
type Value struct {
	Kind Kind
	Str  string
	Int  int64
	Bool bool
	Strs []string
}

// Parse reads s as an object, calling fn for each member in order; fn
// returns false to refuse the member. Parse reports whether it read the
// whole of s (whitespace around the object included) and fn took every
// member.
func Parse(s string, fn func(key string, v Value) bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	p := parser{s: s}
	p.space()
	if !p.take('{') {
		return false
	}
	p.space()
	var keys []string // a request has a few: a linear search is cheapest
	if !p.take('}') {
		for {
			key, ok := p.str()
			if !ok {
				return false
			}
			for _, k := range keys {
				if k == key {
					return false // encoding/json keeps the last: not ours to decide
				}
			}
			keys = append(keys, key)
			p.space()
			if !p.take(':') {
				return false
			}
			p.space()
			v, ok := p.value()
			if !ok || !fn(key, v) {
				return false
			}
			p.space()
			if p.take('}') {
				break
			}
			if !p.take(',') {
				return false
			}
			p.space()
		}
	}
	p.space()
	return p.i == len(p.s)
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) take(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters.
func (p *parser) str() (string, bool) {
	if !p.take('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

func (p *parser) value() (Value, bool) {
	if p.i >= len(p.s) {
		return Value{}, false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		s, ok := p.str()
		return Value{Kind: String, Str: s}, ok
	case c == '[':
		p.i++
		strs := []string{}
		p.space()
		if p.take(']') {
			return Value{Kind: Strings, Strs: strs}, true
		}
		for {
			s, ok := p.str()
			if !ok {
				return Value{}, false
			}
			strs = append(strs, s)
			p.space()
			if p.take(']') {
				return Value{Kind: Strings, Strs: strs}, true
			}
			if !p.take(',') {
				return Value{}, false
			}
			p.space()
		}
	case c == '-' || c >= '0' && c <= '9':
		return p.integer()
	case p.word("true"):
		return Value{Kind: Bool, Bool: true}, true
	case p.word("false"):
		return Value{Kind: Bool}, true
	}
	return Value{}, false
}

// integer reads -?(0|[1-9][0-9]*) that fits an int64 and is not
// followed by a fraction or an exponent.
func (p *parser) integer() (Value, bool) {
	start := p.i
	p.take('-')
	digits := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || p.s[digits] == '0' && p.i-digits > 1 {
		return Value{}, false
	}
	if p.i < len(p.s) {
		if c := p.s[p.i]; c == '.' || c == 'e' || c == 'E' {
			return Value{}, false
		}
	}
	n, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
	return Value{Kind: Int, Int: n}, err == nil
}

// word reads w when it is next and not followed by a letter or digit.
func (p *parser) word(w string) bool {
	end := p.i + len(w)
	if end > len(p.s) || p.s[p.i:end] != w {
		return false
	}
	if end < len(p.s) {
		if c := p.s[end]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return false
		}
	}
	p.i = end
	return true
}

// LoneSurrogate returns the first \u escape of s that names half of a
// UTF-16 surrogate pair without its other half ("\ud800", "\udfff", a high
// half followed by anything but a low one), or "". encoding/json reads
// such an escape as U+FFFD, so that "a\ud800" and "a\ufffd" would name
// one device. s is JSON text: a backslash appears only in strings, each
// starting an escape.
func LoneSurrogate(s string) string {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++ // a one-character escape, \\ included
			continue
		}
		r, ok := hex4(s, i+2)
		switch {
		case !ok || r < 0xd800 || r > 0xdfff:
		case r <= 0xdbff: // a high half: a low one must follow
			if lo, ok := hex4(s, i+8); i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' && ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 6 // the pair's low half too
			} else {
				return s[i : i+6]
			}
		default: // a low half alone
			return s[i : i+6]
		}
		i += 5
	}
	return ""
}

// hex4 reads the four hex digits of s at i.
func hex4(s string, i int) (rune, bool) {
	if i < 0 || i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(v), err == nil
}
