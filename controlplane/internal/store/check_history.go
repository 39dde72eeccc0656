package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// CheckIncident is one period during which a check was DOWN; EndedAt is nil while it lasts.
type CheckIncident struct {
	ID        uuid.UUID
	CheckID   uuid.UUID
	StartedAt time.Time
	EndedAt   *time.Time
	// CausedBy is the dependency (check or heartbeat) that was DOWN when the incident opened
	// (docs/detection.md "Dependencies"); nil otherwise.
	CausedBy *uuid.UUID
}

// ListCheckIncidents returns one page of a check's incidents that overlap [from, to) (each
// bound optional), newest started_at first, then id descending (the check_incidents_check
// index order), and how many overlap in total.
func (s *Store) ListCheckIncidents(ctx context.Context, orgID, checkID uuid.UUID, from, to *time.Time, limit, offset int64) ([]CheckIncident, int64, error) {
	total, err := s.q.CountCheckIncidents(ctx, dbsqlc.CountCheckIncidentsParams{OrgID: orgID, CheckID: checkID, FromTime: from, ToTime: to})
	if err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []CheckIncident{}, total, nil
	}
	rows, err := s.q.ListCheckIncidents(ctx, dbsqlc.ListCheckIncidentsParams{OrgID: orgID, CheckID: checkID,
		FromTime: from, ToTime: to, MaxRows: limit, SkipRows: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	items := make([]CheckIncident, len(rows))
	for i, r := range rows {
		items[i] = CheckIncident(r)
	}
	return items, total, nil
}

// CheckResult is one probe attempt from one region, with the fields of every kind (those of
// other kinds are nil).
type CheckResult struct {
	ID               uuid.UUID
	CheckedAt        time.Time
	Region           string
	Passing          bool
	ResponseTimeMs   float64
	AttemptNumber    int
	IsFinalAttempt   bool
	DispatchedAt     *time.Time
	ResponseBody     *string
	BodyAvailability string
	// uptime and browser
	ResponseCode  *int
	ResultSummary *string
	// DNS and TCP
	FailureSource, FailureType *string
	// DNS
	DNSStatus, Resolver, ParsedResponse *string
	// TCP
	TCPStatus                            *string
	DNSTimeMs, ConnectTimeMs, DataTimeMs *float64
	// Ping, gRPC and WebSocket, from details.
	Observations KindObservations
	// TLSChain is the certificate chain the attempt was served; nil when it had none.
	TLSChain *TLSChain
}

// ListCheckResults returns one page of a check's results with from <= checked_at < to, oldest
// first (the primary key order), and how many there are in that window. A database that
// cannot be reached is ErrUnavailable.
func (s *Store) ListCheckResults(ctx context.Context, orgID, checkID uuid.UUID, from, to time.Time, limit, offset int64) ([]CheckResult, int64, error) {
	total, err := s.q.CountCheckResults(ctx, dbsqlc.CountCheckResultsParams{OrgID: orgID, CheckID: checkID, FromTime: from, ToTime: to})
	if err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []CheckResult{}, total, nil
	}
	rows, err := s.q.ListCheckResults(ctx, dbsqlc.ListCheckResultsParams{OrgID: orgID, CheckID: checkID,
		FromTime: from, ToTime: to, MaxRows: limit, SkipRows: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	items := make([]CheckResult, len(rows))
	for i, r := range rows {
		items[i] = CheckResult{ID: r.ID, CheckedAt: r.CheckedAt, Region: r.Region, Passing: r.Passing,
			ResponseTimeMs: r.ResponseTimeMs, AttemptNumber: int(r.AttemptNumber), IsFinalAttempt: r.IsFinalAttempt,
			DispatchedAt: r.DispatchedAt, ResponseBody: r.ResponseBody, BodyAvailability: r.BodyAvailability,
			ResponseCode: intPtr(r.ResponseCode), ResultSummary: r.ResultSummary, FailureSource: r.FailureSource,
			FailureType: r.FailureType, DNSStatus: r.DnsStatus, Resolver: r.Resolver, ParsedResponse: r.ParsedResponse,
			TCPStatus: r.TcpStatus, DNSTimeMs: r.DnsTimeMs, ConnectTimeMs: r.ConnectTimeMs, DataTimeMs: r.DataTimeMs}
		if len(r.Details) > 0 {
			var d struct {
				KindObservations
				TLSChain *TLSChain `json:"tls_chain"`
			}
			if err := json.Unmarshal(r.Details, &d); err != nil {
				return nil, 0, fmt.Errorf("decode details of result %s: %w", r.ID, err)
			}
			items[i].Observations, items[i].TLSChain = d.KindObservations, d.TLSChain
		}
	}
	return items, total, nil
}
