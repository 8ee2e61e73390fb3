package setup

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockHolder says whether some process holds a lock of the given kinds
// ("FLOCK" for flock(2), "POSIX" for fcntl/lockf, as BOINC's bin/start
// takes them, "OFDLCK") on path, and its process id (-1 when the kernel
// does not tell), from /proc/locks: probing with a lock of our own could
// make a daemon that starts at that moment fail.
func lockHolder(path string, kinds ...string) (pid int, held bool, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		if os.IsNotExist(err) {
			return 0, false, nil
		}
		return 0, false, err
	}
	fh, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false, err
	}
	defer fh.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters
		// ("1: -> POSIX ...") hold nothing.
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] == "->" || fs[5] != want {
			continue
		}
		for _, k := range kinds {
			if fs[1] == k {
				pid, err := strconv.Atoi(fs[4])
				if err != nil {
					pid = -1
				}
				return pid, true, nil
			}
		}
	}
	return 0, false, sc.Err()
}

// flockHeld says whether some process holds a flock on path.
func flockHeld(path string) (bool, error) {
	_, held, err := lockHolder(path, "FLOCK")
	return held, err
}
