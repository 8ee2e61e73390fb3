package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sample is the server's memory and open descriptors at one moment.
type sample struct {
	seg   int           // the driver's life it was taken in
	at    time.Duration // since the start
	rss   int64         // bytes
	fds   int           // open descriptors
	files int           // of which not sockets (files, pipes, ...)
}

// sampleLoop samples the server process every -sample.
func (s *soak) sampleLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.o.sample):
		}
		pid := s.server.pid()
		if pid == 0 {
			continue
		}
		rss := vmRSS(pid)
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if rss == 0 || err != nil {
			continue
		}
		s.mu.Lock()
		files := 0
		for _, e := range ents {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && !strings.HasPrefix(l, "socket:") {
				files++
			}
		}
		x := sample{seg: s.seg, at: time.Since(s.started), rss: rss, fds: len(ents), files: files}
		s.samples = append(s.samples, x)
		s.mu.Unlock()
		s.j.add(rec{T: "sample", Seg: x.seg, Steps: int(x.at), RSS: x.rss, FDs: x.fds, NFile: x.files})
	}
}

func vmRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fs := strings.Fields(v)
			if len(fs) == 2 {
				n, _ := strconv.ParseInt(fs[0], 10, 64)
				return n * 1024
			}
		}
	}
	return 0
}

// Growth below these is noise (a GC cycle, a connection more), not a leak.
// Sockets swing most with the requests in flight (a client connection and
// a database connection each), so all descriptors get a wider floor than
// those that are not sockets; a leak of one per request is thousands over
// a run and passes both.
const (
	rssFloor  = 16 << 20
	fileFloor = 8
	fdFloor   = 48
)

// checkFlat reports the server's memory and descriptors early and late in
// the run, and a problem for each that grew.
func (s *soak) checkFlat() {
	s.mu.Lock()
	ss := slices.Clone(s.samples)
	s.mu.Unlock()
	// A run resumed after a kill of the whole run is judged by the
	// driver's lives (each a life of the server too): the server started
	// again is a new process, its figures no continuation of the last's.
	segs := samplesBySeg(ss)
	for _, seg := range segs {
		prefix := ""
		if len(segs) > 1 {
			prefix = fmt.Sprintf("life %d of the driver: ", seg[0].seg+1)
		}
		if len(seg) < 10 {
			fmt.Printf("%smemory and descriptors: %d samples, too few to judge (longer run or shorter -sample)\n", prefix, len(seg))
			continue
		}
		line, problems := growth(seg)
		fmt.Println(prefix + line)
		for _, p := range problems {
			s.problem("%s%s", prefix, p)
		}
	}
}

// growth compares the last quarter of the samples with the quarter after
// the first fifth (the warm-up); a figure grew when it is more than 20%
// and more than its noise floor above. Memory compares medians. Open
// descriptors compare lower quartiles: each client request in flight holds
// a connection (and a database connection), so the count swings between
// about 25 and 70 with the load of the moment, and a late window busier
// than the early one moves its median without any leak; the lower
// quartile is what the server holds with few requests in flight, and a
// leak (a descriptor per request is thousands over a run) raises it too.
func growth(ss []sample) (line string, problems []string) {
	warm := len(ss) / 5
	q := (len(ss) - warm) / 4
	first, last := ss[warm:warm+q], ss[len(ss)-q:]
	at := func(xs []sample, f func(sample) int64, frac float64) int64 {
		v := make([]int64, len(xs))
		for i, x := range xs {
			v[i] = f(x)
		}
		slices.Sort(v)
		return v[int(frac*float64(len(v)))]
	}
	rss := func(x sample) int64 { return x.rss }
	fds := func(x sample) int64 { return int64(x.fds) }
	r0, r1 := at(first, rss, 0.5), at(last, rss, 0.5)
	files := func(x sample) int64 { return int64(x.files) }
	f0, f1 := at(first, fds, 0.25), at(last, fds, 0.25)
	n0, n1 := at(first, files, 0.25), at(last, files, 0.25)
	line = fmt.Sprintf("server memory (VmRSS median): %.1f MiB early, %.1f MiB late; open descriptors (lower quartile): %d early, %d late; of which not sockets: %d early, %d late", mib(r0), mib(r1), f0, f1, n0, n1)
	if float64(r1) > 1.2*float64(r0) && r1-r0 > rssFloor {
		problems = append(problems, fmt.Sprintf("the server's memory grew: VmRSS median %.1f MiB after the warm-up, %.1f MiB at the end", mib(r0), mib(r1)))
	}
	if float64(f1) > 1.2*float64(f0) && f1-f0 > fdFloor {
		problems = append(problems, fmt.Sprintf("the server's open descriptors grew: lower quartile %d after the warm-up, %d at the end", f0, f1))
	}
	if float64(n1) > 1.2*float64(n0) && n1-n0 > fileFloor {
		problems = append(problems, fmt.Sprintf("the server's open files (descriptors not sockets) grew: lower quartile %d after the warm-up, %d at the end", n0, n1))
	}
	return line, problems
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
