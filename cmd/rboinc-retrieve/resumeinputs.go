package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

// catResumeInputs begins the category of the options -resume takes for
// new inputs: the file parameters of the chains' queue, named as
// rboinc-submit names them.
const catResumeInputs = "New inputs for -resume"

func main() {
	ctx, stop := clitool.SignalContext()
	code := run(ctx, os.Args)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	app := newApp()
	flags, err := resumeFlags(ctx, args[1:], app.Flags)
	if err != nil {
		// The full parse then refuses the parameter, after this says why
		// it is not known.
		fmt.Fprintf(os.Stderr, "%s: note: the file options of the chains' queue are not known: %v\n", prog, err)
	}
	app.Flags = append(app.Flags, flags...)
	return clitool.Run(ctx, app, args)
}

// resumeFlags are the -<parameter> FILE options of the queue of the chains
// a command line resumes, when it resumes and gives options beyond the
// fixed ones: the queue decides which exist, so the server is asked
// before the full parse (as rboinc-submit does with -app_name).
func resumeFlags(ctx context.Context, args []string, fixed []cli.Flag) ([]cli.Flag, error) {
	if _, err := clitool.ExpandArgs(args, fixed, false); err == nil || clitool.IsAmbiguous(err) {
		return nil, nil // nothing beyond the fixed options (or a mistake of its own)
	}
	exp, _ := clitool.ExpandArgs(args, fixed, true)
	v := map[string]string{"url": os.Getenv("RBOINC_URL"), "authenticator": os.Getenv("RBOINC_TOKEN"), "cacert": os.Getenv("RBOINC_CA_FILE")}
	resume := false
	for i := 0; i < len(exp); i++ {
		a := exp[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "resume":
			b, err := strconv.ParseBool(val)
			resume = !hasVal || err == nil && b
		case "url", "authenticator", "cacert", "group", "name":
			if !hasVal && i+1 < len(exp) {
				i++
				val = exp[i]
			}
			v[name] = val
		}
	}
	if !resume || v["group"] == "" {
		return nil, nil
	}
	base, tok := clitool.URLCredentials(v["url"])
	if v["authenticator"] != "" {
		tok = v["authenticator"]
	}
	cl, err := client.New(base, tok)
	if err != nil {
		return nil, err
	}
	if v["cacert"] != "" {
		if err := cl.TrustCAFile(v["cacert"]); err != nil {
			return nil, err
		}
	}
	st, err := cl.Status(ctx, v["group"], v["name"])
	if err != nil {
		return nil, err
	}
	queue := ""
	for _, ch := range st.Chains {
		if ch.State == wire.StateStopped || ch.State == wire.StateFailed || ch.State == wire.StateAborted || queue == "" {
			queue = ch.Queue
		}
	}
	if queue == "" {
		return nil, nil
	}
	q, err := cl.Queue(ctx, queue)
	if err != nil {
		return nil, fmt.Errorf("fetching queue %s: %w", queue, err)
	}
	taken := map[string]bool{"help": true, "h": true, "version": true, "man": true, "completion": true}
	for _, f := range fixed {
		for _, n := range f.Names() {
			taken[n] = true
		}
	}
	var out []cli.Flag
	for _, p := range q.Parameters {
		if taken[p.Name] || p.Name == "" || strings.HasPrefix(p.Name, "-") || strings.ContainsAny(p.Name, "= \t") {
			continue
		}
		taken[p.Name] = true
		out = append(out, &cli.StringFlag{Name: p.Name, Category: catResumeInputs + " (queue " + q.Name + ")",
			Usage: strings.ReplaceAll(p.Description, "`", "'") + " (for the step each chain restarts)"})
	}
	return out, nil
}

// resumeFiles are the new inputs given with -resume, by parameter.
func resumeFiles(c *cli.Context) map[string]string {
	files := map[string]string{}
	for _, f := range c.App.Flags {
		if sf, ok := f.(*cli.StringFlag); ok && strings.HasPrefix(sf.Category, catResumeInputs) && c.IsSet(sf.Name) {
			files[sf.Name] = c.String(sf.Name)
		}
	}
	return files
}

// resumeWithFiles asks, then resumes the chains with new inputs for the
// step each restarts, uploading only what the server lacks.
func resumeWithFiles(c *cli.Context, cl *client.Client, ref wire.ChainRef, files map[string]string) error {
	what := describe(ref)
	var names []string
	for p, path := range files {
		names = append(names, "-"+p+" "+path)
	}
	prompt := fmt.Sprintf("Resume %s with %s? [y/N] ", what, strings.Join(names, ", "))
	if err := clitool.Confirm(os.Stdin, os.Stderr, clitool.Interactive(), c.Bool("yes"), "resume", prompt); err != nil {
		return err
	}
	r, err := cl.ResumeWithFiles(c.Context, ref, files, nil)
	if err != nil {
		return fmt.Errorf("cannot resume %s: %w", what, err)
	}
	switch {
	case c.Bool("json"):
		return writeJSON(c.App.Writer, r)
	case c.Bool("quiet"):
		return nil
	}
	fmt.Fprintf(c.App.Writer, "Uploaded %s (%s); %d already on the server\n",
		words.Count(r.UploadedFiles, "file", "files"), words.Count64(r.UploadedBytes, "byte", "bytes"), r.ReusedFiles)
	return printCount(c, "Resume", &r.CountResponse)
}
