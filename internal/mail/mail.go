package mail

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Settings is rboinc.json's "smtp" object.
type Settings struct {
	// Host and Port of the SMTP server (port 0: 587 for starttls, 465
	// for tls, 25 for none).
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
	// Username and Password, when set, log in with AUTH PLAIN (refused by
	// the client over an unencrypted link except to localhost).
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// From is the sender address of every message.
	From string `json:"from"`
	// TLS is "starttls" (the default: mandatory STARTTLS), "tls" (TLS
	// from the first byte) or "none" (a local relay only).
	TLS string `json:"tls,omitempty"`
	// TimeoutSeconds bounds one delivery (default 30).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// Message is one e-mail. Text is required; HTML, when set, is sent as its
// alternative.
type Message struct {
	To      []string
	Subject string
	Text    string
	HTML    string
}

// ErrNoServer is what every use of e-mail answers when rboinc.json has no
// "smtp" section: the administrator's report --mail, the notifier's
// e-mail deliveries and a scientist's -confirm-email, in one wording.
var ErrNoServer = errors.New(`this server sends no e-mail: rboinc.json has no "smtp" section`)

// Configured says whether the settings name a server to send through.
func (s Settings) Configured() bool { return s.Host != "" }

// Check reports the first thing wrong with the settings.
func (s Settings) Check() error {
	if s == (Settings{}) {
		return ErrNoServer
	}
	if s.Host == "" {
		return errors.New(`smtp: no "host" set in rboinc.json's "smtp"`)
	}
	if s.From == "" {
		return errors.New(`smtp: no "from" address set in rboinc.json's "smtp"`)
	}
	if s.Port < 0 || s.Port > 65535 {
		return fmt.Errorf("smtp: port %d is not a TCP port", s.Port)
	}
	switch s.TLS {
	case "", "starttls", "tls", "none":
	default:
		return fmt.Errorf(`smtp: "tls" is %q; use "starttls", "tls" or "none"`, s.TLS)
	}
	return nil
}

func (s Settings) options() []gomail.Option {
	timeout := 30 * time.Second
	if s.TimeoutSeconds > 0 {
		timeout = time.Duration(s.TimeoutSeconds) * time.Second
	}
	opts := []gomail.Option{gomail.WithTimeout(timeout)}
	port := s.Port
	switch s.TLS {
	case "tls":
		opts = append(opts, gomail.WithSSL())
		if port == 0 {
			port = 465
		}
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
		if port == 0 {
			port = 25
		}
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
		if port == 0 {
			port = 587
		}
	}
	opts = append(opts, gomail.WithPort(port))
	if s.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain),
			gomail.WithUsername(s.Username), gomail.WithPassword(s.Password))
	}
	return opts
}

// Send delivers one message; an error says which step failed.
func Send(ctx context.Context, s Settings, m Message) error {
	if err := s.Check(); err != nil {
		return err
	}
	if len(m.To) == 0 {
		return errors.New("mail: a message needs at least one recipient")
	}
	for _, h := range []string{m.Subject} {
		if strings.ContainsAny(h, "\r\n") {
			return errors.New("mail: a subject may not contain line breaks")
		}
	}
	msg := gomail.NewMsg()
	if err := msg.From(s.From); err != nil {
		return fmt.Errorf("mail: sender %q: %w", s.From, err)
	}
	if err := msg.To(m.To...); err != nil {
		return fmt.Errorf("mail: recipients %q: %w", m.To, err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	c, err := gomail.NewClient(s.Host, s.options()...)
	if err != nil {
		return fmt.Errorf("mail: SMTP server %s: %w", s.Host, err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail: sending %q to %s through %s: %w", m.Subject, strings.Join(m.To, ", "), s.Host, err)
	}
	return nil
}
