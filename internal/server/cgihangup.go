package server

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// watchHangup returns a context cancelled when the other end of fd goes
// away: the web server's end of a CGI program's standard output, closed
// when Apache stops, restarts or gives the request up. Without it a long
// poll of the events feed outlives its web server by up to its wait, as a
// process nobody reads. A regular file or a half-closed socket (the web
// server done sending the request body) does not count as gone. stop ends
// the watch.
func watchHangup(parent context.Context, fd int) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		fds := []unix.PollFd{{Fd: int32(fd)}} // no events asked: only hang-ups and errors wake it
		for ctx.Err() == nil {
			n, err := unix.Poll(fds, int(hangupPoll/time.Millisecond))
			if errors.Is(err, unix.EINTR) || err == nil && n == 0 {
				continue
			}
			if err != nil || fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}

// hangupPoll is how often watchHangup looks whether it should stop.
const hangupPoll = 250 * time.Millisecond
