package server

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// FuzzDecodeLists: the counting decoder of pool/missing and ack never
// panics, accepts what encoding/json accepts (within the counts) and
// decodes it to the same request.
func FuzzDecodeLists(f *testing.F) {
	for _, s := range []string{`{"md5s":["a","b"]}`, `{"MD5S":[]}`, `{"md5s":null}`, `{"md5s":["a"],"md5s":null}`, `{"md5s":"x"}`,
		`{"md5s":[1]}`, `{"md5s":[["a"]]}`, `{"group":"g","files":["f"]}`, `{"group":"g","files":["f"],"consumer":"master"}`, `{"files":["f"]} {}`, ` {"md5s":["\u00e9\ud800"]}`, `{"x":1}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var mine, std wire.MissingRequest
		err := decodeMissing(strings.NewReader(string(b)), &mine)
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		stdErr := dec.Decode(&std)
		if stdErr == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				stdErr = errors.New("trailing data")
			}
		}
		if stdErr == nil && !strings.HasPrefix(strings.TrimLeft(string(b), " \t\r\n"), "{") {
			stdErr = errors.New("not an object")
		}
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("%q: counting decoder %v, encoding/json %v", b, err, stdErr)
		}
		if err == nil && !slices.Equal(mine.MD5s, std.MD5s) {
			t.Fatalf("%q: counting decoder %q, encoding/json %q", b, mine.MD5s, std.MD5s)
		}
		// An acknowledgement takes every field of wire.AckRequest.
		var ack, stdAck wire.AckRequest
		err = decodeAck(strings.NewReader(string(b)), &ack)
		dec = json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if stdErr = dec.Decode(&stdAck); stdErr == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				stdErr = errors.New("trailing data")
			}
		}
		if stdErr == nil && !strings.HasPrefix(strings.TrimLeft(string(b), " \t\r\n"), "{") {
			stdErr = errors.New("not an object")
		}
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("%q as an acknowledgement: counting decoder %v, encoding/json %v", b, err, stdErr)
		}
		if err == nil && (ack.Group != stdAck.Group || ack.Consumer != stdAck.Consumer || !slices.Equal(ack.Files, stdAck.Files)) {
			t.Fatalf("%q as an acknowledgement: counting decoder %+v, encoding/json %+v", b, ack, stdAck)
		}
	})
}

// TestListDecodersTakeEveryField: the counting decoders know every field
// of their wire type (a field added to wire.AckRequest and not here made
// every master's acknowledgement "malformed").
func TestListDecodersTakeEveryField(t *testing.T) {
	for _, c := range []struct {
		typ    any
		decode func(string) error
	}{
		{wire.AckRequest{}, func(s string) error { var r wire.AckRequest; return decodeAck(strings.NewReader(s), &r) }},
		{wire.MissingRequest{}, func(s string) error { var r wire.MissingRequest; return decodeMissing(strings.NewReader(s), &r) }},
	} {
		typ := reflect.TypeOf(c.typ)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			value := `""`
			if typ.Field(i).Type.Kind() == reflect.Slice {
				value = `[]`
			}
			if err := c.decode(`{"` + name + `":` + value + `}`); err != nil {
				t.Errorf("%s field %q: %v", typ.Name(), name, err)
			}
		}
	}
}
