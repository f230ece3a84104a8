package schema

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arcadego/arcadego/core/errs"
)

// The DDL script language, ArcadeDB style. Statements are separated by
// ';'; empty statements and "--" comments (to the end of the line) are
// allowed. Keywords are case-insensitive. A name is a bare identifier
// [A-Za-z_][A-Za-z0-9_]* or any text in backticks, where a doubled
// backtick stands for one, so every valid name can be written. Keywords
// are not reserved: a bare word is a keyword only where the grammar
// expects one (an index called ON or IF must be quoted, as it would read
// as the next keyword).
//
//	CREATE [DOCUMENT|VERTEX|EDGE] TYPE name [IF NOT EXISTS]
//	DROP TYPE name [IF EXISTS]
//	CREATE PROPERTY type.name [IF NOT EXISTS] propertyType [IF NOT EXISTS]
//	DROP PROPERTY type.name [IF EXISTS]
//	CREATE INDEX [name] [IF NOT EXISTS] ON type (prop [, prop]...) UNIQUE|NOTUNIQUE
//	DROP INDEX name [IF EXISTS]
//	ALTER TYPE name SET TTL duration|NONE    duration: digits and a unit of
//	                                         ms, s, m, h, d or w (30d, 90m)
//
// Error positions are 1-based lines and columns; columns count characters
// (runes), a tab counting as one.

type tokenKind uint8

const (
	tokEOF    tokenKind = iota
	tokWord             // bare identifier or keyword
	tokQuoted           // backtick-quoted identifier, text unescaped
	tokPunct            // one of ; . ( ) ,
	tokNumber           // digits, then perhaps letters: a duration (30d)
)

type token struct {
	kind      tokenKind
	text      string
	line, col int
}

// String describes the token for an error message.
func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of script"
	case tokQuoted:
		return "`" + strings.ReplaceAll(t.text, "`", "``") + "`"
	default:
		return quote(t.text)
	}
}

// is reports whether t is the keyword kw (upper case) or the punctuation kw.
func (t token) is(kw string) bool {
	switch t.kind {
	case tokWord:
		return strings.EqualFold(t.text, kw)
	case tokPunct:
		return t.text == kw
	}
	return false
}

type lexer struct {
	src       string
	pos       int
	line, col int
}

func posError(line, col int, format string, args ...any) error {
	return fmt.Errorf("line %d, column %d: %s: %w", line, col, fmt.Sprintf(format, args...), errs.ErrInvalidArgument)
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// advance moves past the rune at pos, keeping line and column.
func (l *lexer) advance() {
	r, n := utf8.DecodeRuneInString(l.src[l.pos:])
	l.pos += n
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v' {
			l.advance()
		} else if c == '-' && strings.HasPrefix(l.src[l.pos:], "--") {
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.advance()
			}
		} else {
			break
		}
	}
	tok := token{line: l.line, col: l.col}
	if l.pos >= len(l.src) {
		return tok, nil
	}
	c := l.src[l.pos]
	switch {
	case isIdentStart(c):
		start := l.pos
		for l.pos < len(l.src) && isIdentChar(l.src[l.pos]) {
			l.pos++
			l.col++
		}
		tok.kind, tok.text = tokWord, l.src[start:l.pos]
	case c >= '0' && c <= '9':
		start := l.pos
		for l.pos < len(l.src) && (isIdentChar(l.src[l.pos])) {
			l.pos++
			l.col++
		}
		tok.kind, tok.text = tokNumber, l.src[start:l.pos]
	case c == '`':
		l.advance()
		var b strings.Builder
		for {
			end := strings.IndexByte(l.src[l.pos:], '`')
			if end < 0 {
				return tok, posError(tok.line, tok.col, "unterminated quoted name (missing closing backtick)")
			}
			b.WriteString(l.src[l.pos : l.pos+end])
			for stop := l.pos + end; l.pos < stop; {
				l.advance()
			}
			l.advance() // the backtick
			if l.pos < len(l.src) && l.src[l.pos] == '`' {
				b.WriteByte('`')
				l.advance()
				continue
			}
			break
		}
		tok.kind, tok.text = tokQuoted, b.String()
	case strings.IndexByte(";.(),", c) >= 0:
		tok.kind, tok.text = tokPunct, l.src[l.pos:l.pos+1]
		l.advance()
	default:
		r, _ := utf8.DecodeRuneInString(l.src[l.pos:])
		if r == utf8.RuneError {
			return tok, posError(tok.line, tok.col, "invalid UTF-8")
		}
		if unicode.IsControl(r) { // named by code point: a NUL or escape printed raw helps nobody
			return tok, posError(tok.line, tok.col, "control character %U", r)
		}
		return tok, posError(tok.line, tok.col, "unexpected character %q", r)
	}
	return tok, nil
}

// parser reads statements with one token of lookahead.
type parser struct {
	lx     lexer
	peeked bool
	tok    token
}

func (p *parser) peek() (token, error) {
	if !p.peeked {
		t, err := p.lx.next()
		if err != nil {
			return t, err
		}
		p.tok, p.peeked = t, true
	}
	return p.tok, nil
}

func (p *parser) next() (token, error) {
	t, err := p.peek()
	p.peeked = false
	return t, err
}

// accept consumes the next token if it is kw.
func (p *parser) accept(kw string) (bool, error) {
	t, err := p.peek()
	if err != nil || !t.is(kw) {
		return false, err
	}
	p.peeked = false
	return true, nil
}

// expect consumes the next token, which must be kw; what describes it.
func (p *parser) expect(kw, what string) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if !t.is(kw) {
		return posError(t.line, t.col, "expected %s, got %s", what, t)
	}
	return nil
}

// name reads a name of a type, property or index.
func (p *parser) name(what string) (string, error) {
	t, err := p.next()
	if err != nil {
		return "", err
	}
	if t.kind != tokWord && t.kind != tokQuoted {
		return "", posError(t.line, t.col, "expected %s name, got %s", what, t)
	}
	if err := ValidateName(what, t.text); err != nil {
		return "", fmt.Errorf("line %d, column %d: %w", t.line, t.col, err)
	}
	return t.text, nil
}

// ifClause reads an optional IF EXISTS (not false) or IF NOT EXISTS (not true).
func (p *parser) ifClause(not bool) (bool, error) {
	if ok, err := p.accept("IF"); !ok || err != nil {
		return false, err
	}
	if not {
		if err := p.expect("NOT", "NOT"); err != nil {
			return false, err
		}
	}
	return true, p.expect("EXISTS", "EXISTS")
}

// finish returns nil for a script without statements.
func finish(ops []Op) []Op {
	if len(ops) == 0 {
		return nil
	}
	return slices.Clip(ops)
}

// ParseScript parses a DDL script of ';'-separated statements. Errors carry
// line and column ("line 3, column 17: ...") and kind errs.ErrInvalidArgument.
func ParseScript(src string) ([]Op, error) {
	p := &parser{lx: lexer{src: src, line: 1, col: 1}}
	var ops []Op
	if n := strings.Count(src, ";") + 1; n <= len(src)/8 {
		ops = make([]Op, 0, n) // a guess that saves regrowth; no statement is shorter than 8 bytes
	}
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		var op Op
		switch {
		case t.kind == tokEOF:
			return finish(ops), nil
		case t.is(";"):
			continue
		case t.is("CREATE"):
			op, err = p.create()
		case t.is("DROP"):
			op, err = p.drop()
		case t.is("ALTER"):
			op, err = p.alter()
		default:
			return nil, posError(t.line, t.col, "expected CREATE, DROP or ALTER, got %s", t)
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		if t, err = p.next(); err != nil {
			return nil, err
		}
		if t.kind != tokEOF && !t.is(";") {
			return nil, posError(t.line, t.col, "expected ';' or end of script, got %s", t)
		}
		if t.kind == tokEOF {
			return finish(ops), nil
		}
	}
}

func (p *parser) create() (Op, error) {
	t, err := p.next()
	if err != nil {
		return Op{}, err
	}
	switch {
	case t.is("DOCUMENT") || t.is("VERTEX") || t.is("EDGE"):
		if err := p.expect("TYPE", "TYPE"); err != nil {
			return Op{}, err
		}
		fallthrough
	case t.is("TYPE"):
		op := Op{Kind: CreateType}
		if op.Type, err = p.name("type"); err != nil {
			return op, err
		}
		op.IfNotExists, err = p.ifClause(true)
		return op, err
	case t.is("PROPERTY"):
		return p.createProperty()
	case t.is("INDEX"):
		return p.createIndex()
	}
	return Op{}, posError(t.line, t.col, "expected TYPE, DOCUMENT, VERTEX, EDGE, PROPERTY or INDEX after CREATE, got %s", t)
}

// qualified reads type.property.
func (p *parser) qualified() (typ, prop string, err error) {
	if typ, err = p.name("type"); err != nil {
		return
	}
	if err = p.expect(".", "'.' between type and property"); err != nil {
		return
	}
	prop, err = p.name("property")
	return
}

func (p *parser) createProperty() (Op, error) {
	op := Op{Kind: CreateProperty}
	var err error
	if op.Type, op.Property, err = p.qualified(); err != nil {
		return op, err
	}
	if op.IfNotExists, err = p.ifClause(true); err != nil {
		return op, err
	}
	t, err := p.next()
	if err != nil {
		return op, err
	}
	if t.kind == tokWord {
		op.PropertyType, err = ParsePropertyType(t.text)
	}
	if t.kind != tokWord || err != nil {
		return op, posError(t.line, t.col, "expected a property type (BOOLEAN, INT32, INT64, FLOAT, DOUBLE, STRING, BINARY, TIMESTAMP or DATE), got %s", t)
	}
	if !op.IfNotExists {
		op.IfNotExists, err = p.ifClause(true)
	}
	return op, err
}

func (p *parser) createIndex() (Op, error) {
	op := Op{Kind: CreateIndex}
	t, err := p.peek()
	if err != nil {
		return op, err
	}
	if !t.is("ON") && !t.is("IF") {
		if op.Index, err = p.name("index"); err != nil {
			return op, err
		}
	}
	if op.IfNotExists, err = p.ifClause(true); err != nil {
		return op, err
	}
	if err := p.expect("ON", "ON"); err != nil {
		return op, err
	}
	if op.Type, err = p.name("type"); err != nil {
		return op, err
	}
	if err := p.expect("(", "'(' before the property list"); err != nil {
		return op, err
	}
	for {
		name, err := p.name("property")
		if err != nil {
			return op, err
		}
		op.Properties = append(op.Properties, name)
		if t, err = p.next(); err != nil {
			return op, err
		}
		if t.is(")") {
			break
		}
		if !t.is(",") {
			return op, posError(t.line, t.col, "expected ',' or ')' in the property list, got %s", t)
		}
	}
	if t, err = p.next(); err != nil {
		return op, err
	}
	switch {
	case t.is("UNIQUE"):
		op.Unique = true
	case t.is("NOTUNIQUE"):
	default:
		return op, posError(t.line, t.col, "expected UNIQUE or NOTUNIQUE, got %s", t)
	}
	return op, nil
}

// alter reads ALTER TYPE name SET TTL duration|NONE.
func (p *parser) alter() (Op, error) {
	op := Op{Kind: SetTTL}
	err := p.expect("TYPE", "TYPE after ALTER")
	if err == nil {
		op.Type, err = p.name("type")
	}
	if err == nil {
		err = p.expect("SET", "SET")
	}
	if err == nil {
		err = p.expect("TTL", "TTL")
	}
	if err != nil {
		return op, err
	}
	t, err := p.next()
	if err != nil {
		return op, err
	}
	if t.is("NONE") {
		return op, nil
	}
	if t.kind != tokNumber {
		return op, posError(t.line, t.col, "expected a duration (30d, 12h, 90m, 45s, 500ms, 2w) or NONE, got %s", t)
	}
	ttl, ok := ParseDuration(t.text)
	if !ok {
		return op, posError(t.line, t.col, "bad duration %q: digits and one of ms, s, m, h, d, w (30d)", t.text)
	}
	op.TTL = ttl
	return op, nil
}

// durationUnits are the units of ParseDuration, in nanoseconds.
var durationUnits = map[string]int64{"ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9, "d": 86400e9, "w": 7 * 86400e9}

// ParseDuration parses digits and a unit (ms, s, m, h, d or w, in lower
// case) into nanoseconds; ok is false for anything else, zero, or an
// overflow.
func ParseDuration(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	unit, ok := durationUnits[s[i:]] // lower case only: "M" might be meant as months
	if i == 0 || i > 15 || !ok {
		return 0, false
	}
	var n int64
	for _, c := range s[:i] {
		n = n*10 + int64(c-'0')
	}
	if n == 0 || n > math.MaxInt64/unit {
		return 0, false
	}
	return n * unit, true
}

func (p *parser) drop() (Op, error) {
	t, err := p.next()
	if err != nil {
		return Op{}, err
	}
	var op Op
	switch {
	case t.is("TYPE"):
		op.Kind = DropType
		op.Type, err = p.name("type")
	case t.is("PROPERTY"):
		op.Kind = DropProperty
		op.Type, op.Property, err = p.qualified()
	case t.is("INDEX"):
		op.Kind = DropIndex
		op.Index, err = p.name("index")
	default:
		return op, posError(t.line, t.col, "expected TYPE, PROPERTY or INDEX after DROP, got %s", t)
	}
	if err != nil {
		return op, err
	}
	op.IfExists, err = p.ifClause(false)
	return op, err
}
