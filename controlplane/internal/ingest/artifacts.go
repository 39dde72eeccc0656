package ingest

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// artifacts returns the artifacts of res to store, and the lines saying which were not
// stored: the agent's (its run's caps) and this side's, which applies the same caps and
// refuses names that could not be served back (not one printable path segment, or a name
// already taken). Whatever an agent sends, a bad artifact is dropped, never the result.
func artifacts(res *vantagev1.CheckResult) ([]store.Artifact, []string) {
	var dropped []string
	for _, line := range res.GetArtifactsDropped() {
		dropped = append(dropped, truncateText(cleanString(line), 500))
	}
	var out []store.Artifact
	total := 0
	seen := map[string]bool{}
	for _, a := range res.GetArtifacts() {
		name := a.GetName()
		why := ""
		switch {
		case !validArtifactName(name):
			why = "its name is not one printable path segment of at most " + fmt.Sprint(wire.MaxArtifactNameBytes) + " bytes"
		case seen[name]:
			why = "another artifact has its name"
		case len(out) >= wire.MaxArtifacts:
			why = fmt.Sprintf("a result keeps at most %d artifacts", wire.MaxArtifacts)
		case total+len(a.GetBody()) > wire.MaxArtifactsBytes:
			why = fmt.Sprintf("it would take the result's artifacts over %d bytes", wire.MaxArtifactsBytes)
		}
		if why != "" {
			dropped = append(dropped, fmt.Sprintf("artifact %q not stored: %s", truncateText(strings.ToValidUTF8(cleanString(name), "?"), 200), why))
			continue
		}
		seen[name] = true
		total += len(a.GetBody())
		out = append(out, store.Artifact{Name: name, ContentType: artifactType(a.GetContentType()), Body: a.GetBody()})
	}
	if len(dropped) > wire.MaxArtifactsDropped {
		n := len(dropped) - wire.MaxArtifactsDropped + 1
		dropped = append(dropped[:wire.MaxArtifactsDropped-1], fmt.Sprintf("and %d more artifacts dropped", n))
	}
	return out, dropped
}

// validArtifactName: one path segment, valid UTF-8, nothing that needs escaping to be
// ambiguous in a URL or a Content-Disposition header, not a dot name.
func validArtifactName(name string) bool {
	if name == "" || len(name) > wire.MaxArtifactNameBytes || !utf8.ValidString(name) || name == "." || name == ".." {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(`/\"%?#`, c) {
			return false
		}
	}
	return true
}

// artifactType is the media type to store: the agent's when it parses, else
// application/octet-stream. The API serves every artifact as an attachment whatever its type.
func artifactType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || len(ct) > 200 {
		return "application/octet-stream"
	}
	return mime.FormatMediaType(mt, params)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
