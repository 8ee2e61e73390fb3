package spool

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FailureName is the file in the spool directory that holds the hook's
// last failure: BOINC's assimilator stops on a failing hook, and `doctor`
// says why from it.
const FailureName = ".last-failure"

// Failure is the hook's last failure.
type Failure struct {
	Time  time.Time
	WU    string
	Error string
}

// RecordFailure notes a failed hook call, replacing the one before, as well
// as it can: the disk that failed the call may refuse this too.
func RecordFailure(root, wu, msg string) {
	dir := filepath.Join(root, DirName)
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	b := "time " + strconv.FormatInt(time.Now().Unix(), 10) + "\nwu " + oneLine(wu) + "\nerror " + oneLine(msg) + "\n"
	tmp := filepath.Join(dir, FailureName+".tmp"+strconv.Itoa(os.Getpid()))
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(tmp, []byte(b), 0o644); err != nil {
		os.Remove(tmp)
		return
	}
	if os.Rename(tmp, filepath.Join(dir, FailureName)) != nil {
		os.Remove(tmp)
	}
}

// LastFailure reads the hook's last failure; ok is false when none was
// recorded.
func LastFailure(root string) (f Failure, ok bool) {
	b, err := os.ReadFile(filepath.Join(root, DirName, FailureName))
	if err != nil {
		return f, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "time":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				f.Time = time.Unix(n, 0)
			}
		case "wu":
			f.WU = v
		case "error":
			f.Error = v
		}
	}
	return f, !f.Time.IsZero()
}
