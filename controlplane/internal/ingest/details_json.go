package ingest

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Every result's details document is written here by hand rather than by encoding/json, whose
// reflection and per-field allocations were a measurable share of the control plane's cost per
// result (BenchmarkToRow). The output is byte for byte what json.Marshal makes of
// resultDetails, the document's definition (TestDetailsJSONMatchesEncodingJSON); the parts only
// browser, ping and WebSocket results carry still go through encoding/json.

// detailsBuffers are the scratch buffers documents are written into before their exact-size
// copy is kept.
var detailsBuffers = sync.Pool{New: func() any { return new([]byte) }}

// encode returns d as JSON.
func (d *resultDetails) encode() ([]byte, error) {
	bp := detailsBuffers.Get().(*[]byte)
	b, err := d.appendJSON((*bp)[:0])
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(b)
	*bp = b
	detailsBuffers.Put(bp)
	return out, nil
}

func (d *resultDetails) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	first := true
	key := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	if d.AgentID != "" {
		key("agent_id")
		b = appendJSONString(b, d.AgentID)
	}
	if d.Kind != "" {
		key("kind")
		b = appendJSONString(b, d.Kind)
	}
	key("scheduled_at")
	b = appendJSONTime(b, d.ScheduledAt)
	if t := d.Timings; t != nil {
		key("timings")
		b = t.appendJSON(b)
	}
	if d.TLSNotAfter != nil {
		key("tls_not_after")
		b = appendJSONTime(b, *d.TLSNotAfter)
	}
	if d.TLSChain != nil {
		key("tls_chain")
		b = appendTLSChain(b, d.TLSChain)
	}
	if len(d.Assertions) > 0 {
		key("assertions")
		b = append(b, '[')
		for i := range d.Assertions {
			if i > 0 {
				b = append(b, ',')
			}
			b = d.Assertions[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	if len(d.Steps) > 0 {
		key("steps")
		s, err := json.Marshal(d.Steps)
		if err != nil {
			return nil, err
		}
		b = append(b, s...)
	}
	if d.ScreenshotDropped != "" {
		key("screenshot_dropped")
		b = appendJSONString(b, d.ScreenshotDropped)
	}
	for _, list := range []struct {
		name   string
		values []string
	}{{"artifacts_dropped", d.ArtifactsDropped}, {"truncated", d.Truncated}} {
		if len(list.values) > 0 {
			key(list.name)
			b = appendJSONStrings(b, list.values)
		}
	}
	// The embedded observations' fields belong to the document itself.
	for _, o := range []any{d.PingObservation, d.WebSocketObservation} {
		var err error
		if b, err = appendEmbedded(b, o, &first); err != nil {
			return nil, err
		}
	}
	if d.GRPCStatus != nil {
		key("grpc_status")
		b = appendJSONString(b, *d.GRPCStatus)
	}
	return append(b, '}'), nil
}

// appendEmbedded adds the fields of an embedded struct pointer o (when not nil) to an object
// being written: encoding/json's object of o without its braces.
func appendEmbedded(b []byte, o any, first *bool) ([]byte, error) {
	switch v := o.(type) {
	case *store.PingObservation:
		if v == nil {
			return b, nil
		}
	case *store.WebSocketObservation:
		if v == nil {
			return b, nil
		}
	}
	s, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	if len(s) <= 2 {
		return b, nil
	}
	if !*first {
		b = append(b, ',')
	}
	*first = false
	return append(b, s[1:len(s)-1]...), nil
}

func (t *resultTimings) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for _, p := range []struct {
		name string
		v    *float64
	}{{"dns_ms", t.DNSMs}, {"connect_ms", t.ConnectMs}, {"tls_ms", t.TLSMs}, {"first_byte_ms", t.FirstByteMs}, {"data_ms", t.DataMs}} {
		if p.v != nil {
			b = append(b, '"')
			b = append(b, p.name...)
			b = append(b, '"', ':')
			b = appendJSONFloat(b, *p.v)
			b = append(b, ',')
		}
	}
	b = append(b, `"total_ms":`...)
	b = appendJSONFloat(b, t.TotalMs)
	if t.DOMContentLoadedMs != nil {
		b = append(b, `,"dom_content_loaded_ms":`...)
		b = appendJSONFloat(b, *t.DOMContentLoadedMs)
	}
	if t.LoadMs != nil {
		b = append(b, `,"load_ms":`...)
		b = appendJSONFloat(b, *t.LoadMs)
	}
	return append(b, '}')
}

func (a *assertionOutcome) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, a.Type)
	b = append(b, `,"property":`...)
	b = appendJSONString(b, a.Property)
	b = append(b, `,"comparison":`...)
	b = appendJSONString(b, a.Comparison)
	b = append(b, `,"expected":`...)
	b = appendJSONString(b, a.Expected)
	b = append(b, `,"passed":`...)
	b = strconv.AppendBool(b, a.Passed)
	if a.Actual != "" {
		b = append(b, `,"actual":`...)
		b = appendJSONString(b, a.Actual)
	}
	if a.Message != "" {
		b = append(b, `,"message":`...)
		b = appendJSONString(b, a.Message)
	}
	return append(b, '}')
}

func appendTLSChain(b []byte, c *store.TLSChain) []byte {
	b = append(b, `{"host":`...)
	b = appendJSONString(b, c.Host)
	b = append(b, `,"verified":`...)
	b = strconv.AppendBool(b, c.Verified)
	if c.Problem != "" {
		b = append(b, `,"problem":`...)
		b = appendJSONString(b, c.Problem)
	}
	b = append(b, `,"certificates":`...)
	if c.Certificates == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, crt := range c.Certificates {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"subject":`...)
			b = appendJSONString(b, crt.Subject)
			b = append(b, `,"issuer":`...)
			b = appendJSONString(b, crt.Issuer)
			b = append(b, `,"sans":`...)
			if crt.SANs == nil {
				b = append(b, "null"...)
			} else {
				b = appendJSONStrings(b, crt.SANs)
			}
			b = append(b, `,"not_before":`...)
			b = appendJSONTime(b, crt.NotBefore)
			b = append(b, `,"not_after":`...)
			b = appendJSONTime(b, crt.NotAfter)
			b = append(b, `,"sha256":`...)
			b = appendJSONString(b, crt.SHA256)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendJSONStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONTime writes t as time.Time's MarshalJSON does. The times written here come from
// Unix milliseconds, always within the years MarshalJSON accepts.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendJSONFloat writes a finite f as encoding/json does.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString writes s as encoding/json does, HTML characters, U+2028 and U+2029
// escaped and invalid UTF-8 replaced.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
