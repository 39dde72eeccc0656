package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Artifact is a file a scripted browser run kept (a screenshot taken with a path, a
// testInfo.attach()), stored with its result.
type Artifact struct {
	Name        string
	ContentType string
	Body        []byte
}

// ArtifactInfo describes a stored artifact without its bytes.
type ArtifactInfo struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
	// Offset is where its bytes start in the result's artifacts column.
	Offset int `json:"offset"`
}

// encodeArtifacts lays artifacts out as stored: the index (jsonb) and the bodies end to end
// (bytea); both nil when there are none.
func encodeArtifacts(as []Artifact) (json.RawMessage, []byte, error) {
	if len(as) == 0 {
		return nil, nil, nil
	}
	index := make([]ArtifactInfo, len(as))
	var blob []byte
	for i, a := range as {
		index[i] = ArtifactInfo{Name: a.Name, ContentType: a.ContentType, Size: len(a.Body), Offset: len(blob)}
		blob = append(blob, a.Body...)
	}
	b, err := json.Marshal(index)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the artifact index: %w", err)
	}
	return b, blob, nil
}

// resultWindow is the range of checked_at to look in for result resultID (see
// screenshotWindow); ok is false for an id that no result can have.
func resultWindow(resultID uuid.UUID) (from, to time.Time, ok bool) {
	if resultID.Version() != 7 {
		return time.Time{}, time.Time{}, false // every result id is a UUIDv7
	}
	made := time.Unix(resultID.Time().UnixTime())
	return made.Add(-screenshotWindow), made.Add(screenshotWindow), true
}

// ResultArtifacts lists the artifacts stored with result resultID of check checkID of the
// organization, in the order the run kept them: none for a result without any, ErrNotFound
// when there is no such result.
func (s *Store) ResultArtifacts(ctx context.Context, orgID, checkID, resultID uuid.UUID) ([]ArtifactInfo, error) {
	from, to, ok := resultWindow(resultID)
	if !ok {
		return nil, ErrNotFound
	}
	raw, err := s.q.ResultArtifactIndex(ctx, dbsqlc.ResultArtifactIndexParams{
		OrgID: orgID, CheckID: checkID, ID: resultID, CheckedFrom: from, CheckedTo: to})
	if err != nil {
		return nil, translate(err)
	}
	out := []ArtifactInfo{}
	if len(raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode the artifact index of result %s: %w", resultID, err)
	}
	return out, nil
}

// ResultArtifact returns the artifact called name of result resultID of check checkID of the
// organization, with its bytes; ErrNotFound when there is no such result or artifact.
func (s *Store) ResultArtifact(ctx context.Context, orgID, checkID, resultID uuid.UUID, name string) (ArtifactInfo, []byte, error) {
	index, err := s.ResultArtifacts(ctx, orgID, checkID, resultID)
	if err != nil {
		return ArtifactInfo{}, nil, err
	}
	for _, a := range index {
		if a.Name != name {
			continue
		}
		from, to, _ := resultWindow(resultID)
		body, err := s.q.ResultArtifactBody(ctx, dbsqlc.ResultArtifactBodyParams{
			ByteFrom: int32(a.Offset + 1), ByteLength: int32(a.Size),
			OrgID: orgID, CheckID: checkID, ID: resultID, CheckedFrom: from, CheckedTo: to})
		if err != nil {
			return ArtifactInfo{}, nil, translate(err)
		}
		if len(body) != a.Size {
			return ArtifactInfo{}, nil, fmt.Errorf("artifact %q of result %s: %d bytes stored, the index says %d", name, resultID, len(body), a.Size)
		}
		return a, body, nil
	}
	return ArtifactInfo{}, nil, ErrNotFound
}
