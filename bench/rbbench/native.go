package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/boinctest"
)

// stageNative: rboinc's own assimilator daemon against the hook. BOINC's
// side (a canonical result with its outputs, the work unit ready) is
// played without timing; the timed part is one `rboinc-server assimilator
// --one_pass` run over every ready work unit, until each chain's next work
// unit exists. Then the same over many more work units, for its memory.
func (b *bench) stageNative() error {
	small, err := b.nativeRun("nat", b.sz.Native)
	if err != nil {
		return err
	}
	cw, err := b.createWorkAlone(small.wus, "natcw")
	if err != nil {
		return err
	}
	r := rate(len(small.wus), small.total)
	base := fmt.Sprintf("create_work --stdin alone for the %s next work units: %s", count(len(small.wus)), ms(cw))
	if b.hookRate > 0 {
		base = fmt.Sprintf("the hook, one process per work unit, this run: %.0f chains/s (%.1fx faster); ", b.hookRate, r/b.hookRate) + base
	}
	b.add(row{
		Target: ">= 1,000 chain advances/s through the native assimilator (read BOINC's database in batches, take the outputs, " +
			"record, one sync, create the next steps, mark), until every next work unit exists",
		Measured: fmt.Sprintf("%.0f chains/s (%s work units: the pass %s, CPU %s, max RSS %s; every next work unit created %s after it)",
			r, count(len(small.wus)), ms(small.pass.Wall), ms(small.pass.CPU), mibs(small.pass.MaxRSS), ms(small.total-small.pass.Wall)),
		Baseline: base,
		Ratio:    fmt.Sprintf("%.2fx of the target rate", r/1000),
		Verdict:  verdict(r >= 1000),
		Command:  "rboinc-server assimilator --root ROOT --one_pass (work units made ready beforehand)",
	})
	if b.native() {
		b.add(row{
			Target:   ">= 3,000 chain advances/s through the native assimilator with native creation (" + count(len(small.wus)) + " work units)",
			Measured: fmt.Sprintf("%.0f chains/s", r),
			Baseline: base,
			Ratio:    fmt.Sprintf("%.2fx of the target rate", r/3000),
			Verdict:  verdict(r >= 3000),
			Command:  "bench/run.sh --create=native --stages=native: rboinc-server assimilator --root ROOT --one_pass",
		})
	}
	b.nativeSmall = small
	return nil
}

// stageNativeMem: the native assimilator's memory over many more work
// units than stageNative's, against its figure there.
func (b *bench) stageNativeMem() error {
	small := b.nativeSmall
	big, err := b.nativeRun("natmem", b.sz.NativeMem)
	if err != nil {
		return err
	}
	rb := rate(len(big.wus), big.total)
	b.add(row{
		Target:   fmt.Sprintf("... memory flat over %s work units", count(len(big.wus))),
		Measured: fmt.Sprintf("max RSS %s (%.0f chains/s; the pass %s, CPU %s)", mibs(big.pass.MaxRSS), rb, ms(big.pass.Wall), ms(big.pass.CPU)),
		Baseline: fmt.Sprintf("%s work units: max RSS %s", count(len(small.wus)), mibs(small.pass.MaxRSS)),
		Ratio:    fmt.Sprintf("%.2fx the memory for %.0fx the work units", float64(big.pass.MaxRSS)/float64(small.pass.MaxRSS), float64(len(big.wus))/float64(len(small.wus))),
		Verdict:  verdict(float64(big.pass.MaxRSS) <= 1.5*float64(small.pass.MaxRSS)),
		Command:  "rboinc-server assimilator --root ROOT --one_pass",
	})
	if b.native() {
		b.add(row{
			Target:   ">= 3,000 chain advances/s through the native assimilator with native creation (" + count(len(big.wus)) + " work units)",
			Measured: fmt.Sprintf("%.0f chains/s (max RSS %s)", rb, mibs(big.pass.MaxRSS)),
			Baseline: fmt.Sprintf("%s work units: %.0f chains/s", count(len(small.wus)), rate(len(small.wus), small.total)),
			Ratio:    fmt.Sprintf("%.2fx of the target rate", rb/3000),
			Verdict:  verdict(rb >= 3000),
			Command:  "bench/run.sh --create=native --stages=native-mem: rboinc-server assimilator --root ROOT --one_pass",
		})
	}
	return nil
}

type nativeFigures struct {
	wus   []string
	pass  runResult
	total time.Duration
}

// nativeRun submits n two-step chains (in submissions of at most Batch),
// finishes their first work units and times one assimilator pass.
func (b *bench) nativeRun(group string, n int) (nativeFigures, error) {
	var f nativeFigures
	vel := b.path(group + ".vel")
	if err := os.WriteFile(vel, []byte("0.25 0 0\n"), 0o644); err != nil {
		return f, err
	}
	for done := 0; done < n; {
		k := min(n-done, b.sz.Batch)
		jobs, err := b.jobsFile(fmt.Sprintf("%s%d", group, done), fmt.Sprintf("n%d_", done), k, true)
		if err != nil {
			return f, err
		}
		_, rep, err := b.submit("-group", group, "-jobs", jobs, "-vel_file", vel, "-num_steps", "2")
		if err != nil {
			return f, err
		}
		for _, c := range rep.Chains {
			f.wus = append(f.wus, c.FirstWU)
		}
		done += k
	}
	bdb, err := b.eng.OpenBoincDB(b.ctx)
	if err != nil {
		return f, err
	}
	// Only this run's work units: earlier stages leave others undecided
	// (the hook stage plays BOINC without the stand-in's database).
	mine := map[string]bool{}
	for _, wu := range f.wus {
		mine[wu] = true
	}
	made, err := boinctest.Finish(b.ctx, bdb, b.eng.Proj, nil, func(wu string) bool { return mine[wu] })
	bdb.Close()
	if err != nil {
		return f, err
	}
	if made != len(f.wus) {
		return f, fmt.Errorf("finished %d work units of %d", made, len(f.wus))
	}
	t0 := time.Now()
	f.pass, err = run(b.ctx, cmdSpec{Name: filepath.Join(b.bin, "rboinc-server"), Args: []string{"assimilator", "--root", b.srv.root, "--one_pass", "-d", "1"}})
	if err != nil {
		return f, err
	}
	if err := b.waitAdvanced(f.wus); err != nil {
		return f, err
	}
	f.total = time.Since(t0)
	return f, nil
}
