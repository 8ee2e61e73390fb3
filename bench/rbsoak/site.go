package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// proc is one long-running process the driver started and restarts after
// killing it (the server, the creator, the notifier).
type proc struct {
	name string
	args []string
	log  string
	env  []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), p.env...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	return nil
}

// pid of the running process, 0 when none runs.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// kill9 kills the process with SIGKILL and waits for it.
func (p *proc) kill9() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-done
}

// stop asks the process to stop (SIGTERM), and kills it after 15 s.
func (p *proc) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// user is one scientist of the soak.
type user struct {
	name, token string
}

// setupSite makes the server root: on a tmpfs when it can be mounted (for
// the disk-full fault), with the stand-in's native assimilator (or with
// -assimilator hook, BOINC's script_assimilator and rboinc's hook), webhooks
// to the driver allowed, retries quick.
func (s *soak) setupSite(ctx context.Context) error {
	s.mnt = filepath.Join(s.o.work, "rootfs")
	if err := os.MkdirAll(s.mnt, 0o755); err != nil {
		return err
	}
	s.mountRoot(ctx, true)
	s.root = filepath.Join(s.mnt, "root")
	srv := filepath.Join(s.o.bin, "rboinc-server")
	args := []string{"init", "--root", s.root, "--assimilator", s.o.assimilator}
	var stdin string
	if s.o.mariadb {
		if err := s.startMariaDB(ctx); err != nil {
			return err
		}
		args = append(args, "--state-db", "-", "--boinc-db-file", s.boincDBFile)
		stdin = s.stateURL + "\n"
	}
	cmd := exec.CommandContext(ctx, srv, args...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rboinc-server init: %w: %s", err, out)
	}
	cfgPath := filepath.Join(s.root, engine.ConfigFile)
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return err
	}
	cfg["notify_allow"] = []string{"127.0.0.1"}
	cfg["retry_backoff"] = 0.5
	cfg["max_step_attempts"] = 2
	cfg["max_running_chains"] = 0
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(cfgPath, append(data, '\n'), 0o600); err != nil {
		return err
	}
	for i := range s.o.users {
		name := fmt.Sprintf("soak%d", i+1)
		out, err := exec.CommandContext(ctx, srv, "user", "add", "--root", s.root, name).Output()
		if err != nil {
			return fmt.Errorf("user add %s: %w", name, err)
		}
		u := &user{name: name, token: strings.TrimSpace(string(out))}
		s.users = append(s.users, u)
		hook := s.hooks.url + "/" + name
		if out, err := exec.CommandContext(ctx, srv, "user", "notify", "--root", s.root, name, "--webhook", hook, "--events", webhookEvents(i, s.o.stepEvents)).CombinedOutput(); err != nil {
			return fmt.Errorf("user notify %s: %w: %s", name, err, out)
		}
	}
	if s.o.app != "" {
		if err := installApp(filepath.Join(s.root, "boinc", "apps", "langevin", "run"), s.o.app); err != nil {
			return err
		}
	}
	if s.o.slots > 0 {
		if err := setStandinSlots(filepath.Join(s.root, "boinc", "config.xml"), s.o.slots); err != nil {
			return err
		}
	}
	// A fixed port, so that the clients' address survives the server's
	// restarts.
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	return s.startDaemons(ctx, addr)
}

// freeLoopbackAddr is a loopback address with a port free now, for a
// server the driver starts (and starts again on the same address).
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startDaemons starts the server on addr, the creator and the notifier,
// and waits until the server answers.
func (s *soak) startDaemons(ctx context.Context, addr string) error {
	srv := filepath.Join(s.o.bin, "rboinc-server")
	s.url = "http://" + addr + "/rboinc_cgi"
	logs := filepath.Join(s.o.work, "logs")
	os.MkdirAll(logs, 0o755)
	s.server = &proc{name: "server", log: filepath.Join(logs, "server.log"),
		args: []string{srv, "serve", "--root", s.root, "--listen", addr}}
	// The creator and the notifier also run as daemons of their own, as
	// on a BOINC project; serve's own wait on their locks and take over
	// while one is killed.
	s.creator = &proc{name: "creator", log: filepath.Join(logs, "creator.log"), args: []string{srv, "creator", "--root", s.root, "-d", "2"}}
	s.notifier = &proc{name: "notifier", log: filepath.Join(logs, "notifier.log"), args: []string{srv, "notifier", "--root", s.root, "-d", "2"}}
	for _, p := range []*proc{s.creator, s.notifier, s.server} {
		if err := p.start(); err != nil {
			return err
		}
	}
	return s.waitServer(ctx, 30*time.Second)
}

// chainEvents are the events the end check wants of every chain and
// group: all but the step events.
const chainEvents = "chain_done,chain_failed,chain_stopped,chain_resumed,chain_extended,chain_aborted,group_done"

// webhookEvents are the events user i's webhook takes: every event for the
// first stepUsers users (all of them when stepUsers < 0), chain and group
// events for the others. A step event is a delivery per work unit, most of
// a long run's notifications: one user's keep them tried at length.
func webhookEvents(i, stepUsers int) string {
	if stepUsers < 0 || i < stepUsers {
		return "all"
	}
	return chainEvents
}

// installApp puts the executable src in the place of the langevin queue's
// app (before the server starts): the stand-in's volunteer runs it as it
// runs the shipped script, in the slot with the inputs under their open
// names. Written beside and renamed, as an app update would be.
func installApp(dst, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("the app: %w", err)
	}
	if _, err := os.Stat(dst); err != nil {
		return fmt.Errorf("the langevin queue's app: %w", err)
	}
	tmp := dst + ".new"
	err = os.WriteFile(tmp, data, 0o755)
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("installing the app: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("installing the app: %w", err)
	}
	return nil
}

// setStandinSlots sets the stand-in's rboinc_standin_slots in its
// config.xml (before the server starts, which reads it).
func setStandinSlots(cfg string, n int) error {
	fi, err := os.Stat(cfg)
	if err != nil {
		return fmt.Errorf("the stand-in's config: %w", err)
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		return fmt.Errorf("the stand-in's config: %w", err)
	}
	s := string(b)
	if !strings.Contains(s, "</config>") {
		return fmt.Errorf("the stand-in's config %s has no </config>", cfg)
	}
	s = strings.Replace(s, "</config>", fmt.Sprintf("    <rboinc_standin_slots>%d</rboinc_standin_slots>\n    </config>", n), 1)
	return os.WriteFile(cfg, []byte(s), fi.Mode().Perm())
}

// waitServer waits until the server answers.
func (s *soak) waitServer(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimSuffix(s.url, "/rboinc_cgi"), "http://"), time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("the server did not answer within " + limit.String())
}

// rootProcs are the processes whose command line names the server root:
// every process the driver started, directly or through the server (the
// stand-in's daemons, create_work runs).
func (s *soak) rootProcs(match string) []int {
	if s.root == "" {
		return nil // every command line holds "": no process is the soak's yet
	}
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cl, s.root) && strings.Contains(cl, match) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// close stops everything the driver started and unmounts the tmpfs.
func (s *soak) close() {
	s.stopHost2()
	for _, p := range []*proc{s.server, s.creator, s.notifier} {
		if p != nil {
			p.stop()
		}
	}
	// Daemons the server's stand-in started and that outlived a killed
	// server (as bin/start's daemons outlive it on a project).
	for _, pid := range s.rootProcs("") {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if s.db != nil {
		s.db.Stop()
	}
	if s.hooks != nil {
		s.hooks.close()
	}
	s.j.close()
	if s.ctx.Err() != nil && s.j != nil && !s.j.off && s.root != "" {
		// Interrupted (SIGTERM, ^C): the run goes on with -resume.
		s.unmountRoot()
		fmt.Printf("interrupted: the run goes on with rbsoak -resume -work %s (bench/soak.sh --resume %s)\n", s.o.work, s.o.work)
		return
	}
	if s.o.keep {
		fmt.Printf("kept: the server root %s (a tmpfs: umount %s when done), MariaDB's data %s\n", s.root, s.mnt, s.dbDir)
		return
	}
	if s.root != "" {
		os.RemoveAll(s.root)
	}
	if s.hostB != nil {
		os.RemoveAll(s.hostB.root)
	}
	if s.dbDir != "" {
		os.RemoveAll(s.dbDir) // the link to it, in resumable runs (mariadb.go)
		if s.dbData != "" {
			os.RemoveAll(s.dbData)
		}
	}
	s.unmountRoot()
	if s.o.rootfs == rootImage {
		os.Remove(filepath.Join(s.o.work, imageName))
	}
}

func (s *soak) unmountRoot() {
	if s.mounted {
		if out, err := exec.Command("umount", s.mnt).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "rbsoak: umount %s: %v: %s\n", s.mnt, err, out)
		}
	}
}

// jitter is d times a random factor between 0.5 and 1.5.
func (s *soak) jitter(d time.Duration) time.Duration {
	s.rmu.Lock()
	f := 0.5 + s.rng.Float64()
	s.rmu.Unlock()
	return time.Duration(float64(d) * f)
}

func (s *soak) intn(n int) int {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.rng.IntN(n)
}
