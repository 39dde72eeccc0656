package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
)

// shotInsertResult writes a result of checkID checked now, with screenshot (nil: none), and
// returns its id.
func shotInsertResult(t *testing.T, h *harness, checkID string, screenshot []byte) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	_, err := h.st.Pool().Exec(context.Background(), `INSERT INTO check_results (id, org_id, check_id, job_id, region,
		attempt_number, is_final_attempt, checked_at, passing, response_time_ms, body_availability, screenshot)
		VALUES ($1, $2, $3, $4, 'cloud:eu-west-2', 1, true, $5, false, 812, 'NOT_RECORDED', $6)`,
		id, h.orgA, checkID, uuid.New(), time.Now().Add(-2*time.Second), screenshot)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// get sends a GET and returns the raw answer (the screenshot route answers images).
func (h *harness) get(path, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

func TestResultScreenshot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := ckCreate(t, h, h.tokenA, "/v1/checks/browser", map[string]any{"name": "Shop", "url": "https://shop.example.com/"})["id"].(string)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 300<<10)...)
	withShot := shotInsertResult(t, h, checkID, png)
	without := shotInsertResult(t, h, checkID, nil)
	base := "/v1/checks/" + checkID + "/results/"

	rec := h.get(base+withShot.String()+"/screenshot", h.tokenA)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/png" || !bytes.Equal(rec.Body.Bytes(), png) {
		t.Fatalf("screenshot: %d %s, %d bytes (want 200 image/png, %d bytes)", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len(), len(png))
	}

	readOnly := h.token(h.orgA, "UPTIME_CHECKS:READ")
	noChecks := h.token(h.orgA, string(auth.People)+":READ")
	for _, tc := range []struct {
		name, path, token string
		status            int
		message           string
	}{
		{"read permission is enough", base + withShot.String() + "/screenshot", readOnly, http.StatusOK, ""},
		{"result without a screenshot", base + without.String() + "/screenshot", h.tokenA, http.StatusNotFound, "screenshot of result " + without.String() + " not found"},
		{"unknown result", base + uuid.Must(uuid.NewV7()).String() + "/screenshot", h.tokenA, http.StatusNotFound, "not found"},
		{"result id that is not an id", base + "nope/screenshot", h.tokenA, http.StatusNotFound, "result not found"},
		{"another organization's check", base + withShot.String() + "/screenshot", h.tokenB, http.StatusNotFound, "check not found"},
		{"unknown check", "/v1/checks/" + uuid.NewString() + "/results/" + withShot.String() + "/screenshot", h.tokenA, http.StatusNotFound, "check not found"},
		{"no checks permission", base + withShot.String() + "/screenshot", noChecks, http.StatusForbidden, "UPTIME_CHECKS:READ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := h.get(tc.path, tc.token)
			if rec.Code != tc.status {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body.Bytes(), tc.status)
			}
			if tc.status == http.StatusOK {
				return
			}
			var env struct {
				Success bool `json:"success"`
				Errors  []struct {
					Message string `json:"message"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Success || len(env.Errors) == 0 ||
				!bytes.Contains([]byte(env.Errors[0].Message), []byte(tc.message)) {
				t.Fatalf("failure envelope %s, want a message with %q", rec.Body.Bytes(), tc.message)
			}
		})
	}

	// The result list is unchanged by the screenshot: same shape, no image in it.
	from := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	to := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := h.do(http.MethodGet, "/v1/checks/browser/"+checkID+"/results?from="+from+"&to="+to, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if len(r.Raw) > 64<<10 {
		t.Errorf("the result list is %d bytes: it carries the screenshot", len(r.Raw))
	}
}
