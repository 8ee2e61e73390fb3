package standin

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestSplitJobLine(t *testing.T) {
	cases := map[string][]string{
		"a b\tc\n":               {"a", "b", "c"},
		`--command_line "x y" f`: {"--command_line", "x y", "f"},
		`'single quoted' "d"`:    {"single quoted", "d"},
		`"ab"cd`:                 {"ab", "cd"},
		`a"b c"`:                 {`a"b`, `c"`},
		"\"unterminated x\n":     {"unterminated x\n"},
		`"" x"`:                  {`" x`}, // the character after the opening quote never closes it
		`x '`:                    {"x", ""},
		"":                       nil,
		"   \n":                  nil,
	}
	for in, want := range cases {
		if got := splitJobLine(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitJobLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs(strings.Fields("-appname a --wu_name w -batch 3 --priority 2 -rsc_fpops_est 1e9 --target_nresults 2 "+
		"--max_total_results 4 --command_line x --remote_file u 10 m --sub_appname s --stdin -verbose --continue_on_error f1 f2"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	j := o.job
	if o.app != "a" || o.showName || j.WU.Name != "w" || j.WU.Batch != 3 || j.WU.Priority != 2 || j.WU.RscFpopsEst != 1e9 ||
		j.WU.TargetNResults != 2 || j.WU.MaxTotalResults != 4 || j.CommandLine != "x" || j.SubApp != "s" ||
		!o.useStdin || !o.verbose || !o.continueOnError || len(j.Files) != 3 || !j.Files[0].Remote || j.Files[2].Name != "f2" {
		t.Errorf("parsed %+v", o)
	}
	for _, bad := range [][]string{{"---appname", "a"}, {"-"}, {"--appname"}, {"--remote_file", "u", "1"}, {"--broadcast_team", "0"}} {
		if _, err := parseArgs(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzSplitJobLine(f *testing.F) {
	f.Add(`--wu_name "a b" 'c' d` + "\n")
	f.Add(`"`)
	f.Fuzz(func(t *testing.T, line string) {
		words := splitJobLine(line)
		if len(words) > len(line)+1 {
			t.Fatalf("%d words from %d bytes", len(words), len(line))
		}
		for _, w := range words {
			if !strings.Contains(line, w) {
				t.Fatalf("word %q is not from the line", w)
			}
		}
		var j job
		parseStdinLine(&j, words, io.Discard)
	})
}

func TestCAtoiAtof(t *testing.T) {
	if atoi("12abc") != 12 || atoi("  -4") != -4 || atoi("x") != 0 || atof("1.5e3x") != 1500 || atof("abc") != 0 {
		t.Error("atoi/atof")
	}
}
