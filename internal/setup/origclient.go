package setup

import (
	"strings"

	"github.com/rboinc/rboinc/internal/templates"
)

// origFirstPass are the options the original boinc_submit (GPUGRID 2010)
// parses before it asks for the queue's template. Getopt::Long takes any
// unambiguous prefix of an option, in any letter case, so a parameter
// named by a prefix of just one of these (-v, -e, -app, -au, ...) is taken
// for that option and never reaches the template's parameters: the
// original client cannot submit to the queue (an ambiguous prefix, -h or
// -a, passes through to the parameters). Whole names are refused with the
// template (templates.reservedParams).
var origFirstPass = []string{"url", "app_name", "user", "email", "authenticator", "help", "help_parameters", "verbose"}

// origClientNotes says which of q's parameters the original boinc_submit
// cannot be given.
func origClientNotes(f *Findings, q *templates.Queue) {
	for _, in := range q.Parameters() {
		p := strings.ToLower(in.Parameter)
		var took []string
		for _, o := range origFirstPass {
			if strings.HasPrefix(o, p) {
				took = append(took, o)
			}
		}
		if len(took) == 1 {
			f.add(Note, "queue %s: the original Perl boinc_submit cannot be given parameter -%s: its option parser takes it for its own -%s. rboinc-submit and the GAHP are not affected; for the original client rename the parameter in %s", q.Name, in.Parameter, took[0], q.WUFile)
		}
	}
}
