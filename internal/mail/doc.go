// Package mail sends rboinc's e-mail (nightly reports, chain
// notifications) through the SMTP server named in rboinc.json's "smtp"
// settings. It is a thin layer over github.com/wneessen/go-mail that gives
// every sender the same settings, timeouts and message shape.
package mail
