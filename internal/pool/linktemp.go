package pool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

// tempSuffix ends the temporary names that links and copies take beside
// their destination before the rename that publishes them.
const tempSuffix = ".ln"

// linkTemp hard-links src to a fresh temporary name beside dst and returns
// it. The name is unique to this call: two operations on the same dst (a
// retried hook beside the first one) never remove each other's link.
func linkTemp(src, dst string) (string, error) {
	for {
		var b [6]byte
		rand.Read(b[:])
		tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+"."+hex.EncodeToString(b[:])+tempSuffix)
		err := os.Link(src, tmp)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return tmp, err
	}
}

// publish renames tmp to dst and makes sure tmp is gone afterwards. When
// both names are already links of the same file (a retry finding its result
// in place), rename(2) succeeds and does nothing, leaving tmp behind.
func publish(tmp, dst string) error {
	err := os.Rename(tmp, dst)
	if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}
