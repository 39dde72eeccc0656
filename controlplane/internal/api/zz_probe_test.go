package api

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	spec := mustOpenAPISpec(t)
	h := map[string][]string{"Content-Type": {"application/json"}}
	req := httptest.NewRequest("GET", "/v1/projects/0123456789abcdefgh", nil)
	t.Log(strings.Join(spec.check(req, 200, h, []byte(`{"success":true,"result":{"id":"x","name":"n","is_default":false,"created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z","extra":1},"errors":[],"messages":[],"bogus":2}`)), "\n"))
	req = httptest.NewRequest("GET", "/v1/status_pages/0123456789/incidents", nil)
	t.Log(strings.Join(spec.check(req, 200, h, []byte(`{"success":true,"result":[{"id":"x","title":"t","impact":"NO_IMPACT","started":null,"created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z","extra":1}],"errors":[],"messages":[],"result_info":{"page":1,"per_page":20,"count":1,"total_count":1}}`)), "\n"))
	req = httptest.NewRequest("GET", "/v1/status_pages/0123456789/incidents", nil)
	t.Log(strings.Join(spec.check(req, 404, h, []byte(`{"success":false,"result":null,"errors":[{"code":404,"message":"x","extra":1}],"messages":[]}`)), "\n"))
	req = httptest.NewRequest("GET", "/v1/nope", nil)
	t.Log(strings.Join(spec.check(req, 404, h, []byte(`{"success":false,"result":null,"errors":[],"messages":[]}`)), "\n"))
	req = httptest.NewRequest("GET", "/v1/nope", nil)
	t.Log(strings.Join(spec.check(req, 200, h, []byte(`{}`)), "\n"))
}
