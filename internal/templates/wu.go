package templates

import (
	"errors"
	"fmt"

	"github.com/beevik/etree"
)

// wuEdits records where WUTemplate edits the WU template.
type wuEdits struct {
	cuts      []span // every <rboinc> element
	fileInfos []fileInfoSpan
	wuKids    []taggedSpan // children of <workunit>, for drop
}

type fileInfoSpan struct {
	span
	hasNoDelete bool
}

// readWU fills the queue's application, description and inputs from the WU
// template and records the spans WUTemplate needs.
func (q *Queue) readWU(d *xmlDoc) error {
	var annots, workunits, infos []*etree.Element
	for _, e := range d.top("input_template") {
		switch e.FullTag() {
		case annotTag:
			annots = append(annots, e)
		case "workunit":
			workunits = append(workunits, e)
		case "file_info":
			infos = append(infos, e)
		}
	}
	if err := q.readTopAnnotation(d, annots); err != nil {
		return err
	}
	if len(workunits) != 1 {
		return locErr(d.file, "", fmt.Errorf("%d top-level <workunit> elements, expected exactly one", len(workunits)))
	}
	// Annotations elsewhere would be silently ignored; refuse them so a
	// misplaced parameter or alias is noticed when the queue is loaded.
	for _, a := range d.root.FindElements("//" + annotTag) {
		if a != annots[0] && !(a.Parent().FullTag() == "file_ref" && a.Parent().Parent() == workunits[0]) {
			return locErr(d.file, where(a), errors.New("an <rboinc> element here is never read by rboinc (it reads them at top level and in <workunit><file_ref>)"))
		}
		q.wuEdits.cuts = append(q.wuEdits.cuts, d.spans[a])
	}
	refs := children(workunits[0], "file_ref")
	if len(refs) != len(infos) {
		return locErr(d.file, "<workunit>", fmt.Errorf("has %d <file_ref>s but the template has %d <file_info>s; BOINC pairs them by position, so the counts must match", len(refs), len(infos)))
	}
	if err := q.readInputs(d, infos, refs); err != nil {
		return err
	}
	for _, fi := range infos {
		q.wuEdits.fileInfos = append(q.wuEdits.fileInfos, fileInfoSpan{span: d.spans[fi], hasNoDelete: len(children(fi, "no_delete")) > 0})
	}
	for _, c := range workunits[0].ChildElements() {
		q.wuEdits.wuKids = append(q.wuEdits.wuKids, taggedSpan{tag: c.FullTag(), span: d.spans[c]})
	}
	return nil
}

// readTopAnnotation reads the one top-level <rboinc application= description=/>.
func (q *Queue) readTopAnnotation(d *xmlDoc, annots []*etree.Element) error {
	switch len(annots) {
	case 0:
		return locErr(d.file, "", errors.New(`no top-level <rboinc application="..."/>: this is not an rboinc queue template`))
	case 1:
	default:
		return locErr(d.file, "", fmt.Errorf("%d top-level <rboinc> elements, expected one", len(annots)))
	}
	attrs, err := annotation(annots[0], topAttrs)
	if err == nil && attrs["application"] == "" {
		err = errors.New(`application="..." is missing: it names the BOINC application the queue runs`)
	}
	if err == nil && !applicationRE.MatchString(attrs["application"]) {
		err = fmt.Errorf("application %q is not a BOINC application name (letters, digits, '_', '.', '-')", attrs["application"])
	}
	if err != nil {
		return locErr(d.file, "top-level <rboinc>", err)
	}
	q.Application, q.Description = attrs["application"], attrs["description"]
	return nil
}

// readInputs reads the file_info/file_ref pairs and checks that slots and
// parameter names are unique.
func (q *Queue) readInputs(d *xmlDoc, infos, refs []*etree.Element) error {
	slots := make(map[int]int)
	params := make(map[string]int)
	for i := range infos {
		in, err := readInput(d, i, infos[i], refs[i])
		if err != nil {
			return err
		}
		if j, dup := slots[in.Slot]; dup {
			return locErr(d.file, fmt.Sprintf("<file_info> #%d", i), fmt.Errorf("slot %d (its <number>, or its position when it has none) is already the slot of <file_info> #%d", in.Slot, j))
		}
		slots[in.Slot] = i
		if j, dup := params[in.Parameter]; dup && in.Parameter != "" {
			return locErr(d.file, refLabel(i, in), fmt.Errorf("parameter_name %q is already used by <file_ref> #%d", in.Parameter, j))
		}
		params[in.Parameter] = i
		q.Inputs = append(q.Inputs, in)
	}
	return nil
}

// readInput reads the i-th <file_info> and the <file_ref> BOINC binds to it.
func readInput(d *xmlDoc, i int, fi, ref *etree.Element) (Input, error) {
	in := Input{Position: i, Slot: i}
	infoLabel := fmt.Sprintf("<file_info> #%d", i)
	if len(children(fi, "nbytes")) > 0 || len(children(fi, "url")) > 0 {
		return in, locErr(d.file, infoLabel, errors.New("remote files (<nbytes>, <url>) are not supported by rboinc"))
	}
	number, err := intChild(fi, "number")
	if err != nil {
		return in, locErr(d.file, infoLabel, err)
	}
	if number >= 0 {
		in.Slot = number
	}
	pn, err := single(fi, "physical_name")
	if err != nil {
		return in, locErr(d.file, infoLabel, err)
	}
	in.Constant = pn != nil
	if in.Constant {
		if in.Physical, err = leafText(pn); err != nil {
			return in, locErr(d.file, infoLabel, err)
		}
	}
	return in, readFileRef(d, i, ref, number, &in)
}

// readFileRef reads the file_ref bound to input i, whose <file_info> has
// <number> number (-1 if none).
func readFileRef(d *xmlDoc, i int, ref *etree.Element, number int, in *Input) error {
	on, err := single(ref, "open_name")
	if err == nil && on != nil {
		in.OpenName, err = leafText(on)
	}
	if err != nil {
		return locErr(d.file, fmt.Sprintf("<file_ref> #%d", i), err)
	}
	label := refLabel(i, *in)
	if on != nil && in.OpenName == "" {
		label = fmt.Sprintf("<file_ref> #%d (open_name \"\")", i)
	}
	switch {
	case on != nil:
		err = checkFileName(in.OpenName)
	case len(children(ref, "copy_file")) == 0:
		err = errors.New("needs an <open_name> or <copy_file/>")
	}
	if err != nil {
		return locErr(d.file, label, err)
	}
	fileNumber, err := intChild(ref, "file_number")
	if err == nil && number >= 0 && fileNumber >= 0 && number != fileNumber {
		err = fmt.Errorf("<file_number> %d disagrees with the <number> %d of <file_info> #%d; BOINC ignores both and pairs them by position", fileNumber, number, i)
	}
	if err != nil {
		return locErr(d.file, label, err)
	}
	if err := readInputAnnotation(ref, in); err != nil {
		return locErr(d.file, label, err)
	}
	return nil
}

func readInputAnnotation(ref *etree.Element, in *Input) error {
	attrs, err := annotationOf(ref, inputAttrs)
	if err != nil {
		return err
	}
	in.Parameter = attrs["parameter_name"]
	in.Description = attrs["parameter_description"]
	if in.Description == "" {
		in.Description = "(undocumented)"
	}
	if in.Optional, err = parseBool(attrs, "optional"); err != nil {
		return err
	}
	if in.Immutable, err = parseBool(attrs, "immutable"); err != nil {
		return err
	}
	if in.Encode, err = parseBool(attrs, "encode"); err != nil {
		return err
	}
	if in.Parameter != "" {
		return checkParameter(in.Parameter)
	}
	if !in.Immutable && !in.Constant {
		return errors.New(`needs <rboinc parameter_name="..."/> (a file the scientist gives) or immutable="true" (the server's default file), or a <physical_name> in its <file_info>`)
	}
	return nil
}

// intChild reads an optional integer child such as <number>; -1 if absent.
func intChild(e *etree.Element, tag string) (int, error) {
	c, err := single(e, tag)
	if err != nil || c == nil {
		return -1, err
	}
	s, err := leafText(c)
	if err != nil {
		return -1, err
	}
	return parseIndex("<"+tag+">", s)
}

func refLabel(i int, in Input) string {
	if in.OpenName == "" {
		return fmt.Sprintf("<file_ref> #%d (copy_file)", i)
	}
	return fmt.Sprintf("<file_ref> #%d (open_name %q)", i, in.OpenName)
}
