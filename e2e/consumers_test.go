package e2e

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/testbin"
)

// Helpers of consumers.txtar: every result reaches exactly one consumer.

// rbresultlog: from now on, the server's state database copies every
// result file it records (name, group, MD5) into results_log, which
// acknowledgements do not touch: what rbconsumed checks the consumers'
// files against. SQLite only.
func cmdResultLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: rbresultlog")
	}
	db, err := engine.OpenState(context.Background(), ts.Getenv("ROOT"))
	ts.Check(err)
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE results_log (file TEXT NOT NULL, grp TEXT NOT NULL, md5 TEXT NOT NULL)`,
		`CREATE TRIGGER results_logged AFTER INSERT ON results BEGIN
			INSERT INTO results_log(file, grp, md5) VALUES (NEW.file, (SELECT grp FROM chains WHERE id = NEW.chain_id), NEW.md5);
		END`,
	} {
		_, err := db.SQL().Exec(q)
		ts.Check(err)
	}
}

// rbconsumed MODE DIR GROUP-REGEXP [MODE DIR GROUP-REGEXP...]: every result
// file the server recorded (rbresultlog) is on disk exactly once, under
// the DIR of the one consumer whose GROUP-REGEXP matches its group, with
// the MD5 the server recorded; no DIR holds anything else. MODE names
// says the files are named as the server names them (the clients add an
// alias: <wu>_<k>.coor); MODE contents that they are named otherwise (the
// GAHP's open names) and are matched by content, "*.err" (the jobs'
// stderr) aside. Prints "DIR: N files" for each.
func cmdConsumed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 || len(args)%3 != 0 {
		ts.Fatalf("usage: rbconsumed names|contents DIR GROUP-REGEXP ...")
	}
	db, err := engine.OpenState(context.Background(), ts.Getenv("ROOT"))
	ts.Check(err)
	defer db.Close()
	type logged struct{ file, group, md5 string }
	rows, err := db.SQL().Query(`SELECT file, grp, md5 FROM results_log`)
	ts.Check(err)
	var all []logged
	for rows.Next() {
		var l logged
		ts.Check(rows.Scan(&l.file, &l.group, &l.md5))
		all = append(all, l)
	}
	ts.Check(rows.Err())
	rows.Close()
	if len(all) == 0 {
		ts.Fatalf("rbconsumed: the server recorded no result files")
	}
	claimed := make([]int, len(all)) // consumers whose pattern matches each file's group
	serverName := regexp.MustCompile(`^(.+_[0-9]+)`)
	for i := 0; i < len(args); i += 3 {
		mode, dir, re := args[i], ts.MkAbs(args[i+1]), mustRE(ts, "^(?:"+args[i+2]+")$")
		own := map[string]logged{} // by server name
		byMD5 := map[string]int{}
		for k, l := range all {
			if re.MatchString(l.group) {
				claimed[k]++
				own[l.file] = l
				byMD5[l.md5]++
			}
		}
		seen := map[string]string{}
		n := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return err // the clients' lock and partial files are hidden
			}
			if mode == "contents" && strings.HasSuffix(d.Name(), ".err") {
				return nil
			}
			sum := fileMD5(ts, p)
			rel, _ := filepath.Rel(dir, p)
			n++
			switch mode {
			case "names":
				m := serverName.FindStringSubmatch(d.Name())
				if m == nil {
					return fmt.Errorf("%s: %s is no result file", args[i+1], rel)
				}
				l, ok := own[m[1]]
				if !ok {
					return fmt.Errorf("%s: %s is no result of a group matching %s: another consumer's", args[i+1], rel, args[i+2])
				}
				if prev, twice := seen[m[1]]; twice {
					return fmt.Errorf("%s: result %s is here twice (%s, %s)", args[i+1], m[1], prev, rel)
				}
				seen[m[1]] = rel
				if l.md5 != sum {
					return fmt.Errorf("%s: %s has MD5 %s, the server recorded %s", args[i+1], rel, sum, l.md5)
				}
			case "contents":
				if byMD5[sum] == 0 {
					return fmt.Errorf("%s: %s (MD5 %s) is none of the results of groups matching %s, or one more copy of one", args[i+1], rel, sum, args[i+2])
				}
				byMD5[sum]--
			default:
				ts.Fatalf("rbconsumed: mode %q is neither names nor contents", mode)
			}
			return nil
		})
		ts.Check(err)
		if n != len(own) {
			var missing []string
			for f := range own {
				if _, ok := seen[f]; !ok && mode == "names" {
					missing = append(missing, f)
				}
			}
			sort.Strings(missing)
			ts.Fatalf("%s: %d files, the server recorded %d for it; missing: %v", args[i+1], n, len(own), missing)
		}
		fmt.Fprintf(ts.Stdout(), "%s: %d files\n", args[i+1], n)
	}
	for k, c := range claimed {
		if c != 1 {
			ts.Fatalf("result %s of group %s matches %d consumers, want exactly one", all[k].file, all[k].group, c)
		}
	}
}

func fileMD5(ts *testscript.TestScript, p string) string {
	b, err := os.ReadFile(p)
	ts.Check(err)
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// rbmasters: builds the master programs of the scripts into the commands'
// directory, once: readme-master (the smallest master of docs/master.md, as
// printed there) and adaptive-master (examples/adaptive-master).
func cmdMasters(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: rbmasters")
	}
	mastersOnce.Do(func() { mastersErr = buildMasters() })
	ts.Check(mastersErr)
}

var (
	mastersOnce sync.Once
	mastersErr  error
)

func buildMasters() error {
	b, err := os.ReadFile(filepath.Join(repoDir, "docs", "master.md"))
	if err != nil {
		return err
	}
	const mark = "<!-- master: TestReadmeMaster in workflow/master runs this program -->\n```go\n"
	_, rest, ok := strings.Cut(string(b), mark)
	if !ok {
		return fmt.Errorf("docs/master.md has no master program after its marker")
	}
	code, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		return fmt.Errorf("the master program of docs/master.md does not end")
	}
	// Built inside the module (a hidden directory: no pattern matches it).
	src, err := os.MkdirTemp(repoDir, ".e2e-readme-master")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(code+"\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "readme-master"), "./"+filepath.Base(src))
	cmd.Dir = repoDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building readme-master: %v\n%s", err, out)
	}
	built, err := testbin.Build("examples/adaptive-master")
	if err != nil {
		return err
	}
	return linkFile(filepath.Join(built, "adaptive-master"), filepath.Join(binDir, "adaptive-master"))
}
