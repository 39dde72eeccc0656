package heartbeat

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// cronParser reads standard five-field cron expressions and descriptors (@hourly, @daily, …).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Schedule says when the ping after a given one is expected.
type Schedule interface {
	Next(after time.Time) time.Time
}

type period time.Duration

func (p period) Next(after time.Time) time.Time { return after.Add(time.Duration(p)) }

// ParseCron validates a cron expression read in the IANA time zone tz ("" means UTC). The time
// zone belongs in tz, not in the expression (CRON_TZ= / TZ= prefixes are refused).
func ParseCron(expr, tz string) (Schedule, error) {
	loc, err := LoadTimezone(tz)
	if err != nil {
		return nil, err
	}
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "CRON_TZ=") || strings.HasPrefix(e, "TZ=") {
		return nil, errors.New("must not carry a time zone: set timezone instead")
	}
	if strings.HasPrefix(e, "@every") {
		return nil, errors.New("@every is not a cron schedule: use report_period instead")
	}
	s, err := cronParser.Parse(e)
	if err != nil {
		return nil, fmt.Errorf("is not a valid cron expression: %v", err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, errors.New("is not a valid cron expression")
	}
	spec.Location = loc
	if spec.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, errors.New("never fires")
	}
	return spec, nil
}

// LoadTimezone reads an IANA time zone name; "" is UTC. "Local" is refused: it would depend
// on the server.
func LoadTimezone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if tz == "Local" {
		return nil, errors.New("must be an IANA time zone name, e.g. America/New_York")
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, errors.New("must be an IANA time zone name, e.g. America/New_York")
	}
	return loc, nil
}

// ScheduleOf is the heartbeat's schedule.
func ScheduleOf(h store.Heartbeat) (Schedule, error) {
	if h.ReportPeriodCron != nil {
		tz := ""
		if h.Timezone != nil {
			tz = *h.Timezone
		}
		return ParseCron(*h.ReportPeriodCron, tz)
	}
	if h.ReportPeriod != nil && *h.ReportPeriod > 0 {
		return period(time.Duration(*h.ReportPeriod) * time.Second), nil
	}
	return nil, fmt.Errorf("heartbeat %s has no schedule", h.ID)
}

// Health is a heartbeat's condition at one time, as the monitor judges it.
type Health int

const (
	// Unknown means nothing to judge yet (never pinged with success, no failure either).
	Unknown Health = iota
	// Healthy means the last success ping is recent enough and no run failed or overran.
	Healthy
	// Failing means a fail ping, a run that started and did not finish within the grace period,
	// or no success ping by the next due time plus the grace period.
	Failing
)

// Judge tells h's health at now:
//
//   - a /fail ping (not followed by a success ping) is Failing at once;
//   - a /start ping not completed within grace_period is Failing;
//   - with a success ping at t, the next one is due at schedule.Next(t) (t + period, or the
//     cron schedule's next time after t in the heartbeat's time zone) and must arrive before
//     due + grace_period;
//   - a heartbeat never pinged with success, and not failing by the rules above, is Unknown
//     (it stays PENDING: a new heartbeat is not DOWN before its job first ran).
func Judge(h store.Heartbeat, sched Schedule, now time.Time) Health {
	grace := time.Duration(h.GracePeriod) * time.Second
	if h.FailedAt != nil {
		return Failing
	}
	if h.RunStartedAt != nil && !now.Before(h.RunStartedAt.Add(grace)) {
		return Failing
	}
	if h.LastSuccessAt == nil {
		return Unknown
	}
	if due := sched.Next(*h.LastSuccessAt); !due.IsZero() && !now.Before(due.Add(grace)) {
		return Failing
	}
	return Healthy
}
