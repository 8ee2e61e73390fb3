package standin

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/ctxsleep"
)

// startAssimilators starts one assimilator per app that has WUs ready.
func (s *sim) startAssimilators(ctx context.Context) error {
	p, err := boinc.LoadProject(s.dir)
	if err != nil {
		return err
	}
	native := p.NativeAssimilatorApps()
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT a.name FROM workunit w JOIN app a ON a.id = w.appid
		WHERE w.assimilate_state = ?`, assimReady)
	if err != nil {
		return err
	}
	var apps []string
	for rows.Next() {
		var app string
		if err := rows.Scan(&app); err != nil {
			rows.Close()
			return err
		}
		apps = append(apps, app)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, app := range apps {
		if native.Covers(app) {
			continue // rboinc's own assimilator daemon takes these
		}
		s.mu.Lock()
		busy := s.assimBusy[app]
		s.assimBusy[app] = true
		s.mu.Unlock()
		if busy {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer func() {
				s.mu.Lock()
				delete(s.assimBusy, app)
				s.mu.Unlock()
				s.wg.Done()
			}()
			s.assimilateApp(ctx, app)
		}()
	}
	return nil
}

// readyWU is a WU waiting for assimilation, with its canonical result.
type readyWU struct {
	id, canonicalID int64
	name            string
	batch           int64
	errorMask       int
	xmlDoc          string
	resDoc          string  // canonical result's xml_doc_in
	runtime         float64 // canonical result's elapsed time
}

// assimilateApp is one app's script_assimilator: WUs in id order, one at a
// time. A hook failure stalls the app for HookRetry, after which the same
// WU is tried first again, as when bin/start --cron restarts the daemon.
func (s *sim) assimilateApp(ctx context.Context, app string) {
	var retry int64
	for ctx.Err() == nil {
		p, err := boinc.LoadProject(s.dir)
		if s.report("config", err, "cannot read the project config") {
			return
		}
		script := p.AssimilatorScript(app)
		if script == "" {
			script = p.StandinScript
		}
		if script == "" {
			s.report("noscript:"+app, errors.New("no script_assimilator daemon for this app and no rboinc_standin_default_script"),
				"work units of app "+app+" wait for an assimilator")
			return
		}
		s.report("noscript:"+app, nil, "")
		w, ok, err := s.nextReady(ctx, app, retry)
		if err != nil {
			s.report("assim:"+app, err, "assimilator cannot read work units")
			return
		}
		if !ok {
			return
		}
		if err := s.assimilate(ctx, p, script, w); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Error("assimilator handler error; the app's assimilation stalls", "app", app, "wu", w.name,
				"err", err, "retry_in", s.hookRetry)
			retry = w.id
			if !ctxsleep.Sleep(ctx, s.hookRetry) {
				return
			}
			continue
		}
		retry = 0
	}
}

// nextReady picks the WU to assimilate: the one that failed last, else the
// ready WU of the app with the lowest id.
func (s *sim) nextReady(ctx context.Context, app string, retry int64) (readyWU, bool, error) {
	var w readyWU
	q := `SELECT id, name, batch, error_mask, canonical_resultid, xml_doc FROM workunit
		WHERE assimilate_state = ? AND appid = (SELECT id FROM app WHERE name = ?)`
	args := []any{assimReady, app}
	err := sql.ErrNoRows
	if retry != 0 {
		err = s.db.QueryRowContext(ctx, q+` AND id = ?`, append(args, retry)...).
			Scan(&w.id, &w.name, &w.batch, &w.errorMask, &w.canonicalID, &w.xmlDoc)
	}
	if errors.Is(err, sql.ErrNoRows) {
		err = s.db.QueryRowContext(ctx, q+` ORDER BY id LIMIT 1`, args...).
			Scan(&w.id, &w.name, &w.batch, &w.errorMask, &w.canonicalID, &w.xmlDoc)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return w, false, nil
	}
	if err != nil {
		return w, false, err
	}
	if w.canonicalID != 0 {
		err = s.db.QueryRowContext(ctx, `SELECT xml_doc_in, elapsed_time FROM result WHERE id = ?`, w.canonicalID).
			Scan(&w.resDoc, &w.runtime)
		if errors.Is(err, sql.ErrNoRows) {
			w.canonicalID = 0
			err = nil
		}
	}
	if w.canonicalID == 0 && w.errorMask == 0 {
		w.errorMask = errMaskNoCanonical // as the assimilator framework sets it
	}
	return w, true, err
}

// assimilate runs the hook for one WU exactly as script_assimilator does and,
// when it exits 0, marks the WU done and deletes its files like file_deleter.
func (s *sim) assimilate(ctx context.Context, p *boinc.Project, script string, w readyWU) error {
	cmdline, err := hookCommand(p, script, w)
	if err != nil {
		return err
	}
	host := p.Host
	if host == "" {
		host, _ = os.Hostname()
		host, _, _ = strings.Cut(host, ".")
	}
	tmp := filepath.Join(p.Dir, "tmp_"+host)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("making the daemons' directory %s: %w", tmp, err)
	}
	log := s.log.With("wu", w.name)
	log.Info("invoking hook", "cmd", cmdline, "dir", tmp)
	// BOINC passes the line to system(): through the shell, unquoted, and
	// relative to tmp_<host>. Reproducing that is the point of the stand-in.
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Dir = tmp
	out := &cappedBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 10 * time.Second // a hook's background children must not hold us
	runErr := cmd.Run()
	status := 0
	if runErr != nil {
		status = -1
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			status = ee.ExitCode()
		}
	}
	log.Info("hook finished", "exit_status", status, "output", out.String())
	if runErr != nil {
		if status > 0 {
			return fmt.Errorf("error %d from script: %s", status<<8, cmdline)
		}
		return fmt.Errorf("running script %s: %w", cmdline, runErr)
	}
	ctx = context.WithoutCancel(ctx) // the hook has run: record it even when stopping
	// As BOINC's assimilator framework: done, and the transitioner's turn
	// (which hands the files to the file deleter).
	if _, err := s.db.ExecContext(ctx, `UPDATE workunit SET assimilate_state = ?, transition_time = ? WHERE id = ?`,
		assimDone, time.Now().Unix(), w.id); err != nil {
		return fmt.Errorf("marking work unit %s assimilated: %w", w.name, err)
	}
	s.poke()
	return nil
}

// hookCommand builds the command line script_assimilator (before its 2025
// token bug) would run: tokens expanded for a success, --error for a failure.
func hookCommand(p *boinc.Project, script string, w readyWU) (string, error) {
	words := strings.Split(script, " ")
	var b strings.Builder
	b.WriteString("../bin/" + words[0])
	if w.errorMask != 0 {
		fmt.Fprintf(&b, " --error %d %s %d %d", w.errorMask, w.name, w.id, w.batch)
		return b.String(), nil
	}
	outs, err := parseResultDoc(w.resDoc)
	if err != nil {
		return "", fmt.Errorf("canonical result of %s: %w", w.name, err)
	}
	tokens := words[1:]
	if len(tokens) == 0 {
		tokens = []string{"wu_id", "files"}
	}
	for _, t := range tokens {
		switch t {
		case "files":
			for _, o := range outs {
				b.WriteString(" " + boinc.HierPath(p.UploadDir, o.name, p.Fanout))
			}
		case "files2":
			for _, o := range outs {
				b.WriteString(" " + boinc.HierPath(p.UploadDir, o.name, p.Fanout) + " " + o.openName)
			}
		case "wu_id":
			b.WriteString(" " + strconv.FormatInt(w.id, 10))
		case "wu_name":
			b.WriteString(" " + w.name)
		case "result_id":
			b.WriteString(" " + strconv.FormatInt(w.canonicalID, 10))
		case "runtime":
			fmt.Fprintf(&b, " %f", w.runtime)
		case "batch_id":
			b.WriteString(" " + strconv.FormatInt(w.batch, 10))
		}
	}
	return b.String(), nil
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
