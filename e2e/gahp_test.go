package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/workflow/client"
)

// gahp SESSION: run rboinc-gahp in $WORK as HTCondor's gridmanager does,
// send it the request lines of the file SESSION one at a time, each after
// the previous one's synchronous reply, and print the transcript: "> "
// and each request, then every reply line. $VAR in a request is replaced
// by the script's variable ($LAST_SERVER_TIME: the server time of the last
// BOINC_QUERY_BATCHES result). Lines starting with "!" drive the session:
//
//	!results N [SECONDS]  send RESULTS until N results came (printed as one
//	                      "S N" and the results sorted by request id: the
//	                      order in which concurrent requests finish varies)
//	!waitr [SECONDS]      wait for the asynchronous "R" (printed "R")
//	!sleep SECONDS        wait
//	!settled BATCH N [SECONDS]  wait until rboinc-retrieve -status shows N
//	                      chains of the batch's group, none running or queued
//	!eof                  close stdin; the process must end with status 0
//
// The banner's and VERSION's build date print as DATE, and a result's
// server time, elapsed and CPU time (checked to have the "%f" shape) as
// TIME, ELAPSED and CPU. An "R" written twice without a RESULTS between
// them fails the script, as does a QUIT whose process does not end with
// status 0.
func cmdGahp(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: gahp SESSION")
	}
	script, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	cmd := exec.Command(filepath.Join(binDir, "rboinc-gahp"))
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = envOf(ts)
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ts.Check(cmd.Start())
	d := &gahpDriver{ts: ts, in: stdin, lines: make(chan string, 1000), out: ts.Stdout()}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
	}()
	// Wait closes the output pipe once the process has exited: only after
	// the last line is read, or a process that answers QUIT and exits at
	// once can lose that answer (seen in CI under load).
	exited := make(chan error, 1)
	go func() {
		<-read
		exited <- cmd.Wait()
	}()
	defer func() {
		cmd.Process.Kill()
		if stderr.Len() > 0 {
			ts.Logf("rboinc-gahp stderr:\n%s", stderr.String())
		}
	}()
	d.record(normalize(d.next(10 * time.Second)))
	for _, line := range strings.Split(string(script), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			f := strings.Fields(line[1:])
			switch f[0] {
			case "results":
				n, _ := strconv.Atoi(f[1])
				d.results(n, seconds(f, 2, 60))
			case "waitr":
				d.waitR(seconds(f, 1, 60))
			case "sleep":
				time.Sleep(seconds(f, 1, 1))
			case "settled":
				n, _ := strconv.Atoi(f[2])
				waitSettled(ts, client.IdentFor(f[1]), n, seconds(f, 3, 120))
			case "eof":
				stdin.Close()
				select {
				case err := <-exited:
					if err != nil {
						ts.Fatalf("rboinc-gahp at end of input: %v", err)
					}
				case <-time.After(30 * time.Second):
					ts.Fatalf("rboinc-gahp did not end at the end of its input")
				}
				return
			default:
				ts.Fatalf("unknown session directive %q", line)
			}
			continue
		}
		req := os.Expand(line, ts.Getenv)
		d.send(req)
		d.record("> " + line)
		word := strings.ToUpper(strings.Fields(req + " x")[0])
		reply := d.next(30 * time.Second)
		d.reply(reply)
		if word == "RESULTS" && reply != d.prefix+"E" {
			d.rCount = 0
			n := d.count(reply)
			for range n {
				d.reply(d.next(10 * time.Second))
			}
		}
		if word == "QUIT" && strings.HasSuffix(reply, "S") {
			select {
			case err := <-exited:
				if err != nil {
					ts.Fatalf("rboinc-gahp after QUIT: %v", err)
				}
			case <-time.After(10 * time.Second):
				ts.Fatalf("rboinc-gahp did not exit after QUIT")
			}
			return
		}
	}
}

func seconds(f []string, i int, def int) time.Duration {
	if len(f) > i {
		n, _ := strconv.Atoi(f[i])
		return time.Duration(n) * time.Second
	}
	return time.Duration(def) * time.Second
}

type gahpDriver struct {
	ts     *testscript.TestScript
	in     io.Writer
	lines  chan string
	out    io.Writer
	rCount int // "R" lines since the last RESULTS
	prefix string
}

func (d *gahpDriver) send(line string) {
	if _, err := io.WriteString(d.in, line+"\n"); err != nil {
		d.ts.Fatalf("writing to rboinc-gahp: %v", err)
	}
	if f := strings.Fields(line); len(f) == 2 && strings.EqualFold(f[0], "RESPONSE_PREFIX") {
		defer func() { d.prefix = f[1] }() // its own S comes under the old one
	}
}

func (d *gahpDriver) record(line string) { fmt.Fprintln(d.out, line) }

// reply records a reply line, normalized, with the script's directory
// written $WORK.
func (d *gahpDriver) reply(line string) {
	if w := d.ts.Getenv("WORK"); w != "" {
		line = strings.ReplaceAll(line, w, "$WORK")
	}
	d.record(normalize(line))
}

// next returns the next line that is not an asynchronous "R".
func (d *gahpDriver) next(limit time.Duration) string {
	deadline := time.After(limit)
	for {
		select {
		case l, ok := <-d.lines:
			if !ok {
				d.ts.Fatalf("rboinc-gahp closed its output")
			}
			if l == d.prefix+"R" {
				d.rCount++
				if d.rCount > 1 {
					d.ts.Fatalf("rboinc-gahp wrote R twice without a RESULTS between")
				}
				continue
			}
			return l
		case <-deadline:
			d.ts.Fatalf("rboinc-gahp did not answer within %v", limit)
		}
	}
}

func (d *gahpDriver) count(reply string) int {
	f := strings.Fields(strings.TrimPrefix(reply, d.prefix))
	if len(f) != 2 || f[0] != "S" {
		d.ts.Fatalf("RESULTS answered %q", reply)
	}
	n, err := strconv.Atoi(f[1])
	d.ts.Check(err)
	return n
}

func (d *gahpDriver) waitR(limit time.Duration) {
	deadline := time.After(limit)
	for d.rCount == 0 {
		select {
		case l, ok := <-d.lines:
			if !ok {
				d.ts.Fatalf("rboinc-gahp closed its output")
			}
			if l != d.prefix+"R" {
				d.ts.Fatalf("rboinc-gahp wrote %q unasked", l)
			}
			d.rCount++
		case <-deadline:
			d.ts.Fatalf("no R within %v", limit)
		}
	}
	d.record("R")
}

// results polls RESULTS until n results came, then prints them as one.
func (d *gahpDriver) results(n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	var got []string
	for len(got) < n {
		if time.Now().After(deadline) {
			d.ts.Fatalf("%d of %d results within %v: %q", len(got), n, limit, got)
		}
		d.send("RESULTS")
		k := d.count(d.next(10 * time.Second))
		d.rCount = 0
		for range k {
			got = append(got, strings.TrimPrefix(d.next(10*time.Second), d.prefix))
		}
		if len(got) < n {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if len(got) > n {
		d.ts.Fatalf("%d results, want %d: %q", len(got), n, got)
	}
	sort.SliceStable(got, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.Fields(got[i])[0])
		b, _ := strconv.Atoi(strings.Fields(got[j])[0])
		return a < b
	})
	d.record("> RESULTS")
	d.record(d.prefix + "S " + strconv.Itoa(n))
	for _, l := range got {
		if m := serverTimeRE.FindStringSubmatch(l); m != nil {
			d.ts.Setenv("LAST_SERVER_TIME", m[2])
		}
		d.reply(d.prefix + l)
	}
}

var (
	bannerRE     = regexp.MustCompile(`^(S )?\$GahpVersion: 1\.0\.2 [A-Z][a-z]{2} \d\d \d{4} BOINC\\ rboinc\\ GAHP \$$`)
	serverTimeRE = regexp.MustCompile(`^(\S*\d+ NULL )(\d+\.\d{6})( |$)`)
	outcomeRE    = regexp.MustCompile(`^(\S*\d+ NULL -?\d+ )\d+\.\d{6} \d+\.\d{6}$`)
)

// normalize prints what varies between runs as placeholders.
func normalize(l string) string {
	if m := bannerRE.FindStringSubmatch(l); m != nil {
		return m[1] + `$GahpVersion: 1.0.2 DATE BOINC\ rboinc\ GAHP $`
	}
	if m := outcomeRE.FindStringSubmatch(l); m != nil {
		return m[1] + "ELAPSED CPU"
	}
	if m := serverTimeRE.FindStringSubmatchIndex(l); m != nil {
		return l[:m[3]] + "TIME" + l[m[5]:]
	}
	return l
}

// waitSettled polls rboinc-retrieve -status until group has n chains, none
// of them running or queued.
func waitSettled(ts *testscript.TestScript, group string, n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	var last string
	for look := 0; time.Now().Before(deadline); look++ {
		cmd := exec.Command(filepath.Join(binDir, "rboinc-retrieve"), "-group", group, "-status")
		cmd.Env = envOf(ts)
		out, _ := cmd.CombinedOutput()
		last = string(out)
		lines, settled := 0, 0
		for _, l := range strings.Split(strings.TrimSpace(last), "\n") {
			f := strings.Split(l, "\t")
			if len(f) < 3 {
				continue
			}
			lines++
			if f[2] != "running" && f[2] != "queued" {
				settled++
			}
		}
		if lines == n && settled == n {
			return
		}
		time.Sleep(statusPause(look))
	}
	ts.Fatalf("group %s not settled with %d chains after %v; last status:\n%s", group, n, limit, last)
}

// rbcount DB QUERY N: the SQLite database DB (or "boinc": the stand-in's
// BOINC database, wherever it is) answers QUERY with N.
func cmdCount(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: rbcount boinc|state|SQLITE-FILE QUERY N")
	}
	var got string
	switch args[0] {
	case "boinc":
		db := standinDB(ts)
		defer db.Close()
		ts.Check(db.QueryRow(args[1]).Scan(&got))
	case "state":
		// The server's state wherever rboinc.json keeps it (SQLite or
		// MariaDB), the query in SQLite's words as the store writes them.
		db, err := engine.OpenState(context.Background(), ts.Getenv("ROOT"))
		ts.Check(err)
		defer db.Close()
		ts.Check(db.SQL().QueryRow(args[1]).Scan(&got))
	default:
		db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
		ts.Check(err)
		defer db.Close()
		ts.Check(db.QueryRow(args[1]).Scan(&got))
	}
	if (got == args[2]) == neg {
		ts.Fatalf("%s: %s, want %s", args[1], got, args[2])
	}
}
