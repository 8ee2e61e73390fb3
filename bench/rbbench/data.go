package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/workflow/client"
)

// writeRandom writes size pseudo-random (incompressible, reproducible)
// bytes to path.
func writeRandom(path string, size int64, seed uint64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	src := rand.NewChaCha8(s)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	buf := make([]byte, 1<<20)
	for left := size; left > 0; {
		n := int64(len(buf))
		if left < n {
			n = left
		}
		src.Read(buf[:n])
		if _, err := w.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		left -= n
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSmallInputs writes the shared small inputs: coordinates and
// velocities of the langevin example.
func (b *bench) writeSmallInputs() error {
	if err := os.WriteFile(b.path("v.vel"), []byte("0 0 0\n0.1 0 0\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(b.path("c.coor"), []byte("1 2 3\n4 5 6\n"), 0o644)
}

func (b *bench) path(name string) string { return filepath.Join(b.data, name) }

// jobsFile writes a jobs file of n chains named prefix0..; with perChain,
// each chain gets its own coordinates file (all distinct contents).
func (b *bench) jobsFile(name, prefix string, n int, perChain bool) (string, error) {
	dir := b.path(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		if perChain {
			p := filepath.Join(dir, fmt.Sprintf("%s%d.coor", prefix, i))
			if err := os.WriteFile(p, []byte(fmt.Sprintf("%d 0 0\n0 %d 0\n%s\n", i, i, prefix)), 0o644); err != nil {
				return "", err
			}
			fmt.Fprintf(&sb, "%s%d -coor_file %s\n", prefix, i, p)
		} else {
			fmt.Fprintf(&sb, "%s%d\n", prefix, i)
		}
	}
	jobs := filepath.Join(dir, "jobs")
	return jobs, os.WriteFile(jobs, []byte(sb.String()), 0o644)
}

// submitReport is rboinc-submit -json.
type submitReport struct {
	Chains []struct {
		Name    string `json:"name"`
		FirstWU string `json:"first_wu"`
	} `json:"chains"`
	UploadedFiles int   `json:"uploaded_files"`
	UploadedBytes int64 `json:"uploaded_bytes"`
	ReusedFiles   int   `json:"reused_files"`
}

// submit runs rboinc-submit with -json and the given arguments.
func (b *bench) submit(args ...string) (runResult, submitReport, error) {
	var rep submitReport
	args = append([]string{"-app_name", "langevin", "-json"}, args...)
	// RBBENCH_CLIENT_LOG=FILE: the clients' debug lines (their timing)
	// are appended to FILE.
	logTo := os.Getenv("RBBENCH_CLIENT_LOG")
	if logTo != "" {
		args = append([]string{"-verbose"}, args...)
	}
	r, err := run(b.ctx, cmdSpec{Name: filepath.Join(b.bin, "rboinc-submit"), Args: args, Env: b.srv.env()})
	if logTo != "" {
		appendLog(logTo, r.Stderr)
	}
	if err != nil {
		return r, rep, err
	}
	if err := json.Unmarshal(r.Stdout, &rep); err != nil {
		return r, rep, fmt.Errorf("rboinc-submit -json printed something else: %w", err)
	}
	return r, rep, nil
}

// retrieve runs rboinc-retrieve with -json and the given arguments.
func (b *bench) retrieve(args ...string) (runResult, client.RetrieveReport, error) {
	var rep client.RetrieveReport
	args = append([]string{"-json"}, args...)
	r, err := run(b.ctx, cmdSpec{Name: filepath.Join(b.bin, "rboinc-retrieve"), Args: args, Env: b.srv.env()})
	if err != nil {
		return r, rep, err
	}
	if err := json.Unmarshal(r.Stdout, &rep); err != nil {
		return r, rep, fmt.Errorf("rboinc-retrieve -json printed something else: %w", err)
	}
	return r, rep, nil
}

// outputs puts the outputs of a langevin work unit into BOINC's upload
// hierarchy as a volunteer's upload would: three files of size bytes
// (small text when size is 0), and returns their paths in file_ref order.
func (b *bench) outputs(wu string, size int64, seed uint64) ([]string, error) {
	var paths []string
	for k := 0; k < 3; k++ {
		p := b.eng.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		var err error
		if size == 0 {
			err = os.WriteFile(p, []byte(fmt.Sprintf("%d %d 0\n", k, seed)), 0o644)
		} else {
			err = writeRandom(p, size, seed*4+uint64(k))
		}
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// hookCall is the hook's command line for a work unit's outputs, as
// script_assimilator gives it: WU_ID PATH...
func hookArgs(id int, paths []string) []string {
	return append([]string{fmt.Sprint(id)}, paths...)
}

// createWorkLines rebuilds the create_work --stdin input the server used
// for these first work units, under new names (prefix + name), and the
// options of that run.
func (b *bench) createWorkLines(ctx context.Context, wus []string, prefix string) (string, []string, error) {
	var sb strings.Builder
	var args []string
	for _, wu := range wus {
		c, s, err := b.state.StepByWU(ctx, wu)
		if err != nil {
			return "", nil, fmt.Errorf("work unit %s: %w", wu, err)
		}
		if args == nil {
			var p boinc.WorkParams
			if err := json.Unmarshal([]byte(c.Params), &p); err != nil {
				return "", nil, err
			}
			args = append(p.Args(), "--stdin")
		}
		var files []string
		for _, sum := range s.Inputs {
			if sum != "" {
				files = append(files, pool.PhysicalName(sum))
			}
		}
		j := boinc.Job{WUName: prefix + wu, WUTemplate: c.WUTmpl, ResultTemplate: c.ResTmpl, Priority: c.Priority - s.Step, Files: files}
		sb.WriteString(j.Line())
		sb.WriteByte('\n')
	}
	return sb.String(), args, nil
}
