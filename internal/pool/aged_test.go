package pool

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A content found in the pool and about to be used is touched: it is no
// longer among the aged contents collection looks at.
func TestTouchTakesContentOutOfAged(t *testing.T) {
	p := &Pool{Dir: t.TempDir()}
	sum, _, err := p.WriteContent(strings.NewReader("content\n"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	if aged, err := p.Aged(mid); err != nil || !slices.Equal(aged, []string{sum}) {
		t.Fatalf("aged before the touch: %v %v", aged, err)
	}
	if !p.Touch(sum) {
		t.Fatal("Touch: content not found")
	}
	if aged, err := p.Aged(mid); err != nil || len(aged) != 0 || p.AgedSince(sum, mid) {
		t.Fatalf("aged after the touch: %v %v", aged, err)
	}
	if p.Touch("0123456789abcdef0123456789abcdef") {
		t.Fatal("Touch found a content the pool does not hold")
	}
}
