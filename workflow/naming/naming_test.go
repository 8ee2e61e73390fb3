package naming

import "testing"

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

func FuzzParseOutput(f *testing.F) {
	f.Add("p1_0_r1750185903_0")
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOutput(s)
		if err == nil && o.WU == "" {
			t.Fatalf("empty WU from %q", s)
		}
	})
}
