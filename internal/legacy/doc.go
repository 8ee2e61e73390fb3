// Package legacy speaks the protocol of the original RBoinc (2011) on top
// of the engine, so that the unmodified Perl clients boinc_submit and
// boinc_retrieve keep working: the two CGI endpoints
// <base>/boinc_submit_server.pl and <base>/boinc_retrieve_server.pl, their
// form fields and actions, and answers shaped byte for byte as Perl's
// XML::Simple wrote them (the clients parse them with XML::Simple too).
//
// Files travel as in the original, through the caller's WebDAV area:
// uploads are collections up<6 digits> holding one file per parameter name
// plus description_file.xml; results are staged in collections
// retr<6 digits> of hard links, which the client downloads and then asks
// the server to remove.
//
// What differs from the original, on purpose: identity comes from the
// HTTP credentials (the scientist writes USER:TOKEN@ into RBOINC_URL, and
// the DAV URL handed back carries the same credentials), never from the
// loginname field; answers that crashed the original CGI (HTTP 500) are
// Failure answers; remove forgets exactly the files staged for that
// retrieval; status counts come from the database, so they survive
// retrieval.
package legacy
