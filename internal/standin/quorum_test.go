package standin

import (
	"strings"
	"testing"
)

// TestVolunteerQuorumValidatesAll: with min_quorum 2, both results of the
// quorum are validated, as BOINC's validator marks every result of the set
// it checked (and one reported after the decision, checked against the
// canonical one); the non-canonical one stayed validate_state INIT.
func TestVolunteerQuorumValidatesAll(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("templates/rbtest_in", strings.Replace(tmplIn3a, "  <command_line>--steps 10</command_line>\n", "", 1), 0o644)
	tp.stage("a_in1.coor", "coordinates\n")
	tp.stage("a_in1.psf", "topology\n")
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "q2", "--min_quorum", "2", "--target_nresults", "2",
		"a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	tp.startVolunteer()
	tp.waitIdle()
	if n := tp.count(`SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'q2' AND r.outcome = 1`); n != 2 {
		t.Fatalf("%d successful results, want 2", n)
	}
	if n := tp.count(`SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'q2' AND r.validate_state = 1`); n != 2 {
		t.Errorf("%d results valid, want both of the quorum", n)
	}
}
