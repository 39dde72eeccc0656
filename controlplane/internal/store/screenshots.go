package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// screenshotWindow is how far from the time in a result's id its checked_at may be. Result ids
// are UUIDv7 made when ingest receives the result, shortly after the agent checked; the margin
// covers a backlog and an agent's clock that is off, and keeps the lookup to a few daily
// partitions instead of all of them.
const screenshotWindow = 24 * time.Hour

// ResultScreenshot returns the screenshot stored with result resultID of check checkID of the
// organization, or ErrNotFound when there is no such result or it has no screenshot.
func (s *Store) ResultScreenshot(ctx context.Context, orgID, checkID, resultID uuid.UUID) ([]byte, error) {
	if resultID.Version() != 7 {
		return nil, ErrNotFound // every result id is a UUIDv7
	}
	made := time.Unix(resultID.Time().UnixTime())
	b, err := s.q.ResultScreenshot(ctx, dbsqlc.ResultScreenshotParams{
		OrgID: orgID, CheckID: checkID, ID: resultID,
		CheckedFrom: made.Add(-screenshotWindow), CheckedTo: made.Add(screenshotWindow),
	})
	if err != nil {
		return nil, translate(err)
	}
	return b, nil
}
