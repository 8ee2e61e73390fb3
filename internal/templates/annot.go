package templates

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

const annotTag = "rboinc"

// Attributes allowed on each kind of <rboinc> element.
var (
	topAttrs    = []string{"application", "description"}
	inputAttrs  = []string{"parameter_name", "parameter_description", "optional", "immutable", "encode"}
	outputAttrs = []string{"aliases", "chain"}
)

// annotation reads the attributes of one <rboinc> element, refusing unknown
// ones (a typo such as optinal= would otherwise be silently ignored).
func annotation(e *etree.Element, allowed []string) (map[string]string, error) {
	out := make(map[string]string, len(e.Attr))
	for _, a := range e.Attr {
		key := a.FullKey()
		if !slices.Contains(allowed, key) {
			return nil, fmt.Errorf("<rboinc> has unknown attribute %q (allowed here: %s)", key, strings.Join(allowed, ", "))
		}
		// BOINC's tag scanner ends a tag at the first '>', even inside quotes.
		if strings.Contains(a.Value, ">") {
			return nil, fmt.Errorf("<rboinc> attribute %s contains '>', which BOINC's parser cannot read", key)
		}
		out[key] = a.Value
	}
	return out, nil
}

// annotationOf finds the single <rboinc> child of e (nil map if none).
func annotationOf(e *etree.Element, allowed []string) (map[string]string, error) {
	a, err := single(e, annotTag)
	if err != nil || a == nil {
		return nil, err
	}
	return annotation(a, allowed)
}

func parseBool(attrs map[string]string, key string) (bool, error) {
	switch strings.ToLower(attrs[key]) {
	case "", "false", "0", "no":
		return false, nil
	case "true", "1", "yes":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q is not a boolean (use true or false)", key, attrs[key])
}

// parseIndex reads a non-negative decimal integer such as <number> or chain=.
func parseIndex(what, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%s %q is not a non-negative integer", what, s)
	}
	return n, nil
}
