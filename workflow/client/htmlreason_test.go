package client

import "testing"

func TestHTMLReason(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">
<html><head>
<title>500 Internal Server Error</title>
</head><body>
<h1>Internal Server Error</h1>
<p>Could not open the lock database.</p>
<hr />
<address>Apache/2.4.66 (Debian) Server at 127.0.0.1 Port 8080</address>
</body></html>`, "500 Internal Server Error: Could not open the lock database."},
		{`<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">
<html><head>
<title>500 Internal Server Error</title>
</head><body>
<h1>Internal Server Error</h1>
<p>The server encountered an internal error or
misconfiguration and was unable to complete
your request.</p>
<p>Please contact the server administrator at
 webmaster@localhost to inform them of the time this error occurred.</p>
<p>More information about this error may be available
in the server error log.</p>
</body></html>`, "500 Internal Server Error"},
		{`<?xml version="1.0" encoding="utf-8"?>
<D:error xmlns:D="DAV:" xmlns:m="http://apache.org/dav/xmlns">
<m:human-readable errcode="2">
The lock database could not be opened, preventing access to the various lock properties for the PROPFIND.
</m:human-readable>
</D:error>`, "The lock database could not be opened, preventing access to the various lock properties for the PROPFIND."},
		{`<html><head><title>502 Bad Gateway &amp; more</title></head></html>`, "502 Bad Gateway & more"},
		{"plain text", ""},
	} {
		if got := htmlReason(c.body); got != c.want {
			t.Errorf("htmlReason(%.40q) = %q, want %q", c.body, got, c.want)
		}
	}
}

func FuzzHTMLReason(f *testing.F) {
	f.Add("<html><title>x</title><p>y</p></html>")
	f.Add("<p")
	f.Add("<title>")
	f.Fuzz(func(t *testing.T, body string) {
		if r := htmlReason(body); len(r) > 303 {
			t.Fatalf("reason of %d bytes", len(r))
		}
	})
}
