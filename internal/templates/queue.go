package templates

import "errors"

// ErrUnknownQueue is wrapped by errors about queues that do not exist.
var ErrUnknownQueue = errors.New("unknown queue")

// Input is one input file of a queue: a <file_info> of the WU template and
// the <file_ref> at the same position inside <workunit>.
type Input struct {
	Position    int    // 0-based position among the WU template's <file_info>s (BOINC binds file_ref k to file_info k)
	Slot        int    // number a result-template chain="N" refers to: the file_info's <number> if present, else Position
	OpenName    string // <open_name> of its file_ref ("" if only <copy_file/>)
	Parameter   string // parameter_name, "" if none
	Description string // parameter_description, "(undocumented)" if absent
	Optional    bool
	Immutable   bool
	Encode      bool
	Constant    bool   // file_info has <physical_name>: BOINC takes no command-line name for it; rboinc supplies nothing
	Physical    string // a Constant input's <physical_name>: the administrator stages it in download/ with its .md5
}

// Output is one output file of a queue: a <file_info> of the result
// template and the <result><file_ref> naming the same <OUTFILE_k/>.
type Output struct {
	Position int      // position among the result template's <file_info>s
	Index    int      // k of the <OUTFILE_k/> inside the file_info's <name>
	OpenName string   // open_name of the <result><file_ref> whose <file_name> holds the same <OUTFILE_k/>
	Aliases  []string // aliases split on spaces
	Chain    int      // input Slot this output feeds in the next step; -1 when no chain attribute
	Optional bool     // <optional/> in the file_info or in its file_ref
	// MaxNBytes is the file_info's <max_nbytes> as BOINC's client reads
	// it: 0 when absent, empty or not a number. The client fails every
	// output larger than it, so with 0 every nonempty one.
	MaxNBytes float64
}

// Queue is a validated template pair. It is shared between callers (see
// Registry) and must be treated as read-only.
type Queue struct {
	Name, Application, Description string
	Inputs                         []Input  // in <file_info> order
	Outputs                        []Output // in <file_info> order
	WUFile, ResultFile             string   // paths the queue was read from (for messages)

	wuText, resultText []byte
	wuEdits            wuEdits
	resultCuts         []span // <rboinc> elements of the result template
}

// Parameters returns the inputs a scientist can give: Parameter != "" and
// not Immutable and not Constant.
func (q *Queue) Parameters() []Input {
	var out []Input
	for _, in := range q.Inputs {
		if in.Parameter != "" && !in.Immutable && !in.Constant {
			out = append(out, in)
		}
	}
	return out
}

// InputBySlot finds the input with Slot n.
func (q *Queue) InputBySlot(n int) (Input, bool) {
	for _, in := range q.Inputs {
		if in.Slot == n {
			return in, true
		}
	}
	return Input{}, false
}
