package harness

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		unit string
		want string
	}{{1, "steps", "1 step"}, {2, "steps", "2 steps"}, {0, "steps", "0 steps"}, {1, "retries", "1 retry"},
		{3, "retries", "3 retries"}, {1, "end states", "1 end state"}, {1, "", "1"}} {
		if got := Count(c.n, c.unit); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.unit, got, c.want)
		}
	}
}
