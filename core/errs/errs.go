// Package errs owns the error kinds shared by every arcadego package.
//
// Each kind is a sentinel error. Packages wrap a kind with context using
// fmt.Errorf("...: %w", errs.ErrNotFound) and callers test it with errors.Is.
// The C ABI maps each kind to one status code (see Code), so a new kind must
// also get a code. This package must not import any other arcadego package.
package errs

import "errors"

// The error kinds. Messages are short because every use wraps them with the
// name of the offending object.
var (
	ErrInvalidArgument = errors.New("invalid argument")
	ErrNotFound        = errors.New("not found")
	ErrAlreadyExists   = errors.New("already exists")
	ErrConflict        = errors.New("conflict")
	ErrClosed          = errors.New("closed")
	ErrCorrupt         = errors.New("corrupt")
	ErrIO              = errors.New("i/o error")
	ErrCanceled        = errors.New("canceled")
	ErrInternal        = errors.New("internal error")
)

// Status codes of the C ABI, one per kind. OK is 0; values are stable.
const (
	CodeOK              = 0
	CodeInvalidArgument = 1
	CodeNotFound        = 2
	CodeAlreadyExists   = 3
	CodeConflict        = 4
	CodeIO              = 5
	CodeClosed          = 6
	CodeCorrupt         = 7
	CodeCanceled        = 8
	CodeInternal        = 9
)

var codes = []struct {
	kind error
	code int
}{
	{ErrInvalidArgument, CodeInvalidArgument},
	{ErrNotFound, CodeNotFound},
	{ErrAlreadyExists, CodeAlreadyExists},
	{ErrConflict, CodeConflict},
	{ErrIO, CodeIO},
	{ErrClosed, CodeClosed},
	{ErrCorrupt, CodeCorrupt},
	{ErrCanceled, CodeCanceled},
	{ErrInternal, CodeInternal},
}

// Code returns the C status code for err: CodeOK for nil, the code of the
// first kind err wraps, and CodeInternal for an error of no known kind.
func Code(err error) int {
	if err == nil {
		return CodeOK
	}
	for _, c := range codes {
		if errors.Is(err, c.kind) {
			return c.code
		}
	}
	return CodeInternal
}
