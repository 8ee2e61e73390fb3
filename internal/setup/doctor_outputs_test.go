package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorSeesOutputsWithoutLimit: an output whose <file_info> has no
// <max_nbytes> above 0 is a problem naming the queue, the output and the
// template (BOINC's client fails it whenever it is not empty); outputs
// with a limit are not.
func TestDoctorSeesOutputsWithoutLimit(t *testing.T) {
	ctx := context.Background()
	proj := fakeProject(t, t.TempDir())
	root, _ := initReal(t, proj)
	if p := problems(Doctor(ctx, root)); strings.Contains(p, "max_nbytes") {
		t.Fatalf("the example queue's outputs, all with a limit, reported:\n%s", p)
	}

	tdir := filepath.Join(proj, "templates")
	wu, err := os.ReadFile(filepath.Join(tdir, "rboinc_langevin_wu"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := os.ReadFile(filepath.Join(tdir, "rboinc_langevin_result"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tdir, "rboinc_nolimit_wu"), string(wu), 0o644)
	// output.coor has none, output.vel 0, progress.log a limit.
	r := strings.Replace(string(res), "    <max_nbytes>10000000</max_nbytes>\n", "", 1)
	r = strings.Replace(r, "<max_nbytes>10000000</max_nbytes>", "<max_nbytes>0</max_nbytes>", 1)
	resPath := filepath.Join(tdir, "rboinc_nolimit_result")
	write(t, resPath, r, 0o644)
	p := problems(Doctor(ctx, root))
	want := "queue nolimit: outputs output.coor (<OUTFILE_0/>), output.vel (<OUTFILE_1/>) have no <max_nbytes> above 0 in " + resPath +
		", and BOINC's client then fails every task that leaves one of them nonempty (ERR_FILE_TOO_BIG, -131)"
	if !strings.Contains(p, want) || strings.Contains(p, "progress.log") || strings.Contains(p, "queue langevin: output") {
		t.Fatalf("doctor's problems:\n%s\nwant only:\n%s", p, want)
	}

	write(t, resPath, strings.Replace(r, "<max_nbytes>0</max_nbytes>", "<max_nbytes>100</max_nbytes>", 1), 0o644)
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "queue nolimit: output output.coor (<OUTFILE_0/>) has no <max_nbytes> above 0") || strings.Contains(p, "output.vel") {
		t.Fatalf("doctor's problems with one output without a limit:\n%s", p)
	}
}
