package par

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDoRunsEveryIterationOnceAndReportsErrorsByIndex(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 8} {
		var mu sync.Mutex
		seen := map[int]int{}
		errs := Do(100, workers, func(w, i int) error {
			mu.Lock()
			seen[i]++
			mu.Unlock()
			if w < 0 || w >= max(workers, 1) {
				return errors.New("worker out of range")
			}
			return nil
		})
		require.Nil(t, errs, "workers=%d", workers)
		require.Len(t, seen, 100)
		for i, n := range seen {
			assert.Equal(t, 1, n, "iteration %d", i)
		}
	}
	boom := errors.New("boom")
	errs := Do(5, 2, func(_, i int) error {
		switch i {
		case 1:
			return boom
		case 3:
			panic("bad input")
		}
		return nil
	})
	require.Len(t, errs, 5)
	assert.ErrorIs(t, errs[1], boom)
	assert.ErrorContains(t, errs[3], "bad input")
	assert.NoError(t, errs[0])
	assert.Nil(t, Do(0, 4, func(int, int) error { return boom }))
}
