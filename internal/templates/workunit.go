package templates

import (
	"strconv"
	"strings"
)

// WorkunitInt returns the integer a <workunit> child of the WU template
// holds (max_error_results, min_quorum, delay_bound, ...), and whether the
// template has it and it reads as one. BOINC's create_work lets these
// values win over its command line, so they are the queue's own.
func (q *Queue) WorkunitInt(tag string) (int, bool) {
	for _, k := range q.wuEdits.wuKids {
		if k.tag == tag {
			n, err := strconv.Atoi(strings.TrimSpace(string(q.wuText[k.startTagEnd:k.endTagStart])))
			return n, err == nil
		}
	}
	return 0, false
}
