package templates

import (
	"strings"
	"testing"
)

// A small valid pair with one input of each kind: immutable, parameter,
// constant; the refusal cases below each break one thing in it.
const baseWU = `<rboinc application="app" description="d"/>
<file_info>
    <number>0</number>
</file_info>
<file_info>
    <number>1</number>
</file_info>
<file_info>
    <physical_name>const.dat</physical_name>
</file_info>
<workunit>
    <file_ref>
        <file_number>0</file_number>
        <open_name>LICENSE</open_name>
        <rboinc immutable="true"/>
    </file_ref>
    <file_ref>
        <file_number>1</file_number>
        <open_name>input.coor</open_name>
        <rboinc parameter_name="coor_file" parameter_description="Coordinates" optional="yes"/>
    </file_ref>
    <file_ref>
        <open_name>const.dat</open_name>
    </file_ref>
    <rsc_fpops_est>1e9</rsc_fpops_est>
    <target_nresults>1</target_nresults>
</workunit>
`

const baseResult = `<file_info>
    <name><OUTFILE_0/></name>
    <url><UPLOAD_URL/></url>
    <max_nbytes>1000</max_nbytes>
    <rboinc aliases=".coor" chain="1"/>
</file_info>
<file_info>
    <name><OUTFILE_1/></name>
    <url><UPLOAD_URL/></url>
    <max_nbytes>1000</max_nbytes>
    <optional/>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>output.coor</open_name>
    </file_ref>
    <file_ref>
        <file_name><OUTFILE_1/></file_name>
        <open_name>log</open_name>
    </file_ref>
</result>
`

const (
	wuPath  = "templates/rboinc_t_wu"
	resPath = "templates/rboinc_t_result"
)

func TestBasePairParses(t *testing.T) {
	q, err := Parse("t", []byte(baseWU), []byte(baseResult), wuPath, resPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Inputs) != 3 || len(q.Outputs) != 2 || !q.Outputs[1].Optional || q.Outputs[1].Chain != -1 {
		t.Errorf("queue = %+v", q)
	}
}

func TestRefusals(t *testing.T) {
	long := strings.Repeat("a", 256)
	cases := []struct {
		name         string
		wuOld, wuNew string // replaced once in baseWU
		rOld, rNew   string // replaced once in baseResult
		all          bool   // replace every occurrence instead
		want         string
	}{
		// whole-document problems
		{name: "wu too big", wuOld: "<workunit>", wuNew: "<!--" + strings.Repeat("x", MaxTemplateSize) + "--><workunit>", want: wuPath + ": template is"},
		{name: "doctype", wuOld: "<rboinc", wuNew: `<!DOCTYPE x [<!ENTITY a "b">]><rboinc`, want: "declarations are not allowed"},
		{name: "entity", wuOld: "<rboinc", wuNew: `<!ENTITY a "b"><rboinc`, want: "declarations are not allowed"},
		{name: "malformed", wuOld: "</workunit>", wuNew: "", want: wuPath + ": not a readable XML template: <workunit> is never closed"},
		{name: "mismatched close", wuOld: "</number>", wuNew: "</nmber>", want: "not a readable XML template"},
		{name: "unknown entity", wuOld: "1e9", wuNew: "&nbsp;", want: "not a readable XML template"},
		{name: "stray root close", wuOld: "</workunit>", wuNew: "</workunit></" + rootTag + "><x>", want: "not a readable XML template"},
		{name: "result malformed", rOld: "</result>", rNew: "", want: resPath + ": not a readable XML template"},
		// top-level <rboinc>
		{name: "no annotation", wuOld: `<rboinc application="app" description="d"/>`, want: "not an rboinc queue template"},
		{name: "two annotations", wuOld: "<workunit>", wuNew: `<rboinc application="b"/><workunit>`, want: "2 top-level <rboinc> elements"},
		{name: "no application", wuOld: `application="app" `, want: wuPath + `: top-level <rboinc>: application="..." is missing`},
		{name: "bad application", wuOld: `application="app"`, wuNew: `application="a pp"`, want: `application "a pp" is not`},
		{name: "top unknown attribute", wuOld: `description="d"`, wuNew: `descr="d"`, want: `unknown attribute "descr"`},
		{name: "top gt", wuOld: `description="d"`, wuNew: `description="a>b"`, want: "contains '>'"},
		// structure of the WU template
		{name: "no workunit", wuOld: "workunit>", wuNew: "work>", all: true, want: "0 top-level <workunit>"},
		{name: "two workunits", wuOld: "<file_info>", wuNew: "<workunit/><file_info>", want: "2 top-level <workunit>"},
		{name: "too few file_refs", wuOld: "<file_ref>\n        <open_name>const.dat</open_name>\n    </file_ref>", want: "has 2 <file_ref>s but the template has 3 <file_info>s"},
		{name: "too many file_refs", wuOld: "<rsc_fpops_est>", wuNew: "<file_ref><copy_file/></file_ref><rsc_fpops_est>", want: "has 4 <file_ref>s"},
		{name: "numbers disagree", wuOld: "<file_number>1</file_number>", wuNew: "<file_number>2</file_number>", want: wuPath + `: <file_ref> #1 (open_name "input.coor"): <file_number> 2 disagrees with the <number> 1`},
		{name: "duplicate number", wuOld: "<number>1</number>", wuNew: "<number>0</number>", want: "<file_number> 1 disagrees"},
		{name: "duplicate slot", wuOld: "<physical_name>", wuNew: "<number>1</number><physical_name>", want: "<file_info> #2: slot 1"},
		{name: "number not a number", wuOld: "<number>1</number>", wuNew: "<number>one</number>", want: `<file_info> #1: <number> "one" is not a non-negative integer`},
		{name: "negative number", wuOld: "<number>1</number>", wuNew: "<number>-1</number>", want: "not a non-negative integer"},
		{name: "two numbers", wuOld: "<number>1</number>", wuNew: "<number>1</number><number>1</number>", want: "2 <number> elements"},
		{name: "remote nbytes", wuOld: "<number>1</number>", wuNew: "<number>1</number><nbytes>5</nbytes>", want: "<file_info> #1: remote files"},
		{name: "remote url", wuOld: "<number>0</number>", wuNew: "<number>0</number><url>http://x/</url>", want: "<file_info> #0: remote files"},
		// file_refs
		{name: "no open_name", wuOld: "<open_name>LICENSE</open_name>", want: "<file_ref> #0 (copy_file): needs an <open_name> or <copy_file/>"},
		{name: "open_name slash", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name>a/b</open_name>", want: `contains '/'`},
		{name: "open_name dotdot", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name>..</open_name>", want: "not a plain file name"},
		{name: "open_name space", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name>a b</open_name>", want: "whitespace"},
		{name: "open_name control", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name>a&#1;b</open_name>", want: "not a readable"},
		{name: "open_name tab", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name>a&#9;b</open_name>", want: "whitespace"},
		{name: "open_name long", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name>" + long + "</open_name>", want: "longer than 255"},
		{name: "open_name empty", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name></open_name>", want: `(open_name ""): file name is empty`},
		{name: "open_name element", wuOld: "<open_name>LICENSE</open_name>", wuNew: "<open_name><b/></open_name>", want: "must hold plain text"},
		{name: "two annotations in file_ref", wuOld: `<rboinc immutable="true"/>`, wuNew: `<rboinc immutable="true"/><rboinc/>`, want: "2 <rboinc> elements"},
		{name: "no parameter", wuOld: `immutable="true"`, wuNew: `optional="true"`, want: `<file_ref> #0 (open_name "LICENSE"): needs <rboinc parameter_name`},
		{name: "no annotation on input", wuOld: `<rboinc immutable="true"/>`, want: "needs <rboinc parameter_name"},
		{name: "parameter unsafe", wuOld: `"coor_file"`, wuNew: `"a b"`, want: wuPath + `: <file_ref> #1 (open_name "input.coor"): parameter_name "a b" is not a safe name`},
		{name: "parameter digit first", wuOld: `"coor_file"`, wuNew: `"1coor"`, want: "is not a safe name"},
		{name: "parameter long", wuOld: `"coor_file"`, wuNew: `"` + strings.Repeat("p", 65) + `"`, want: "longer than 64 bytes"},
		{name: "parameter reserved", wuOld: `"coor_file"`, wuNew: `"num_steps"`, want: "clashes with the submit client's own -num_steps option"},
		{name: "parameter reserved in another case", wuOld: `"coor_file"`, wuNew: `"Version"`, want: "clashes with the submit client's own -version option"},
		{name: "parameter duplicate", wuOld: `immutable="true"`, wuNew: `parameter_name="coor_file"`, want: `<file_ref> #1 (open_name "input.coor"): parameter_name "coor_file" is already used by <file_ref> #0`},
		{name: "bool bad", wuOld: `optional="yes"`, wuNew: `optional="maybe"`, want: `optional="maybe" is not a boolean`},
		{name: "bool typo", wuOld: `optional="yes"`, wuNew: `optinal="yes"`, want: `unknown attribute "optinal"`},
		{name: "input gt", wuOld: `"Coordinates"`, wuNew: `"x -> y"`, want: "contains '>'"},
		{name: "input namespaced attribute", wuOld: `optional="yes"`, wuNew: `x:optional="yes"`, want: `unknown attribute "x:optional"`},
		{name: "annotation in file_info", wuOld: "<number>1</number>", wuNew: `<number>1</number><rboinc parameter_name="x"/>`, want: "<file_info>: an <rboinc> element here is never read"},
		{name: "annotation in workunit", wuOld: "<rsc_fpops_est>", wuNew: "<rboinc/><rsc_fpops_est>", want: "<workunit>: an <rboinc> element here"},
		{name: "annotation nested", wuOld: `<rboinc immutable="true"/>`, wuNew: `<rboinc immutable="true"><rboinc/></rboinc>`, want: "<rboinc>: an <rboinc> element here"},
		// result file_infos
		{name: "output no name", rOld: "<name><OUTFILE_1/></name>", want: resPath + ": <file_info> #1: has no <name>"},
		{name: "output name text", rOld: "<name><OUTFILE_1/></name>", rNew: "<name>x<OUTFILE_1/></name>", want: "<name> must hold exactly one <OUTFILE_k/>"},
		{name: "output name two macros", rOld: "<name><OUTFILE_1/></name>", rNew: "<name><OUTFILE_1/><OUTFILE_2/></name>", want: "exactly one <OUTFILE_k/>"},
		{name: "output name empty", rOld: "<name><OUTFILE_1/></name>", rNew: "<name></name>", want: "exactly one <OUTFILE_k/>"},
		{name: "output name open-close", rOld: "<name><OUTFILE_1/></name>", rNew: "<name><OUTFILE_1></OUTFILE_1></name>", want: "exactly one <OUTFILE_k/>"},
		{name: "output name spaced", rOld: "<name><OUTFILE_1/></name>", rNew: "<name><OUTFILE_1 /></name>", want: "exactly one <OUTFILE_k/>"},
		{name: "output name not digits", rOld: "<name><OUTFILE_1/></name>", rNew: "<name><OUTFILE_x/></name>", want: "exactly one <OUTFILE_k/>"},
		{name: "output name comment", rOld: "<name><OUTFILE_1/></name>", rNew: "<name><!--c--><OUTFILE_1/></name>", want: "exactly one <OUTFILE_k/>"},
		{name: "output duplicate k", rOld: "<name><OUTFILE_1/></name>", rNew: "<name><OUTFILE_0/></name>", want: "<file_info> #1 (<OUTFILE_0/>): <OUTFILE_0/> is already the name of <file_info> #0"},
		{name: "no result", rOld: "result>", rNew: "reslt>", all: true, want: resPath + ": 0 top-level <result>"},
		{name: "two results", rOld: "<result>", rNew: "<result>\n</result>\n<result>", want: "2 top-level <result>"},
		{name: "result not at end of line", rOld: "<result>\n", rNew: "<result>  \n", want: `<result>: write the start tag exactly as "<result>"`},
		{name: "result attribute", rOld: "<result>\n", rNew: "<result a=\"b\">\n", want: `<result>: write the start tag`},
		// result file_refs
		{name: "ref no file_name", rOld: "<file_name><OUTFILE_1/></file_name>", want: "<result> <file_ref> #1: has no <file_name>"},
		{name: "ref bad file_name", rOld: "<file_name><OUTFILE_1/></file_name>", rNew: "<file_name>log</file_name>", want: "<result> <file_ref> #1: <file_name> must hold exactly one"},
		{name: "ref no open_name", rOld: "<open_name>log</open_name>", want: "<result> <file_ref> #1: has no <open_name>"},
		{name: "ref bad open_name", rOld: "<open_name>log</open_name>", rNew: "<open_name>../log</open_name>", want: "contains '/'"},
		{name: "ref unknown output", rOld: "<file_name><OUTFILE_1/></file_name>", rNew: "<file_name><OUTFILE_9/></file_name>", want: "names <OUTFILE_9/>, which no <file_info> declares"},
		{name: "ref duplicate", rOld: "<file_name><OUTFILE_1/></file_name>", rNew: "<file_name><OUTFILE_0/></file_name>", want: `<OUTFILE_0/> already has a <file_ref> (open_name "output.coor")`},
		{name: "output without ref", rOld: "<file_ref>\n        <file_name><OUTFILE_1/></file_name>\n        <open_name>log</open_name>\n    </file_ref>", want: "<file_info> #1 (<OUTFILE_1/>): no <file_ref> in <result> names <OUTFILE_1/>"},
		// result annotations
		{name: "alias slash", rOld: `aliases=".coor"`, rNew: `aliases="a/b"`, want: `alias "a/b" contains '/'`},
		{name: "alias empty", rOld: `aliases=".coor"`, rNew: `aliases=".coor  .c"`, want: "empty alias"},
		{name: "alias trailing space", rOld: `aliases=".coor"`, rNew: `aliases=".coor "`, want: "empty alias"},
		{name: "alias tab", rOld: `aliases=".coor"`, rNew: `aliases=".coor&#9;.c"`, want: "whitespace or control"},
		{name: "alias long", rOld: `aliases=".coor"`, rNew: `aliases="` + strings.Repeat("a", 65) + `"`, want: "longer than 64 bytes"},
		{name: "alias gt", rOld: `aliases=".coor"`, rNew: `aliases="a>b"`, want: "contains '>'"},
		{name: "output unknown attribute", rOld: `aliases=".coor"`, rNew: `alias=".coor"`, want: `unknown attribute "alias"`},
		{name: "chain not a number", rOld: `chain="1"`, rNew: `chain="x"`, want: `chain "x" is not a non-negative integer`},
		{name: "chain empty", rOld: `chain="1"`, rNew: `chain=""`, want: "not a non-negative integer"},
		{name: "chain negative", rOld: `chain="1"`, rNew: `chain="-1"`, want: "not a non-negative integer"},
		{name: "chain plus", rOld: `chain="1"`, rNew: `chain="+1"`, want: "not a non-negative integer"},
		{name: "chain missing target", rOld: `chain="1"`, rNew: `chain="5"`, want: resPath + `: <file_info> #0 (<OUTFILE_0/>): chain="5": chain target does not exist`},
		{name: "chain immutable", rOld: `chain="1"`, rNew: `chain="0"`, want: `chain target <file_ref> #0 (open_name "LICENSE") is immutable`},
		{name: "chain constant", rOld: `chain="1"`, rNew: `chain="2"`, want: "is a constant file"},
		{name: "chain twice", rOld: "<optional/>", rNew: `<rboinc chain="1"/>`, want: `<file_info> #1 (<OUTFILE_1/>): chain="1": <OUTFILE_0/> already feeds that input`},
		{name: "two annotations in output", rOld: "<optional/>", rNew: "<rboinc/><rboinc/>", want: "2 <rboinc> elements"},
		{name: "annotation in result ref", rOld: "<open_name>log</open_name>", rNew: "<open_name>log</open_name><rboinc/>", want: resPath + ": <file_ref>: an <rboinc> element here"},
		{name: "annotation at result top", rOld: "<result>", rNew: "<rboinc/><result>", want: resPath + ": top level: an <rboinc> element here"},
		{name: "result too big", rOld: "<result>", rNew: "<!--" + strings.Repeat("x", MaxTemplateSize) + "--><result>", want: resPath + ": template is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wu, res := baseWU, baseResult
			n := 1
			if c.all {
				n = -1
			}
			if c.wuOld != "" {
				if !strings.Contains(wu, c.wuOld) {
					t.Fatalf("test bug: %q not in base WU template", c.wuOld)
				}
				wu = strings.Replace(wu, c.wuOld, c.wuNew, n)
			}
			if c.rOld != "" {
				if !strings.Contains(res, c.rOld) {
					t.Fatalf("test bug: %q not in base result template", c.rOld)
				}
				res = strings.Replace(res, c.rOld, c.rNew, n)
			}
			q, err := Parse("t", []byte(wu), []byte(res), wuPath, resPath)
			if err == nil {
				t.Fatalf("accepted: %+v", q)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\ndoes not contain %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), wuPath+": ") && !strings.HasPrefix(err.Error(), resPath+": ") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestBadQueueName(t *testing.T) {
	for _, n := range []string{"", "../x", "a-b", "a b", strings.Repeat("q", MaxNameLen+1)} {
		if _, err := Parse(n, []byte(baseWU), []byte(baseResult), wuPath, resPath); err == nil {
			t.Errorf("queue name %q accepted", n)
		}
	}
}

func TestBooleans(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "No": false, "TRUE": true, "1": true, "yes": true, "Yes": true} {
		got, err := parseBool(map[string]string{"b": v}, "b")
		if err != nil || got != want {
			t.Errorf("parseBool(%q) = %v, %v", v, got, err)
		}
	}
}
