package wire

// What one request may carry. Clients split longer lists over several
// requests; the server refuses a list longer than these as soon as it has
// read one item too many (HTTP 413, CodeTooLarge).
const (
	// MaxMissingMD5s is how many contents one PathMissing request asks
	// about.
	MaxMissingMD5s = 100000
	// MaxAckFiles is how many result files one PathAck request names.
	MaxAckFiles = 10000
	// MaxMissingListed is how many missing contents an Error lists at
	// most (about 35 bytes each); past it the list is left out.
	MaxMissingListed = 10000
)

// CodeServerBusy (HTTP 503, with Retry-After) says the server holds as many
// request bodies as it takes at once, from all users together; the request
// was not read, and may be sent again after the wait.
const CodeServerBusy = "server_busy"

// CodeOutcomeUnknown (HTTP 503, with Retry-After) says the server lost its
// state database while recording the request: it may have been done or
// not. A request safe to repeat may be sent again after the wait; an
// -extend must not be before a look at the chains' length.
const CodeOutcomeUnknown = "outcome_unknown"

// What one PathFilesBulk request may carry and its answer hold.
const (
	// MaxBulkFiles is how many result files one PathFilesBulk request
	// names (and how many its answer holds at most).
	MaxBulkFiles = 1000
	// MaxBulkBytes bounds the bytes of the result files one answer of
	// PathFilesBulk holds: the server sends files while their sizes add up
	// to at most this, and leaves the rest out (a file larger than this
	// alone is never in a bulk answer: fetch it from PathFiles).
	MaxBulkBytes = 64 << 20
)
