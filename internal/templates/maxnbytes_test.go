package templates

import (
	"strings"
	"testing"
)

// TestOutputMaxNBytes: an output's limit is read as BOINC's client reads
// it; absent, empty or unreadable it is the client's default, 0.
func TestOutputMaxNBytes(t *testing.T) {
	for text, want := range map[string]float64{
		"<max_nbytes>1000</max_nbytes>":  1000,
		"<max_nbytes> 2e6 </max_nbytes>": 2e6,
		"":                               0,
		"<max_nbytes>0</max_nbytes>":     0,
		"<max_nbytes></max_nbytes>":      0,
		"<max_nbytes>1 MB</max_nbytes>":  0,
		"<max_nbytes>5</max_nbytes><max_nbytes>7</max_nbytes>":    7,
		"<max_nbytes>5</max_nbytes><max_nbytes>lots</max_nbytes>": 5,
		"<max_nbytes>5</max_nbytes><max_nbytes></max_nbytes>":     0,
		"<max_nbytes><x/>5</max_nbytes>":                          0,
	} {
		res := strings.Replace(baseResult, "<max_nbytes>1000</max_nbytes>", text, 1)
		q, err := Parse("t", []byte(baseWU), []byte(res), wuPath, resPath)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := q.Outputs[0].MaxNBytes; got != want {
			t.Errorf("%q: MaxNBytes %v, want %v", text, got, want)
		}
		if got := q.Outputs[1].MaxNBytes; got != 1000 {
			t.Errorf("%q: the second output's MaxNBytes %v, want 1000", text, got)
		}
	}
}
