package unlocked

import (
	"errors"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/errs"
)

// raised returns what Run(fn) panicked with (nil: it did not) and its error.
func raised(fn func() error) (value any, err error) {
	defer func() { value = recover() }()
	return nil, Run(fn)
}

func TestRunReturnsWhatFnReturns(t *testing.T) {
	want := errors.New("boom")
	v, err := raised(func() error { return want })
	assert.Nil(t, v)
	assert.Same(t, want, err)
	v, err = raised(func() error { return nil })
	assert.Nil(t, v)
	assert.NoError(t, err)
}

func TestRunRaisesFnsPanicOnTheCaller(t *testing.T) {
	v, _ := raised(func() error { panic("at the worker") })
	assert.Equal(t, "at the worker", v)
}

// A Goexit is seen by no recover: Run must still come back.
func TestRunComesBackFromGoexit(t *testing.T) {
	v, _ := raised(func() error { runtime.Goexit(); return nil })
	err, ok := v.(error)
	require.True(t, ok, "raised %v", v)
	assert.ErrorIs(t, err, errs.ErrInternal)
}

// A fault in fn is a panic when the caller asked for that (the C ABI reads
// Arrow buffers it can check only so far), and kills the process when not.
func TestRunPassesTheFaultSetting(t *testing.T) {
	for _, on := range []bool{true, false} {
		old := debug.SetPanicOnFault(on)
		var inside bool
		_, err := raised(func() error {
			inside = debug.SetPanicOnFault(false)
			return nil
		})
		debug.SetPanicOnFault(old)
		require.NoError(t, err)
		assert.Equal(t, on, inside)
	}
}
