package schema

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

func TestValidateName(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		problem string // "" when valid
	}{
		{"ascii", "Sensor_1", ""},
		{"spaces and punctuation", "a b.c[d],e`f", ""},
		{"unicode", "Größe 温度", ""},
		{"max length", strings.Repeat("x", MaxNameLen), ""},
		{"max length multibyte", strings.Repeat("é", MaxNameLen/2), ""},
		{"keyword-like", "time2", ""},
		{"empty", "", "empty"},
		{"too long", strings.Repeat("x", MaxNameLen+1), "longer than 256"},
		{"too long multibyte", strings.Repeat("é", MaxNameLen/2) + "x", "longer than 256"},
		{"invalid utf8", "a\xffb", "not valid UTF-8"},
		{"newline", "a\nb", "control character U+000A"},
		{"nul", "a\x00", "control character U+0000"},
		{"del", "a\x7f", "control character U+007F"},
		{"c1 control", "a\u0085", "control character U+0085"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateName("type", tc.in)
			if tc.problem == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "invalid type name")
			assert.Contains(t, err.Error(), tc.problem)
		})
	}
}

func TestValidateNameQuotesLongNamesShort(t *testing.T) {
	err := ValidateName("property", strings.Repeat("y", 100000))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 300)
	assert.Contains(t, err.Error(), "(100000 bytes)")
}

func TestParsePropertyType(t *testing.T) {
	cases := []struct {
		in   string
		want PropertyType
	}{
		{"BOOLEAN", Boolean}, {"bool", Boolean},
		{"INT32", Int32}, {"Integer", Int32}, {"int", Int32},
		{"INT64", Int64}, {"long", Int64}, {"BIGINT", Int64},
		{"FLOAT", Float}, {"float32", Float}, {"REAL", Float},
		{"DOUBLE", Double}, {"FLOAT64", Double},
		{"STRING", String}, {"varchar", String}, {"Text", String},
		{"BINARY", Binary}, {"bytes", Binary},
		{"TIMESTAMP", Timestamp}, {"datetime", Timestamp},
		{"DATE", Date}, {"date", Date},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParsePropertyType(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, bad := range []string{"", "INT16", "LIST", "INT64 ", "BLOB", strings.Repeat("INT", 100)} {
		t.Run("reject "+bad, func(t *testing.T) {
			_, err := ParsePropertyType(bad)
			assert.ErrorIs(t, err, errs.ErrInvalidArgument)
		})
	}
}

func TestPropertyTypeString(t *testing.T) {
	for pt := Boolean; pt <= Date; pt++ {
		back, err := ParsePropertyType(pt.String())
		require.NoError(t, err, pt.String())
		assert.Equal(t, pt, back)
		assert.True(t, pt.Valid())
	}
	assert.Equal(t, "PropertyType(0)", PropertyType(0).String())
	assert.Equal(t, "PropertyType(10)", PropertyType(10).String())
	assert.False(t, PropertyType(0).Valid())
	assert.False(t, PropertyType(10).Valid())
}
