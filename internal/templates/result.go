package templates

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// readResult fills the queue's outputs from the result template; the
// inputs must already be read (chain targets refer to them).
func (q *Queue) readResult(d *xmlDoc) error {
	var infos, results []*etree.Element
	for _, e := range d.top("output_template") {
		switch e.FullTag() {
		case "file_info":
			infos = append(infos, e)
		case "result":
			results = append(results, e)
		}
	}
	for _, a := range d.root.FindElements("//" + annotTag) {
		if a.Parent().FullTag() != "file_info" || !slices.Contains(infos, a.Parent()) {
			return locErr(d.file, where(a), errors.New("an <rboinc> element here is never read by rboinc (in a result template it reads them only inside <file_info>)"))
		}
		q.resultCuts = append(q.resultCuts, d.spans[a])
	}
	byIndex := make(map[int]int) // OUTFILE k -> position
	for i, fi := range infos {
		out, err := readOutput(d, i, fi)
		if err != nil {
			return err
		}
		if j, dup := byIndex[out.Index]; dup {
			return locErr(d.file, outLabel(i, out.Index), fmt.Errorf("<OUTFILE_%d/> is already the name of <file_info> #%d", out.Index, j))
		}
		byIndex[out.Index] = i
		q.Outputs = append(q.Outputs, out)
	}
	if len(results) != 1 {
		return locErr(d.file, "", fmt.Errorf("%d top-level <result> elements, expected exactly one", len(results)))
	}
	// The scheduler inserts text after the literal "<result>\n"; without it
	// every result of the queue fails to be sent.
	s := d.spans[results[0]]
	if !bytes.HasPrefix(d.text[s.start:], []byte("<result>\n")) {
		return locErr(d.file, "<result>", errors.New(`write the start tag exactly as "<result>" at the end of a line: BOINC's scheduler looks for that text`))
	}
	for j, ref := range children(results[0], "file_ref") {
		if err := q.readResultRef(d, j, ref, byIndex); err != nil {
			return err
		}
	}
	for _, out := range q.Outputs {
		if out.OpenName == "" {
			return locErr(d.file, outLabel(out.Position, out.Index), fmt.Errorf("no <file_ref> in <result> names <OUTFILE_%d/>; BOINC needs an <open_name> for every output", out.Index))
		}
	}
	return q.checkChains(d)
}

func readOutput(d *xmlDoc, i int, fi *etree.Element) (Output, error) {
	out := Output{Position: i, Chain: -1, Optional: len(children(fi, "optional")) > 0, MaxNBytes: maxNBytes(fi)}
	name, err := single(fi, "name")
	if err == nil && name == nil {
		err = errors.New("has no <name><OUTFILE_k/></name>")
	}
	if err == nil {
		out.Index, err = outfileIndex(d, name)
	}
	if err != nil {
		return out, locErr(d.file, fmt.Sprintf("<file_info> #%d", i), err)
	}
	attrs, err := annotationOf(fi, outputAttrs)
	if err == nil && attrs["aliases"] != "" {
		out.Aliases = strings.Split(attrs["aliases"], " ")
		for _, a := range out.Aliases {
			if err = checkAlias(a); err != nil {
				break
			}
		}
	}
	if v, ok := attrs["chain"]; ok && err == nil {
		out.Chain, err = parseIndex("chain", v)
	}
	if err != nil {
		return out, locErr(d.file, outLabel(i, out.Index), err)
	}
	return out, nil
}

// readResultRef binds one <result><file_ref> to its output.
func (q *Queue) readResultRef(d *xmlDoc, j int, ref *etree.Element, byIndex map[int]int) error {
	label := fmt.Sprintf("<result> <file_ref> #%d", j)
	fn, err := single(ref, "file_name")
	if err == nil && fn == nil {
		err = errors.New("has no <file_name><OUTFILE_k/></file_name>")
	}
	k := 0
	if err == nil {
		k, err = outfileIndex(d, fn)
	}
	if err != nil {
		return locErr(d.file, label, err)
	}
	on, err := single(ref, "open_name")
	if err == nil && on == nil {
		err = errors.New("has no <open_name>; BOINC's output parsers need one")
	}
	open := ""
	if err == nil {
		open, err = leafText(on)
	}
	if err == nil {
		err = checkFileName(open)
	}
	i, known := byIndex[k]
	switch {
	case err != nil:
	case !known:
		err = fmt.Errorf("names <OUTFILE_%d/>, which no <file_info> declares", k)
	case q.Outputs[i].OpenName != "":
		err = fmt.Errorf("<OUTFILE_%d/> already has a <file_ref> (open_name %q)", k, q.Outputs[i].OpenName)
	}
	if err != nil {
		return locErr(d.file, label, err)
	}
	q.Outputs[i].OpenName = open
	q.Outputs[i].Optional = q.Outputs[i].Optional || len(children(ref, "optional")) > 0
	return nil
}

// checkChains makes sure every chain="N" feeds a replaceable input, once.
func (q *Queue) checkChains(d *xmlDoc) error {
	fed := make(map[int]int)
	for _, out := range q.Outputs {
		if out.Chain < 0 {
			continue
		}
		in, ok := q.InputBySlot(out.Chain)
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("chain=\"%d\": chain target does not exist (no input has slot %d)", out.Chain, out.Chain)
		case in.Immutable:
			err = fmt.Errorf("chain=\"%d\": chain target %s is immutable", out.Chain, inputName(in))
		case in.Constant:
			err = fmt.Errorf("chain=\"%d\": chain target %s is a constant file (<physical_name>)", out.Chain, inputName(in))
		}
		if k, dup := fed[out.Chain]; dup && err == nil {
			err = fmt.Errorf("chain=\"%d\": <OUTFILE_%d/> already feeds that input", out.Chain, k)
		}
		if err != nil {
			return locErr(d.file, outLabel(out.Position, out.Index), err)
		}
		fed[out.Chain] = out.Index
	}
	return nil
}

// outfileIndex reads k from an element that must hold exactly <OUTFILE_k/>,
// written in the one form BOINC's string substitution recognises.
func outfileIndex(d *xmlDoc, e *etree.Element) (int, error) {
	bad := fmt.Errorf("<%s> must hold exactly one <OUTFILE_k/> and nothing else", e.FullTag())
	var macro *etree.Element
	for _, t := range e.Child {
		switch t := t.(type) {
		case *etree.CharData:
			if !t.IsWhitespace() {
				return 0, bad
			}
		case *etree.Element:
			if macro != nil {
				return 0, bad
			}
			macro = t
		default:
			return 0, bad
		}
	}
	if macro == nil {
		return 0, bad
	}
	m := outfileRE.FindStringSubmatch(macro.FullTag())
	if m == nil || string(d.raw(macro)) != "<"+m[0]+"/>" {
		return 0, bad
	}
	return strconv.Atoi(m[1])
}

// maxNBytes reads a file_info's <max_nbytes> as BOINC's client does
// (FILE_INFO::parse, XML_PARSER::parse_double): each readable one replaces
// the value, an empty one is 0, one that holds elements or is not a whole
// number is skipped; without any the client's default, 0, stays.
func maxNBytes(fi *etree.Element) float64 {
	v := 0.0
	for _, m := range children(fi, "max_nbytes") {
		t, err := leafText(m)
		switch {
		case err != nil || strings.ContainsRune(t, '_'):
		case t == "":
			v = 0
		default:
			if x, err := strconv.ParseFloat(t, 64); err == nil {
				v = x
			}
		}
	}
	return v
}

func outLabel(i, k int) string { return fmt.Sprintf("<file_info> #%d (<OUTFILE_%d/>)", i, k) }

func inputName(in Input) string {
	if in.OpenName != "" {
		return fmt.Sprintf("<file_ref> #%d (open_name %q)", in.Position, in.OpenName)
	}
	return fmt.Sprintf("<file_ref> #%d", in.Position)
}
