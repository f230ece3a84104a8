package segment

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeviceFilterHasEveryNameAndFewOthers(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000, 100_000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("plant-%02d/dev-%07d", i%100, i)
		}
		f := newDeviceFilter(names)
		for _, name := range names {
			require.True(t, f.mayHave(name), "%d names: %q missing", n, name)
		}
		const absent = 100_000
		passed := 0
		for i := range absent {
			if f.mayHave(fmt.Sprintf("plant-%02d/other-%07d", i%100, i)) {
				passed++
			}
		}
		// About 1% with 10 bits a name; the seed is the process's, so
		// the bound leaves room.
		if n > 0 {
			assert.Less(t, passed, absent*3/100, "%d names", n)
		} else {
			assert.Zero(t, passed, "an empty filter")
		}
	}
}
