// Package server is rboinc's HTTP face: the JSON API under /rboinc_cgi and
// the WebDAV scratch area under /DAV/, both authenticated, each user
// confined to their own objects. The same handler serves the standalone
// server and one request at a time under a web server's CGI.
package server
