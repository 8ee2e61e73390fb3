package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rboinc/rboinc/workflow/wire"
)

// The requests that carry long lists (pool/missing, ack) are decoded token
// by token, so that a list is refused at its first item past the limit
// rather than after all of it is in memory (encoding/json reads a whole
// value before it decodes any of it).

// tooManyError: a list of a request is longer than the server takes.
type tooManyError struct {
	field string
	max   int
}

func (e *tooManyError) Error() string {
	return fmt.Sprintf("more than %d items in %q", e.max, e.field)
}

// listField is one member of an object decodeListObject reads: a string
// (str) or a list of at most max strings (list).
type listField struct {
	str  *string
	list *[]string
	max  int
}

// decodeListObject reads one JSON object of the given members, as strictly
// as decodeBody: an object, no unknown members, nothing after it. It
// decodes what encoding/json would (member names match case-insensitively,
// the last of a repeated member wins, null empties a list).
func decodeListObject(body io.Reader, fields map[string]listField) error {
	dec := json.NewDecoder(body)
	tok, err := dec.Token()
	if err != nil {
		return emptyOr(err)
	}
	if tok != json.Delim('{') {
		return errors.New("the body is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		f, ok := fieldOf(fields, key)
		if !ok {
			return fmt.Errorf("json: unknown field %q", key)
		}
		tok, err = dec.Token()
		if err != nil {
			return err
		}
		switch {
		case tok == nil: // as encoding/json: a list becomes nil, a string stays
			if f.list != nil {
				*f.list = nil
			}
		case f.str != nil:
			s, ok := tok.(string)
			if !ok {
				return fmt.Errorf("%q must be a string", key)
			}
			*f.str = s
		case tok != json.Delim('['):
			return fmt.Errorf("%q must be a list of strings", key)
		default:
			list := []string{}
			for dec.More() {
				if len(list) == f.max {
					return &tooManyError{field: key, max: f.max}
				}
				tok, err := dec.Token()
				if err != nil {
					return err
				}
				s, ok := tok.(string)
				if !ok {
					return fmt.Errorf("%q must be a list of strings", key)
				}
				list = append(list, s)
			}
			if _, err := dec.Token(); err != nil { // ]
				return err
			}
			*f.list = list
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return err
	}
	_, err = dec.Token()
	return endOfBody(err)
}

// endOfBody turns what a decoder found after the JSON object into the
// decoding's error: none at the end of the body, the reading's own
// (the budget, the route's limit) or "unexpected data".
func endOfBody(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case err == io.EOF:
		return nil
	case errors.Is(err, errBusy), errors.As(err, &mbe):
		return err
	}
	return errors.New("unexpected data after the JSON object")
}

func fieldOf(fields map[string]listField, key string) (listField, bool) {
	if f, ok := fields[key]; ok {
		return f, true
	}
	for k, f := range fields {
		if strings.EqualFold(k, key) {
			return f, true
		}
	}
	return listField{}, false
}

func emptyOr(err error) error {
	if err == io.EOF {
		return errors.New("the body is empty; want a JSON object")
	}
	return err
}

// decodeMissing reads a wire.MissingRequest of at most wire.MaxMissingMD5s
// checksums.
func decodeMissing(body io.Reader, req *wire.MissingRequest) error {
	return decodeListObject(body, map[string]listField{"md5s": {list: &req.MD5s, max: wire.MaxMissingMD5s}})
}

// decodeAck reads a wire.AckRequest of at most wire.MaxAckFiles files.
func decodeAck(body io.Reader, req *wire.AckRequest) error {
	return decodeListObject(body, map[string]listField{"group": {str: &req.Group}, "files": {list: &req.Files, max: wire.MaxAckFiles},
		"consumer": {str: &req.Consumer}})
}
