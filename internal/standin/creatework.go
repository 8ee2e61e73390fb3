package standin

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// Limits of create_work's --stdin reader: fgets into a 4096-byte buffer
// (a line that fills 4095 bytes is refused) and a 100-slot argv array.
const (
	stdinLineMax  = 4095
	stdinMaxWords = 99
)

// CreateWorkMain is the stand-in's create_work program (rboinc-server
// dispatches `standin create_work ARGS` to it). It behaves like BOINC's
// tools/create_work at every point rboinc can observe: options, messages,
// files staged and hashed, rows created, exit status. It returns the exit
// status.
func CreateWorkMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if err != nil {
		return 1
	}
	if o.app == "" {
		fmt.Fprint(stderr, usageText)
		return 1
	}
	j := &o.job
	if j.WU.Name == "" {
		j.WU.Name = fmt.Sprintf("%s_%d_%f", o.app, os.Getpid(), float64(time.Now().UnixMicro())/1e6)
	}
	if j.WUTemplateFile == "" {
		j.WUTemplateFile = "templates/" + o.app + "_in"
	}
	if j.WU.ResultTemplateFile == "" {
		j.WU.ResultTemplateFile = "templates/" + o.app + "_out"
	}
	c := &creator{o: o, stdout: stdout, stderr: stderr, templates: map[string]string{}}
	if !c.open() {
		return 1
	}
	defer c.db.Close()

	// The input template is read relative to the working directory.
	var tmpl string
	if fileExists(j.WUTemplateFile) {
		t, err := readTemplate(j.WUTemplateFile)
		if err != nil {
			fmt.Fprintf(stderr, "create_work: can't open input template %s\n", j.WUTemplateFile)
			return 1
		}
		tmpl = t
	} else if !o.useStdin {
		fmt.Fprintf(stderr, "create_work: input template file %s doesn't exist\n", j.WUTemplateFile)
		return 1
	}
	ctx := context.Background()
	if o.useStdin {
		return c.bulk(ctx, stdin, tmpl)
	}
	return c.single(ctx, tmpl)
}

// creator is one create_work run.
type creator struct {
	o              *cwOptions
	p              *boinc.Project
	projPrefix     string // how BOINC's project_path() spells the project dir
	db             *boincdb.DB
	appID          int64
	stdout, stderr io.Writer
	templates      map[string]string // --stdin per-line templates, by path
	env            wucreate.Env
}

// open finds the project, reads config.xml, opens the database and looks
// the app up, with create_work's messages.
func (c *creator) open() bool {
	dir, prefix, err := findProject(c.o.configDir)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return false
	}
	c.p, err = boinc.LoadProject(dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "Can't parse config file: %v\n", err)
		return false
	}
	c.projPrefix = prefix
	c.env = wucreate.Env{Project: c.p, ProjPrefix: prefix, App: c.o.app, Stdout: c.stdout, Stderr: c.stderr}
	c.db, err = openDB(c.p.Dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "create_work: error opening database: %v\n", err)
		return false
	}
	if c.appID, err = wucreate.AppID(context.Background(), c.db, c.p.Dir, c.o.app, true); err != nil || c.appID == 0 {
		if err != nil {
			fmt.Fprintf(c.stderr, "create_work: %v\n", err)
		}
		fmt.Fprintf(c.stderr, "create_work: app not found\n")
		c.db.Close()
		return false
	}
	return true
}

// findProject locates the project dir like BOINC (--config_dir counts as
// the project dir in the stand-in).
func findProject(configDir string) (dir, prefix string, err error) {
	if configDir != "" {
		dir, err = filepath.Abs(configDir)
		return dir, configDir, err
	}
	dir, err = boinc.FindProjectDir()
	if err != nil {
		return "", "", err
	}
	if env := os.Getenv("BOINC_PROJECT_DIR"); env != "" {
		return dir, env, nil
	}
	wd, _ := os.Getwd()
	switch dir {
	case wd:
		prefix = "."
	case filepath.Dir(wd):
		prefix = ".."
	default:
		prefix = dir
	}
	return dir, prefix, nil
}

func (c *creator) single(ctx context.Context, tmpl string) int {
	w, code, skipped := c.env.Prepare(&c.o.job, tmpl)
	if code != 0 {
		fmt.Fprintf(c.stderr, "create_work: %s\n", wucreate.BoincError(code))
		return 1
	}
	if !skipped {
		if err := inTx(ctx, c.db, func(tx *sql.Tx) error { return w.Store(ctx, tx, c.appID) }); err != nil {
			c.storeFailed(w, err)
			return 1
		}
	} else {
		w = &c.o.job.WU
	}
	if c.o.verbose {
		fmt.Fprintf(c.stderr, "created workunit; name %s, ID %d\n", w.Name, w.ID)
	}
	if c.o.showName {
		fmt.Fprintf(c.stdout, "workunit name: %s\n", w.Name)
	}
	return 0
}

// insertBatchMax is the size of the VALUES text past which create_work
// --stdin inserts what it has accumulated ("MySQL can handle queries at
// least 1 MB"): a big submission is inserted in chunks while its input is
// still being read, not all at its end.
const insertBatchMax = 1000000

// bulk is --stdin mode, as BOINC's create_work does it: an assigned job
// (--target_*/--broadcast* on the command line or on its line) is created
// at once, on its own; the others are gathered into multi-row inserts, each
// sent once its text would pass insertBatchMax, the rest at the end of the
// input. A failure exits at once and leaves what was inserted before it.
func (c *creator) bulk(ctx context.Context, stdin io.Reader, cmdTmpl string) int {
	r := bufio.NewReader(stdin)
	b := &rowBatch{}
	var last *wucreate.Row // the previous unassigned line's row
	for n := 0; ; n++ {
		line, tooLong, err := readJobLine(r)
		if tooLong {
			fmt.Fprintf(c.stderr, "fgets() buffer was too small\n")
			return 1
		}
		if line == "" && err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(c.stderr, "create_work: reading stdin: %v\n", err)
				return 1
			}
			break
		}
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		jd := c.o.job
		jd.Files = append([]wucreate.InFile(nil), c.o.job.Files...)
		jd.WU.Name = ""
		words := splitJobLine(line)
		if len(words) > stdinMaxWords {
			fmt.Fprintf(c.stderr, "create_work: more than %d words on stdin line %d\n", stdinMaxWords, n+1)
			return 1
		}
		if err := parseStdinLine(&jd, words, c.stderr); err != nil {
			return 1
		}
		if jd.WU.Name == "" {
			jd.WU.Name = fmt.Sprintf("%s_%d", c.o.job.WU.Name, n)
		}
		if jd.Assign && !c.o.job.Assign {
			// Assigned by its line: BOINC creates it at once with the
			// command line's input template (the line's is not read).
			if !c.createOne(ctx, &jd, cmdTmpl) {
				return 1
			}
			continue
		}
		tmpl, ok := c.template(jd.WUTemplateFile)
		if !ok {
			fmt.Fprintf(c.stderr, "Can't read WU template %s\n", jd.WUTemplateFile)
			return 1
		}
		if tmpl == "" {
			fmt.Fprintf(c.stderr, "job is missing input template\n")
			return 1
		}
		if jd.Assign {
			if !c.createOne(ctx, &jd, tmpl) {
				return 1
			}
			continue
		}
		w, code, skipped := c.env.Prepare(&jd, tmpl)
		switch {
		case code != 0:
			fmt.Fprintf(c.stderr, "create_work() failed: %d\n", code)
			if !c.o.continueOnError {
				return 1
			}
			continue
		case skipped:
			// BOINC reuses the previous line's VALUES here (a bug that
			// surfaces as a duplicate entry); a first line is just dropped.
			if last == nil {
				continue
			}
			w = last
		}
		last = w
		b.add(w)
		if n := rowTextSize(w); b.size+2*n > insertBatchMax {
			if !c.insertBatch(ctx, b, true) {
				return 1
			}
		}
	}
	if len(b.rows) > 0 && !c.insertBatch(ctx, b, false) {
		return 1
	}
	return 0
}

// createOne creates an assigned job on its own, as BOINC's
// JOB_DESC::create does, with its messages.
func (c *creator) createOne(ctx context.Context, jd *wucreate.Job, tmpl string) bool {
	w, code, skipped := c.env.Prepare(jd, tmpl)
	if code != 0 {
		fmt.Fprintf(c.stderr, "create_work: %s\n", wucreate.BoincError(code))
		return false
	}
	if skipped {
		return true
	}
	if err := inTx(ctx, c.db, func(tx *sql.Tx) error { return w.Store(ctx, tx, c.appID) }); err != nil {
		c.storeFailed(w, err)
		return false
	}
	if c.o.verbose {
		fmt.Fprintf(c.stderr, "created workunit; name %s, ID %d\n", w.Name, w.ID)
	}
	return true
}

// storeFailed reports a failed insert (or --wu_id update) of one job.
func (c *creator) storeFailed(w *wucreate.Row, err error) {
	op := "insert"
	if w.ID != 0 {
		op = "update"
	}
	fmt.Fprintf(c.stderr, "Database error: %s\n", wucreate.MySQLMessage(err, w.Name))
	fmt.Fprintf(c.stderr, "query=%s into workunit set name='%s', ...\n", op, w.Name)
	fmt.Fprintf(c.stderr, "create_work: workunit.%s() Error 1\n", op)
	fmt.Fprintf(c.stderr, "create_work: Error 1\n")
}

// rowBatch is the unassigned jobs gathered for one multi-row insert, and
// the size of their VALUES text.
type rowBatch struct {
	rows []*wucreate.Row
	size int
}

func (b *rowBatch) add(w *wucreate.Row) {
	if len(b.rows) > 0 {
		b.size++ // the comma between rows
	}
	b.rows = append(b.rows, w)
	b.size += rowTextSize(w)
}

// rowTextSize is about the length of a row's text in BOINC's multi-row
// insert (DB_WORKUNIT::db_print_values): its strings, xml_doc mostly, and
// some 40 numeric columns.
func rowTextSize(w *wucreate.Row) int {
	return len(w.Name) + len(w.XMLDoc) + len(w.ResultTemplateFile) + len(w.Keywords) + 400
}

// insertBatch inserts b's rows in one statement (all or none of them) and
// empties b; midway tells a chunk sent before the input ended, whose
// failure message BOINC words with its size.
func (c *creator) insertBatch(ctx context.Context, b *rowBatch, midway bool) bool {
	var failed *wucreate.Row
	err := inTx(ctx, c.db, func(tx *sql.Tx) error {
		for _, w := range b.rows {
			cp := *w
			if err := cp.Store(ctx, tx, c.appID); err != nil {
				failed = w
				return err
			}
		}
		return nil
	})
	defer func() { b.rows, b.size = b.rows[:0], 0 }()
	if err == nil {
		return true
	}
	name := ""
	if failed != nil {
		name = failed.Name
	}
	msg := wucreate.MySQLMessage(err, name)
	var q strings.Builder
	for i, w := range b.rows {
		if i > 0 {
			q.WriteByte(',')
		}
		fmt.Fprintf(&q, "('%s',...)", w.Name)
	}
	fmt.Fprintf(c.stderr, "Database error: %s\n", msg)
	fmt.Fprintf(c.stderr, "query=insert into workunit values %s\n", q.String())
	if midway {
		fmt.Fprintf(c.stderr, "wu.insert_batch() failed: 1; size %d\n", b.size)
	} else {
		fmt.Fprintf(c.stderr, "wu.insert_batch() failed: 1\n")
	}
	fmt.Fprintf(c.stderr, "MySQL error: %s\n", msg)
	return false
}

// readJobLine reads one --stdin line, newline included, as fgets would.
func readJobLine(r *bufio.Reader) (line string, tooLong bool, err error) {
	var b []byte
	for {
		ch, err := r.ReadByte()
		if err != nil {
			return string(b), false, err
		}
		b = append(b, ch)
		if len(b) >= stdinLineMax {
			return string(b), true, nil
		}
		if ch == '\n' {
			return string(b), false, nil
		}
	}
}

// template returns a --stdin job's input template, read once per path.
func (c *creator) template(path string) (string, bool) {
	if t, ok := c.templates[path]; ok {
		return t, true
	}
	t, err := readTemplate(path)
	if err != nil {
		return "", false
	}
	c.templates[path] = t
	return t, true
}
