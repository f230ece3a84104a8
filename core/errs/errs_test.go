package errs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCodeMapsEveryKindThroughWrapping(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code int
	}{
		{"nil", nil, CodeOK},
		{"invalid", ErrInvalidArgument, CodeInvalidArgument},
		{"not found wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", ErrNotFound)), CodeNotFound},
		{"exists", ErrAlreadyExists, CodeAlreadyExists},
		{"conflict", ErrConflict, CodeConflict},
		{"io", ErrIO, CodeIO},
		{"closed", ErrClosed, CodeClosed},
		{"corrupt", ErrCorrupt, CodeCorrupt},
		{"canceled", ErrCanceled, CodeCanceled},
		{"internal", ErrInternal, CodeInternal},
		{"unknown kind", errors.New("boom"), CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.code, Code(c.err)) })
	}
}
