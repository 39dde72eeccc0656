package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// The agents are the deployment's, not an organization's: agent tokens, the live agent
// sessions every replica publishes, and the regions no agent serves are read and written
// across organizations (queries/agents.sql), by the operator's commands, the ingest server
// and the fleet watcher — never for a tenant.

// AgentToken is a stored agent token (never its secret).
type AgentToken struct {
	ID        uuid.UUID
	Name      string
	Regions   []string // the regions its agents may serve
	CreatedAt time.Time
	RevokedAt *time.Time // nil while it is valid
}

// CreateAgentToken stores a token by the hash of its secret.
func (s *Store) CreateAgentToken(ctx context.Context, name string, regions []string, secretHash []byte) (AgentToken, error) {
	t, err := s.q.CreateAgentToken(ctx, dbsqlc.CreateAgentTokenParams{ID: uuid.Must(uuid.NewV7()), Name: name,
		Regions: regions, SecretHash: secretHash, CreatedAt: s.now()})
	return AgentToken(t), translate(err)
}

// ListAgentTokens returns every agent token, revoked ones included, oldest first.
func (s *Store) ListAgentTokens(ctx context.Context) ([]AgentToken, error) {
	rows, err := s.q.ListAgentTokens(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]AgentToken, len(rows))
	for i, r := range rows {
		out[i] = AgentToken(r)
	}
	return out, nil
}

// RevokeAgentToken revokes a token (ErrNotFound when there is none) and, at commit, tells
// every replica, which ends the streams its agents hold. Revoking a revoked token changes
// nothing but notifies again.
func (s *Store) RevokeAgentToken(ctx context.Context, id uuid.UUID) (AgentToken, error) {
	var t dbsqlc.RevokeAgentTokenRow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		var err error
		if t, err = q.RevokeAgentToken(ctx, dbsqlc.RevokeAgentTokenParams{ID: id, Now: s.now()}); err != nil {
			return err
		}
		return notifyAuthChange(ctx, q, AuthChangeAgentToken, id)
	})
	return AgentToken(t), translate(err)
}

// AgentTokenBySecret resolves a secret's hash to a valid (not revoked) token, or ErrNotFound.
func (s *Store) AgentTokenBySecret(ctx context.Context, secretHash []byte) (AgentToken, error) {
	t, err := s.q.AgentTokenBySecret(ctx, secretHash)
	if err != nil {
		return AgentToken{}, translate(err)
	}
	return AgentToken{ID: t.ID, Name: t.Name, Regions: t.Regions}, nil
}

// ActiveAgentTokens returns those of ids that exist and are not revoked.
func (s *Store) ActiveAgentTokens(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := s.q.ActiveAgentTokens(ctx, ids)
	return out, translate(err)
}

// AgentSession is one agent stream open on one replica, as that replica last published it.
type AgentSession struct {
	SessionID        uuid.UUID
	ReplicaID        uuid.UUID // the publishing process
	Replica          string    // its name
	AgentID          string
	TokenID          *uuid.UUID // nil: the shared token
	TokenName        *string    // read back only: the token's name
	Regions          []string
	Version          string
	Hostname         string
	Capabilities     []string
	ConnectedAt      time.Time
	ProbesRunning    int32
	ResultsPerSecond float64
	SeenAt           time.Time
}

// PublishAgentSessions records the sessions open on replica replicaID as seen at their SeenAt,
// forgets the replica's sessions that are gone, and deletes every replica's sessions not
// seen since expiredBefore (their replica died), in one transaction.
func (s *Store) PublishAgentSessions(ctx context.Context, replicaID uuid.UUID, sessions []AgentSession, expiredBefore time.Time) error {
	keep := make([]uuid.UUID, len(sessions))
	params := make([]dbsqlc.UpsertAgentSessionParams, len(sessions))
	for i, a := range sessions {
		keep[i] = a.SessionID
		params[i] = dbsqlc.UpsertAgentSessionParams{SessionID: a.SessionID, ReplicaID: replicaID, Replica: a.Replica,
			AgentID: a.AgentID, TokenID: a.TokenID, Regions: a.Regions, Version: a.Version, Hostname: a.Hostname,
			Capabilities: nonNil(a.Capabilities), ConnectedAt: a.ConnectedAt, ProbesRunning: a.ProbesRunning,
			ResultsPerSecond: a.ResultsPerSecond, SeenAt: a.SeenAt}
	}
	return translate(s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.DeleteReplicaSessionsExcept(ctx, dbsqlc.DeleteReplicaSessionsExceptParams{ReplicaID: replicaID, Keep: keep}); err != nil {
			return err
		}
		if err := q.DeleteExpiredAgentSessions(ctx, expiredBefore); err != nil {
			return err
		}
		var err error
		q.UpsertAgentSession(ctx, params).Exec(func(_ int, e error) {
			if err == nil {
				err = e
			}
		})
		return err
	}))
}

// LiveAgentSessions returns the sessions seen since cutoff, oldest connection first.
func (s *Store) LiveAgentSessions(ctx context.Context, cutoff time.Time) ([]AgentSession, error) {
	rows, err := s.q.LiveAgentSessions(ctx, cutoff)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]AgentSession, len(rows))
	for i, r := range rows {
		out[i] = AgentSession(r)
	}
	return out, nil
}

// RegionsInUse returns, for every region active checks run from, how many checks use it.
func (s *Store) RegionsInUse(ctx context.Context) (map[string]int, error) {
	rows, err := s.q.RegionsInUse(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Region] = int(r.Checks)
	}
	return out, nil
}

// UnservedRegion is a region that active checks use and no live agent serves.
type UnservedRegion struct {
	Region    string
	Since     time.Time
	AlertedAt *time.Time // when agent.region_unserved was queued; nil within the grace period
}

// UnservedRegions returns the regions recorded as unserved.
func (s *Store) UnservedRegions(ctx context.Context) ([]UnservedRegion, error) {
	rows, err := s.q.UnservedRegions(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]UnservedRegion, len(rows))
	for i, r := range rows {
		out[i] = UnservedRegion(r)
	}
	return out, nil
}

// MarkRegionUnserved records that region is unserved since since, unless it already is.
func (s *Store) MarkRegionUnserved(ctx context.Context, region string, since time.Time) error {
	return translate(s.q.MarkRegionUnserved(ctx, dbsqlc.MarkRegionUnservedParams{Region: region, Since: since}))
}

// RegionOrg is an organization whose active checks use a region.
type RegionOrg struct {
	OrgID  uuid.UUID
	Checks int // its active checks that use the region
}

// RegionEvents builds the events of a region's change for the organizations that use it.
type RegionEvents func(since time.Time, orgs []RegionOrg) []OutboxEvent

// AlertUnservedRegion queues build's events for a region unserved since cutoff or earlier
// whose alert has not gone out, and reports whether it did; of replicas racing, one does.
func (s *Store) AlertUnservedRegion(ctx context.Context, region string, cutoff time.Time, build RegionEvents) (bool, error) {
	alerted := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		alerted = false
		q := s.q.WithTx(tx)
		since, err := q.AlertUnservedRegion(ctx, dbsqlc.AlertUnservedRegionParams{Region: region, Now: s.now(), Cutoff: cutoff})
		if err != nil {
			return err
		}
		alerted = true
		return s.queueRegionEvents(ctx, tx, region, since, build)
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return alerted, translate(err)
}

// MarkRegionServed forgets that region was unserved and, when its unserved alert had gone
// out, queues build's events; it reports whether it queued them. Of replicas racing, one does.
func (s *Store) MarkRegionServed(ctx context.Context, region string, build RegionEvents) (bool, error) {
	queued := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		queued = false
		q := s.q.WithTx(tx)
		row, err := q.MarkRegionServed(ctx, region)
		if err != nil || row.AlertedAt == nil {
			return err
		}
		queued = true
		return s.queueRegionEvents(ctx, tx, region, row.Since, build)
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return queued, translate(err)
}

func (s *Store) queueRegionEvents(ctx context.Context, tx pgx.Tx, region string, since time.Time, build RegionEvents) error {
	rows, err := s.q.WithTx(tx).RegionOrganizations(ctx, region)
	if err != nil {
		return err
	}
	orgs := make([]RegionOrg, len(rows))
	for i, r := range rows {
		orgs[i] = RegionOrg{OrgID: r.OrgID, Checks: int(r.Checks)}
	}
	if err := insertOutbox(ctx, tx, build(since, orgs)); err != nil {
		return fmt.Errorf("region %s: %w", region, err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
