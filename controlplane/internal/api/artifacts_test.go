package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
)

// artifactInsertResult writes a result of checkID checked now carrying artifacts, laid out as
// the store lays them out (an index and the bodies end to end), and returns its id.
func artifactInsertResult(t *testing.T, h *harness, checkID string, artifacts [][3]string) uuid.UUID {
	t.Helper()
	type entry struct {
		Name        string `json:"name"`
		ContentType string `json:"content_type"`
		Size        int    `json:"size"`
		Offset      int    `json:"offset"`
	}
	var index []entry
	var blob []byte
	for _, a := range artifacts {
		index = append(index, entry{Name: a[0], ContentType: a[1], Size: len(a[2]), Offset: len(blob)})
		blob = append(blob, a[2]...)
	}
	var indexJSON []byte
	if index != nil {
		indexJSON, _ = json.Marshal(index)
	}
	id := uuid.Must(uuid.NewV7())
	_, err := h.st.Pool().Exec(context.Background(), `INSERT INTO check_results (id, org_id, check_id, job_id, region,
		attempt_number, is_final_attempt, checked_at, passing, response_time_ms, body_availability, artifact_index, artifacts)
		VALUES ($1, $2, $3, $4, 'cloud:eu-west-2', 1, true, $5, true, 812, 'NOT_RECORDED', $6, $7)`,
		id, h.orgA, checkID, uuid.New(), time.Now().Add(-2*time.Second), indexJSON, blob)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestResultArtifacts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := ckCreate(t, h, h.tokenA, "/v1/checks/browser", map[string]any{"name": "Shop", "url": "https://shop.example.com/"})["id"].(string)
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x07", 4000)
	html := `<script>alert(document.cookie)</script>`
	withArtifacts := artifactInsertResult(t, h, checkID, [][3]string{
		{"shots-home.png", "image/png", png},
		{"notes.txt", "text/plain", "all good"},
		{"data.json", "application/json", `{"ok":true}`},
		{"page.html", "text/html", html},
		{"logo.svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`},
		{"weird name (1).bin", "application/octet-stream", "\x00\x01"},
	})
	without := artifactInsertResult(t, h, checkID, nil)
	base := "/v1/checks/" + checkID + "/results/"

	r := h.do(http.MethodGet, base+withArtifacts.String()+"/artifacts", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	var list struct {
		Result []struct {
			Name        string `json:"name"`
			ContentType string `json:"content_type"`
			Size        int    `json:"size"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Raw, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Result) != 6 || list.Result[0].Name != "shots-home.png" || list.Result[0].ContentType != "image/png" ||
		list.Result[0].Size != len(png) || list.Result[3].Name != "page.html" {
		t.Fatalf("list = %s", r.Raw)
	}
	r = h.do(http.MethodGet, base+without.String()+"/artifacts", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if !bytes.Contains(r.Raw, []byte(`"result":[]`)) {
		t.Errorf("a result without artifacts lists %s", r.Raw)
	}

	for _, tc := range []struct {
		name, contentType, disposition, body string
	}{
		{"shots-home.png", "image/png", `inline; filename=shots-home.png`, png},
		{"notes.txt", "text/plain; charset=utf-8", `inline; filename=notes.txt`, "all good"},
		{"data.json", "application/json", `attachment; filename=data.json`, `{"ok":true}`},
		// Content a script attached never renders as a page of the API's origin.
		{"page.html", "application/octet-stream", `attachment; filename=page.html`, html},
		{"logo.svg", "application/octet-stream", `attachment; filename=logo.svg`, `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`},
		{"weird name (1).bin", "application/octet-stream", `attachment; filename="weird name (1).bin"`, "\x00\x01"},
	} {
		t.Run("get "+tc.name, func(t *testing.T) {
			rec := h.get(base+withArtifacts.String()+"/artifacts/"+strings.ReplaceAll(tc.name, " ", "%20"), h.tokenA)
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != tc.contentType || rec.Body.String() != tc.body {
				t.Fatalf("%d %s %q, want 200 %s %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), tc.contentType, tc.body)
			}
			if got := rec.Header().Get("Content-Disposition"); got != tc.disposition {
				t.Errorf("Content-Disposition %q, want %q", got, tc.disposition)
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "sandbox") {
				t.Errorf("headers %v", rec.Header())
			}
		})
	}

	readOnly := h.token(h.orgA, "UPTIME_CHECKS:READ")
	noChecks := h.token(h.orgA, string(auth.People)+":READ")
	art := base + withArtifacts.String() + "/artifacts"
	for _, tc := range []struct {
		name, path, token string
		status            int
		message           string
	}{
		{"read permission is enough", art + "/notes.txt", readOnly, http.StatusOK, ""},
		{"read permission lists", art, readOnly, http.StatusOK, ""},
		{"unknown artifact", art + "/nope.png", h.tokenA, http.StatusNotFound, "artifact nope.png of result " + withArtifacts.String() + " not found"},
		{"unknown result", base + uuid.Must(uuid.NewV7()).String() + "/artifacts", h.tokenA, http.StatusNotFound, "not found"},
		{"unknown result's artifact", base + uuid.Must(uuid.NewV7()).String() + "/artifacts/notes.txt", h.tokenA, http.StatusNotFound, "not found"},
		{"result id that is not an id", base + "nope/artifacts", h.tokenA, http.StatusNotFound, "result not found"},
		{"another organization's list", art, h.tokenB, http.StatusNotFound, "check not found"},
		{"another organization's artifact", art + "/notes.txt", h.tokenB, http.StatusNotFound, "check not found"},
		{"unknown check", "/v1/checks/" + uuid.NewString() + "/results/" + withArtifacts.String() + "/artifacts", h.tokenA, http.StatusNotFound, "check not found"},
		{"no checks permission", art, noChecks, http.StatusForbidden, "UPTIME_CHECKS:READ"},
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
				!strings.Contains(env.Errors[0].Message, tc.message) {
				t.Fatalf("failure envelope %s, want a message with %q", rec.Body.Bytes(), tc.message)
			}
		})
	}
}
