package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// dependencyIDs parses a check's depends_on (the model validated their form).
func dependencyIDs(ids []string) ([]uuid.UUID, error) {
	out := make([]uuid.UUID, len(ids))
	for i, s := range ids {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, &ValidationError{Field: fmt.Sprintf("depends_on[%d]", i), Message: "must be the id of a check or a heartbeat"}
		}
		out[i] = id
	}
	return out, nil
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// checkDependencies refuses (ValidationError, a 400) dependencies of check id that are not
// checks or heartbeats of the organization, the check itself, or checks that depend on it,
// directly or not (a cycle).
//
// It locks the organization's dependency graph until the transaction ends: two writers that
// each read the graph before the other's edge committed would both see no cycle and together
// close one (A→B and B→A in concurrent PATCHes). A write without dependencies adds no edge and
// takes no lock.
func checkDependencies(ctx context.Context, q *dbsqlc.Queries, orgID, id uuid.UUID, deps []uuid.UUID) error {
	if len(deps) == 0 {
		return nil
	}
	if err := q.LockDependencyGraph(ctx, orgID); err != nil {
		return fmt.Errorf("lock the dependency graph: %w", err)
	}
	for i, d := range deps {
		if d == id {
			return &ValidationError{Field: fmt.Sprintf("depends_on[%d]", i), Message: "a check cannot depend on itself"}
		}
	}
	missing, err := q.MissingDependencies(ctx, dbsqlc.MissingDependenciesParams{OrgID: orgID, Ids: deps})
	if err != nil {
		return fmt.Errorf("read dependencies: %w", err)
	}
	if len(missing) > 0 {
		return &ValidationError{Field: "depends_on", Message: fmt.Sprintf("%s is not a check or heartbeat of the organization", missing[0])}
	}
	cycle, err := q.DependencyReaches(ctx, dbsqlc.DependencyReachesParams{OrgID: orgID, Ids: deps, CheckID: id})
	if err != nil {
		return fmt.Errorf("read dependencies: %w", err)
	}
	if cycle {
		return &ValidationError{Field: "depends_on", Message: "would close a cycle: the check is already a dependency of one of these, directly or not"}
	}
	return nil
}

// DownDependencies returns the dependencies of a (locked) check that are DOWN now.
func (p *PipelineTx) DownDependencies(ctx context.Context, orgID, checkID uuid.UUID) ([]uuid.UUID, error) {
	ids, err := p.q().DownDependencies(ctx, dbsqlc.DownDependenciesParams{OrgID: orgID, CheckID: checkID})
	if err != nil {
		return nil, fmt.Errorf("read down dependencies: %w", err)
	}
	return ids, nil
}

// SetIncidentCause marks a check incident as caused by a dependency that was DOWN when it
// opened.
func (p *PipelineTx) SetIncidentCause(ctx context.Context, orgID, incidentID, causedBy uuid.UUID) error {
	if err := p.q().SetIncidentCause(ctx, dbsqlc.SetIncidentCauseParams{OrgID: orgID, ID: incidentID, CausedBy: &causedBy}); err != nil {
		return fmt.Errorf("mark the incident's cause: %w", err)
	}
	return nil
}
