package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Monthly run counters (check_monthly_stats) spare an organization's SLA report the sum of
// each check's daily counters over whole months. Ingest writes only the daily counters
// (CountVerdicts); a month's monthly rows are written once, when the month has closed, by
// FoldMonthlyStats, and the month is marked in check_stats_folded. The report reads the
// monthly rows of folded months and the daily rows of every other day (SLAOrgRuns), so a month
// not folded yet reads as it did before: the figures never depend on the fold having run.

// errAlreadyFolded ends a fold that another replica did first.
var errAlreadyFolded = errors.New("month already folded")

// FoldMonthlyStats writes the monthly counters of the UTC month that holds month from its
// daily counters and marks it folded. It returns how many checks' rows it wrote; 0 when the
// month was folded already. Call it for closed months only: a folded month's later verdicts
// are added to both counters, which is exact but costs ingest a second upsert each.
//
// While it sums, verdicts of every month wait (LOCK TABLE … SHARE): the sum is then exact
// whatever arrives meanwhile. It reads one month of daily rows, once a month.
func (s *Store) FoldMonthlyStats(ctx context.Context, month time.Time) (int64, error) {
	m := time.Date(month.UTC().Year(), month.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	// Most rounds find the month done: a plain read, so that they never take the lock.
	done, err := s.q.MonthFolded(ctx, m)
	if err != nil {
		return 0, fmt.Errorf("read folded months: %w", err)
	}
	if done {
		return 0, nil
	}
	var n int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.LockDailyStatsForFold(ctx); err != nil {
			return fmt.Errorf("lock daily counters: %w", err)
		}
		marked, err := q.MarkMonthFolded(ctx, m)
		if err != nil {
			return fmt.Errorf("mark month folded: %w", err)
		}
		if marked == 0 {
			return errAlreadyFolded
		}
		n, err = q.FoldMonth(ctx, dbsqlc.FoldMonthParams{Month: m, MonthEnd: m.AddDate(0, 1, 0)})
		if err != nil {
			return fmt.Errorf("fold month %s: %w", m.Format("2006-01"), err)
		}
		return nil
	})
	if errors.Is(err, errAlreadyFolded) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}
