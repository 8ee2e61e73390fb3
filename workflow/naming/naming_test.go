package naming

import (
	"regexp"
	"strconv"
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
		"run1-TONI_G-0-3-RND0001_0_r1750185903_2": {"run1-TONI_G-0-3-RND0001", 0, 2},
		"p1_0_r1750185903_0":                      {"p1", 0, 0},
		"mywu_1_0":                                {"mywu", 1, 0},
	}
	for in, want := range cases {
		got, err := ParseOutput(in)
		if err != nil || got != want {
			t.Errorf("ParseOutput(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := ParseOutput("nounderscore"); err == nil {
		t.Error("ParseOutput accepted a bare name")
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
		"w_1_r_2", "w_1_r2_", "w__r2_3", "w_01_r02_003", "w_1_r2_3_4", "w\xff_1_r2_3", "w_99999999999999999999_r1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOutput(s)
		if err == nil && o.WU == "" {
			t.Fatalf("empty WU from %q", s)
		}
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
		rep, err1 := strconv.Atoi(m[2])
		idx, err2 := strconv.Atoi(m[4])
		if err1 != nil || err2 != nil {
			if err == nil {
				t.Fatalf("%q parsed although its numbers are out of range", s)
			}
			return
		}
		if want := (Output{WU: m[1], Replica: rep, Index: idx}); err != nil || o != want {
			t.Fatalf("%q: got %+v, %v; the expression gives %+v", s, o, err, want)
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
