package engine

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcadego/arcadego/core/wal"
)

// TestLogStatsDuringClose: LogStats may run while another goroutine
// closes the database (the race detector checks the log handle).
func TestLogStatsDuringClose(t *testing.T) {
	db, _ := openDisk(t, Options{AutoCreate: true})
	require.NoError(t, db.Insert("A", "d", int64Tablet([]int64{1}, map[string][]int64{"k": {1}})))
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for range 1000 {
			s := db.LogStats()
			assert.True(t, s == wal.Stats{} || s.Appends >= 1, "zero once closed, else counting the insert: %+v", s)
		}
	}()
	close(start)
	require.NoError(t, db.Close())
	wg.Wait()
}
