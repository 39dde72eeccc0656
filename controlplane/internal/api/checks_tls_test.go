package api

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// An uptime result carries the certificate chain its attempt was served, as ingest stored it,
// with days_left counted from the attempt; a result without one has tls_certificate null.
func TestCheckResultTLSCertificate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	up := ckID(t, h, "/v1/checks/uptime", ckUptimeBody())
	chain := `{"agent_id":"a","scheduled_at":"2026-02-01T10:00:00Z","tls_chain":{"host":"shop.example","verified":false,
		"problem":"unknown authority","certificates":[
		{"subject":"CN=shop.example","issuer":"CN=Internal CA","sans":["shop.example","192.0.2.7"],"not_before":"2026-01-01T00:00:00Z","not_after":"2026-02-11T12:00:00Z","sha256":"aa11"},
		{"subject":"CN=Internal CA","issuer":"CN=Internal CA","sans":[],"not_before":"2025-01-01T00:00:00Z","not_after":"2035-01-01T00:00:00Z","sha256":"bb22"}]}}`
	ckInsertResult(t, h, up, 1, "2026-02-01T10:00:00Z", "response_code, details", 200, chain)
	ckInsertResult(t, h, up, 2, "2026-02-01T10:01:00Z", "response_code", 200)

	r := h.do(http.MethodGet, "/v1/checks/uptime/"+up+"/results?from=2026-02-01T10:00:00Z&to=2026-02-01T11:00:00Z", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	results := r.Result()["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("%d results: %s", len(results), r.Raw)
	}
	tc, ok := results[0].(map[string]any)["tls_certificate"].(map[string]any)
	if !ok {
		t.Fatalf("tls_certificate missing: %s", r.Raw)
	}
	if tc["host"] != "shop.example" || tc["verified"] != false || tc["problem"] != "unknown authority" {
		t.Errorf("tls_certificate %v", tc)
	}
	certs := tc["chain"].([]any)
	leaf := certs[0].(map[string]any)
	if len(certs) != 2 || leaf["subject"] != "CN=shop.example" || leaf["issuer"] != "CN=Internal CA" ||
		leaf["not_after"] != "2026-02-11T12:00:00.000Z" || leaf["days_left"] != float64(10) || leaf["sha256_fingerprint"] != "aa11" ||
		len(leaf["sans"].([]any)) != 2 || certs[1].(map[string]any)["days_left"] != float64(3255) {
		t.Errorf("chain %v", certs)
	}
	if v, present := results[1].(map[string]any)["tls_certificate"]; !present || v != nil {
		t.Errorf("a result without a chain: tls_certificate %v (present %v)", v, present)
	}
}

// The regional view shows the leaf certificate each region's last result was served, so that a
// region served another certificate (a CDN edge with an old one) stands out.
func TestCheckRegionsCertificates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	up := ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "test_regions", []string{"cloud:us-east-1", "cloud:eu-west-2"}))
	leaf := func(sha, notAfter string) string {
		return `{"scheduled_at":"2026-02-01T10:00:00Z","tls_chain":{"host":"shop.example","verified":true,"certificates":[
			{"subject":"CN=shop.example","issuer":"CN=CA","sans":["shop.example"],"not_before":"2026-01-01T00:00:00Z","not_after":"` + notAfter + `","sha256":"` + sha + `"}]}}`
	}
	checked := time.Now().UTC().Truncate(time.Millisecond)
	for i, r := range []struct{ region, sha, notAfter string }{
		{"cloud:us-east-1", "new1", "2027-03-01T00:00:00Z"},
		{"cloud:eu-west-2", "old2", "2026-12-20T00:00:00Z"},
	} {
		id := fmt.Sprintf("00000000-0000-7000-9000-%012d", i+1)
		ckSQL(t, h, `INSERT INTO check_results (id, org_id, check_id, job_id, region, attempt_number, is_final_attempt, checked_at,
			passing, response_time_ms, body_availability, details) VALUES ($1, $2, $3, gen_random_uuid(), $4, 1, true, $5, true, 10, 'AVAILABLE', $6)`,
			id, h.orgA, up, r.region, checked, leaf(r.sha, r.notAfter))
		ckSQL(t, h, `INSERT INTO check_regions (org_id, check_id, region, passing, checked_at, result_id, response_time_ms, result_summary)
			VALUES ($1, $2, $3, true, $4, $5, 10, 'HTTP 200')`, h.orgA, up, r.region, checked, id)
	}
	r := h.do(http.MethodGet, "/v1/checks/"+up+"/regions", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	got := map[string]any{}
	for _, it := range r.Body["result"].([]any) {
		region := it.(map[string]any)
		got[region["region"].(string)] = region["last_result"].(map[string]any)["certificate"]
	}
	us, eu := got["cloud:us-east-1"].(map[string]any), got["cloud:eu-west-2"].(map[string]any)
	if us["sha256_fingerprint"] != "new1" || us["not_after"] != "2027-03-01T00:00:00.000Z" ||
		eu["sha256_fingerprint"] != "old2" || eu["not_after"] != "2026-12-20T00:00:00.000Z" {
		t.Errorf("certificates by region: %v", got)
	}
	if us["mismatch"] != true || eu["mismatch"] != true {
		t.Errorf("regions served different certificates, but mismatch is not set: %v", got)
	}
	// The old edge is renewed: every region sees one certificate again.
	ckSQL(t, h, `UPDATE check_results SET details = $1 WHERE check_id = $2`, leaf("new1", "2027-03-01T00:00:00Z"), up)
	r = h.do(http.MethodGet, "/v1/checks/"+up+"/regions", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	for _, it := range r.Body["result"].([]any) {
		if crt := it.(map[string]any)["last_result"].(map[string]any)["certificate"].(map[string]any); crt["mismatch"] != false {
			t.Errorf("one certificate everywhere, yet %v", crt)
		}
	}
}
