package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// journalNote describes the file system under dir when it is an ext4
// without a journal, "" otherwise (or when it cannot tell). There the
// kernel passes over every inode deleted in the last minute (five more
// while its inode table is unwritten) each time it creates a file
// (ext4's recently_deleted check, for file systems with no journal), so a
// submission's thousands of new files cost several times more right after
// many deletions, such as an earlier run's clean-up.
func journalNote(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return ""
	}
	major, minor := (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	want := fmt.Sprintf("%d:%d", major, minor)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		i := indexOf(f, "-")
		if len(f) < 5 || f[2] != want || i < 0 || i+2 >= len(f) || f[i+1] != "ext4" {
			continue
		}
		dev := filepath.Base(f[i+2])
		if _, err := os.Stat("/proc/fs/ext4/" + dev); err != nil {
			return "" // not the name the kernel knows it by: cannot tell
		}
		jbd, _ := filepath.Glob("/proc/fs/jbd2/" + dev + "-*")
		if len(jbd) > 0 {
			return ""
		}
		return fmt.Sprintf("%s is on ext4 without a journal (%s): each new file there costs more the more files were deleted in the minutes before (ext4's recently_deleted check); submission figures vary with it", dir, f[i+2])
	}
	return ""
}

func indexOf(f []string, s string) int {
	for i, v := range f {
		if v == s {
			return i
		}
	}
	return -1
}
