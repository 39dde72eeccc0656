package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// CheckIncident is one period during which a check was DOWN; EndedAt is nil while it lasts.
type CheckIncident struct {
	ID        uuid.UUID
	CheckID   uuid.UUID
	StartedAt time.Time
	EndedAt   *time.Time
}

// ListCheckIncidents returns one page of a check's incidents that overlap [from, to) (each
// bound optional), newest started_at first, then id descending (the check_incidents_check
// index order), and how many overlap in total.
func (s *Store) ListCheckIncidents(ctx context.Context, orgID, checkID uuid.UUID, from, to *time.Time, limit, offset int64) ([]CheckIncident, int64, error) {
	const cond = `org_id = $1 AND check_id = $2
		AND ($3::timestamptz IS NULL OR ended_at IS NULL OR ended_at > $3)
		AND ($4::timestamptz IS NULL OR started_at < $4)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM check_incidents WHERE `+cond, orgID, checkID, from, to).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []CheckIncident{}, total, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, check_id, started_at, ended_at FROM check_incidents WHERE `+cond+`
		ORDER BY started_at DESC, id DESC LIMIT $5 OFFSET $6`, orgID, checkID, from, to, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (CheckIncident, error) {
		var i CheckIncident
		err := row.Scan(&i.ID, &i.CheckID, &i.StartedAt, &i.EndedAt)
		return i, err
	})
	return items, total, translate(err)
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
}

// ListCheckResults returns one page of a check's results with from <= checked_at < to, oldest
// first (the primary key order), and how many there are in that window. A database that
// cannot be reached is ErrUnavailable.
func (s *Store) ListCheckResults(ctx context.Context, orgID, checkID uuid.UUID, from, to time.Time, limit, offset int64) ([]CheckResult, int64, error) {
	const cond = `org_id = $1 AND check_id = $2 AND checked_at >= $3 AND checked_at < $4`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM check_results WHERE `+cond, orgID, checkID, from, to).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []CheckResult{}, total, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, checked_at, region, passing, response_time_ms, attempt_number,
			is_final_attempt, dispatched_at, response_body, body_availability, response_code, result_summary,
			failure_source, failure_type, dns_status, resolver, parsed_response, tcp_status,
			dns_time_ms, connect_time_ms, data_time_ms
		FROM check_results WHERE `+cond+` ORDER BY checked_at, id LIMIT $5 OFFSET $6`, orgID, checkID, from, to, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (CheckResult, error) {
		var r CheckResult
		err := row.Scan(&r.ID, &r.CheckedAt, &r.Region, &r.Passing, &r.ResponseTimeMs, &r.AttemptNumber,
			&r.IsFinalAttempt, &r.DispatchedAt, &r.ResponseBody, &r.BodyAvailability, &r.ResponseCode, &r.ResultSummary,
			&r.FailureSource, &r.FailureType, &r.DNSStatus, &r.Resolver, &r.ParsedResponse, &r.TCPStatus,
			&r.DNSTimeMs, &r.ConnectTimeMs, &r.DataTimeMs)
		return r, err
	})
	return items, total, translate(err)
}
