package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
)

// procCPU is the processor time (user + system) a process has used.
func procCPU(b testing.TB, pid int) time.Duration {
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(s[strings.LastIndexByte(string(s), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRetrieveSmallFiles: a retrieval of 900 small result files (a
// few kB) from a real rboinc-server process, a request per file and in
// bulk, alternated in each iteration (-keep, so the same files each
// time). Reported: processor time per file of the client (this process)
// and of the server process.
func BenchmarkRetrieveSmallFiles(b *testing.B) {
	v := newEnv(b)
	files := v.finishedGroup("alice", "g", 300)
	sv, pid := standalone(b, v, nil)
	c, err := client.New(sv.srv.URL+"/rboinc_cgi", v.tokens["alice"])
	if err != nil {
		b.Fatal(err)
	}
	var cli, srv [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, perFile := range []bool{true, false} {
			if i%2 == 1 {
				perFile = !perFile // alternate which goes first
				k = 1 - k
			}
			dir := filepath.Join(b.TempDir(), "r")
			c0, s0 := selfCPU(), procCPU(b, pid)
			rep, err := c.Retrieve(context.Background(), client.RetrieveInput{Group: "g", Dir: dir, Keep: true, PerFile: perFile})
			c1, s1 := selfCPU(), procCPU(b, pid)
			if err != nil || rep.Retrieved != len(files) {
				b.Fatalf("retrieved %+v of %d: %v", rep, len(files), err)
			}
			cli[k] += c1 - c0
			srv[k] += s1 - s0
			os.RemoveAll(dir)
		}
	}
	n := float64(b.N * len(files))
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / n }
	b.ReportMetric(us(cli[0]), "perfile-client-us/file")
	b.ReportMetric(us(srv[0]), "perfile-server-us/file")
	b.ReportMetric(us(cli[1]), "bulk-client-us/file")
	b.ReportMetric(us(srv[1]), "bulk-server-us/file")
}
