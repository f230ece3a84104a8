// Package memtable: see doc.go.
package memtable
