package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// A scripted run's artifacts are stored with its result, listed and read back in the order
// the run kept them; the agent's dropped lines and this side's refusals (a name that could not
// be served back, a duplicate, the caps) land in details.artifacts_dropped.
func TestResultArtifactsStored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.register("a1", []string{wire.CapabilityBrowser}, "cloud:us-east-1")
	// Result ids are UUIDv7 of the real time, which the lookup uses to find the result's
	// partition: the run happens now.
	h.clock.Set(time.Now().UTC().Truncate(time.Millisecond))
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{3}, 5000)...)
	r := h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now())
	r.Kind = vantagev1.CheckKind_CHECK_KIND_BROWSER
	r.Artifacts = []*vantagev1.Artifact{
		{Name: "shots-home.png", ContentType: "image/png", Body: png},
		{Name: "log.txt", ContentType: "text/plain", Body: []byte("hello")},
		{Name: "../etc/passwd", ContentType: "text/plain", Body: []byte("x")},
		{Name: "log.txt", ContentType: "text/plain", Body: []byte("again")},
		{Name: "odd", ContentType: "not a type", Body: []byte{}},
		{Name: "huge.bin", ContentType: "application/octet-stream", Body: make([]byte, wire.MaxArtifactsBytes)},
	}
	r.ArtifactsDropped = []string{`artifact "big.png" dropped: a run keeps at most 20 artifacts`}
	a.report(r)

	var resultID uuid.UUID
	var raw []byte
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT id, details FROM check_results WHERE job_id = $1`, r.JobId).Scan(&resultID, &raw); err != nil {
		t.Fatal(err)
	}
	var details struct {
		ArtifactsDropped []string `json:"artifacts_dropped"`
	}
	if err := json.Unmarshal(raw, &details); err != nil {
		t.Fatal(err)
	}
	wantDropped := []string{`"big.png" dropped`, `"../etc/passwd" not stored: its name is not one printable path segment`,
		`"log.txt" not stored: another artifact has its name`, `"huge.bin" not stored: it would take the result's artifacts over`}
	if len(details.ArtifactsDropped) != len(wantDropped) {
		t.Fatalf("artifacts_dropped = %q", details.ArtifactsDropped)
	}
	for i, w := range wantDropped {
		if !strings.Contains(details.ArtifactsDropped[i], w) {
			t.Errorf("artifacts_dropped[%d] = %q, want %q", i, details.ArtifactsDropped[i], w)
		}
	}

	org, check := h.org, checkID
	index, err := h.st.ResultArtifacts(context.Background(), org, check, resultID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range index {
		got = append(got, a.Name+" "+a.ContentType)
	}
	if strings.Join(got, ", ") != "shots-home.png image/png, log.txt text/plain, odd application/octet-stream" {
		t.Errorf("index = %v", got)
	}
	for name, want := range map[string][]byte{"shots-home.png": png, "log.txt": []byte("hello"), "odd": {}} {
		info, body, err := h.st.ResultArtifact(context.Background(), org, check, resultID, name)
		if err != nil || !bytes.Equal(body, want) || info.Size != len(want) {
			t.Errorf("artifact %s: %d bytes, %v; want %d bytes", name, len(body), err, len(want))
		}
	}
	if _, _, err := h.st.ResultArtifact(context.Background(), uuid.New(), check, resultID, "log.txt"); err == nil {
		t.Error("another organization reads the artifact")
	}
}
