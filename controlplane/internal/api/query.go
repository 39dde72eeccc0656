package api

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: page arithmetic must stay within it.
const maxSafeInteger = 1<<53 - 1

// page is a validated page request.
type page struct {
	Page    int64
	PerPage int64
}

// Offset is the number of items before this page.
func (p page) Offset() int64 { return (p.Page - 1) * p.PerPage }

// pageRules describe one list's pagination.
type pageRules struct {
	DefaultPerPage int64
	MaxPerPage     int64
	// StrictMax rejects per_page above MaxPerPage with 400 (incident and result lists, whose
	// contract caps it); otherwise a larger per_page is served as MaxPerPage, which clients that
	// page until total_count handle unchanged.
	StrictMax bool
}

var (
	genericPages = pageRules{DefaultPerPage: 20, MaxPerPage: 100}
	historyPages = pageRules{DefaultPerPage: 20, MaxPerPage: 100, StrictMax: true}
)

// parsePage reads page and per_page: positive safe integers, given as numbers in the query.
func parsePage(c *gin.Context, r pageRules) (page, error) {
	p := page{Page: 1, PerPage: r.DefaultPerPage}
	var errs fieldErrors
	read := func(name string, dst *int64) {
		s, ok := c.GetQuery(name)
		if !ok {
			return
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		switch {
		case err != nil || n > maxSafeInteger:
			errs = append(errs, fieldError{name, "must be a positive integer"})
		case n < 1:
			errs = append(errs, fieldError{name, "must be at least 1"})
		default:
			*dst = n
		}
	}
	read("page", &p.Page)
	read("per_page", &p.PerPage)
	if p.PerPage > r.MaxPerPage {
		if r.StrictMax {
			errs = append(errs, fieldError{"per_page", "must be at most " + strconv.FormatInt(r.MaxPerPage, 10)})
		} else {
			p.PerPage = r.MaxPerPage
		}
	}
	if len(errs) == 0 && (p.Page-1) > maxSafeInteger/p.PerPage {
		errs = append(errs, fieldError{"page", "page × per_page is too large"})
	}
	if len(errs) > 0 {
		return p, errs
	}
	return p, nil
}

// fractionDigits finds the fractional seconds of an RFC 3339 timestamp.
var fractionDigits = regexp.MustCompile(`T\d{2}:\d{2}:\d{2}\.(\d+)`)

// searchQuery reads the search parameter of a list, at most limit characters.
func searchQuery(c *gin.Context, limit int) (string, error) {
	s := c.Query("search")
	if utf8.RuneCountInString(s) > limit {
		return "", fieldErrors{{"search", fmt.Sprintf("must be at most %d characters", limit)}}
	}
	return s, nil
}

// parseTimestamp reads an ISO 8601 / RFC 3339 date-time with a zone and at most three
// fractional digits of seconds (millisecond precision).
func parseTimestamp(name, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fieldErrors{{name, "must be an ISO 8601 date-time with a time zone, e.g. 2026-01-02T15:04:05.000Z"}}
	}
	if m := fractionDigits.FindStringSubmatch(s); m != nil && len(m[1]) > 3 {
		return time.Time{}, fieldErrors{{name, "must have at most 3 fractional digits of seconds"}}
	}
	return t.UTC(), nil
}

// timeRange is a validated from/to query.
type timeRange struct {
	From, To *time.Time // nil when not given (optional ranges)
}

// maxResultsRange is the longest results window (api/openapi/openapi.yaml).
const maxResultsRange = 7 * 24 * time.Hour

// parseRange reads from (inclusive) and to (exclusive). With required, both must be given and
// span at most seven days (result lists); otherwise each is optional (incident lists).
func parseRange(c *gin.Context, required bool) (timeRange, error) {
	var r timeRange
	var errs fieldErrors
	for _, name := range []string{"from", "to"} {
		s, ok := c.GetQuery(name)
		if !ok || s == "" {
			if required {
				errs = append(errs, fieldError{name, "is required"})
			}
			continue
		}
		t, err := parseTimestamp(name, s)
		if err != nil {
			errs = append(errs, err.(fieldErrors)...)
			continue
		}
		if name == "from" {
			r.From = &t
		} else {
			r.To = &t
		}
	}
	if len(errs) > 0 {
		return r, errs
	}
	if r.From != nil && r.To != nil {
		if !r.To.After(*r.From) {
			return r, fieldErrors{{"to", "must be later than from"}}
		}
		if required && r.To.Sub(*r.From) > maxResultsRange {
			return r, fieldErrors{{"to", "the range from..to must not exceed 7 days"}}
		}
	}
	return r, nil
}

// formatTime renders a timestamp as the API does everywhere: UTC, milliseconds.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// formatTimePtr is formatTime for nullable timestamps.
func formatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}
