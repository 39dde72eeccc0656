package api

import (
	"context"
	"errors"
	"mime"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// artifactStore is what the artifact routes need from storage.
type artifactStore interface {
	CheckKind(ctx context.Context, orgID, id uuid.UUID) (check.Kind, error)
	ResultArtifacts(ctx context.Context, orgID, checkID, resultID uuid.UUID) ([]store.ArtifactInfo, error)
	ResultArtifact(ctx context.Context, orgID, checkID, resultID uuid.UUID, name string) (store.ArtifactInfo, []byte, error)
}

var _ artifactStore = (*store.Store)(nil)

// artifactsHandler serves the extension routes GET /v1/checks/{check_id}/results/{result_id}/
// artifacts and …/artifacts/{name}: the files a scripted browser run kept (screenshots taken
// with a path, testInfo.attach()), with the permission of result lists (UPTIME_CHECKS:READ).
type artifactsHandler struct {
	st artifactStore
}

func newArtifactsHandler(d Deps) *artifactsHandler { return &artifactsHandler{st: d.Store} }

// artifactJSON is an artifact in the list.
type artifactJSON struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
}

// result resolves the route's check (of the caller's organization) and result ids; a check
// of another organization is not found, as an unknown one.
func (h *artifactsHandler) result(c *gin.Context) (checkID, resultID uuid.UUID, err error) {
	if checkID, err = pathID(c, "check_id", 1); err != nil {
		return checkID, resultID, err
	}
	if _, err = h.st.CheckKind(c, orgID(c), checkID); err != nil {
		return checkID, resultID, err
	}
	if resultID, err = uuid.Parse(c.Param("result_id")); err != nil {
		return checkID, resultID, notFound("result")
	}
	return checkID, resultID, nil
}

// list answers the result's artifacts in the order the run kept them (none for a result
// without any), or 404 when the check or the result is not there.
func (h *artifactsHandler) list(c *gin.Context) (int, any, error) {
	checkID, resultID, err := h.result(c)
	if err != nil {
		return 0, nil, err
	}
	index, err := h.st.ResultArtifacts(c, orgID(c), checkID, resultID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, notFound("result " + resultID.String())
	}
	if err != nil {
		return 0, nil, err
	}
	out := make([]artifactJSON, len(index))
	for i, a := range index {
		out[i] = artifactJSON{Name: a.Name, ContentType: a.ContentType, Size: a.Size}
	}
	return listed(out, page{Page: 1, PerPage: int64(max(len(out), 1))}, int64(len(out)), nil)
}

// get answers one artifact's bytes. What a script attached is the target's or the script's
// content, not ours: it is served so that no browser renders it as a page of this origin —
// an attachment (images and plain text may show inline), under a type from a short list of
// inert ones (anything else is application/octet-stream), never sniffed, and sandboxed.
func (h *artifactsHandler) get(c *gin.Context) (int, any, error) {
	checkID, resultID, err := h.result(c)
	if err != nil {
		return 0, nil, err
	}
	name := c.Param("name")
	a, body, err := h.st.ResultArtifact(c, orgID(c), checkID, resultID, name)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, notFound("artifact " + name + " of result " + resultID.String())
	}
	if err != nil {
		return 0, nil, err
	}
	ct, inline := servedType(a.ContentType)
	disposition := "attachment"
	if inline {
		disposition = "inline"
	}
	if d := mime.FormatMediaType(disposition, map[string]string{"filename": a.Name}); d != "" {
		c.Header("Content-Disposition", d)
	} else {
		c.Header("Content-Disposition", disposition)
	}
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Security-Policy", "default-src 'none'; sandbox")
	// Artifacts never change once stored.
	c.Header("Cache-Control", "private, max-age=86400, immutable")
	c.Data(http.StatusOK, ct, body)
	return selfWritten, nil, nil
}

// servedTypes are the media types an artifact is served as; whether a browser may show it
// inline. Every other type, text/html and image/svg+xml above all, is served as
// application/octet-stream, for download.
var servedTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
	"text/plain": true, "application/json": false, "text/csv": false,
}

func servedType(stored string) (contentType string, inline bool) {
	mt, _, err := mime.ParseMediaType(stored)
	if err != nil {
		return "application/octet-stream", false
	}
	inline, ok := servedTypes[mt]
	if !ok {
		return "application/octet-stream", false
	}
	if mt == "text/plain" || mt == "text/csv" {
		return mt + "; charset=utf-8", inline
	}
	return mt, inline
}
