package unlocked

import (
	"bytes"
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

// goroutine returns the id of the calling goroutine, from its stack's
// first line ("goroutine 7 [running]:").
func goroutine() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(buf[:bytes.IndexByte(buf, '[')])
}

// TestIfRunsUnlockedOnlyWhenAsked: If(true) runs fn on a goroutine of its
// own (as Run), If(false) on the caller's; both return fn's error.
func TestIfRunsUnlockedOnlyWhenAsked(t *testing.T) {
	want := errors.New("boom")
	caller := goroutine()
	for _, wait := range []bool{false, true} {
		var ran string
		err := If(wait, func() error {
			ran = goroutine()
			return want
		})
		assert.Same(t, want, err)
		assert.Equal(t, !wait, ran == caller, "wait=%v: ran on the caller's goroutine", wait)
	}
}
