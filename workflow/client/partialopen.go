package client

import (
	"fmt"
	"os"
)

// openPartial opens (or makes) the partial file of a download at path for
// reading what an earlier try fetched and writing the rest. Anything but
// a regular file there (a symbolic link planted in a shared directory,
// say) is removed, never followed: the download would truncate and write
// the file a link points to, and rename the link into place.
func openPartial(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("%s is not a regular file and cannot be removed: %w", path, err)
		}
	}
	// noFollow closes the window between the check and the open.
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
}
