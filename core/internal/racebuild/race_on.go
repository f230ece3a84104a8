//go:build race

// Package racebuild tells tests whether the race detector is on: under
// it, sync.Pool drops items at random and allocation counts vary, so
// tests that count allocations skip. It owns nothing else.
package racebuild

// Enabled reports whether the binary is built with the race detector.
const Enabled = true
