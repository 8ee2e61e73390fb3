package standin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/ctxsleep"
	"github.com/rboinc/rboinc/internal/md5sum"
)

// task is a result sent to the simulated volunteer host.
type task struct {
	resultID, wuID int64
	name, wuName   string
	app            string
	wuDoc, resDoc  string
}

// dispatch is the feeder and scheduler: the host asks for as many results
// as it has free slots, and one request sends them, highest priority
// first (BOINC's scheduler sends up to max_wus_to_send a request).
func (s *sim) dispatch(ctx context.Context, p *boinc.Project) error {
	for ctx.Err() == nil {
		s.mu.Lock()
		free := s.parallel - s.running
		s.mu.Unlock()
		if free <= 0 {
			return nil
		}
		ts, err := s.claim(ctx, min(free, maxWUsToSend))
		if err != nil || len(ts) == 0 {
			return err
		}
		s.mu.Lock()
		s.running += len(ts)
		s.mu.Unlock()
		for _, t := range ts {
			s.wg.Add(1)
			go func() {
				defer func() {
					s.mu.Lock()
					s.running--
					s.mu.Unlock()
					s.wg.Done()
					s.freed()
				}()
				s.compute(ctx, p, t)
			}()
		}
	}
	return nil
}

// maxWUsToSend is the most results one scheduler request sends
// (config.xml's max_wus_to_send as make_project writes it).
const maxWUsToSend = 50

// claim is one scheduler request: up to n unsent results sent to the
// volunteer's host in one transaction.
func (s *sim) claim(ctx context.Context, n int) ([]task, error) {
	var sent []task
	err := inTx(ctx, s.db, func(tx *sql.Tx) error {
		sent = sent[:0]
		rows, err := tx.QueryContext(ctx, `SELECT r.id, r.name, r.xml_doc_in, w.id, w.name, a.name, w.xml_doc, w.delay_bound
			FROM result r JOIN workunit w ON w.id = r.workunitid JOIN app a ON a.id = w.appid
			WHERE r.server_state = ? ORDER BY r.priority DESC, r.workunitid, r.id LIMIT ?`, serverUnsent, n)
		if err != nil {
			return err
		}
		var ts []task
		var delays []int64
		for rows.Next() {
			var t task
			var delay int64
			if err := rows.Scan(&t.resultID, &t.name, &t.resDoc, &t.wuID, &t.wuName, &t.app, &t.wuDoc, &delay); err != nil {
				rows.Close()
				return err
			}
			ts = append(ts, t)
			delays = append(delays, delay)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// The scheduler's send: to the volunteer's host, each due back
		// within its work unit's delay bound.
		now := time.Now().Unix()
		for i, t := range ts {
			res, err := tx.ExecContext(ctx, `UPDATE result SET server_state = ?, sent_time = ?, hostid = ?, userid = ?,
			report_deadline = ? WHERE id = ? AND server_state = ?`,
				serverInProgress, now, volunteerHost, volunteerUser, now+delays[i], t.resultID, serverUnsent)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				sent = append(sent, t)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sent, nil
}

// A reported result's client_state (BOINC's RESULT_FILES_DOWNLOADING,
// RESULT_FILES_UPLOADED and RESULT_COMPUTE_ERROR).
const (
	clientFilesDownloading = 1
	clientComputeError     = 3
	clientFilesUploaded    = 5
)

// maxStderr is how much of an app's stderr a result reports: its last 63
// KB, as BOINC's client reads it (read_stderr_file), within the 65,535 bytes
// of result.stderr_out (a BLOB).
const maxStderr = 63 << 10

// reportRetry is the first wait before a result that could not be recorded
// is reported again (doubling up to 30 s).
var reportRetry = time.Second

// compute runs one result like a volunteer host and reports it back.
func (s *sim) compute(ctx context.Context, p *boinc.Project, t task) {
	log := s.log.With("wu", t.wuName, "result", t.name)
	log.Info("WU started", "app", t.app)
	slot := filepath.Join(p.Dir, "slots", t.name)
	start := time.Now()
	var docOut string            // the client's report of its uploads: result.xml_doc_out
	var preMsg, clientMsg string // the client's own words before and after the app's stderr
	exitStatus, failure, downloading, done, noRoom := s.run(ctx, p, t, slot, &docOut, &preMsg, &clientMsg)
	if !done {
		os.RemoveAll(slot)
		return // stopped: the next Run sends the result again
	}
	// noRoom: a copy said so (ENOSPC), even with more than hostDiskFull's
	// megabyte free (an input bigger than what is left).
	if failure != "" && (noRoom || hostDiskFull(filepath.Dir(slot))) {
		// The simulated host's slots share the project's disk: a full one
		// is the host's lack of room, for which a real client waits (and
		// an upload the server refused for lack of room is retried), not
		// an error result. The result is sent again a moment later.
		os.RemoveAll(slot)
		deleteOutputs(p, t.resDoc) // what was already "uploaded" comes again
		log.Warn("the host's disk is full; the result is sent again", "failure", failure)
		s.resend(ctx, t)
		return
	}
	elapsed := time.Since(start).Seconds()
	var stderr string
	if downloading {
		// As a real client reports a task whose input it could not get:
		// never started, its stderr_out the client's message alone.
		elapsed, stderr = 0, stderrOut("", false, "", failure, maxStderr)
	} else {
		stderr = stderrOut(tailFile(filepath.Join(slot, "stderr.txt"), maxStderr), true, preMsg, clientMsg, maxStderr)
	}
	os.RemoveAll(slot)

	outcome := outcomeSuccess
	if failure != "" {
		outcome = outcomeClientError
		deleteOutputs(p, t.resDoc) // what was already "uploaded" goes, as for any error result
		docOut = ""
	}
	// A real client keeps a finished task and reports it again until the
	// scheduler takes it: a database away for a while (MariaDB restarting)
	// must not leave the result in progress until its deadline. Once the
	// stand-in stops, the result stays in progress and the next Run sends it
	// again, as for a task cut short.
	stop := ctx
	ctx = context.WithoutCancel(ctx) // the result is over: record it even when stopping
	var decidedBefore bool
	record := func() error {
		return inTx(ctx, s.db, func(tx *sql.Tx) error {
			var state int
			if err := tx.QueryRowContext(ctx, `SELECT assimilate_state FROM workunit WHERE id = ?`+s.lockRow(), t.wuID).Scan(&state); err != nil {
				return err
			}
			decidedBefore = state != assimInit
			clientState := clientFilesUploaded
			switch {
			case downloading:
				clientState = clientFilesDownloading
			case failure != "":
				clientState = clientComputeError
			}
			if _, err := tx.ExecContext(ctx, `UPDATE result SET server_state = ?, outcome = ?, client_state = ?, exit_status = ?,
			elapsed_time = ?, cpu_time = ?, received_time = ?, stderr_out = ?, xml_doc_out = ? WHERE id = ?`,
				serverOver, outcome, clientState, exitStatus, elapsed, elapsed, time.Now().Unix(), stderr, docOut, t.resultID); err != nil {
				return err
			}
			return s.transition(ctx, tx, p, t.wuID)
		})
	}
	for wait := reportRetry; ; wait = min(2*wait, 30*time.Second) {
		err := record()
		if err == nil {
			break
		}
		log.Warn("cannot record the result yet; reporting it again", "err", err, "in", wait)
		if !ctxsleep.Sleep(stop, wait) {
			log.Error("cannot record the result; the stand-in stops, the next run sends it again", "err", err)
			return
		}
	}
	if decidedBefore && outcome == outcomeSuccess {
		deleteOutputs(p, t.resDoc) // not needed any more, as after validation
	}
	if failure != "" {
		log.Warn("result failed", "exit_status", exitStatus, "reason", failure, "elapsed", elapsed, "stderr", tailString(stderr, 2000))
	} else {
		log.Info("result succeeded", "elapsed", elapsed)
	}
}

// run prepares the slot, runs the app and uploads the outputs. failure is
// empty on success; downloading says the inputs could not be downloaded
// (failure is then the client's message); done is false when the run was
// interrupted by ctx. clientMsg gets what the client appends to the
// result's stderr_out for outputs it found absent or too big.
func (s *sim) run(ctx context.Context, p *boinc.Project, t task, slot string, docOut, preMsg, clientMsg *string) (exitStatus int, failure string, downloading, done, noRoom bool) {
	if err := os.RemoveAll(slot); err != nil {
		return 0, fmt.Sprintf("cannot clear slot: %v", err), false, true, false
	}
	if err := os.MkdirAll(slot, 0o755); err != nil {
		return 0, fmt.Sprintf("cannot make slot: %v", err), false, true, errors.Is(err, syscall.ENOSPC)
	}
	wd := parseWUDoc(t.wuDoc)
	if err := stageInputs(p, wd, slot); err != nil {
		var de *downloadError
		if errors.As(err, &de) {
			return errResultDownload, de.clientMessage(), true, true, false
		}
		return 0, err.Error(), false, true, errors.Is(err, syscall.ENOSPC)
	}
	status, err := s.runApp(ctx, p, t.app, strings.Fields(wd.cmdline), slot)
	if ctx.Err() != nil && err != nil {
		return 0, "", false, false, false
	}
	if err != nil {
		if status > 0 {
			// The client's words come before the app's stderr here: it
			// reports the error as the app exits, and reads stderr.txt
			// after (client/app_control.cpp handle_exited_app).
			*preMsg = fmt.Sprintf("<message>\nprocess exited with code %d (0x%x, %d)</message>\n", status, status, ^0xff|status)
		}
		return status, err.Error(), false, true, false
	}
	doc, err := uploadOutputs(p, t.resDoc, slot)
	var bad outputsError
	if errors.As(err, &bad) {
		*clientMsg = bad.clientMessage()
	}
	if err != nil {
		return 0, err.Error(), false, true, errors.Is(err, syscall.ENOSPC)
	}
	*docOut = doc
	return 0, "", false, true, false
}

// stageInputs puts the WU's inputs into the slot under their open names, as
// the client does after downloading and checking them.
func stageInputs(p *boinc.Project, wd wuDoc, slot string) error {
	md5s := map[string]string{}
	gzipped := map[string]bool{}
	for _, f := range wd.files {
		md5s[f.name] = f.md5
		gzipped[f.name] = f.gzipped
	}
	for _, r := range wd.refs {
		if badPhysicalName(r.fileName) || badPhysicalName(r.openName) {
			return fmt.Errorf("bad input file name %q or open name %q", r.fileName, r.openName)
		}
		src := boinc.HierPath(p.DownloadDir, r.fileName, p.Fanout)
		dst := filepath.Join(slot, r.openName)
		var err error
		sum := "" // the MD5 of what the slot got, when a copy hashed it on the way
		if gzipped[r.fileName] {
			sum, err = gunzipToSlot(src+".gz", dst)
		} else if r.copyFile {
			sum, err = copyToSlot(src, dst)
		} else if err = os.Link(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			sum, err = copyToSlot(src, dst)
		}
		if errors.Is(err, os.ErrNotExist) {
			// The web server answers 404: the client gives up at once.
			return &downloadError{file: r.fileName, code: errHTTPPermanent}
		}
		if err != nil {
			return fmt.Errorf("download of input %s failed: %w", r.fileName, err)
		}
		if want := md5s[r.fileName]; want != "" {
			if sum == "" {
				if sum, _, err = md5sum.File(dst); err != nil {
					return fmt.Errorf("checking input %s: %w", r.fileName, err)
				}
			}
			if sum != want {
				return &downloadError{file: r.fileName, code: errMD5Failed}
			}
		}
	}
	return nil
}

// runApp runs apps/<app>/run in the slot with stdin from /dev/null and
// stdout and stderr in stderr.txt, killing its process group on timeout.
func (s *sim) runApp(ctx context.Context, p *boinc.Project, app string, argv []string, slot string) (int, error) {
	out, err := os.Create(filepath.Join(slot, "stderr.txt"))
	if err != nil {
		return 0, fmt.Errorf("cannot create stderr.txt: %w", err)
	}
	defer out.Close()
	rctx, cancel := context.WithTimeout(ctx, s.appTimeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, filepath.Join(p.Dir, "apps", app, "run"), argv...)
	cmd.Dir = slot
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leave no helper processes behind
	}
	if err == nil {
		return 0, nil
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return 0, fmt.Errorf("app ran longer than %v and was killed", s.appTimeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), fmt.Errorf("app exited with %v", ee.ProcessState)
	}
	return 0, fmt.Errorf("cannot run app %s: %w", app, err)
}

// uploadOutputs moves each output from the slot into the upload hierarchy,
// with the checks the client and upload handler make, and returns what the
// client reports of them (result.xml_doc_out): a <file_info> per output
// uploaded, in the result's order, with its size and MD5 as a real client
// sends them.
func uploadOutputs(p *boinc.Project, resDoc, slot string) (string, error) {
	outs, err := parseResultDoc(resDoc)
	if err != nil {
		return "", err
	}
	// The client checks every output before it reports (app_finished),
	// deleting one that is too big. Its limit is the file_info's
	// <max_nbytes>, 0 when there is none: a nonempty output without one
	// fails too ("size > fip->max_nbytes", no exception for 0).
	var bad outputsError
	var present []outFile
	for _, o := range outs {
		if badPhysicalName(o.name) || badPhysicalName(o.openName) {
			return "", fmt.Errorf("bad output file name %q or open name %q", o.name, o.openName)
		}
		src := filepath.Join(slot, o.openName)
		fi, err := os.Stat(src)
		switch {
		case err != nil && o.optional:
		case err != nil:
			bad = append(bad, outputFailure{name: o.name, openName: o.openName, code: errNotFound})
		case float64(fi.Size()) > o.maxNBytes:
			bad = append(bad, outputFailure{name: o.name, openName: o.openName, code: errFileTooBig, size: fi.Size(), max: o.maxNBytes})
			os.Remove(src)
		default:
			present = append(present, o)
		}
	}
	if len(bad) > 0 {
		return "", bad
	}
	var doc strings.Builder
	for _, o := range present {
		src := filepath.Join(slot, o.openName)
		// The client checks the size first, then compresses (app_finished).
		if o.gzip {
			if err := gzipInPlace(src); err != nil {
				return "", err
			}
		}
		dst := boinc.HierPath(p.UploadDir, o.name, p.Fanout)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("upload of %s failed: %w", o.name, err)
		}
		if err := moveFile(src, dst); err != nil {
			return "", fmt.Errorf("upload of %s failed: %w", o.name, err)
		}
		sum, n, err := md5sum.File(dst)
		if err != nil {
			return "", fmt.Errorf("upload of %s failed: %w", o.name, err)
		}
		fmt.Fprintf(&doc, "<file_info>\n    <name>%s</name>\n    <nbytes>%f</nbytes>\n    <max_nbytes>%f</max_nbytes>\n    <md5_cksum>%s</md5_cksum>\n    <upload_url>%s</upload_url>\n</file_info>\n",
			xmlEscape(o.name), float64(n), o.maxNBytes, sum, xmlEscape(o.uploadURL))
	}
	return doc.String(), nil
}

// deleteOutputs removes a result's outputs from the upload hierarchy.
func deleteOutputs(p *boinc.Project, resDoc string) {
	outs, _ := parseResultDoc(resDoc)
	for _, o := range outs {
		if !badPhysicalName(o.name) {
			os.Remove(boinc.HierPath(p.UploadDir, o.name, p.Fanout))
		}
	}
}

// tailFile returns at most the last n bytes of a file.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return string(b)
}

func tailString(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// hostDiskFull tells whether the file system of dir has less than a
// mebibyte left.
func hostDiskFull(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return int64(st.Bavail)*int64(st.Bsize) < 1<<20 // Bsize is uint32 on some systems
}

// resend puts a result the host could not run back among the unsent ones,
// after a pause (the disk stays full a while; the host does not spin).
func (s *sim) resend(ctx context.Context, t task) {
	if _, err := s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE result SET server_state = ?, sent_time = 0 WHERE id = ? AND server_state = ?`,
		serverUnsent, t.resultID, serverInProgress); err != nil {
		s.log.Error("cannot send the result again", "result", t.name, "err", err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
}
