package main

import "testing"

// TestDBPool: the long run sizes MariaDB's buffer pool for its gigabytes,
// the short run keeps the test servers' default, and the flag wins over both.
func TestDBPool(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "2G"},
		{[]string{"-short"}, ""},
		{[]string{"-short", "-db-pool", "512M"}, "512M"},
		{[]string{"-db-pool", "4G"}, "4G"},
	} {
		o, err := parseOptions(append([]string{"-bin", "b", "-work", "w"}, c.args...))
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if o.dbPool != c.want {
			t.Errorf("%q: buffer pool %q, want %q", c.args, o.dbPool, c.want)
		}
	}
}
