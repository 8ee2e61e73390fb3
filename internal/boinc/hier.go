package boinc

import (
	"crypto/md5"
	"encoding/hex"
	"path/filepath"
	"strconv"
)

// FilenameHash is BOINC's filename_hash: the MD5 of the name, hex digits
// 1..7 read as a number, modulo fanout, in lowercase hex without padding.
func FilenameHash(name string, fanout int) string {
	sum := md5.Sum([]byte(name))
	h := hex.EncodeToString(sum[:])
	x, _ := strconv.ParseUint(h[1:8], 16, 32)
	return strconv.FormatUint(x%uint64(fanout), 16)
}

// HierPath is dir_hier_path without side effects: root/<hash>/name, or
// root/name when fanout is 0.
func HierPath(root, name string, fanout int) string {
	if fanout <= 0 {
		return filepath.Join(root, name)
	}
	return filepath.Join(root, FilenameHash(name, fanout), name)
}
