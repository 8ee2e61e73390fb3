package standin

import (
	"strings"
	"testing"
)

// TestVolunteerStderrCap: a chatty app's stderr is reported as its last
// 63 KB at most, as BOINC's client reads it (read_stderr_file), wrapped as
// it reports it; 64 KiB was one byte more than result.stderr_out, a BLOB,
// holds, and MariaDB refused the row, so the result was never recorded and
// its chain ran for ever.
func TestVolunteerStderrCap(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("templates/rbtest_in", strings.Replace(tmplIn3a, "  <command_line>--steps 10</command_line>\n", "", 1), 0o644)
	tp.write("apps/rbtest/run", "#!/bin/sh\nseq 1 20000 >&2\n"+appUpper[10:], 0o755)
	tp.stage("a_in1.coor", "coordinates\n")
	tp.stage("a_in1.psf", "topology\n")
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "chatty", "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	tp.startVolunteer()
	tp.waitIdle()
	var out string
	if err := tp.db().QueryRow(`SELECT stderr_out FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'chatty'`).Scan(&out); err != nil {
		t.Fatal(err)
	}
	if len(out) > 63*1024 || !strings.HasSuffix(out, "\n20000\nargs:\n\n</stderr_txt>\n]]>\n") {
		t.Errorf("stderr_out is %d bytes ending %q, want at most the last %d", len(out), out[max(0, len(out)-20):], 63*1024)
	}
}
