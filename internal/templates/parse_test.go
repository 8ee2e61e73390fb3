package templates

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func readPair(t *testing.T, dir, name string) (wu, result []byte) {
	t.Helper()
	wu, err := os.ReadFile(filepath.Join(dir, "rboinc_"+name+"_wu"))
	if err != nil {
		t.Fatal(err)
	}
	result, err = os.ReadFile(filepath.Join(dir, "rboinc_"+name+"_result"))
	if err != nil {
		t.Fatal(err)
	}
	return wu, result
}

func parseTestdata(t *testing.T, name string) *Queue {
	t.Helper()
	wu, res := readPair(t, "testdata", name)
	q, err := Parse(name, wu, res, "testdata/rboinc_"+name+"_wu", "testdata/rboinc_"+name+"_result")
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// The sample from the reference tests (boinc-samples/rboinc-annotated_*).
func TestParseSample(t *testing.T) {
	q := parseTestdata(t, "uc2")
	if q.Application != "rbtest" || q.Description != "uc2 pipeline test" {
		t.Errorf("application/description = %q/%q", q.Application, q.Description)
	}
	wantIn := []Input{{Position: 0, Slot: 0, OpenName: "in", Parameter: "coor_file", Description: "Coordinates", Optional: true}}
	if !reflect.DeepEqual(q.Inputs, wantIn) {
		t.Errorf("inputs = %+v", q.Inputs)
	}
	wantOut := []Output{{Position: 0, Index: 0, OpenName: "out", Aliases: []string{".coor", ".coor.gz"}, Chain: 0, MaxNBytes: 5e6}}
	if !reflect.DeepEqual(q.Outputs, wantOut) {
		t.Errorf("outputs = %+v", q.Outputs)
	}
}

func TestParseMetabeta(t *testing.T) {
	q := parseTestdata(t, "metabeta")
	if q.Application != "acemdbeta" || q.Description != "Standard ACEMD run with optional DCD and PLUMED" {
		t.Errorf("application/description = %q/%q", q.Application, q.Description)
	}
	in := func(pos int, open, param, desc string) Input {
		return Input{Position: pos, Slot: pos, OpenName: open, Parameter: param, Description: desc}
	}
	wantIn := []Input{
		in(0, "LICENSE", "", "(undocumented)"),
		in(1, "COPYRIGHT", "", "(undocumented)"),
		in(2, "input.coor", "coor_file", "Binary coordinates"),
		in(3, "input.vel", "vel_file", "Binary velocities"),
		in(4, "input.idx", "idx_file", "(undocumented)"),
		in(5, "structure.pdb", "pdb_file", "PDB structure"),
		in(6, "structure.psf", "psf_file", "PSF topology"),
		in(7, "parameters", "par_file", "CHARMM parameters"),
		in(8, "input", "conf_file", "ACEMD input file"),
		in(9, "META_INP", "metainp_file", "PLUMED metadynamics configuration"),
		in(10, "HILLS", "hills_file", "PLUMED metadynamics restart"),
	}
	wantIn[0].Immutable, wantIn[1].Immutable = true, true
	wantIn[4].Optional, wantIn[9].Optional, wantIn[10].Optional = true, true, true
	wantIn[8].Encode = true
	if !reflect.DeepEqual(q.Inputs, wantIn) {
		t.Errorf("inputs:\n got %+v\nwant %+v", q.Inputs, wantIn)
	}
	out := func(k int, open, aliases string, chain int, opt bool, max float64) Output {
		return Output{Position: k, Index: k, OpenName: open, Aliases: strings.Split(aliases, " "), Chain: chain, Optional: opt, MaxNBytes: max}
	}
	wantOut := []Output{
		out(0, "progress.log", ".log.gz .log .log.gz.bad", -1, false, 100e6),
		out(1, "output.coor", ".coor", 2, false, 50e6),
		out(2, "output.vel", ".vel", 3, false, 50e6),
		out(3, "output.idx", ".idx", 4, false, 50e6),
		out(4, "output.dcd", ".dcd.gz .dcd .dcd.gz.bad", -1, true, 128e6),
		out(5, "COLVAR", ".colvar.gz .colvar", -1, true, 10e6),
		out(6, "log.file", ".plumedlog.gz .plumedlog", -1, true, 10e6),
		out(7, "HILLS", ".hills", 10, true, 10e6),
	}
	if !reflect.DeepEqual(q.Outputs, wantOut) {
		t.Errorf("outputs:\n got %+v\nwant %+v", q.Outputs, wantOut)
	}
	var params []string
	for _, p := range q.Parameters() {
		params = append(params, p.Parameter)
	}
	if got := strings.Join(params, " "); got != "coor_file vel_file idx_file pdb_file psf_file par_file conf_file metainp_file hills_file" {
		t.Errorf("parameters = %s", got)
	}
	if h, ok := q.InputBySlot(10); !ok || h.OpenName != "HILLS" {
		t.Errorf("InputBySlot(10) = %+v, %v", h, ok)
	}
	if _, ok := q.InputBySlot(11); ok {
		t.Error("InputBySlot(11) found something")
	}
}

// Slots follow <number>, not position, when numbers are given out of order.
func TestSlotsFromNumbers(t *testing.T) {
	wu := strings.NewReplacer("<number>0</number>", "<number>7</number>", "<file_number>0</file_number>", "<file_number>7</file_number>").Replace(baseWU)
	q, err := Parse("t", []byte(wu), []byte(baseResult), "w", "r")
	if err != nil {
		t.Fatal(err)
	}
	if in, ok := q.InputBySlot(7); !ok || in.Position != 0 || in.OpenName != "LICENSE" {
		t.Errorf("InputBySlot(7) = %+v, %v", in, ok)
	}
	if q.Inputs[2].Slot != 2 || !q.Inputs[2].Constant {
		t.Errorf("constant input = %+v", q.Inputs[2])
	}
	if len(q.Parameters()) != 1 {
		t.Errorf("parameters = %+v", q.Parameters())
	}
}

// The repository's shipped example queues must all load.
func TestShippedTemplates(t *testing.T) {
	const dir = "../../templates"
	wus, err := filepath.Glob(filepath.Join(dir, "rboinc_*_wu"))
	if err != nil || len(wus) == 0 {
		t.Fatalf("no shipped templates in %s (%v)", dir, err)
	}
	for _, p := range wus {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "rboinc_"), "_wu")
		wu, res := readPair(t, dir, name)
		q, err := Parse(name, wu, res, p, filepath.Join(dir, "rboinc_"+name+"_result"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(string(q.ResultTemplate()), "<result>\n") {
			t.Errorf("%s: <result> is not at the end of a line", name)
		}
	}
}

func TestLangevinExample(t *testing.T) {
	wu, res := readPair(t, "../../templates", "langevin")
	q, err := Parse("langevin", wu, res, "w", "r")
	if err != nil {
		t.Fatal(err)
	}
	if q.Application != "langevin" || q.Description != "Langevin dynamics of point particles (example MD step)" {
		t.Errorf("application/description = %q/%q", q.Application, q.Description)
	}
	var got []string
	for _, in := range q.Inputs {
		got = append(got, in.OpenName+"="+in.Parameter)
	}
	if s := strings.Join(got, " "); s != "LICENSE= input.coor=coor_file input.vel=vel_file input.conf=conf_file" {
		t.Errorf("inputs: %s", s)
	}
	if !q.Inputs[0].Immutable || !q.Inputs[3].Optional || q.Inputs[1].Optional {
		t.Errorf("flags: %+v", q.Inputs)
	}
	got = nil
	for _, o := range q.Outputs {
		got = append(got, o.OpenName+"="+strings.Join(o.Aliases, ",")+"@"+strconv.Itoa(o.Chain))
	}
	if s := strings.Join(got, " "); s != "output.coor=.coor@1 output.vel=.vel@2 progress.log=.log,.log.gz@-1" {
		t.Errorf("outputs: %s", s)
	}
}
