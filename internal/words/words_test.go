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

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 3_200_000: "3.2 MB", 5_000_000_000_000: "5.0 TB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
