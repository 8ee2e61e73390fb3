package standin

import (
	"strings"

	"github.com/rboinc/rboinc/internal/wucreate"
)

// xnode is a loose element tree of a BOINC XML document (workunit.xml_doc,
// result.xml_doc_in). It is built with the BOINC tokeniser and tolerates what
// BOINC's own readers tolerate: attributes, stray end tags, no single root.
type xnode struct {
	tag      string
	text     string
	children []*xnode
}

func parseTree(doc string) *xnode {
	root := &xnode{}
	stack := []*xnode{root}
	x := wucreate.NewTokens(doc)
	for {
		t, k := x.Next()
		top := stack[len(stack)-1]
		switch k {
		case wucreate.TokEOF:
			return root
		case wucreate.TokData:
			top.text += wucreate.XMLUnescape(t)
		case wucreate.TokCDATA:
			top.text += t
		case wucreate.TokTag:
			switch {
			case t == "" || t[0] == '?' || t[0] == '!':
			case t[0] == '/':
				for i := len(stack) - 1; i > 0; i-- {
					if stack[i].tag == t[1:] {
						stack = stack[:i]
						break
					}
				}
			case strings.HasSuffix(t, "/"):
				top.children = append(top.children, &xnode{tag: strings.TrimRight(t, "/")})
			default:
				n := &xnode{tag: t}
				top.children = append(top.children, n)
				stack = append(stack, n)
			}
		}
	}
}

func (n *xnode) all(tag string) []*xnode {
	var out []*xnode
	for _, c := range n.children {
		if c.tag == tag {
			out = append(out, c)
		}
	}
	return out
}

func (n *xnode) has(tag string) bool { return len(n.all(tag)) > 0 }

// value is the trimmed text of the first child named tag.
func (n *xnode) value(tag string) string {
	if c := n.all(tag); len(c) > 0 {
		return stripWS(c[0].text)
	}
	return ""
}

// wuFile is an input <file_info> of workunit.xml_doc.
type wuFile struct {
	name     string
	md5      string
	noDelete bool
	gzipped  bool // has <gzipped_url>: the client downloads name.gz and decompresses it
}

// wuRef is a <file_ref> of the <workunit> of workunit.xml_doc.
type wuRef struct {
	fileName, openName string
	copyFile           bool
}

type wuDoc struct {
	files   []wuFile
	refs    []wuRef
	cmdline string // the last <command_line>, which is the one the client keeps
}

func parseWUDoc(doc string) wuDoc {
	var d wuDoc
	root := parseTree(doc)
	for _, fi := range root.all("file_info") {
		d.files = append(d.files, wuFile{name: fi.value("name"), md5: fi.value("md5_cksum"), noDelete: fi.has("no_delete"), gzipped: fi.has("gzipped_url")})
	}
	for _, w := range root.all("workunit") {
		for _, c := range w.children {
			switch c.tag {
			case "file_ref":
				d.refs = append(d.refs, wuRef{fileName: c.value("file_name"), openName: c.value("open_name"), copyFile: c.has("copy_file")})
			case "command_line":
				d.cmdline = stripWS(c.text)
			}
		}
	}
	return d
}
