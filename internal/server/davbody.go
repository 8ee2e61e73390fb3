package server

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// maxDAVBody bounds the XML body of PROPFIND, PROPPATCH and LOCK.
const maxDAVBody = 1 << 20

// errDAVBodyTooLarge: a WebDAV XML body is over its method's limit.
var errDAVBodyTooLarge = errors.New("the request body is too large")

// checkDAVXML reads the XML body of a PROPFIND, PROPPATCH or LOCK (at most
// limit bytes) and refuses one that declares a namespace prefix with an
// empty name (xmlns:p=""), which Namespaces in XML forbids and the WebDAV
// library would let through. The body is left to be read again.
func checkDAVXML(r *http.Request, limit int64) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	r.Body.Close()
	if err != nil {
		return fmt.Errorf("reading the request body: %w", err)
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("%w: a %s body may have at most %d bytes", errDAVBodyTooLarge, r.Method, limit)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return validNamespaces(b)
}

var errEmptyPrefix = errors.New("invalid XML: a namespace prefix is declared with an empty name")

func validNamespaces(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.RawToken()
		if err == io.EOF || len(b) == 0 {
			return nil
		}
		if err != nil {
			return nil // malformed XML: the library answers it
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Space == "xmlns" && a.Value == "" {
					return errEmptyPrefix
				}
			}
		}
	}
}
