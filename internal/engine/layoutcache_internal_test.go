package engine

import (
	"fmt"
	"reflect"
	"testing"
)

// TestLayoutCacheParsesOnceAndStaysBounded: the cache answers what
// parseLayout answers, keeps no document that failed, and holds at most
// layoutCacheMax documents however many chains' layouts it sees.
func TestLayoutCacheParsesOnceAndStaysBounded(t *testing.T) {
	var c layoutCache
	doc := `{"inputs":[{"slot":0,"open_name":"in"}],"outputs":[{"index":0,"open_name":"out","chain_pos":0}]}`
	want, err := parseLayout(doc)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := c.parse(doc)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("parse: %+v, %v; want %+v", got, err, want)
		}
	}
	if _, err := c.parse(`{"outputs":`); err == nil {
		t.Fatal("a broken layout was accepted")
	}
	if _, ok := c.parsed[`{"outputs":`]; ok {
		t.Fatal("a broken layout was kept")
	}
	for i := range 3 * layoutCacheMax {
		if _, err := c.parse(fmt.Sprintf(`{"outputs":[{"index":%d,"open_name":"o","chain_pos":-1}]}`, i)); err != nil {
			t.Fatal(err)
		}
		if len(c.parsed) > layoutCacheMax {
			t.Fatalf("%d layouts held, at most %d wanted", len(c.parsed), layoutCacheMax)
		}
	}
}
