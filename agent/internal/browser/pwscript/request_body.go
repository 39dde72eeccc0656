package pwscript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/dop251/goja"
)

// The bodies of a call, as Playwright serializes them: `data` (a string or bytes as they are,
// anything else as JSON), `form` (URL-encoded) and `multipart` (form-data with fields and
// in-memory files). Each sets the Content-Type the script did not.

// dataBody serializes `data`. A string is sent as is (as JSON when the script set a JSON
// content type and the string is no JSON text), bytes as they are, anything else as JSON.
func (r *run) dataBody(v goja.Value, h http.Header) ([]byte, error) {
	if s, ok := v.Export().(string); ok {
		if isJSONContentType(h.Get("Content-Type")) && !json.Valid([]byte(s)) {
			b, _ := json.Marshal(s)
			return b, nil
		}
		setDefault(h, "Content-Type", "application/octet-stream")
		return []byte(s), nil
	}
	if b, ok := r.bytesOf(v); ok {
		setDefault(h, "Content-Type", "application/octet-stream")
		return b, nil
	}
	js, err := r.toJSON(v)
	if err != nil {
		return nil, fmt.Errorf("data: cannot serialize as JSON: %v", err)
	}
	setDefault(h, "Content-Type", "application/json")
	return js, nil
}

// formBody serializes `form`, an object of strings, numbers and booleans.
func (r *run) formBody(v goja.Value, h http.Header) ([]byte, error) {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, errors.New("form: expected an object")
	}
	q := url.Values{}
	for _, k := range o.Keys() {
		q.Add(k, o.Get(k).String())
	}
	setDefault(h, "Content-Type", "application/x-www-form-urlencoded")
	return []byte(q.Encode()), nil
}

// multipartBody serializes `multipart`: strings, numbers and booleans are fields; an object
// { name, mimeType, buffer } is a file whose buffer is a string, a Uint8Array or an ArrayBuffer.
func (r *run) multipartBody(v goja.Value, h http.Header) ([]byte, error) {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, errors.New("multipart: expected an object")
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, k := range o.Keys() {
		field := o.Get(k)
		file, isObj := field.(*goja.Object)
		if !isObj {
			if err := w.WriteField(k, field.String()); err != nil {
				return nil, err
			}
			continue
		}
		name, mimeType := file.Get("name"), file.Get("mimeType")
		if name == nil || goja.IsUndefined(name) || mimeType == nil || goja.IsUndefined(mimeType) {
			return nil, fmt.Errorf("multipart.%s: a file is { name, mimeType, buffer } (a file path or stream is not supported)", k)
		}
		content, ok := r.bytesOf(file.Get("buffer"))
		if !ok {
			if s, isStr := file.Get("buffer").Export().(string); isStr {
				content, ok = []byte(s), true
			}
		}
		if !ok {
			return nil, fmt.Errorf("multipart.%s.buffer: expected a string, a Uint8Array or an ArrayBuffer", k)
		}
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": k, "filename": name.String()}))
		hdr.Set("Content-Type", mimeType.String())
		part, err := w.CreatePart(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := part.Write(content); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	// The boundary is ours: a content type the script set would not name it.
	h.Set("Content-Type", w.FormDataContentType())
	return buf.Bytes(), nil
}

// bytesOf returns the bytes of a Uint8Array (or other typed array) or an ArrayBuffer.
func (r *run) bytesOf(v goja.Value) ([]byte, bool) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, false
	}
	switch x := v.Export().(type) {
	case goja.ArrayBuffer:
		return bytes.Clone(x.Bytes()), true
	case []byte:
		return bytes.Clone(x), true
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, false
	}
	buf := o.Get("buffer")
	if buf == nil {
		return nil, false
	}
	ab, ok := buf.Export().(goja.ArrayBuffer)
	if !ok {
		return nil, false
	}
	off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
	all := ab.Bytes()
	if off < 0 || n < 0 || off+n > int64(len(all)) {
		return nil, false
	}
	return bytes.Clone(all[off : off+n]), true
}

func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func setDefault(h http.Header, name, value string) {
	if h.Get(name) == "" {
		h.Set(name, value)
	}
}
