package standin

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Assignment target types (BOINC's ASSIGN_*).
const (
	assignNone = 0
	assignHost = 1
	assignUser = 2
	assignTeam = 3
)

// job is one job to create, create_work's JOB_DESC. The command line fills a
// job that serves as the default of every --stdin line.
type job struct {
	wu             wuRow
	wuTemplateFile string
	files          []inFile
	commandLine    string
	assign         bool
	assignMulti    bool
	assignType     int
	assignID       int
	subApp         string
}

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
	o := &cwOptions{showName: true, job: job{wu: defaultRow()}}
	j := &o.job
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, isOpt := optName(a)
		if !isOpt {
			j.files = append(j.files, inFile{name: a})
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
			j.assign, j.assignMulti, j.assignType = true, true, assignNone
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
			j.files = append(j.files, inFile{remote: true, url: v[0], nbytes: atof(v[1]), md5: v[2]})
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
	w := &j.wu
	switch name {
	case "appname":
		o.app = v
	case "d":
		// debug level: nothing to log in the stand-in
	case "wu_name":
		o.showName = false
		w.name = v
	case "wu_template":
		j.wuTemplateFile = v
	case "result_template":
		w.resultTemplateFile = v
	case "config_dir":
		o.configDir = v
	case "batch":
		w.batch = atoi(v)
	case "priority":
		w.priority = atoi(v)
	case "credit":
		w.credit = atof(v)
	case "rsc_fpops_est":
		w.rscFpopsEst = atof(v)
	case "rsc_fpops_bound":
		w.rscFpopsBound = atof(v)
	case "rsc_memory_bound":
		w.rscMemoryBound = atof(v)
	case "rsc_disk_bound":
		w.rscDiskBound = atof(v)
	case "size_class":
		w.sizeClass = atoi(v)
	case "app_version_num":
		w.appVersionNum = atoi(v)
	case "delay_bound":
		w.delayBound = atoi(v)
	case "hr_class":
		w.hrClass = atoi(v)
	case "min_quorum":
		w.minQuorum = atoi(v)
	case "target_nresults":
		w.targetNResults = atoi(v)
	case "max_error_results":
		w.maxErrorResults = atoi(v)
	case "max_total_results":
		w.maxTotalResults = atoi(v)
	case "max_success_results":
		w.maxSuccessResults = atoi(v)
	case "command_line":
		j.commandLine = v
	case "wu_id":
		w.id = int64(atoi(v))
	case "keywords":
		w.keywords = v
	case "sub_appname":
		j.subApp = v
	case "broadcast_user", "broadcast_team", "target_host", "target_user", "target_team":
		return j.setAssign(name, v, stderr)
	}
	return nil
}

func (j *job) setAssign(name, v string, stderr io.Writer) error {
	types := map[string]int{
		"broadcast_user": assignUser, "broadcast_team": assignTeam,
		"target_host": assignHost, "target_user": assignUser, "target_team": assignTeam,
	}
	j.assign, j.assignType, j.assignID = true, types[name], atoi(v)
	j.assignMulti = strings.HasPrefix(name, "broadcast")
	if j.assignID == 0 {
		fmt.Fprintf(stderr, "you must specify a nonzero database ID for assigning jobs to users, teams, or hosts.\n")
		return argError{}
	}
	return nil
}

// parseStdinLine applies the per-job words of one --stdin line.
func (j *job) parseStdinLine(words []string, stderr io.Writer) error {
	for i := 0; i < len(words); i++ {
		a := words[i]
		name, isOpt := optName(a)
		if !isOpt {
			j.files = append(j.files, inFile{name: a})
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
			if j.commandLine != "" {
				j.commandLine += " "
			}
			j.commandLine += v[0]
		case "wu_name":
			j.wu.name = v[0]
		case "wu_template":
			j.wuTemplateFile = v[0]
		case "result_template":
			j.wu.resultTemplateFile = v[0]
		case "remote_file":
			j.files = append(j.files, inFile{remote: true, url: v[0], nbytes: atof(v[1]), md5: v[2]})
		case "target_host", "target_user":
			if err := j.setAssign(name, v[0], stderr); err != nil {
				return err
			}
		case "priority":
			j.wu.priority = atoi(v[0])
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
