//go:build !linux

package pool

import "os"

// identify knows no change time here: nothing is trusted, every upload is
// hashed when it is taken into the pool.
func identify(os.FileInfo) (verifiedFile, bool) { return verifiedFile{}, false }
