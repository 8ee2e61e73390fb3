package naming

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestFormatParseRoundTrip(t *testing.T) {
	s := Format("run1", "toni", "G_1", 3, 10, Tag(42))
	if s != "run1-TONI_G_1-3-10-RND0042" {
		t.Fatalf("Format = %q", s)
	}
	w, err := ParseWU(s)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "run1" || w.User != "TONI" || w.Group != "G_1" || w.Step != 3 || w.NSteps != 10 || w.Tag != "RND0042" {
		t.Fatalf("ParseWU = %+v", w)
	}
	if w.String() != s {
		t.Fatalf("String = %q", w.String())
	}
}

func TestParseWURejects(t *testing.T) {
	for _, s := range []string{
		"", "a-B_c-0-1", "a-B_c-0-1-RND1-x", "a-b_c-0-1-RND0001", "a-BC-0-1-RND0001",
		"a-B_c-01-2-RND0001", "a-B_c-2-2-RND0001", "a-B_c-0-0-RND0001", "a b-B_c-0-1-RND0001",
		"a-B_c--1-2-RND0001", "a-B_c-0-1-XYZ0001", "a-B_c/..-0-1-RND0001",
	} {
		if _, err := ParseWU(s); err == nil {
			t.Errorf("ParseWU(%q) accepted", s)
		}
	}
}

func TestParseOutput(t *testing.T) {
	cases := map[string]Output{
		"run1-TONI_G-0-3-RND0001_0_r1750185903_2": {"run1-TONI_G-0-3-RND0001", "run1-TONI_G-0-3-RND0001_0", 2},
		"p1_0_r1750185903_0":                      {"p1", "p1_0", 0},
		"mywu_1_0":                                {"mywu", "mywu_1", 0},
		// Assigned jobs: the scheduler names results <wu>_<pid>_<time>_<seq>.
		"o1-ALICE_go-0-2-RND4484_26939_1796317918_0_r1146017171_0": {"o1-ALICE_go-0-2-RND4484", "o1-ALICE_go-0-2-RND4484_26939_1796317918_0", 0},
		"o1-ALICE_go-0-2-RND4484_26939_1796317918_12_1":            {"o1-ALICE_go-0-2-RND4484", "o1-ALICE_go-0-2-RND4484_26939_1796317918_12", 1},
		// A chain name ending in digits after an underscore.
		"run_7-ALICE_g_2-1-3-RND0002_3_r99_0": {"run_7-ALICE_g_2-1-3-RND0002", "run_7-ALICE_g_2-1-3-RND0002_3", 0},
		// Another project's assigned job: the last number goes.
		"other_5_6_7_r1_0": {"other_5_6", "other_5_6_7", 0},
	}
	for in, want := range cases {
		got, err := ParseOutput(in)
		if err != nil || got != want {
			t.Errorf("ParseOutput(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"nounderscore", "x_r1_2", "_1_r2_3", "w_1_r2_"} {
		if o, err := ParseOutput(bad); err == nil {
			t.Errorf("ParseOutput(%q) = %+v, want an error", bad, o)
		}
	}
}

func TestFindWU(t *testing.T) {
	for in, want := range map[string]string{
		"o1-ALICE_go-0-2-RND4484_26939_1796317918_0_r1146017171_0": "o1-ALICE_go-0-2-RND4484",
		"o1-ALICE_go-0-2-RND4484":                                  "o1-ALICE_go-0-2-RND4484",
		"o1-ALICE_go-0-2-RND4484_something_else":                   "o1-ALICE_go-0-2-RND4484",
		"p1_0_r1750185903_0":                                       "",
	} {
		if got, _ := FindWU(in); got != want {
			t.Errorf("FindWU(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIdent(t *testing.T) {
	for _, ok := range []string{"a", "A_9", "___"} {
		if err := CheckIdent("name", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a-b", "a b", "../x", "é", "a;rm", string(make([]byte, 65))} {
		if err := CheckIdent("name", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if CheckUser("to_ni") == nil || CheckUser("toni") != nil {
		t.Error("CheckUser")
	}
}

func TestResultFile(t *testing.T) {
	wu, k, err := ParseResultFile(ResultFile("a-B_c-0-1-RND0001", 7))
	if err != nil || wu != "a-B_c-0-1-RND0001" || k != 7 {
		t.Fatalf("%q %d %v", wu, k, err)
	}
}

func FuzzParseWU(f *testing.F) {
	f.Add("run1-TONI_G_1-3-10-RND0042")
	f.Add("a-B_c-0-1-RND0001_asgn")
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWU(s)
		if err != nil {
			return
		}
		if w.String() != s {
			t.Fatalf("round trip %q -> %q", s, w.String())
		}
	})
}

// The names were once matched by these expressions; the hand-written
// matchers must agree with them on every input.
var (
	identRE  = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	userRE   = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	rndRE    = regexp.MustCompile(`^RND[0-9]{4}(_asgn)?$`)
	outNewRE = regexp.MustCompile(`^(.+)_([0-9]+)_r([0-9]+)_([0-9]+)$`)
	outOldRE = regexp.MustCompile(`^(.+)_([0-9]+)_([0-9]+)$`)
)

func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{"p1_0_r1750185903_0", "a_b_1_2", "x_r1_2", "_1_r2_3", "\n_1_r2_3", "a\nb_1_2",
		"w_1_r_2", "w_1_r2_", "w__r2_3", "w_01_r02_003", "w_1_r2_3_4", "w\xff_1_r2_3", "w_99999999999999999999_r1_0",
		"o1-ALICE_go-0-2-RND4484_26939_1796317918_0_r1146017171_0", "a-B_c-0-1-RND0001_1_2_3_4_5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOutput(s)
		m := outNewRE.FindStringSubmatch(s)
		if m == nil {
			if m2 := outOldRE.FindStringSubmatch(s); m2 != nil {
				m = []string{m2[0], m2[1], m2[2], "", m2[3]}
			}
		}
		if m == nil {
			if err == nil {
				t.Fatalf("%q parsed as %+v; the expression refuses it", s, o)
			}
			return
		}
		if err != nil {
			if _, aerr := strconv.Atoi(m[4]); aerr == nil && !strings.Contains(s, "\n") {
				t.Fatalf("%q refused: %v", s, err)
			}
			return
		}
		// The work unit, then numbers, then the output's parts.
		if o.WU == "" || !strings.HasPrefix(o.Result, o.WU+"_") || !strings.HasPrefix(s, o.Result+"_") {
			t.Fatalf("%q: %+v does not nest", s, o)
		}
		for _, part := range strings.Split(o.Result[len(o.WU)+1:], "_") {
			if !allOf(part, isDigit) {
				t.Fatalf("%q: %+v: the result adds %q to the work unit", s, o, part)
			}
		}
		if w, err := ParseWU(o.WU); err == nil && w.String() != o.WU {
			t.Fatalf("%q: rboinc work unit %q does not format back", s, o.WU)
		}
	})
}

func FuzzNameMatchers(f *testing.F) {
	for _, s := range []string{"", "a", "A_9", "a-b", "RND0042", "RND0042_asgn", "RND042", "RND00420", "rnd0042", "RND0042_asg", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := allOf(s, isIdentCh), identRE.MatchString(s); got != want {
			t.Errorf("ident %q: %v, expression %v", s, got, want)
		}
		if got, want := allOf(s, isAlnum), userRE.MatchString(s); got != want {
			t.Errorf("user %q: %v, expression %v", s, got, want)
		}
		if got, want := isTag(s), rndRE.MatchString(s); got != want {
			t.Errorf("tag %q: %v, expression %v", s, got, want)
		}
	})
}

// FuzzOutputOfEveryResultNaming: for any rboinc work unit, the output
// files of every result naming BOINC uses lead back to it and to the
// output's index: the transitioner's <wu>_<n>, the scheduler's
// <wu>_<pid>_<time>_<seq> for assigned jobs (sched_assign.cpp), each with
// today's <result>_r<random>_<k> and the older <result>_<k>.
func FuzzOutputOfEveryResultNaming(f *testing.F) {
	f.Add("run_7", "ALICE", "g_2", uint16(1), uint16(3), uint16(4484), false, uint32(0), uint32(26939), uint32(1796317918), uint32(1146017171), uint8(2))
	f.Add("o1", "ALICE", "go", uint16(0), uint16(2), uint16(1), true, uint32(12), uint32(1), uint32(0), uint32(0), uint8(0))
	f.Add("1_2", "B", "3_4", uint16(0), uint16(1), uint16(0), false, uint32(5), uint32(6), uint32(7), uint32(8), uint8(9))
	f.Fuzz(func(t *testing.T, name, user, group string, step, nsteps, tag uint16, asgn bool, n, pid, when, random uint32, k uint8) {
		if !ValidIdent(name) || !ValidIdent(group) || CheckUser(user) != nil || user != strings.ToUpper(user) || nsteps == 0 {
			return
		}
		w := WU{Name: name, User: user, Group: group, Step: int(step) % int(nsteps), NSteps: int(nsteps), Tag: Tag(int(tag))}
		if asgn {
			w.Tag += "_asgn"
		}
		wu := w.String()
		if _, err := ParseWU(wu); err != nil {
			t.Fatalf("%q: %v", wu, err)
		}
		u := func(x uint32) string { return strconv.FormatUint(uint64(x), 10) }
		for _, result := range []string{wu + "_" + u(n), wu + "_" + u(pid) + "_" + u(when) + "_" + u(n)} {
			if got, ok := WUOfResult(result); !ok || got != wu {
				t.Fatalf("WUOfResult(%q) = %q, %v; want %q", result, got, ok, wu)
			}
			for _, out := range []string{result + "_r" + u(random) + "_" + u(uint32(k)), result + "_" + u(uint32(k))} {
				o, err := ParseOutput(out)
				if err != nil || o.WU != wu || o.Result != result || o.Index != int(k) {
					t.Fatalf("ParseOutput(%q) = %+v, %v; want work unit %q, result %q, index %d", out, o, err, wu, result, k)
				}
				if got, ok := FindWU(out); !ok || got != wu {
					t.Fatalf("FindWU(%q) = %q, %v; want %q", out, got, ok, wu)
				}
			}
		}
	})
}
