package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

// screenshotStore is what the screenshot route needs from storage.
type screenshotStore interface {
	CheckKind(ctx context.Context, orgID, id uuid.UUID) (check.Kind, error)
	ResultScreenshot(ctx context.Context, orgID, checkID, resultID uuid.UUID) ([]byte, error)
}

var _ screenshotStore = (*store.Store)(nil)

// screenshotsHandler serves the extension route GET /v1/checks/{check_id}/results/{result_id}/
// screenshot: the page of a browser run at its failure, as the agent captured it (PNG or
// JPEG), with the permission of result lists (UPTIME_CHECKS:READ).
type screenshotsHandler struct {
	st screenshotStore
}

func newScreenshotsHandler(d Deps) *screenshotsHandler { return &screenshotsHandler{st: d.Store} }

// get answers the image, or a 404 envelope when the check, the result or its screenshot is not
// there (a check of another organization is not there either).
func (h *screenshotsHandler) get(c *gin.Context) (int, any, error) {
	checkID, err := pathID(c, "check_id", 1)
	if err != nil {
		return 0, nil, err
	}
	if _, err := h.st.CheckKind(c, orgID(c), checkID); err != nil {
		return 0, nil, err
	}
	resultID, err := uuid.Parse(c.Param("result_id"))
	if err != nil {
		return 0, nil, notFound("result")
	}
	img, err := h.st.ResultScreenshot(c, orgID(c), checkID, resultID)
	if err == store.ErrNotFound {
		return 0, nil, notFound("screenshot of result " + resultID.String())
	}
	if err != nil {
		return 0, nil, err
	}
	// Screenshots never change once stored.
	c.Header("Cache-Control", "private, max-age=86400, immutable")
	c.Data(http.StatusOK, wire.ScreenshotType(img), img)
	return selfWritten, nil, nil
}
