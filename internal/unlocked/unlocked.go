// Package unlocked runs the body of a call from C on a goroutine of its
// own. A call from C into Go runs on a goroutine locked to the calling C
// thread, and each time such a goroutine waits for another (the workers
// of a parallel decode, a device read ahead, a row group written behind)
// its thread sleeps and must be woken by a hand-off of its own, two
// context switches a wait: a filtered scan of 10 M rows took 800 of them
// and kept 1.4 cores of two busy. A goroutine of its own waits as any
// other; the call then pays one hand-off, so Run is for calls that wait
// many times, not for a point read or a small insert.
//
// It must not run code that calls C functions which need the caller's
// thread (Arrow release and stream callbacks): those stay with the caller.
package unlocked

import (
	"fmt"
	"runtime/debug"

	"github.com/arcadego/arcadego/core/errs"
)

// Run runs fn on a goroutine of its own, with the caller's setting of
// debug.SetPanicOnFault, and waits for it. A panic in fn is raised again
// on the caller's goroutine, with its value, for the caller's recover; an
// fn that ends without returning or a value to recover (runtime.Goexit,
// panic(nil) under GODEBUG=panicnil=1) raises an ErrInternal error.
func Run(fn func() error) error {
	onFault := debug.SetPanicOnFault(false)
	debug.SetPanicOnFault(onFault)
	type outcome struct {
		err      error
		panicked bool
		value    any
	}
	done := make(chan outcome, 1)
	go func() {
		debug.SetPanicOnFault(onFault)
		var o outcome
		returned := false
		// Sent however fn ends: the caller must never wait for nothing.
		defer func() {
			if !returned {
				o = outcome{panicked: true, value: recover()}
				if o.value == nil {
					o.value = fmt.Errorf("the call ended without returning: %w", errs.ErrInternal)
				}
			}
			done <- o
		}()
		o.err = fn()
		returned = true
	}()
	o := <-done
	if o.panicked {
		panic(o.value)
	}
	return o.err
}

// If runs fn unlocked (Run) when wait says the call waits many times, else
// on the caller's goroutine, where a short call is cheaper.
func If(wait bool, fn func() error) error {
	if !wait {
		return fn()
	}
	return Run(fn)
}
