// Package client talks to an rboinc server over the JSON API of package
// wire: it lists queues, uploads input contents, submits chains, and
// retrieves, verifies and acknowledges results. It knows nothing of
// terminals; the commands rboinc-submit and rboinc-retrieve add that.
package client
