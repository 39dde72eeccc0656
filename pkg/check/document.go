package check

import (
	"encoding/json"
	"fmt"
)

// document is the stored form of a check's configuration apart from its columns: the fields
// of its kind's specification, its assertions and its runtime version, as one JSON object
// keyed by the fields' API names.
type document struct {
	*HTTPSpec
	*DNSSpec
	*TCPSpec
	Version    *string     `json:"version"`
	Assertions []Assertion `json:"assertions"`
	// The API names HTTPSpec and TCPSpec both have. encoding/json drops a name two embedded
	// structs of one depth share; these, one level up, take the name over and point at the
	// fields of whichever kind the document holds (nil: absent, so LoadDocument keeps the
	// kind's default).
	VerifySSL                  *bool  `json:"verify_ssl,omitempty"`
	CertificateExpiryAlertDays *[]int `json:"certificate_expiry_alert_days,omitempty"`
}

// pointShared points d's shared names at the fields of h or t (one of them is nil).
func (d *document) pointShared(h *HTTPSpec, t *TCPSpec) {
	switch {
	case h != nil:
		d.VerifySSL, d.CertificateExpiryAlertDays = &h.VerifySSL, &h.CertificateExpiryAlertDays
	case t != nil:
		d.VerifySSL, d.CertificateExpiryAlertDays = &t.VerifySSL, &t.CertificateExpiryAlertDays
	}
}

// The extension kinds (ping, gRPC, WebSocket) are stored in document's shape, the spec's
// fields then version and assertions, but written field set by field set: they share API names
// with HTTPSpec (url, headers, verify_ssl), and encoding/json drops a name that two embedded
// structs of one depth both have.

// extensionSpec is the extension kind's specification of s; nil for the other kinds.
func (s *Spec) extensionSpec() any {
	switch {
	case s.Ping != nil:
		return s.Ping
	case s.GRPC != nil:
		return s.GRPC
	case s.WebSocket != nil:
		return s.WebSocket
	}
	return nil
}

// documentTail is the part of document every kind has.
type documentTail struct {
	Version    *string     `json:"version"`
	Assertions []Assertion `json:"assertions"`
}

// encodeExtension is Document for the extension kinds.
func encodeExtension(spec any, tail documentTail) ([]byte, error) {
	head, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	rest, err := json.Marshal(tail)
	if err != nil {
		return nil, err
	}
	// Both are JSON objects: join {head...} and {rest...} into one.
	if len(head) == 2 {
		return rest, nil
	}
	return append(append(head[:len(head)-1], ','), rest[1:]...), nil
}

// decodeExtension is LoadDocument for the extension kinds: spec keeps the values doc lacks.
func decodeExtension(doc []byte, spec any, tail *documentTail) error {
	if err := json.Unmarshal(doc, spec); err != nil {
		return err
	}
	return json.Unmarshal(doc, tail)
}

// Document is the canonical encoding of the part of s that has no database column of its own
// (see Spec): the store keeps it in checks.spec. The Basic-auth password is left out (null):
// it is a secret, which the store seals into a column of its own.
func (s Spec) Document() ([]byte, error) {
	if ext := s.extensionSpec(); ext != nil {
		b, err := encodeExtension(ext, documentTail{s.Version, s.Assertions})
		if err != nil {
			return nil, fmt.Errorf("encode %s check configuration: %w", s.Kind, err)
		}
		return b, nil
	}
	d := document{Version: s.Version, Assertions: s.Assertions}
	switch {
	case s.HTTP != nil:
		h := *s.HTTP
		h.AuthPassword = nil
		d.HTTPSpec = &h
		d.pointShared(&h, nil)
	case s.DNS != nil:
		d.DNSSpec = s.DNS
	case s.TCP != nil:
		t := *s.TCP
		d.TCPSpec = &t
		d.pointShared(nil, &t)
	case s.Multistep != nil:
		return s.multistepDocument()
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode %s check configuration: %w", s.Kind, err)
	}
	return b, nil
}

// LoadDocument sets the kind's specification, the assertions and the version of s from doc, a
// Document of a check of kind s.Kind. A field doc does not hold keeps the kind's default, so
// documents written before a field existed read as if it had its default. The password is not
// in doc: the caller sets it.
func (s *Spec) LoadDocument(doc []byte) error {
	s.setKindDefaults()
	if s.Kind == Multistep {
		return s.loadMultistepDocument(doc)
	}
	if ext := s.extensionSpec(); ext != nil {
		var tail documentTail
		if err := decodeExtension(doc, ext, &tail); err != nil {
			return fmt.Errorf("decode %s check configuration: %w", s.Kind, err)
		}
		s.Version, s.Assertions = tail.Version, tail.Assertions
		return nil
	}
	d := document{HTTPSpec: s.HTTP, DNSSpec: s.DNS, TCPSpec: s.TCP}
	d.pointShared(s.HTTP, s.TCP)
	if err := json.Unmarshal(doc, &d); err != nil {
		return fmt.Errorf("decode %s check configuration: %w", s.Kind, err)
	}
	s.Version, s.Assertions = d.Version, d.Assertions
	return nil
}

// multistepDoc is the stored form of a multistep check's configuration. It is a document of
// its own, not a member of document, because its script has the same API name as a browser
// check's (embedded, the two would cancel each other out in encoding/json).
type multistepDoc struct {
	*MultistepSpec
	Version    *string     `json:"version"`
	Assertions []Assertion `json:"assertions"`
}

func (s Spec) multistepDocument() ([]byte, error) {
	b, err := json.Marshal(multistepDoc{MultistepSpec: s.Multistep, Version: s.Version, Assertions: s.Assertions})
	if err != nil {
		return nil, fmt.Errorf("encode %s check configuration: %w", s.Kind, err)
	}
	return b, nil
}

func (s *Spec) loadMultistepDocument(doc []byte) error {
	d := multistepDoc{MultistepSpec: s.Multistep}
	if err := json.Unmarshal(doc, &d); err != nil {
		return fmt.Errorf("decode %s check configuration: %w", s.Kind, err)
	}
	s.Version, s.Assertions = d.Version, d.Assertions
	return nil
}
