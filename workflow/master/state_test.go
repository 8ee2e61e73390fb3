package master

import (
	"encoding/json"
	"testing"
)

// FuzzParseState: any bytes in a state file give a state or an error,
// and a state read comes out of a write unchanged.
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"last_event_id": 12, "unacknowledged_files": {"g": ["a_0"]}, "data": {"n": 1}}`))
	f.Add([]byte(`{"last_event_id": -1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseState(b)
		if err != nil {
			return
		}
		if st.LastID < 0 {
			t.Fatalf("negative id %d taken", st.LastID)
		}
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseState(out)
		if err != nil || again.LastID != st.LastID || len(again.Unacked) != len(st.Unacked) {
			t.Fatalf("%s -> %s -> %+v, %v", b, out, again, err)
		}
	})
}
