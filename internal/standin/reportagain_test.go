package standin

import (
	"os"
	"testing"
	"time"
)

// TestVolunteerReportsAgain: a result the database would not record (MariaDB
// restarting, in the soak) is reported again, as a real client does, instead
// of staying in progress until its deadline.
func TestVolunteerReportsAgain(t *testing.T) {
	defer func(d time.Duration) { reportRetry = d }(reportRetry)
	reportRetry = 100 * time.Millisecond
	tp := setupCompute(t)
	// Every report fails while the trigger is there.
	refuse := `CREATE TRIGGER away BEFORE UPDATE OF server_state ON result
		WHEN NEW.server_state = 5 BEGIN SELECT RAISE(ABORT, 'database away'); END`
	if os.Getenv(testDBEnv) == "mariadb" {
		refuse = `CREATE TRIGGER away BEFORE UPDATE ON result FOR EACH ROW BEGIN
			IF NEW.server_state = 5 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'database away'; END IF; END`
	}
	if _, err := tp.db().Exec(refuse); err != nil {
		t.Fatal(err)
	}
	tp.stage("a_in1.coor", "coordinates\n")
	tp.stage("a_in1.psf", "topology\n")
	const wu = "again-TONI_G-0-1-RND0001"
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	stop := tp.startVolunteer()
	defer stop()
	tp.waitFor("the result to be computed and its report refused", func() bool {
		return tp.count(`SELECT count(*) FROM result WHERE server_state = 4`) == 1
	})
	time.Sleep(2 * time.Second) // long enough for the app to end and its report to be refused
	if _, err := tp.db().Exec(`DROP TRIGGER away`); err != nil {
		t.Fatal(err)
	}
	tp.waitFor("the work unit to succeed once the database records again", func() bool {
		return tp.count(`SELECT count(*) FROM workunit WHERE name = ? AND canonical_resultid > 0 AND error_mask = 0`, wu) == 1
	})
}
