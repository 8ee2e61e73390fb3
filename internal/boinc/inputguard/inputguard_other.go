//go:build !unix

package inputguard

import "os"

// run: without Unix process groups there is no guard (boinc refuses to
// start create_work there).
func run(string) int {
	os.Stderr.WriteString("create_work guard: needs Unix process groups\n")
	return 2
}
