package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
	filemd5 "github.com/rboinc/rboinc/internal/md5sum"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

const mib = 1 << 20

func mibs(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/mib) }

// stageHash: the client's and the server's MD5 against md5sum, and cp of
// the same bytes (used as the baseline of the data paths below).
func (b *bench) stageHash() error {
	big := b.path("big.bin")
	if err := writeRandom(big, b.sz.Big, 1); err != nil {
		return err
	}
	md5sum, _, err := best(3, func() (time.Duration, error) {
		r, err := run(b.ctx, cmdSpec{Name: "md5sum", Args: []string{big}})
		return r.Wall, err
	})
	if err != nil {
		return err
	}
	hashWith := func(fn func(string) (string, int64, error)) (time.Duration, error) {
		d, _, err := best(3, func() (time.Duration, error) {
			t0 := time.Now()
			_, n, err := fn(big)
			if err == nil && n != b.sz.Big {
				err = fmt.Errorf("hashed %d bytes of %d", n, b.sz.Big)
			}
			return time.Since(t0), err
		})
		return d, err
	}
	cli, err := hashWith(client.HashFile)
	if err != nil {
		return err
	}
	srv, err := hashWith(filemd5.File)
	if err != nil {
		return err
	}
	cp, _, err := best(2, func() (time.Duration, error) {
		r, err := run(b.ctx, cmdSpec{Name: "cp", Args: []string{big, big + ".copy"}})
		os.Remove(big + ".copy")
		return r.Wall, err
	})
	if err != nil {
		return err
	}
	b.md5Time, b.cpTime = md5sum, cp
	cr, sr := float64(md5sum)/float64(cli), float64(md5sum)/float64(srv)
	b.add(row{
		Target:   "hashing runs at >= 80% of md5sum's speed",
		Measured: fmt.Sprintf("client %s, server %s (%s file, fastest of 3)", mbps(b.sz.Big, cli), mbps(b.sz.Big, srv), mibs(b.sz.Big)),
		Baseline: fmt.Sprintf("md5sum %s; cp %s", mbps(b.sz.Big, md5sum), mbps(b.sz.Big, cp)),
		Ratio:    fmt.Sprintf("%.0f%% / %.0f%% of md5sum", 100*cr, 100*sr),
		Verdict:  verdict(cr >= 0.8 && sr >= 0.8),
		Command:  "client.HashFile and the server's md5sum.File (one function since issue 29) and md5sum FILE on the same file",
	})
	return nil
}

// stageUploadBig: one chain whose input is the large file, through the
// real client and server; resident memory of both.
func (b *bench) stageUploadBig() error {
	big := b.path("big.bin")
	if err := resetPeak(b.srv.pid()); err != nil {
		return fmt.Errorf("resetting the server's peak memory: %w", err)
	}
	r, rep, err := b.submit("-group", "big", "-name", "b1", "-num_steps", "1", "-coor_file", big, "-vel_file", b.path("v.vel"))
	if err != nil {
		return err
	}
	_, peak, err := procMem(b.srv.pid())
	if err != nil {
		return err
	}
	if rep.UploadedBytes < b.sz.Big || len(rep.Chains) != 1 {
		return fmt.Errorf("uploaded %d bytes for a %d-byte file", rep.UploadedBytes, b.sz.Big)
	}
	b.bigWU = rep.Chains[0].FirstWU
	base := 2*b.md5Time + b.cpTime
	b.add(row{
		Target:   fmt.Sprintf("uploading a %s file keeps each process under 64 MiB resident", mibs(b.sz.Big)),
		Measured: fmt.Sprintf("rboinc-submit %s, server peak %s; whole submission %s (%s)", mibs(r.MaxRSS), mibs(peak), ms(r.Wall), mbps(b.sz.Big, r.Wall)),
		Baseline: fmt.Sprintf("md5sum + cp + md5sum of the same bytes: %s", ms(base)),
		Ratio:    ratio(r.Wall, base) + " of the baseline time",
		Verdict:  verdict(r.MaxRSS < 64*mib && peak < 64*mib),
		Command:  "rboinc-submit -app_name langevin -group big -name b1 -coor_file BIG -vel_file V",
	})
	return nil
}

// stageRetrieveBig: the large file comes back as a result (the hook takes
// it out of the upload hierarchy) and is retrieved; resident memory of
// both sides, and curl from a plain file server as the time baseline.
func (b *bench) stageRetrieveBig() error {
	big := b.path("big.bin")
	paths, err := b.outputs(b.bigWU, 0, 1)
	if err != nil {
		return err
	}
	os.Remove(paths[0])
	if err := os.Link(big, paths[0]); err != nil {
		return err
	}
	t0 := time.Now()
	if err := engine.Hook(b.ctx, b.eng.Root, boinc.HookCall{WUName: b.bigWU, WUID: 1, Files: paths}, b.eng.Log); err != nil {
		return err
	}
	if err := b.waitRecorded([]string{b.bigWU}); err != nil {
		return err
	}
	ingest := time.Since(t0)
	b.add(row{
		Target:   fmt.Sprintf("hook: a %s output is taken out of the upload hierarchy (hard-linked, hashed, synced)", mibs(b.sz.Big)),
		Measured: fmt.Sprintf("%s (%s)", ms(ingest), mbps(b.sz.Big, ingest)),
		Baseline: fmt.Sprintf("md5sum: %s", ms(b.md5Time)),
		Ratio:    ratio(ingest, b.md5Time),
		Verdict:  "info",
		Command:  "engine.Hook (in-process: spooled, then taken in by the server's creator) for the chain's work unit, until its step is recorded",
	})
	results := filepath.Join(b.srv.root, "results", strings.ToUpper(benchUser)+"_big")
	fs, err := startFileServer(results)
	if err != nil {
		return err
	}
	defer fs.close()
	curlOut := b.path("big.curl")
	curl, err := run(b.ctx, cmdSpec{Name: "curl", Args: []string{"-s", "-S", "--fail", "-o", curlOut, fs.base + "/" + b.bigWU + "_0"}})
	if err != nil {
		return err
	}
	durable, err := run(b.ctx, cmdSpec{Name: "sync", Args: []string{"-f", curlOut}})
	os.Remove(curlOut)
	if err != nil {
		return err
	}
	if err := resetPeak(b.srv.pid()); err != nil {
		return err
	}
	into := b.path("dl-big")
	r, rep, err := b.retrieve("-group", "big", "-into", into)
	if err != nil {
		return err
	}
	_, peak, err := procMem(b.srv.pid())
	if err != nil {
		return err
	}
	os.RemoveAll(into)
	os.Remove(big)
	if rep.Retrieved != 3 {
		return fmt.Errorf("retrieved %d files of 3", rep.Retrieved)
	}
	b.add(row{
		Target:   fmt.Sprintf("retrieving a %s file keeps each process under 64 MiB resident", mibs(b.sz.Big)),
		Measured: fmt.Sprintf("rboinc-retrieve %s, server peak %s; %s (%s)", mibs(r.MaxRSS), mibs(peak), ms(r.Wall), mbps(b.sz.Big, r.Wall)),
		Baseline: fmt.Sprintf("curl from a plain file server: %s (%s); then made durable (sync -f): %s", ms(curl.Wall), mbps(b.sz.Big, curl.Wall), ms(curl.Wall+durable.Wall)),
		Ratio:    fmt.Sprintf("%s of curl; %s of curl + sync", ratio(r.Wall, curl.Wall), ratio(r.Wall, curl.Wall+durable.Wall)),
		Verdict:  verdict(r.MaxRSS < 64*mib && peak < 64*mib),
		Command:  "rboinc-retrieve -group big -into DIR",
	})
	return nil
}

// stageSubmit: many chains sharing most inputs (each its own coordinates;
// velocities, run parameters and licence shared) in one command, against
// the stand-in's create_work --stdin alone for the same work units.
func (b *bench) stageSubmit() error {
	n := b.sz.Submit
	// Velocities of their own: a content the server has not seen yet.
	vel := b.path("s1k.vel")
	if err := os.WriteFile(vel, []byte("0.5 0 0\n"), 0o644); err != nil {
		return err
	}
	// Three rounds of each, new contents every round, best of three (and
	// the spread, which a single round hides).
	const rounds = 3
	var ours, alone []time.Duration
	var first runResult
	var firstRep submitReport
	for r := 0; r < rounds; r++ {
		group := "s1k"
		if r > 0 {
			group = fmt.Sprintf("s1k%d", r+1)
		}
		jobs, err := b.jobsFile(group, fmt.Sprintf("c%d_", r), n, true)
		if err != nil {
			return err
		}
		res, rep, err := b.submit("-group", group, "-jobs", jobs, "-vel_file", vel, "-num_steps", "3")
		if err != nil {
			return err
		}
		if len(rep.Chains) != n {
			return fmt.Errorf("%d chains created of %d", len(rep.Chains), n)
		}
		if r == 0 {
			first, firstRep = res, rep
		}
		ours = append(ours, res.Wall)
		for _, c := range rep.Chains {
			b.s1kWUs = append(b.s1kWUs, c.FirstWU)
		}
	}
	for r := 0; r < rounds; r++ {
		cw, err := b.createWorkAlone(b.s1kWUs[:n], fmt.Sprintf("cw%d", r))
		if err != nil {
			return err
		}
		alone = append(alone, cw)
	}
	best, cw := slices.Min(ours), slices.Min(alone)
	b.cwAlone = cw
	cmd := fmt.Sprintf("rboinc-submit -app_name langevin -group s1k -jobs JOBS(%d lines) -vel_file V -num_steps 3", n)
	b.add(row{
		Target:   fmt.Sprintf("%s chains sharing most inputs, one command: >= 500 chains/s end to end", count(n)),
		Measured: fmt.Sprintf("%.0f chains/s (best of %d: %s; rounds %s; client CPU %s)", rate(n, best), rounds, ms(best), spread(ours), ms(first.CPU)),
		Baseline: fmt.Sprintf("create_work --stdin alone: %.0f work units/s (best of %d: %s; rounds %s)", rate(n, cw), rounds, ms(cw), spread(alone)),
		Ratio:    fmt.Sprintf("%.2fx of the target rate", rate(n, best)/500),
		Verdict:  verdict(rate(n, best) >= 500),
		Command:  cmd,
	})
	b.add(row{
		Target:   "... and within 1.5x of create_work --stdin alone for the same work units (best of 3 rounds each)",
		Measured: fmt.Sprintf("%s (rounds %s)", ms(best), spread(ours)),
		Baseline: fmt.Sprintf("bin/create_work --appname langevin --stdin, the same %s lines: %s (rounds %s)", count(n), ms(cw), spread(alone)),
		Ratio:    ratio(best, cw),
		Verdict:  verdict(float64(best) <= 1.5*float64(cw)),
		Command:  cmd,
	})
	if b.native() {
		b.add(row{
			Target:   "native creation: a first submission of " + count(n) + " chains takes at most 0.5x the time of create_work --stdin alone for the same jobs (best of 3 rounds each)",
			Measured: fmt.Sprintf("%s (rounds %s)", ms(best), spread(ours)),
			Baseline: fmt.Sprintf("bin/create_work --appname langevin --stdin, the same %s lines: %s (rounds %s)", count(n), ms(cw), spread(alone)),
			Ratio:    ratio(best, cw),
			Verdict:  verdict(float64(best) <= 0.5*float64(cw)),
			Command:  cmd,
		})
	}
	b.add(row{
		Target:   "a first submission uploads each distinct content once",
		Measured: fmt.Sprintf("%s files, %s bytes uploaded", count(firstRep.UploadedFiles), count(int(firstRep.UploadedBytes))),
		Baseline: fmt.Sprintf("%s distinct contents among %s chains' inputs", count(n+1), count(n)),
		Ratio:    "-",
		Verdict:  verdict(firstRep.UploadedFiles == n+1),
		Command:  cmd,
	})
	return nil
}

// spread lists durations, fastest to slowest.
func spread(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = ms(d)
	}
	return strings.Join(parts, ", ")
}

// createWorkAlone times the stand-in's create_work --stdin for the same
// work units (under new names) as the server's run.
func (b *bench) createWorkAlone(wus []string, prefix string) (time.Duration, error) {
	lines, args, err := b.createWorkLines(b.ctx, wus, prefix)
	if err != nil {
		return 0, err
	}
	proj := b.eng.Proj.Dir
	r, err := run(b.ctx, cmdSpec{Dir: proj, Name: filepath.Join(proj, "bin", "create_work"), Args: args, Stdin: strings.NewReader(lines)})
	if os.Getenv("RBBENCH_CLIENT_LOG") != "" {
		appendLog(os.Getenv("RBBENCH_CLIENT_LOG"), fmt.Appendf(nil, "create_work alone: wall %s, cpu %s\n", ms(r.Wall), ms(r.CPU)))
	}
	return r.Wall, err
}

// stageResubmit: the same inputs again, into other groups, best of 3.
func (b *bench) stageResubmit() error {
	n := b.sz.Submit
	const rounds = 3
	var walls []time.Duration
	var rep submitReport
	for r := 0; r < rounds; r++ {
		group := "s1kb"
		if r > 0 {
			group = fmt.Sprintf("s1kb%d", r+1)
		}
		res, rr, err := b.submit("-group", group, "-jobs", b.path("s1k/jobs"), "-vel_file", b.path("s1k.vel"), "-num_steps", "3")
		if err != nil {
			return err
		}
		if r == 0 {
			rep = rr
		}
		walls = append(walls, res.Wall)
	}
	best := slices.Min(walls)
	b.add(row{
		Target:   "resubmitting with unchanged inputs uploads zero input bytes",
		Measured: fmt.Sprintf("%s bytes in %s files; %s contents reused; %s for %s chains (best of %d; rounds %s)", count(int(rep.UploadedBytes)), count(rep.UploadedFiles), count(rep.ReusedFiles), ms(best), count(n), rounds, spread(walls)),
		Baseline: fmt.Sprintf("create_work --stdin alone for as many work units: %s", ms(b.cwAlone)),
		Ratio:    ratio(best, b.cwAlone) + " of create_work's time",
		Verdict:  verdict(rep.UploadedBytes == 0 && rep.UploadedFiles == 0),
		Command:  "the same rboinc-submit -jobs command into groups s1kb, s1kb2, s1kb3",
	})
	if b.native() {
		b.add(row{
			Target:   "native creation: resubmitting " + count(n) + " chains of known inputs takes at most 0.4x the time of create_work --stdin alone (best of 3)",
			Measured: fmt.Sprintf("%s (rounds %s)", ms(best), spread(walls)),
			Baseline: fmt.Sprintf("create_work --stdin alone for the same work units (the submit stage, best of 3): %s", ms(b.cwAlone)),
			Ratio:    ratio(best, b.cwAlone),
			Verdict:  verdict(float64(best) <= 0.4*float64(b.cwAlone)),
			Command:  "the same rboinc-submit -jobs command into groups s1kb, s1kb2, s1kb3",
		})
	}
	return nil
}

// stageHook: the assimilator hook advancing chains: one process per work
// unit as script_assimilator runs it, two such processes at once, and
// engine.Hook in-process (the same spool and creator, without the process
// start); with what bounds the process path.
func (b *bench) stageHook() error {
	wus := b.s1kWUs
	next := 0
	take := func(n int) ([]string, error) {
		if next+n > len(wus) {
			return nil, fmt.Errorf("need %d more work units, have %d", n, len(wus)-next)
		}
		s := wus[next : next+n]
		next += n
		return s, nil
	}
	tmp := filepath.Join(b.eng.Proj.Dir, "tmp_bench")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	// As script_assimilator: ../bin/<script> from tmp_<host>.
	hook := func(args []string) (runResult, error) {
		return run(b.ctx, cmdSpec{Dir: tmp, Name: "../bin/" + b.eng.Cfg.HookScript, Args: args})
	}
	prepare := func(wus []string, seed uint64) ([][]string, error) {
		calls := make([][]string, len(wus))
		for i, wu := range wus {
			paths, err := b.outputs(wu, 0, seed+uint64(i))
			if err != nil {
				return nil, err
			}
			calls[i] = hookArgs(int(seed)+i, paths)
		}
		return calls, nil
	}

	// What any process-per-call hook pays, and the parts of ours.
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	_, spawn, err := best(21, func() (time.Duration, error) {
		r, err := run(b.ctx, cmdSpec{Name: truePath})
		return r.Wall, err
	})
	if err != nil {
		return err
	}
	_, fixed, err := best(21, func() (time.Duration, error) {
		r, err := run(b.ctx, cmdSpec{Name: filepath.Join(b.bin, "nop")})
		return r.Wall, err
	})
	if err != nil {
		return err
	}
	singles, err := take(11)
	if err != nil {
		return err
	}
	var one []time.Duration
	for i, wu := range singles {
		d, err := b.createWorkAlone([]string{wu}, fmt.Sprintf("cs%d", i))
		if err != nil {
			return err
		}
		one = append(one, d)
	}
	cwOne := median(one)

	// Sequential hook processes.
	seq, err := take(b.sz.Hook)
	if err != nil {
		return err
	}
	calls, err := prepare(seq, 1000)
	if err != nil {
		return err
	}
	var cpu time.Duration
	var per []time.Duration
	t0 := time.Now()
	for _, a := range calls {
		r, err := hook(a)
		if err != nil {
			return err
		}
		cpu += r.CPU
		per = append(per, r.Wall)
	}
	callsTime := time.Since(t0)
	if err := b.waitAdvanced(seq); err != nil {
		return err
	}
	seqTime := time.Since(t0)
	perMed := median(per)
	seqRate := rate(len(seq), seqTime)
	b.hookRate = seqRate
	b.add(row{
		Target:   ">= 200 chains/s through the hook (ingest outputs, create the next step); one process per work unit, as script_assimilator runs it, until every next work unit exists",
		Measured: fmt.Sprintf("%.0f chains/s (%s calls in %s, %s per call, median, CPU %s per call; every next work unit created %s after the last call returned, by the server's creator in %s)", seqRate, count(len(seq)), ms(callsTime), ms(perMed), ms(cpu/time.Duration(len(seq))), ms(seqTime-callsTime), b.cwRuns()),
		Baseline: fmt.Sprintf("spawning /bin/true %s; starting an empty Go program (bench/nop) %s; the stand-in's create_work for one job %s; original RBoinc 294.7 ms per step", ms(spawn), ms(fixed), ms(cwOne)),
		Ratio:    fmt.Sprintf("%.2fx of the target rate", seqRate/200),
		Verdict:  verdict(seqRate >= 200),
		Command:  "cd PROJECT/tmp_bench && ../bin/rboinc_hook WU_ID OUTPUT_PATH... (once per work unit)",
	})

	// Two hook processes at once, as two assimilators (-mod 2 0, -mod 2 1).
	par, err := take(b.sz.HookPar)
	if err != nil {
		return err
	}
	if calls, err = prepare(par, 5000); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	t0 = time.Now()
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(calls); i += 2 {
				if _, err := hook(calls[i]); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := b.waitAdvanced(par); err != nil {
		return err
	}
	parTime := time.Since(t0)
	parRate := rate(len(par), parTime)
	b.add(row{
		Target:   "... two hook processes at once (two assimilators: script_assimilator -mod 2 0 and -mod 2 1)",
		Measured: fmt.Sprintf("%.0f chains/s (%s calls)", parRate, count(len(par))),
		Baseline: fmt.Sprintf("one at a time: %.0f chains/s", seqRate),
		Ratio:    fmt.Sprintf("%.2fx of the target rate", parRate/200),
		Verdict:  verdict(parRate >= 200),
		Command:  "as above, two calls at a time",
	})

	// The same work as rboinc-hook's, without its process start.
	sp, err := take(b.sz.HookInproc)
	if err != nil {
		return err
	}
	if calls, err = prepare(sp, 13000); err != nil {
		return err
	}
	t0 = time.Now()
	for i, wu := range sp {
		if err := engine.Hook(b.ctx, b.eng.Root, boinc.HookCall{WUName: wu, WUID: int64(13000 + i), Files: calls[i][1:]}, b.eng.Log); err != nil {
			return err
		}
	}
	if err := b.waitAdvanced(sp); err != nil {
		return err
	}
	spTime := time.Since(t0)
	spRate := rate(len(sp), spTime)
	b.add(row{
		Target:   "... the hook's work without its process start (engine.Hook: spool the call; the server's creator records it and creates)",
		Measured: fmt.Sprintf("%.0f chains/s (%s per chain)", spRate, ms(spTime/time.Duration(len(sp)))),
		Baseline: fmt.Sprintf("one process per call: %.0f chains/s", seqRate),
		Ratio:    fmt.Sprintf("%.2fx of the target rate", spRate/200),
		Verdict:  verdict(spRate >= 200),
		Command:  "engine.Hook(ctx, ROOT, HookCall{WU, outputs}) in one process, one work unit after another",
	})
	return nil
}

// waitAdvanced waits until each work unit's chain has step 1 queued (its
// work unit created): the hook records a next step, and the server's
// creator makes the work units of what is pending in batches. It polls
// with a few counting queries (two queries per work unit, as
// checkAdvanced asks, would weigh on the figure it ends: 0.2 s for 2,000
// work units) and asks checkAdvanced only what went wrong.
func (b *bench) waitAdvanced(wus []string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		queued, bad, err := b.countAdvanced(wus)
		if err != nil {
			return err
		}
		if queued == len(wus) {
			return nil
		}
		if bad > 0 || time.Now().After(deadline) {
			return b.checkAdvanced(wus, deadline)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// countAdvanced counts the work units of wus whose chain's step 1 is
// queued, and those whose step 1 is in a state it should not be in on
// the way there.
func (b *bench) countAdvanced(wus []string) (queued, bad int, err error) {
	for part := range slices.Chunk(wus, 500) {
		args := []any{store.StatePending}
		for _, wu := range part {
			args = append(args, wu)
		}
		var q, x int
		if err := b.state.SQL().QueryRowContext(b.ctx, `SELECT
			COALESCE(SUM(CASE WHEN s1.state = 'queued' THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN s1.state NOT IN ('queued', 'creating', ?) THEN 1 ELSE 0 END), 0)
			FROM steps s0 JOIN steps s1 ON s1.chain_id = s0.chain_id AND s1.step = 1
			WHERE s0.step = 0 AND s0.wu_name IN (?`+strings.Repeat(",?", len(part)-1)+`)`, args...).Scan(&q, &x); err != nil {
			return 0, 0, fmt.Errorf("counting the next steps made: %w", err)
		}
		queued, bad = queued+q, bad+x
	}
	return queued, bad, nil
}

// checkAdvanced is waitAdvanced one work unit at a time, which says which
// one is not advanced and why.
func (b *bench) checkAdvanced(wus []string, deadline time.Time) error {
	for i := 0; i < len(wus); {
		c, _, err := b.state.StepByWU(b.ctx, wus[i])
		if err != nil {
			return err
		}
		s, err := b.state.StepOf(b.ctx, c, 1)
		if errors.Is(err, store.ErrNotFound) {
			s.State = "spooled" // the hook's call is not taken in yet
		} else if err != nil {
			return fmt.Errorf("%s: no next step: %w", wus[i], err)
		}
		switch {
		case s.State == "queued":
			i++
		case s.State != store.StatePending && s.State != "creating" && s.State != "spooled":
			return fmt.Errorf("%s: next step %s is %s, not queued", wus[i], s.WU, s.State)
		case time.Now().After(deadline):
			return fmt.Errorf("%s: next step %s still %s after 2 minutes", wus[i], s.WU, s.State)
		default:
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}

// waitRecorded waits until each work unit's step is recorded done: the
// hook spools its call, and the server's creator takes it in.
func (b *bench) waitRecorded(wus []string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; i < len(wus); {
		_, s, err := b.state.StepByWU(b.ctx, wus[i])
		if err != nil {
			return err
		}
		switch {
		case s.State == "done":
			i++
		case time.Now().After(deadline):
			return fmt.Errorf("%s: step still %s after 2 minutes", wus[i], s.State)
		default:
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}

// cwRuns describes the create_work runs the server's creator logged.
func (b *bench) cwRuns() string {
	data, err := os.ReadFile(filepath.Join(b.work, "server.log"))
	if err != nil {
		return "? create_work runs"
	}
	n := strings.Count(string(data), "msg=\"next steps created\"") - b.cwSeen
	b.cwSeen += n
	return fmt.Sprintf("%d create_work run(s) since the previous figure", n)
}

// stageRetrieve: many result files, against curl fetching the same files
// from a plain file server with as many connections as the client uses.
func (b *bench) stageRetrieve() error {
	chains := (b.sz.RetrFiles + 2) / 3
	jobs, err := b.jobsFile("r10k", "r", chains, false)
	if err != nil {
		return err
	}
	_, rep, err := b.submit("-group", "r10k", "-jobs", jobs, "-coor_file", b.path("c.coor"), "-vel_file", b.path("v.vel"), "-num_steps", "1")
	if err != nil {
		return err
	}
	var calls []boinc.HookCall
	var wus []string
	for j, c := range rep.Chains {
		paths, err := b.outputs(c.FirstWU, b.sz.RetrSize, uint64(100+j))
		if err != nil {
			return err
		}
		calls = append(calls, boinc.HookCall{WUName: c.FirstWU, WUID: int64(j + 1), Files: paths})
		wus = append(wus, c.FirstWU)
	}
	// The calls one after another as BOINC makes them; the server's
	// creator takes them in in batches: the time runs until all are
	// recorded.
	t0 := time.Now()
	for _, call := range calls {
		if err := engine.Hook(b.ctx, b.eng.Root, call, b.eng.Log); err != nil {
			return err
		}
	}
	if err := b.waitRecorded(wus); err != nil {
		return err
	}
	ingest := time.Since(t0)
	files := 3 * chains
	bytes := int64(files) * b.sz.RetrSize
	b.add(row{
		Target:   "hook, a chain's last step: ingest only (3 outputs, no next step)",
		Measured: fmt.Sprintf("%.0f chains/s (%s per chain, 3 x %s outputs)", rate(chains, ingest), ms(ingest/time.Duration(chains)), mibs(b.sz.RetrSize)),
		Baseline: "-",
		Ratio:    "-",
		Verdict:  "info",
		Command:  "engine.Hook in-process, one work unit after another, until all are recorded (the server's creator takes the spooled calls in)",
	})

	results := filepath.Join(b.srv.root, "results", strings.ToUpper(benchUser)+"_r10k")
	ents, err := os.ReadDir(results)
	if err != nil {
		return err
	}
	if len(ents) != files {
		return fmt.Errorf("%d result files on the server, want %d", len(ents), files)
	}
	fs, err := startFileServer(results)
	if err != nil {
		return err
	}
	defer fs.close()
	curlDir := b.path("dl-curl")
	os.MkdirAll(curlDir, 0o755)
	var cfg strings.Builder
	for _, e := range ents {
		fmt.Fprintf(&cfg, "url = \"%s/%s\"\noutput = \"%s/%s\"\n", fs.base, e.Name(), curlDir, e.Name())
	}
	cfgPath := b.path("curl.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		return err
	}
	curl, err := run(b.ctx, cmdSpec{Name: "curl", Args: []string{"-s", "-S", "--fail", "--parallel", "--parallel-max", "4", "-K", cfgPath}})
	if err != nil {
		return err
	}
	if got, _ := os.ReadDir(curlDir); len(got) != files {
		return fmt.Errorf("curl fetched %d files of %d", len(got), files)
	}
	// curl leaves its files in the page cache; rboinc-retrieve makes them
	// durable before the server may delete its copies. The same for curl:
	durable, err := run(b.ctx, cmdSpec{Name: "sync", Args: []string{"-f", curlDir}})
	if err != nil {
		return err
	}

	// Nothing new, everything already here: curl's directory, -keep.
	var keepRep client.RetrieveReport
	_, keepMed, err := best(3, func() (time.Duration, error) {
		r, rep, err := b.retrieve("-group", "r10k", "-into", curlDir, "-keep")
		keepRep = rep
		return r.Wall, err
	})
	if err != nil {
		return err
	}
	if keepRep.Retrieved != 0 || keepRep.Present != files {
		return fmt.Errorf("-keep into a full directory: %+v", keepRep)
	}

	into := b.path("dl-r10k")
	r, rrep, err := b.retrieve("-group", "r10k", "-into", into)
	if err != nil {
		return err
	}
	if rrep.Retrieved != files || len(rrep.Failed) != 0 || rrep.Acknowledged != files {
		return fmt.Errorf("retrieve: %+v, want %d files", rrep, files)
	}
	b.add(row{
		Target:   fmt.Sprintf("retrieving %s result files (%s in all) takes at most 1.5x a plain HTTP download", count(files), mibs(bytes)),
		Measured: fmt.Sprintf("%s (%s; client CPU %s; verified, synced, acknowledged)", ms(r.Wall), mbps(bytes, r.Wall), ms(r.CPU)),
		Baseline: fmt.Sprintf("curl --parallel --parallel-max 4 from Go's http.FileServer: %s (%s); then made durable (sync -f): %s", ms(curl.Wall), mbps(bytes, curl.Wall), ms(curl.Wall+durable.Wall)),
		Ratio:    fmt.Sprintf("%s of curl; %s of curl + sync", ratio(r.Wall, curl.Wall), ratio(r.Wall, curl.Wall+durable.Wall)),
		Verdict:  verdict(float64(r.Wall) <= 1.5*float64(curl.Wall)),
		Command:  "rboinc-retrieve -group r10k -into DIR",
	})

	// Nothing new, nothing left on the server.
	var emptyRep client.RetrieveReport
	_, emptyMed, err := best(5, func() (time.Duration, error) {
		r, rep, err := b.retrieve("-group", "r10k", "-into", into)
		emptyRep = rep
		return r.Wall, err
	})
	if err != nil {
		return err
	}
	if emptyRep.Retrieved != 0 {
		return fmt.Errorf("second retrieve: %+v", emptyRep)
	}
	b.add(row{
		Target:   "a retrieve with nothing new takes under 0.2 s and transfers no file",
		Measured: fmt.Sprintf("%s (median of 5), %d files transferred", ms(emptyMed), emptyRep.Retrieved),
		Baseline: "the original RBoinc's retrieve of 300 small files: 5.88 s (original-baseline.md D3)",
		Ratio:    fmt.Sprintf("%.2fx of 0.2 s", emptyMed.Seconds()/0.2),
		Verdict:  verdict(emptyMed < 200*time.Millisecond && emptyRep.Retrieved == 0),
		Command:  "rboinc-retrieve -group r10k -into DIR, again after a full retrieval",
	})
	b.add(row{
		Target:   fmt.Sprintf("... the same with all %s files still waiting on the server and already present here (-keep)", count(files)),
		Measured: fmt.Sprintf("%s (median of 3), %d files transferred", ms(keepMed), keepRep.Retrieved),
		Baseline: "-",
		Ratio:    fmt.Sprintf("%.2fx of 0.2 s", keepMed.Seconds()/0.2),
		Verdict:  "info",
		Command:  "rboinc-retrieve -group r10k -into DIR_WITH_EVERY_FILE -keep",
	})
	os.RemoveAll(into)
	os.RemoveAll(curlDir)
	return nil
}

// stageStatus: the status of a group of many chains.
func (b *bench) stageStatus() error {
	n := b.sz.Status
	jobs, err := b.jobsFile("st", "s", n, false)
	if err != nil {
		return err
	}
	r, rep, err := b.submit("-group", "st10k", "-jobs", jobs, "-coor_file", b.path("c.coor"), "-vel_file", b.path("v.vel"), "-num_steps", "1")
	if err != nil {
		return err
	}
	var wus []string
	for _, c := range rep.Chains {
		wus = append(wus, c.FirstWU)
	}
	cw, err := b.createWorkAlone(wus, "cw")
	if err != nil {
		return err
	}
	b.add(row{
		Target:   fmt.Sprintf("%s chains in one command (inputs shared), against create_work --stdin alone", count(n)),
		Measured: fmt.Sprintf("%.0f chains/s (%s)", rate(n, r.Wall), ms(r.Wall)),
		Baseline: fmt.Sprintf("create_work --stdin alone, the same %s work units: %s", count(n), ms(cw)),
		Ratio:    ratio(r.Wall, cw),
		Verdict:  verdict(rate(n, r.Wall) >= 500 && float64(r.Wall) <= 1.5*float64(cw)),
		Command:  fmt.Sprintf("rboinc-submit -app_name langevin -group st10k -jobs JOBS(%d lines) -coor_file C -vel_file V -num_steps 1", n),
	})
	status, raw, api, err := b.statusTimes("st10k", n)
	if err != nil {
		return err
	}
	// Baseline: the same JSON bytes as a static file.
	dir := b.path("static")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "status.json"), raw, 0o644); err != nil {
		return err
	}
	fs, err := startFileServer(dir)
	if err != nil {
		return err
	}
	defer fs.close()
	_, plain, err := best(5, func() (time.Duration, error) {
		r, err := run(b.ctx, cmdSpec{Name: "curl", Args: []string{"-s", "-S", "--fail", "-o", "/dev/null", fs.base + "/status.json"}})
		return r.Wall, err
	})
	if err != nil {
		return err
	}
	b.add(row{
		Target:   fmt.Sprintf("status of a group of %s chains answers in under 0.5 s", count(n)),
		Measured: fmt.Sprintf("%s for rboinc-retrieve -status (median of 5); the API call alone %s", ms(status), ms(api)),
		Baseline: fmt.Sprintf("curl of the same %s of JSON as a static file: %s", mibs(int64(len(raw))), ms(plain)),
		Ratio:    ratio(status, plain),
		Verdict:  verdict(status < 500*time.Millisecond),
		Command:  "rboinc-retrieve -group st10k -status",
	})
	return nil
}

// statusTimes measures the status of a group: the CLI (median of 5), the
// API answer's bytes, and the API call alone (median of 5).
func (b *bench) statusTimes(group string, n int) (cli time.Duration, raw []byte, api time.Duration, err error) {
	_, cli, err = best(5, func() (time.Duration, error) {
		r, err := run(b.ctx, cmdSpec{Name: filepath.Join(b.bin, "rboinc-retrieve"), Args: []string{"-group", group, "-status"}, Env: b.srv.env()})
		if err == nil && strings.Count(string(r.Stdout), "\n") != n {
			err = fmt.Errorf("status printed %d lines, want %d", strings.Count(string(r.Stdout), "\n"), n)
		}
		return r.Wall, err
	})
	if err != nil {
		return
	}
	c, err := client.New(b.srv.url, b.srv.token)
	if err != nil {
		return
	}
	_, api, err = best(5, func() (time.Duration, error) {
		t0 := time.Now()
		st, err := c.Status(b.ctx, group, "")
		if err == nil && len(st.Chains) != n {
			err = fmt.Errorf("status lists %d chains, want %d", len(st.Chains), n)
		}
		return time.Since(t0), err
	})
	if err != nil {
		return
	}
	req, err := http.NewRequestWithContext(b.ctx, http.MethodGet, b.srv.url+wire.PathStatus+"?group="+group, nil)
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+b.srv.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	raw, err = io.ReadAll(resp.Body)
	return
}

// stageScale: fill the server up to the target number of work units with
// submissions of many chains each, then its memory and a status.
func (b *bench) stageScale() error {
	countWUs := func() (int, error) {
		var n int
		err := b.state.SQL().QueryRowContext(b.ctx, `SELECT count(*) FROM steps`).Scan(&n)
		return n, err
	}
	have, err := countWUs()
	if err != nil {
		return err
	}
	if err := resetPeak(b.srv.pid()); err != nil {
		return err
	}
	var walls []time.Duration
	for k := 0; have < b.sz.Total; k++ {
		m := min(b.sz.Batch, b.sz.Total-have)
		jobs, err := b.jobsFile(fmt.Sprintf("fill%d", k), "f", m, false)
		if err != nil {
			return err
		}
		r, _, err := b.submit("-group", fmt.Sprintf("fill%d", k), "-jobs", jobs, "-coor_file", b.path("c.coor"), "-vel_file", b.path("v.vel"), "-num_steps", "1")
		if err != nil {
			return err
		}
		if m == b.sz.Batch {
			walls = append(walls, r.Wall)
		}
		if have, err = countWUs(); err != nil {
			return err
		}
	}
	rss, peak, err := procMem(b.srv.pid())
	if err != nil {
		return err
	}
	if len(walls) > 0 {
		med := median(walls)
		b.add(row{
			Target:   fmt.Sprintf("submissions of %s chains each while the server fills up to %s work units", count(b.sz.Batch), count(b.sz.Total)),
			Measured: fmt.Sprintf("%.0f chains/s (median %s per submission)", rate(b.sz.Batch, med), ms(med)),
			Baseline: "-",
			Ratio:    fmt.Sprintf("%.2fx of 500 chains/s", rate(b.sz.Batch, med)/500),
			Verdict:  "info",
			Command:  fmt.Sprintf("rboinc-submit -app_name langevin -group fillK -jobs JOBS(%d lines) -coor_file C -vel_file V -num_steps 1", b.sz.Batch),
		})
	}
	b.add(row{
		Target:   fmt.Sprintf("the server holds %s work units with memory under 200 MiB", count(b.sz.Total)),
		Measured: fmt.Sprintf("%s work units: resident %s, peak %s while the submissions ran", count(have), mibs(rss), mibs(peak)),
		Baseline: "-",
		Ratio:    fmt.Sprintf("%.2fx of 200 MiB", float64(peak)/(200*mib)),
		Verdict:  verdict(peak < 200*mib),
		Command:  "VmRSS and VmHWM of the rboinc-server serve process (/proc/PID/status)",
	})
	status, _, api, err := b.statusTimes("st10k", b.sz.Status)
	if err != nil {
		return err
	}
	b.add(row{
		Target:   fmt.Sprintf("status of %s chains with %s work units held", count(b.sz.Status), count(have)),
		Measured: fmt.Sprintf("%s for rboinc-retrieve -status (median of 5); the API call alone %s", ms(status), ms(api)),
		Baseline: "-",
		Ratio:    "-",
		Verdict:  verdict(status < 500*time.Millisecond),
		Command:  "rboinc-retrieve -group st10k -status",
	})
	return nil
}
