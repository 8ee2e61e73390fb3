package boinc

import (
	"fmt"
	"io"
)

// pipeBuf is Linux's PIPE_BUF: a write(2) of at most this many bytes to a
// pipe is atomic, all of it lands in the pipe or none of it, even when the
// writer is killed in the middle (pipe(7); Go's pipes are non-blocking and
// then such a write is refused whole with EAGAIN and redone whole). POSIX
// promises only 512 bytes; rboinc's server, as BOINC's, runs on Linux.
const pipeBuf = 4096

// A job line with its newline always fits in one atomic write: create_work
// reads a line with fgets into a 4096-byte buffer and refuses one that fills
// it (tools/create_work.cpp, check_buffer), and checkedLine refuses such a
// line before. This fails to compile if the two limits ever part.
const _ = uint(pipeBuf - maxLine)

// lineFeed hands whole job lines to create_work: each write(2) holds only
// whole lines and at most pipeBuf bytes, so create_work never reads the
// beginning of a line without its end. When the process feeding it is
// killed (kill -9, a crash), create_work sees its input end and takes what
// it read for a finished input: with a cut line it would create a job
// with a cut command line or option (BOINC's create_work parses whatever
// fgets returned at the end, newline or not).
type lineFeed struct {
	w   io.Writer
	buf []byte
}

func newLineFeed(w io.Writer) *lineFeed {
	return &lineFeed{w: w, buf: make([]byte, 0, pipeBuf)}
}

// add queues line (without its newline), first writing out the lines
// queued before when it would not fit with them in one write.
func (f *lineFeed) add(line string) error {
	if len(line)+1 > pipeBuf {
		return fmt.Errorf("a create_work job line of %d bytes does not fit in one pipe write of %d", len(line)+1, pipeBuf)
	}
	if len(f.buf)+len(line)+1 > pipeBuf {
		if err := f.flush(); err != nil {
			return err
		}
	}
	f.buf = append(f.buf, line...)
	f.buf = append(f.buf, '\n')
	return nil
}

// flush writes the queued lines in one write.
func (f *lineFeed) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	_, err := f.w.Write(f.buf)
	f.buf = f.buf[:0]
	return err
}
