package server

import (
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWatchHangup: the kernel's own sockets and pipes. A CGI program's
// output whose reader closed ends the request; one whose reader only
// stopped sending (a half-close), or a regular file, does not.
func TestWatchHangup(t *testing.T) {
	pair := func(t *testing.T) (ours, theirs int) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
		return fds[0], fds[1]
	}
	ended := func(ctx context.Context, within time.Duration) bool {
		select {
		case <-ctx.Done():
			return true
		case <-time.After(within):
			return false
		}
	}
	t.Run("socket closed", func(t *testing.T) {
		ours, theirs := pair(t)
		ctx, stop := watchHangup(context.Background(), ours)
		defer stop()
		if ended(ctx, 300*time.Millisecond) {
			t.Fatal("ended while the web server's end was open")
		}
		unix.Close(theirs)
		if !ended(ctx, 5*time.Second) {
			t.Fatal("not ended 5 s after the web server's end closed")
		}
	})
	t.Run("socket half-closed", func(t *testing.T) {
		ours, theirs := pair(t)
		if err := unix.Shutdown(theirs, unix.SHUT_WR); err != nil {
			t.Fatal(err)
		}
		ctx, stop := watchHangup(context.Background(), ours)
		defer stop()
		if ended(ctx, 600*time.Millisecond) {
			t.Fatal("ended when the web server had only finished sending the request")
		}
	})
	t.Run("pipe reader closed", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ctx, stop := watchHangup(context.Background(), int(w.Fd()))
		defer stop()
		r.Close()
		if !ended(ctx, 5*time.Second) {
			t.Fatal("not ended 5 s after the pipe's reader closed")
		}
	})
	t.Run("regular file", func(t *testing.T) {
		f, err := os.Create(t.TempDir() + "/out")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ctx, stop := watchHangup(context.Background(), int(f.Fd()))
		if ended(ctx, 600*time.Millisecond) {
			t.Fatal("ended on a regular file")
		}
		stop()
		if !ended(ctx, time.Second) {
			t.Fatal("stop did not end the context")
		}
	})
}
