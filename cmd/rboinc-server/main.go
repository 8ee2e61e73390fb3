// Command rboinc-server is the rboinc server: the HTTP API and WebDAV area
// (standalone, or one request at a time as a CGI program), the assimilator
// hook BOINC calls (`process`), rboinc's BOINC daemons (`creator`,
// `notifier`, `assimilator`; package daemon runs them), administration
// (`init`, `user`, `gc`) and the embedded BOINC stand-in's create_work.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/daemon"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/hookargs"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/standin"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/webstatus"
	"github.com/rboinc/rboinc/internal/words"
)

func main() {
	log := newLogger()
	slog.SetDefault(log)
	// BOINC's tools and the web server call this binary in fixed forms that
	// a flag parser must not touch (the hook's `--error` is an argument).
	if len(os.Args) > 2 && os.Args[1] == "standin" && os.Args[2] == "create_work" {
		os.Exit(standin.CreateWorkMain(os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 2 && os.Args[1] == "standin" && os.Args[2] == "cancel_jobs" {
		os.Exit(standin.CancelJobsMain(os.Args[3:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "process" {
		// BOINC never calls the hook with one of these alone.
		if len(os.Args) == 3 && (os.Args[2] == "--help" || os.Args[2] == "-help" || os.Args[2] == "-h") {
			fmt.Print(hookargs.Usage)
			os.Exit(0)
		}
		os.Exit(runHook(os.Args[2:], log))
	}
	if os.Getenv("GATEWAY_INTERFACE") != "" {
		os.Exit(runCGI(log))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	a := app(log)
	// RBOINC_CPUPROFILE=FILE writes a CPU profile of the command (for
	// finding what a daemon spends its time on).
	if p := os.Getenv("RBOINC_CPUPROFILE"); p != "" {
		if f, err := os.Create(p + "." + strconv.Itoa(os.Getpid())); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
		}
	}
	code := runContext(ctx, a, flagsFirst(a, os.Args))
	pprof.StopCPUProfile()
	stop()
	os.Exit(code)
}

func newLogger() *slog.Logger {
	level := slog.LevelInfo
	if v := os.Getenv("RBOINC_LOG_LEVEL"); v != "" {
		level.UnmarshalText([]byte(v))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// rootFlag is mandatory; needRoot says so (the library would print the
// whole help before its error).
var rootFlag = &cli.StringFlag{Name: "root", Usage: "server root `DIR` (mandatory)", EnvVars: []string{"RBOINC_ROOT"}}

func app(log *slog.Logger) *cli.App {
	return &cli.App{
		Name:  "rboinc-server",
		Usage: "submit and chain BOINC work units for remote scientists",
		// -version, --version: clitool.Early, like the clients.
		HideVersion: true,
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "version", Usage: "print the version and exit"}},
		Commands: []*cli.Command{
			{
				Name:  "init",
				Usage: "create a server root (with the embedded BOINC stand-in unless --boinc-project names a real project)",
				Flags: append(append([]cli.Flag{rootFlag,
					&cli.StringFlag{Name: "boinc-project", Usage: "a real BOINC project directory"},
					&cli.StringFlag{Name: "url", Usage: "URL clients use to reach this server", Value: "http://127.0.0.1:8080"},
					&cli.StringFlag{Name: "assimilator", Usage: "how finished work units reach rboinc: hook (BOINC's script_assimilator runs rboinc's hook; the default) or native (rboinc's own assimilator daemon reads BOINC's database)"},
					&cli.StringFlag{Name: "create", Usage: "how work units enter BOINC: create_work (the project's bin/create_work; the default) or native (rboinc inserts them into BOINC's database itself)"}},
					boincDBInput.flags()...), stateDBInput.flags()...),
				Action: func(c *cli.Context) error {
					// A bad value is a usage error (exit 2), as for every flag.
					if err := setup.CheckChoices(c.String("assimilator"), c.String("create")); err != nil {
						return usagef("%v", err)
					}
					if c.String("state-db") == "-" && c.String("boinc-db") == "-" {
						return usagef("--state-db - and --boinc-db - both read standard input: give one of them in a file (--state-db-file, --boinc-db-file)")
					}
					stateDB, err := stateDBInput.value(c, os.Stdin)
					if err != nil {
						return err
					}
					boincDB, err := boincDBInput.value(c, os.Stdin)
					if err != nil {
						return err
					}
					rep, err := setup.Init(c.Context, setup.Options{Root: c.String("root"), BoincProject: c.String("boinc-project"), URLBase: c.String("url"),
						Assimilator: c.String("assimilator"), BoincDB: boincDB, StateDB: stateDB, Create: c.String("create")})
					if err != nil {
						return err
					}
					printInit(os.Stdout, rep)
					return nil
				},
			},
			doctorCommand(),
			migrateCommand(),
			{
				Name:  "serve",
				Usage: "serve the API and WebDAV area, with the creator, the notifier and pool collection beside it (and the stand-in's volunteers)",
				Flags: []cli.Flag{rootFlag, &cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", Usage: "address to listen on (port 0: any free port)"},
					&cli.StringFlag{Name: "addr-file", Usage: "write the address actually listened on to this file once ready"},
					&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this PEM certificate (chain) `FILE`"},
					&cli.StringFlag{Name: "tls-key", Usage: "the PEM private key `FILE` of --tls-cert"},
					&cli.DurationFlag{Name: "status-refresh", Value: webstatus.DefaultRefresh, Usage: "how often the status pages (/rboinc_cgi/status/) reload themselves"}},
				Action: func(c *cli.Context) error {
					if err := checkServeFlags(c); err != nil {
						return err
					}
					root := c.String("root")
					if _, err := setup.InstallExe(absRoot(root), ""); err != nil {
						return err
					}
					e, err := engine.Open(c.Context, root, log)
					if err != nil {
						return err
					}
					defer e.Close()
					if err := e.CheckCreation(c.Context); err != nil {
						return err
					}
					var ready func(string)
					if f := c.String("addr-file"); f != "" {
						ready = func(addr string) {
							if err := atomicfile.Write(f, []byte(addr+"\n"), 0o644); err != nil {
								log.Error("writing --addr-file", "err", err)
							}
						}
					}
					l := server.Listen{Addr: c.String("listen"), CertFile: c.String("tls-cert"), KeyFile: c.String("tls-key"), StatusRefresh: c.Duration("status-refresh")}
					return daemon.Beside(c.Context, log, func(ctx context.Context) error {
						return server.ServeWith(ctx, e, l, log, ready)
					}, daemon.Serving(e, log)...)
				},
			},
			{
				Name:  "user",
				Usage: "manage accounts",
				Subcommands: []*cli.Command{
					{
						Name: "add", Usage: "create a user and print its token", ArgsUsage: "NAME",
						Flags: []cli.Flag{rootFlag, boincUserFlag, &cli.BoolFlag{Name: "admin", Usage: "make the user an administrator (see `rboinc-server user admin`)"}},
						Action: func(c *cli.Context) error {
							name := c.Args().First()
							if c.NArg() != 1 {
								return usagef("usage: rboinc-server user add --root DIR [--boinc-user ID] NAME")
							}
							if c.IsSet("boinc-user") {
								if err := checkBoincUser(c); err != nil {
									return err
								}
							}
							return withDB(c, func(db *store.DB) error {
								tok, err := addUser(c.Context, absRoot(c.String("root")), db, name)
								if err != nil {
									return err
								}
								if c.IsSet("boinc-user") {
									if err := db.SetBoincUser(c.Context, name, c.Int64("boinc-user")); err != nil {
										return err
									}
								}
								if c.Bool("admin") {
									if err := db.SetUserAdmin(c.Context, name, true); err != nil {
										return err
									}
								}
								fmt.Println(tok)
								return nil
							})
						},
					},
					linkCommand(),
					{
						Name: "list", Usage: "list users", Flags: []cli.Flag{rootFlag},
						Action: func(c *cli.Context) error {
							return withDB(c, func(db *store.DB) error {
								us, err := db.Users(c.Context)
								for _, u := range us {
									state := "active"
									if u.Disabled {
										state = "disabled"
									}
									if u.Admin {
										state += ",admin"
									}
									if u.BoincUserID != 0 {
										fmt.Printf("%s\t%s\tboinc user %d\n", u.Name, state, u.BoincUserID)
										continue
									}
									fmt.Printf("%s\t%s\n", u.Name, state)
								}
								return err
							})
						},
					},
					userStateCommand(true),
					userStateCommand(false),
					rotateCommand(),
					notifyCommand(),
					adminCommand(),
				},
			},
			{
				Name:  "volunteer",
				Usage: "run only the embedded BOINC stand-in's volunteer loop (when the API is served as CGI)",
				Flags: []cli.Flag{rootFlag, &cli.IntFlag{Name: "parallel", Usage: "work units computed at once (default: the project's config.xml rboinc_standin_slots, else 4)"}},
				Action: func(c *cli.Context) error {
					// Unset (0), the volunteer takes config.xml's slots, as
					// serve's does; a fixed default here would override them.
					if n := c.Int("parallel"); c.IsSet("parallel") && (n < 1 || n > boinc.MaxStandinSlots) {
						return usagef("--parallel %d: give 1 to %d work units at once", n, boinc.MaxStandinSlots)
					}
					cfg, err := engine.LoadConfig(absRoot(c.String("root")))
					if err != nil {
						return err
					}
					if !cfg.Simulated {
						return errors.New("this server root drives a real BOINC project: its own daemons compute and assimilate")
					}
					e, err := engine.Open(c.Context, c.String("root"), log)
					if err != nil {
						return err
					}
					defer e.Close()
					// The stand-in plays BOINC's daemons, rboinc's creator and
					// notifier among them.
					v := &standin.Volunteer{ProjectDir: cfg.BoincProject, Parallel: c.Int("parallel"), Logger: log}
					return daemon.Run(c.Context, log, daemon.Creator(e, daemon.CreatorPoll), daemon.Notifier(e, daemon.NotifierPoll), daemon.Standin(e, v))
				},
			},
			creatorCommand(log),
			notifierCommand(log),
			assimilatorCommand(log),
			installDocsCommand(),
			{
				Name:  "gc",
				Usage: "remove pool contents nothing refers to any more, and link missing inputs of waiting work units again",
				Flags: []cli.Flag{rootFlag, &cli.DurationFlag{Name: "grace", Value: daemon.CollectGrace, Usage: "spare contents asked about within this time (0: spare none)"}},
				Action: func(c *cli.Context) error {
					if g := c.Duration("grace"); g < 0 {
						return usagef("--grace %s: give 0 (spare nothing) or a positive duration", g)
					}
					e, err := engine.Open(c.Context, c.String("root"), log)
					if err != nil {
						return err
					}
					defer e.Close()
					n, err := e.Collect(c.Context, c.Duration("grace"))
					if err != nil {
						return err
					}
					fmt.Printf("removed %s\n", words.Count(n, "content", "contents"))
					// Under Apache without the creator daemon, gc is also
					// what links missing inputs of waiting work units again.
					r, err := e.CheckInputs(c.Context, true)
					if err != nil {
						log.Warn("checking the inputs of waiting work units", "err", err)
						return nil
					}
					for _, p := range r.Unrestorable {
						log.Error("an input of a waiting work unit cannot be linked again", "wu", p.WU, "file", p.File, "problem", p.Problem)
					}
					if len(r.Relinked) > 0 || len(r.Unrestorable) > 0 {
						fmt.Printf("linked %s of waiting work units again; %s could not be\n",
							words.Count(len(r.Relinked), "input", "inputs"), words.Count(len(r.Unrestorable), "input", "inputs"))
					}
					return nil
				},
			},
			reportCommand(),
			lateCommand(),
		},
	}
}

func absRoot(r string) string {
	a, err := filepath.Abs(r)
	if err != nil {
		return r
	}
	return a
}

func withDB(c *cli.Context, fn func(*store.DB) error) error {
	root := c.String("root")
	db, err := engine.OpenState(c.Context, root)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// addUser creates the account and lets the same token through Apache's
// mod_dav (dav.htpasswd), for the CGI deployment.
func addUser(ctx context.Context, root string, db *store.DB, name string) (string, error) {
	if err := naming.CheckUser(name); err != nil {
		return "", usagef("%v", err)
	}
	tok := server.NewToken()
	if _, err := db.AddUser(ctx, name, server.HashToken(tok)); err != nil {
		return "", err
	}
	if err := setup.SetDAVPassword(root, name, tok); err != nil {
		return "", fmt.Errorf("user %s created, but Apache's WebDAV will refuse them: %w", name, err)
	}
	return tok, nil
}

// runHook is `rboinc-server process [--root DIR] ARGS...`, called by BOINC's
// script_assimilator. Exit 0 unless the assimilator must stop and retry.
func runHook(args []string, log *slog.Logger) int {
	root, args := hookargs.SplitRoot(args, os.Getenv)
	if root == "" {
		log.Error("hook: no server root: pass --root DIR or set RBOINC_ROOT")
		return 2
	}
	// rboinc-hook, the small program the installed hook runs, spools the
	// call itself and hands over with --spooled ENTRY [--alone].
	entry, alone, args, err := hookargs.SplitSpooled(args)
	if err != nil {
		log.Error("hook: bad --spooled entry name; ignored", "err", err)
		return 0
	}
	call, err := hookargs.Parse(args)
	if err != nil {
		// Arguments we cannot understand will not improve on retry, and
		// stopping the assimilator would block every other work unit; but
		// outputs of rboinc's work units are kept before BOINC deletes them.
		kept, kerr := engine.KeepUnreadable(context.Background(), root, args, err, log)
		if kerr != nil {
			spool.RecordFailure(root, "", kerr.Error())
			log.Error("hook: cannot keep the outputs of a call it cannot read; BOINC will retry this work unit", "args", strings.Join(args, " "), "err", kerr)
			return 1
		}
		switch {
		case kept:
		case errors.Is(err, hookargs.ErrNotRboinc):
			log.Warn("BOINC finished a work unit rboinc did not create; ignored", "args", strings.Join(args, " "))
		default:
			log.Error("hook: cannot understand the call; ignored", "args", strings.Join(args, " "), "err", err)
		}
		return 0
	}
	if entry != "" {
		err = engine.Handover(context.Background(), root, call, entry, alone, log)
	} else {
		err = engine.Hook(context.Background(), root, call, log)
	}
	if err != nil {
		spool.RecordFailure(root, call.WUName, err.Error())
		log.Error("hook: failed; BOINC will retry this work unit", "wu", call.WUName, "err", err)
		return 1
	}
	return 0
}

// runCGI serves one request under a web server. The root comes from
// RBOINC_ROOT, or from a file rboinc.root beside the program.
func runCGI(log *slog.Logger) int {
	root := os.Getenv("RBOINC_ROOT")
	if root == "" {
		if exe, err := os.Executable(); err == nil {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(exe), "rboinc.root")); err == nil {
				root = strings.TrimSpace(string(b))
			}
		}
	}
	if root == "" {
		fmt.Print("Status: 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\nrboinc-server: no server root: set RBOINC_ROOT or write it into rboinc.root beside the program\n")
		return 0
	}
	e, err := engine.Open(context.Background(), root, log)
	if err != nil {
		// The error names files and databases: for the log (Apache's
		// error log), not for the caller.
		id := reqid.New()
		log.Error("cgi: opening the server root", "request_id", id, "err", err)
		fmt.Printf("Status: 500 Internal Server Error\r\nContent-Type: text/plain\r\n%s: %s\r\n\r\nrboinc-server: %s\n", reqid.Header, id, reqid.Message(id))
		return 0
	}
	defer e.Close()
	if err := server.ServeCGI(e, log); err != nil {
		log.Error("cgi", "err", err)
		return 1
	}
	return 0
}
