package schema

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

func TestParseAlterTTL(t *testing.T) {
	ops, err := ParseScript("ALTER TYPE T SET TTL 30d; alter type `x y` set ttl 90m; ALTER TYPE T SET TTL NONE; ALTER TYPE T SET TTL 500ms")
	require.NoError(t, err)
	assert.Equal(t, []Op{
		{Kind: SetTTL, Type: "T", TTL: 30 * 86400e9},
		{Kind: SetTTL, Type: "x y", TTL: 90 * 60e9},
		{Kind: SetTTL, Type: "T"},
		{Kind: SetTTL, Type: "T", TTL: 500e6},
	}, ops)
	for _, bad := range []string{"ALTER TYPE T SET TTL", "ALTER TYPE T SET TTL 30", "ALTER TYPE T SET TTL 0d",
		"ALTER TYPE T SET TTL 30y", "ALTER TYPE T SET TTL d30", "ALTER TYPE T TTL 3d", "ALTER T SET TTL 3d",
		"ALTER TYPE T SET TTL 99999999999999999w", "ALTER TYPE T SET TTL 6M", "ALTER TYPE T SET TTL 3D"} {
		_, err := ParseScript(bad)
		require.ErrorIs(t, err, errs.ErrInvalidArgument, bad)
	}
}

func TestSetTTL(t *testing.T) {
	ch := Empty().Edit()
	require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "T"}))
	require.NoError(t, ch.Apply(Op{Kind: SetTTL, Type: "T", TTL: 3600e9}))
	require.NoError(t, ch.Apply(Op{Kind: CreateType, Type: "I"}))
	require.NoError(t, ch.Apply(Op{Kind: SetTime, Type: "I"}))
	cat := ch.Catalog()
	ty, _ := cat.Type("T")
	assert.Equal(t, int64(3600e9), ty.TTL)

	ch = cat.Edit()
	require.ErrorIs(t, ch.Apply(Op{Kind: SetTTL, Type: "I", TTL: 1e9}), errs.ErrInvalidArgument, "plain integer times")
	require.ErrorIs(t, ch.Apply(Op{Kind: SetTime, Type: "T"}), errs.ErrInvalidArgument, "a TTL type's first insert of plain integers")
	require.NoError(t, ch.Apply(Op{Kind: SetTime, Type: "T", TimeUnit: "ms", TimeZone: "UTC"}))
	require.ErrorIs(t, ch.Apply(Op{Kind: SetTTL, Type: "T", TTL: -1}), errs.ErrInvalidArgument)
	require.ErrorIs(t, ch.Apply(Op{Kind: SetTTL, Type: "Nope", TTL: 1}), errs.ErrNotFound)

	// The snapshot keeps it (format 2), and a catalog without TTLs is
	// written as format 1, byte for byte as before.
	snap := AppendCatalog(nil, ch.Catalog())
	assert.Equal(t, byte(catalogFormatTTL), snap[4])
	back, err := DecodeCatalog(snap)
	require.NoError(t, err)
	ty, _ = back.Type("T")
	assert.Equal(t, int64(3600e9), ty.TTL)
	ch = back.Edit()
	require.NoError(t, ch.Apply(Op{Kind: SetTTL, Type: "T"}))
	assert.Equal(t, byte(catalogFormat), AppendCatalog(nil, ch.Catalog())[4])

	// And the log's encoding of the op.
	ops := []Op{{Kind: SetTTL, Type: "T", TTL: 7 * 86400e9}}
	dec, rest, err := DecodeOps(AppendOps(nil, ops))
	require.NoError(t, err)
	assert.Empty(t, rest)
	assert.Equal(t, ops, dec)
}
