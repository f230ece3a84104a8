package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

func TestParseScriptAccepts(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []Op
	}{
		{"empty", "", nil},
		{"only separators", " ; ;;\n;", nil},
		{"only comment", "-- nothing here\n-- nor here", nil},
		{"document type if not exists", "CREATE DOCUMENT TYPE A IF NOT EXISTS",
			[]Op{{Kind: CreateType, Type: "A", IfNotExists: true}}},
		{"vertex type lower case", "create vertex type a_1", []Op{{Kind: CreateType, Type: "a_1"}}},
		{"edge type", "Create Edge Type E;", []Op{{Kind: CreateType, Type: "E"}}},
		{"plain type", "CREATE TYPE _T", []Op{{Kind: CreateType, Type: "_T"}}},
		{"keyword as name", "CREATE TYPE type; CREATE PROPERTY index.on INT32",
			[]Op{{Kind: CreateType, Type: "type"}, {Kind: CreateProperty, Type: "index", Property: "on", PropertyType: Int32}}},
		{"quoted names", "CREATE TYPE `Größe 温度`; CREATE PROPERTY `A.b`.`x``y` BOOL",
			[]Op{{Kind: CreateType, Type: "Größe 温度"}, {Kind: CreateProperty, Type: "A.b", Property: "x`y", PropertyType: Boolean}}},
		{"quoted keyword", "CREATE TYPE `IF` IF NOT EXISTS", []Op{{Kind: CreateType, Type: "IF", IfNotExists: true}}},
		{"drop type if exists", "DROP TYPE A IF EXISTS", []Op{{Kind: DropType, Type: "A", IfExists: true}}},
		{"property", "CREATE PROPERTY A.k INT64", []Op{{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64}}},
		{"property spaced", "CREATE PROPERTY A . k\n\tlong", []Op{{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64}}},
		{"property if not exists before type", "CREATE PROPERTY A.k IF NOT EXISTS varchar",
			[]Op{{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: String, IfNotExists: true}}},
		{"property if not exists after type", "CREATE PROPERTY A.k datetime if not exists",
			[]Op{{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Timestamp, IfNotExists: true}}},
		{"drop property", "DROP PROPERTY A.k IF EXISTS", []Op{{Kind: DropProperty, Type: "A", Property: "k", IfExists: true}}},
		{"index unnamed", "CREATE INDEX ON A (k) NOTUNIQUE", []Op{{Kind: CreateIndex, Type: "A", Properties: []string{"k"}}}},
		{"index named", "CREATE INDEX byKV IF NOT EXISTS ON A (k, v) UNIQUE",
			[]Op{{Kind: CreateIndex, Type: "A", Index: "byKV", Properties: []string{"k", "v"}, Unique: true, IfNotExists: true}}},
		{"index unnamed if not exists", "create index if not exists on A(k,v,w)unique",
			[]Op{{Kind: CreateIndex, Type: "A", Properties: []string{"k", "v", "w"}, Unique: true, IfNotExists: true}}},
		{"index named on", "CREATE INDEX `on` ON A (k) NOTUNIQUE", []Op{{Kind: CreateIndex, Type: "A", Index: "on", Properties: []string{"k"}}}},
		{"drop index", "DROP INDEX `A[k]` IF EXISTS", []Op{{Kind: DropIndex, Index: "A[k]", IfExists: true}}},
		{"script", `
-- the script of the ArcadeDB issue on schema change cost
CREATE DOCUMENT TYPE A IF NOT EXISTS; -- trailing comment
CREATE PROPERTY A.k INT64;
CREATE INDEX ON A (k) NOTUNIQUE;;
DROP INDEX ` + "`A[k]`" + `;
`, []Op{
			{Kind: CreateType, Type: "A", IfNotExists: true},
			{Kind: CreateProperty, Type: "A", Property: "k", PropertyType: Int64},
			{Kind: CreateIndex, Type: "A", Properties: []string{"k"}},
			{Kind: DropIndex, Index: "A[k]"},
		}},
		{"no space before comment", "CREATE TYPE A--c\n", []Op{{Kind: CreateType, Type: "A"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseScript(tc.src)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseScriptRejects(t *testing.T) {
	long := strings.Repeat("x", MaxNameLen+1)
	cases := []struct {
		name      string
		src       string
		line, col int
		msg       string
	}{
		{"unknown statement", "SELECT 1", 1, 1, `expected CREATE, DROP or ALTER, got "SELECT"`},
		{"create what", "CREATE TABLE A", 1, 8, `expected TYPE, DOCUMENT, VERTEX, EDGE, PROPERTY or INDEX after CREATE, got "TABLE"`},
		{"document without type", "CREATE DOCUMENT A", 1, 17, `expected TYPE, got "A"`},
		{"missing type name", "CREATE TYPE", 1, 12, "expected type name, got end of script"},
		{"punct as name", "CREATE TYPE ;", 1, 13, `expected type name, got ";"`},
		{"two names", "CREATE TYPE A B", 1, 15, `expected ';' or end of script, got "B"`},
		{"if exists on create", "CREATE TYPE A IF EXISTS", 1, 18, `expected NOT, got "EXISTS"`},
		{"if not", "CREATE TYPE A IF NOT", 1, 21, "expected EXISTS, got end of script"},
		{"extends unsupported", "CREATE VERTEX TYPE V EXTENDS W", 1, 22, `expected ';' or end of script, got "EXTENDS"`},
		{"property without dot", "CREATE PROPERTY A k INT64", 1, 19, `expected '.' between type and property, got "k"`},
		{"property unknown type", "CREATE PROPERTY A.k INTEGERX", 1, 21, `expected a property type (BOOLEAN, INT32, INT64, FLOAT, DOUBLE, STRING, BINARY, TIMESTAMP or DATE), got "INTEGERX"`},
		{"property quoted type", "CREATE PROPERTY A.k `INT64`", 1, 21, "expected a property type"},
		{"property missing type", "CREATE PROPERTY A.k", 1, 20, "expected a property type"},
		{"property if not exists twice", "CREATE PROPERTY A.k IF NOT EXISTS INT64 IF NOT EXISTS", 1, 41, `expected ';' or end of script, got "IF"`},
		{"index without paren", "CREATE INDEX ON A k NOTUNIQUE", 1, 19, `expected '(' before the property list, got "k"`},
		{"index missing comma", "CREATE INDEX ON A (k v) NOTUNIQUE", 1, 22, `expected ',' or ')' in the property list, got "v"`},
		{"index empty list", "CREATE INDEX ON A () UNIQUE", 1, 20, `expected property name, got ")"`},
		{"index trailing comma", "CREATE INDEX ON A (k,) UNIQUE", 1, 22, `expected property name, got ")"`},
		{"index without kind", "CREATE INDEX ON A (k)", 1, 22, "expected UNIQUE or NOTUNIQUE, got end of script"},
		{"index full text", "CREATE INDEX ON A (k) FULL_TEXT", 1, 23, `expected UNIQUE or NOTUNIQUE, got "FULL_TEXT"`},
		{"index without on", "CREATE INDEX i A (k) UNIQUE", 1, 16, `expected ON, got "A"`},
		{"drop what", "DROP A", 1, 6, `expected TYPE, PROPERTY or INDEX after DROP, got "A"`},
		{"drop if not exists", "DROP TYPE A IF NOT EXISTS", 1, 16, `expected EXISTS, got "NOT"`},
		{"drop index missing name", "DROP INDEX IF EXISTS", 1, 15, `expected ';' or end of script, got "EXISTS"`},
		{"empty quoted name", "CREATE TYPE ``", 1, 13, `invalid type name "": empty`},
		{"control char in quoted name", "CREATE TYPE `a\tb`", 1, 13, "control character U+0009"},
		{"too long name", "CREATE TYPE " + long, 1, 13, "longer than 256"},
		{"unterminated quote", "CREATE TYPE `abc", 1, 13, "unterminated quoted name"},
		{"unexpected character", "CREATE TYPE A$", 1, 14, "unexpected character '$'"},
		{"string literal", "CREATE TYPE 'A'", 1, 13, `unexpected character '\''`},
		{"control character", "CREATE TYPE A\x00", 1, 14, "control character U+0000"},
		{"invalid utf8", "CREATE TYPE \xff", 1, 13, "invalid UTF-8"},
		{"columns count runes", "CREATE TYPE `Größe` X", 1, 21, `expected ';' or end of script, got "X"`},
		{"later line", "CREATE TYPE A;\n-- comment\nCREATE PROPERTY A.k BLOB", 3, 21, `got "BLOB"`},
		{"after multi-line quote", "CREATE TYPE `a``b`;\n  DROP TYPE B IF\n", 3, 1, "expected EXISTS, got end of script"},
		{"quoted shown quoted", "CREATE TYPE A `x``y`", 1, 15, "got `x``y`"},
		{"tab counts one", "\tCREATE TYPE A B", 1, 16, `got "B"`},
		{"crlf", "CREATE TYPE A;\r\nDROP X", 2, 6, `got "X"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := ParseScript(tc.src)
			require.Error(t, err)
			assert.Nil(t, ops)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), fmt.Sprintf("line %d, column %d: ", tc.line, tc.col))
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestParseScriptQuotesAnyName checks that every valid name can be written
// in a script and comes back unchanged.
func TestParseScriptQuotesAnyName(t *testing.T) {
	for _, name := range []string{"a", "`", "``", "a b", "x;y", "-- not a comment", "Größe", "IF", "on", "A[k,v]", strings.Repeat("é", 128)} {
		t.Run(name, func(t *testing.T) {
			src := "DROP INDEX `" + strings.ReplaceAll(name, "`", "``") + "`"
			ops, err := ParseScript(src)
			require.NoError(t, err)
			require.Len(t, ops, 1)
			assert.Equal(t, name, ops[0].Index)
		})
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add(baseScript)
	f.Add("CREATE INDEX `i``j` IF NOT EXISTS ON `A` (k, v) UNIQUE; DROP PROPERTY A.k IF EXISTS -- x")
	f.Add("CREATE TYPE `")
	f.Fuzz(func(t *testing.T, src string) {
		ops, err := ParseScript(src)
		if err != nil {
			require.ErrorIs(t, err, errs.ErrInvalidArgument)
			require.Contains(t, err.Error(), "line ")
			return
		}
		for _, op := range ops {
			require.NoError(t, nameProblemOf(op), "%+v", op)
		}
	})
}

// nameProblemOf reports a name in op that the parser should have refused.
func nameProblemOf(op Op) error {
	for _, n := range append([]string{op.Type, op.Property, op.Index}, op.Properties...) {
		if n != "" && nameProblem(n) != "" {
			return fmt.Errorf("bad name %q", n)
		}
	}
	return nil
}
