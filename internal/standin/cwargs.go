package standin

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/wucreate"
)

// Assignment target types (BOINC's ASSIGN_*).
const (
	assignNone = wucreate.AssignNone
	assignHost = wucreate.AssignHost
	assignUser = wucreate.AssignUser
	assignTeam = wucreate.AssignTeam
)

// job is one job to create; the command line fills a job that serves as
// the default of every --stdin line.
type job = wucreate.Job

type cwOptions struct {
	app             string
	showName        bool
	configDir       string
	useStdin        bool
	verbose         bool
	continueOnError bool
	job             job
}

const usageText = `usage: create_work [options] infile1 infile2 ...

Options:
   --appname name
   [ --app_version_num N ]
   [ --batch n ]
   [ --broadcast ]
   [ --broadcast_user ID ]
   [ --broadcast_team ID ]
   [ --command_line "X" ]
   [ --config_dir path ]
   [ --credit X ]
   [ -d n ]
   [ --delay_bound x ]
   [ --hr_class n ]
   [ --keywords 'n1 n2 ...' ]
   [ --max_error_results n ]
   [ --max_success_results n ]
   [ --max_total_results n ]
   [ --min_quorum n ]
   [ --priority n ]
   [ --result_template filename ]  default: appname_out
   [ --rsc_disk_bound x ]
   [ --rsc_fpops_est x ]
   [ --rsc_fpops_bound x ]
   [ --rsc_memory_bound x ]
   [ --size_class n ]
   [ --stdin ]
   [ --sub_appname 'foo bar' ]
   [ --target_host ID ]
   [ --target_nresults n ]
   [ --target_team ID ]
   [ --target_user ID ]
   [ --verbose ]
   [ --wu_id ID ]   ID of existing workunit record (used by boinc_submit)
   [ --wu_name name ]              default: generate a name based on app name
   [ --wu_template filename ]      default: appname_in

See https://github.com/BOINC/boinc/wiki/JobSubmission
`

// optName strips the one or two dashes create_work accepts alike.
func optName(a string) (string, bool) {
	switch {
	case strings.HasPrefix(a, "--"):
		return a[2:], true
	case strings.HasPrefix(a, "-"):
		return a[1:], true
	}
	return "", false
}

// argError is a command-line error: the message has been printed and
// create_work exits 1.
type argError struct{}

func (argError) Error() string { return "bad create_work arguments" }

// parseArgs parses create_work's command line. BOINC crashes on a missing
// option value; the stand-in reports it.
func parseArgs(args []string, stderr io.Writer) (*cwOptions, error) {
	o := &cwOptions{showName: true, job: job{WU: wucreate.DefaultRow()}}
	j := &o.job
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, isOpt := optName(a)
		if !isOpt {
			j.Files = append(j.Files, wucreate.InFile{Name: a})
			continue
		}
		need := func(n int) ([]string, error) {
			if i+n >= len(args) {
				fmt.Fprintf(stderr, "create_work: option '%s' needs a value\n", a)
				return nil, argError{}
			}
			v := args[i+1 : i+1+n]
			i += n
			return v, nil
		}
		switch name {
		case "broadcast":
			j.Assign, j.AssignMulti, j.AssignType = true, true, assignNone
			continue
		case "help":
			fmt.Fprint(stderr, usageText)
			return nil, argError{}
		case "stdin":
			o.useStdin = true
			continue
		case "verbose":
			o.verbose = true
			continue
		case "continue_on_error":
			o.continueOnError = true
			continue
		case "remote_file":
			v, err := need(3)
			if err != nil {
				return nil, err
			}
			j.Files = append(j.Files, wucreate.InFile{Remote: true, URL: v[0], NBytes: atof(v[1]), MD5: v[2]})
			continue
		}
		if !singleValueOpts[name] {
			fmt.Fprintf(stderr, "create_work: bad argument '%s'\n", a)
			return nil, argError{}
		}
		v, err := need(1)
		if err != nil {
			return nil, err
		}
		if err := o.setOption(name, v[0], stderr); err != nil {
			return nil, err
		}
	}
	return o, nil
}

var singleValueOpts = map[string]bool{
	"appname": true, "d": true, "wu_name": true, "wu_template": true, "result_template": true,
	"config_dir": true, "batch": true, "priority": true, "credit": true, "rsc_fpops_est": true,
	"rsc_fpops_bound": true, "rsc_memory_bound": true, "size_class": true, "app_version_num": true,
	"rsc_disk_bound": true, "delay_bound": true, "hr_class": true, "min_quorum": true,
	"target_nresults": true, "max_error_results": true, "max_total_results": true,
	"max_success_results": true, "command_line": true, "wu_id": true, "broadcast_user": true,
	"broadcast_team": true, "target_host": true, "target_user": true, "target_team": true,
	"keywords": true, "sub_appname": true,
}

func (o *cwOptions) setOption(name, v string, stderr io.Writer) error {
	j := &o.job
	w := &j.WU
	switch name {
	case "appname":
		o.app = v
	case "d":
		// debug level: nothing to log in the stand-in
	case "wu_name":
		o.showName = false
		w.Name = v
	case "wu_template":
		j.WUTemplateFile = v
	case "result_template":
		w.ResultTemplateFile = v
	case "config_dir":
		o.configDir = v
	case "batch":
		w.Batch = atoi(v)
	case "priority":
		w.Priority = atoi(v)
	case "credit":
		w.Credit = atof(v)
	case "rsc_fpops_est":
		w.RscFpopsEst = atof(v)
	case "rsc_fpops_bound":
		w.RscFpopsBound = atof(v)
	case "rsc_memory_bound":
		w.RscMemoryBound = atof(v)
	case "rsc_disk_bound":
		w.RscDiskBound = atof(v)
	case "size_class":
		w.SizeClass = atoi(v)
	case "app_version_num":
		w.AppVersionNum = atoi(v)
	case "delay_bound":
		w.DelayBound = atoi(v)
	case "hr_class":
		w.HRClass = atoi(v)
	case "min_quorum":
		w.MinQuorum = atoi(v)
	case "target_nresults":
		w.TargetNResults = atoi(v)
	case "max_error_results":
		w.MaxErrorResults = atoi(v)
	case "max_total_results":
		w.MaxTotalResults = atoi(v)
	case "max_success_results":
		w.MaxSuccessResults = atoi(v)
	case "command_line":
		j.CommandLine = v
	case "wu_id":
		w.ID = int64(atoi(v))
	case "keywords":
		w.Keywords = v
	case "sub_appname":
		j.SubApp = v
	case "broadcast_user", "broadcast_team", "target_host", "target_user", "target_team":
		return setAssign(j, name, v, stderr)
	}
	return nil
}

func setAssign(j *job, name, v string, stderr io.Writer) error {
	types := map[string]int{
		"broadcast_user": assignUser, "broadcast_team": assignTeam,
		"target_host": assignHost, "target_user": assignUser, "target_team": assignTeam,
	}
	j.Assign, j.AssignType, j.AssignID = true, types[name], atoi(v)
	j.AssignMulti = strings.HasPrefix(name, "broadcast")
	if j.AssignID == 0 {
		fmt.Fprintf(stderr, "you must specify a nonzero database ID for assigning jobs to users, teams, or hosts.\n")
		return argError{}
	}
	return nil
}

// parseStdinLine applies the per-job words of one --stdin line.
func parseStdinLine(j *job, words []string, stderr io.Writer) error {
	for i := 0; i < len(words); i++ {
		a := words[i]
		name, isOpt := optName(a)
		if !isOpt {
			j.Files = append(j.Files, wucreate.InFile{Name: a})
			continue
		}
		n := 1
		switch name {
		case "remote_file":
			n = 3
		case "command_line", "wu_name", "wu_template", "result_template", "target_host", "target_user", "priority":
		default:
			fmt.Fprintf(stderr, "create_work: bad stdin argument '%s'\n", a)
			return argError{}
		}
		if i+n >= len(words) {
			fmt.Fprintf(stderr, "create_work: stdin option '%s' needs a value\n", a)
			return argError{}
		}
		v := words[i+1 : i+1+n]
		i += n
		switch name {
		case "command_line":
			if j.CommandLine != "" {
				j.CommandLine += " "
			}
			j.CommandLine += v[0]
		case "wu_name":
			j.WU.Name = v[0]
		case "wu_template":
			j.WUTemplateFile = v[0]
		case "result_template":
			j.WU.ResultTemplateFile = v[0]
		case "remote_file":
			j.Files = append(j.Files, wucreate.InFile{Remote: true, URL: v[0], NBytes: atof(v[1]), MD5: v[2]})
		case "target_host", "target_user":
			if err := setAssign(j, name, v[0], stderr); err != nil {
				return err
			}
		case "priority":
			j.WU.Priority = atoi(v[0])
		}
	}
	return nil
}

// splitJobLine splits a --stdin line into words as BOINC's
// parse_command_line does: whitespace separates words; a word starting with
// a quote runs to the next same quote (no escapes; the character right after
// the opening quote is never taken as the closing one); an unterminated
// quoted word runs to the end of the line, newline included.
func splitJobLine(line string) []string {
	var words []string
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case isCSpace(c):
			i++
		case c == '\'' || c == '"':
			start := i + 1
			if start >= len(line) {
				return append(words, "")
			}
			e := strings.IndexByte(line[start+1:], c)
			if e < 0 {
				return append(words, line[start:])
			}
			end := start + 1 + e
			words = append(words, line[start:end])
			i = end + 1
		default:
			e := i
			for e < len(line) && !isCSpace(line[e]) {
				e++
			}
			words = append(words, line[i:e])
			i = e + 1
		}
	}
	return words
}

// atoi is C's atoi: leading blanks, a sign and digits; anything else ends it.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if n > 1<<40 {
			break // C leaves overflow undefined; stop growing
		}
	}
	if neg {
		n = -n
	}
	return int(int32(n))
}

var floatPrefix = regexp.MustCompile(`^[+-]?(?i:inf(inity)?|nan|([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?)`)

// atof is C's atof: the longest numeric prefix, else 0.
func atof(s string) float64 {
	m := floatPrefix.FindString(strings.TrimLeft(s, " \t\n\v\f\r"))
	v, _ := strconv.ParseFloat(m, 64)
	return v
}
