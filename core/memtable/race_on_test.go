//go:build race

package memtable

// raceEnabled: the race detector's sync.Pool drops items at random, so
// allocation counts vary.
const raceEnabled = true
