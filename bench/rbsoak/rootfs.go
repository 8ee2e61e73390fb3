package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Where the server root lives (-rootfs): a tmpfs (the short run: fast,
// gone with the run), an ext4 image file in the work directory,
// loop-mounted (the long run: it outlives a stop of the machine, and the
// run goes on with -resume), or a plain directory (no disk-full fault).
// tmpfs and image need root (or CAP_SYS_ADMIN); without it the root is a
// plain directory and the disk-full fault is skipped.
const (
	rootTmpfs = "tmpfs"
	rootImage = "image"
	rootDir   = "dir"
)

// imageName is the ext4 image of -rootfs image, in the work directory.
const imageName = "rootfs.img"

// mountRoot mounts the file system the server root lives on at s.mnt, made
// anew (fresh) or the one a killed run left (resume: the image only).
func (s *soak) mountRoot(ctx context.Context, fresh bool) {
	if s.o.rootfs == rootDir {
		if s.want("diskfull") {
			s.skip("diskfull", "-rootfs dir: the server root is on the work directory's disk, which the driver does not fill")
		}
		return
	}
	if !s.want("diskfull") && s.o.rootfs != rootImage {
		return
	}
	var out []byte
	var err error
	switch s.o.rootfs {
	case rootTmpfs:
		out, err = exec.CommandContext(ctx, "mount", "-t", "tmpfs", "-o", "size="+s.o.tmpfsSize, "rboinc-soak", s.mnt).CombinedOutput()
	case rootImage:
		img := filepath.Join(s.o.work, imageName)
		if fresh {
			// Sparse: it takes on the disk what the root holds. No blocks
			// reserved for root (the driver is root): the disk-full fault
			// fills it all.
			out, err = exec.CommandContext(ctx, "truncate", "-s", s.o.tmpfsSize, img).CombinedOutput()
			if err == nil {
				out, err = exec.CommandContext(ctx, "mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0", img).CombinedOutput()
			}
		}
		if err == nil {
			out, err = exec.CommandContext(ctx, "mount", "-o", "loop", img, s.mnt).CombinedOutput()
		}
	}
	if err != nil {
		if !fresh {
			s.problem("mounting the server root's %s again: %v: %s", s.o.rootfs, err, strings.TrimSpace(string(out)))
			return
		}
		s.skip("diskfull", fmt.Sprintf("mounting a %s for the server root failed (%v: %s): the disk-full fault needs root or CAP_SYS_ADMIN", s.o.rootfs, err, strings.TrimSpace(string(out))))
		return
	}
	s.mounted = true
	// A disk-full fault the kill cut short left its filler.
	os.Remove(filepath.Join(s.mnt, "filler"))
}
