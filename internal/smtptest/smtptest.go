// Package smtptest runs a small but real SMTP server on the loopback
// interface for tests: it speaks the part of RFC 5321 a mail client uses
// (EHLO/HELO, AUTH PLAIN, MAIL, RCPT, DATA with dot-unstuffing, RSET,
// NOOP, QUIT) and keeps every message it accepts. It offers no STARTTLS,
// so clients connect with TLS "none".
package smtptest

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Message is one accepted message.
type Message struct {
	From    string
	To      []string
	Subject string
	// Header is the parsed header; Body the undecoded body; Raw all of it.
	Header mail.Header
	Body   string
	Raw    string
}

// Server is a running SMTP server.
type Server struct {
	Host           string
	Port           int
	user, password string
	reject         string

	ln   net.Listener
	mu   sync.Mutex
	msgs []Message
	wg   sync.WaitGroup
	got  chan struct{}
}

// Option sets up a server before it starts.
type Option func(*Server)

// WithAuth requires AUTH PLAIN with this user and password.
func WithAuth(user, password string) Option {
	return func(s *Server) { s.user, s.password = user, password }
}

// Rejecting answers a RCPT for this address with 550.
func Rejecting(address string) Option { return func(s *Server) { s.reject = address } }

// Start runs a server until the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Listen(opts...)
	if err != nil {
		t.Fatalf("smtptest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Listen runs a server until Close, for harnesses without a testing.TB
// (a test script's command).
func Listen(opts ...Option) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	a := ln.Addr().(*net.TCPAddr)
	s := &Server{Host: "127.0.0.1", Port: a.Port, ln: ln, got: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Close stops the server and waits for its sessions.
func (s *Server) Close() { s.ln.Close(); s.wg.Wait() }

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait waits until at least n messages have arrived or d passed, and
// returns the messages.
func (s *Server) Wait(n int, d time.Duration) []Message {
	deadline := time.After(d)
	for {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		select {
		case <-s.got:
		case <-deadline:
			return s.Messages()
		}
	}
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Minute))
			s.session(c)
		}()
	}
}

func (s *Server) session(c net.Conn) {
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(line string) { w.WriteString(line + "\r\n"); w.Flush() }
	reply("220 smtptest ready")
	var from string
	var to []string
	authed := s.user == ""
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			w.WriteString("250-smtptest\r\n")
			if s.user != "" {
				w.WriteString("250-AUTH PLAIN\r\n")
			}
			reply("250 8BITMIME")
		case "HELO":
			reply("250 smtptest")
		case "AUTH":
			mech, resp, _ := strings.Cut(arg, " ")
			if !strings.EqualFold(mech, "PLAIN") {
				reply("504 unsupported mechanism")
				continue
			}
			if resp == "" {
				reply("334 ")
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				resp = strings.TrimRight(l, "\r\n")
			}
			raw, err := base64.StdEncoding.DecodeString(resp)
			parts := strings.Split(string(raw), "\x00")
			if err != nil || len(parts) != 3 || parts[1] != s.user || parts[2] != s.password {
				reply("535 authentication failed")
				continue
			}
			authed = true
			reply("235 authenticated")
		case "MAIL":
			if !authed {
				reply("530 authentication required")
				continue
			}
			from, to = addr(arg), nil
			reply("250 ok")
		case "RCPT":
			a := addr(arg)
			if s.reject != "" && strings.EqualFold(a, s.reject) {
				reply("550 no such user")
				continue
			}
			to = append(to, a)
			reply("250 ok")
		case "DATA":
			if from == "" || len(to) == 0 {
				reply("503 need MAIL and RCPT first")
				continue
			}
			reply("354 end with .")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" || l == ".\n" {
					break
				}
				b.WriteString(strings.TrimPrefix(l, "."))
			}
			s.keep(from, to, b.String())
			from, to = "", nil
			reply("250 queued")
		case "RSET":
			from, to = "", nil
			reply("250 ok")
		case "NOOP":
			reply("250 ok")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 command not implemented")
		}
	}
}

// addr takes the address out of "FROM:<a@b> SIZE=..." or "TO:<a@b>".
func addr(arg string) string {
	i, j := strings.IndexByte(arg, '<'), strings.IndexByte(arg, '>')
	if i >= 0 && j > i {
		return arg[i+1 : j]
	}
	_, a, _ := strings.Cut(arg, ":")
	return strings.TrimSpace(a)
}

func (s *Server) keep(from string, to []string, raw string) {
	m := Message{From: from, To: to, Raw: raw}
	if pm, err := mail.ReadMessage(strings.NewReader(raw)); err == nil {
		m.Header = pm.Header
		dec := new(mime.WordDecoder)
		m.Subject, _ = dec.DecodeHeader(pm.Header.Get("Subject"))
		body, _ := io.ReadAll(pm.Body)
		m.Body = string(body)
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	select {
	case s.got <- struct{}{}:
	default:
	}
}
