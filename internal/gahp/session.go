package gahp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// ProtocolVersion is the GAHP version the banner announces (that of
// BOINC's reference GAHP).
const ProtocolVersion = "1.0.2"

// commandList is COMMANDS' answer, sorted as the reference GAHP has it.
const commandList = "ASYNC_MODE_OFF ASYNC_MODE_ON BOINC_ABORT_JOBS BOINC_FETCH_OUTPUT BOINC_PING BOINC_QUERY_BATCHES BOINC_RETIRE_BATCH BOINC_SELECT_PROJECT BOINC_SET_LEASE BOINC_SUBMIT COMMANDS QUIT RESULTS VERSION"

// Session is one GAHP conversation on a pair of streams.
type Session struct {
	// Banner is the version line's text after "$GahpVersion: ".
	Banner string
	// Dir is where relative input paths and config.txt are read.
	Dir string
	// Project is the API URL and token that BOINC_SELECT_PROJECT (or
	// config.txt) gave.
	Project Project

	out    *bufio.Writer
	outMu  sync.Mutex // one line at a time; guards the fields below too
	prefix string
	async  bool
	wroteR bool
	done   []result // completed, in completion order
	busy   map[int]bool
	wg     sync.WaitGroup
}

type result struct {
	id   int
	text string
}

// Run answers the requests of in on out until QUIT or the end of in. It
// waits for the requests in progress before returning.
func (s *Session) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = bufio.NewWriter(out)
	s.busy = map[int]bool{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.line("", "$GahpVersion: "+s.Banner+" $")
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		raw, err := br.ReadString('\n')
		if err != nil && raw == "" {
			if err == io.EOF {
				cancel()
				s.wg.Wait()
				return nil
			}
			return fmt.Errorf("reading requests: %w", err)
		}
		line := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
		if quit := s.handle(ctx, line); quit {
			return nil
		}
	}
}

// line writes one reply line with the given prefix and flushes it.
func (s *Session) line(prefix, text string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.writeLocked(prefix + text)
}

func (s *Session) writeLocked(text string) {
	s.out.WriteString(text)
	s.out.WriteByte('\n')
	s.out.Flush()
}

// reply writes a synchronous answer under the current prefix.
func (s *Session) reply(text string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.writeLocked(s.prefix + text)
}

// handle answers one request line; it reports whether the session ends.
func (s *Session) handle(ctx context.Context, line string) bool {
	w := Split(line)
	if len(w) == 0 {
		s.reply("E")
		return false
	}
	switch cmd := strings.ToUpper(w[0]); cmd {
	case "VERSION":
		s.reply(ifArgs(w, 0, "S $GahpVersion: "+s.Banner+" $"))
	case "COMMANDS":
		s.reply(ifArgs(w, 0, "S "+commandList))
	case "QUIT":
		if len(w) != 1 {
			s.reply("E")
			return false
		}
		s.reply("S")
		return true
	case "ASYNC_MODE_ON", "ASYNC_MODE_OFF":
		if len(w) != 1 {
			s.reply("E")
			return false
		}
		s.outMu.Lock()
		s.writeLocked(s.prefix + "S")
		s.async = cmd == "ASYNC_MODE_ON"
		s.outMu.Unlock()
	case "RESPONSE_PREFIX":
		if len(w) != 2 {
			s.reply("E")
			return false
		}
		// Acknowledged under the old prefix, as the reference GAHP does.
		s.outMu.Lock()
		s.writeLocked(s.prefix + "S")
		s.prefix = w[1]
		s.outMu.Unlock()
	case "RESULTS":
		if len(w) != 1 {
			s.reply("E")
			return false
		}
		s.outMu.Lock()
		s.writeLocked(s.prefix + "S " + strconv.Itoa(len(s.done)))
		for _, r := range s.done {
			s.writeLocked(s.prefix + strconv.Itoa(r.id) + " " + r.text)
			delete(s.busy, r.id)
		}
		s.done = nil
		s.wroteR = false
		s.outMu.Unlock()
	case "BOINC_SELECT_PROJECT":
		if len(w) != 3 {
			s.reply("E")
			return false
		}
		s.outMu.Lock()
		s.Project = Project{URL: w[1], Token: w[2]}
		s.writeLocked(s.prefix + "S")
		s.outMu.Unlock()
	default:
		req, err := Parse(w)
		s.outMu.Lock()
		if err != nil || s.busy[req.ID] {
			// A malformed request, or an id still in use.
			s.writeLocked(s.prefix + "E")
			s.outMu.Unlock()
			return false
		}
		s.busy[req.ID] = true
		p := s.Project
		s.writeLocked(s.prefix + "S")
		s.outMu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			text := s.execute(ctx, p, req)
			s.finish(req.ID, text)
		}()
	}
	return false
}

// ifArgs answers text when the request has n arguments, else E.
func ifArgs(w []string, n int, text string) string {
	if len(w) != n+1 {
		return "E"
	}
	return text
}

// finish queues a result and, in asynchronous mode, says "R" once until
// the next RESULTS.
func (s *Session) finish(id int, text string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.done = append(s.done, result{id: id, text: text})
	if s.async && !s.wroteR {
		s.writeLocked(s.prefix + "R")
		s.wroteR = true
	}
}
