package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 chains"}, {1, "1 chain"}, {2, "2 chains"}, {-1, "-1 chain"}} {
		if got := Count(c.n, "chain", "chains"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
		if got := Count64(int64(c.n), "chain", "chains"); got != c.want {
			t.Errorf("Count64(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
