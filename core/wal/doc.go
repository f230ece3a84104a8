// Package wal: see doc.go.
package wal
