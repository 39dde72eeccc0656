package badge

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

// svgDoc is the part of a badge the tests read back.
type svgDoc struct {
	XMLName xml.Name `xml:"svg"`
	Width   int      `xml:"width,attr"`
	Label   string   `xml:"aria-label,attr"`
	Title   string   `xml:"title"`
	Rects   []struct {
		Fill string `xml:"fill,attr"`
	} `xml:"g>rect"`
	Texts []string `xml:"g>text"`
}

func parse(t *testing.T, b Badge) svgDoc {
	t.Helper()
	var d svgDoc
	if err := xml.Unmarshal(b.SVG(), &d); err != nil {
		t.Fatalf("badge %+v is not XML: %v\n%s", b, err, b.SVG())
	}
	return d
}

func TestBadgeValuesAndColours(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		b                  Badge
		label, value, fill string
	}{
		{"up", Status("UP"), "status", "up", BrightGreen},
		{"down", Status("DOWN"), "status", "down", Red},
		{"maintenance", Status("MAINTENANCE"), "status", "maintenance", Blue},
		{"paused", Status("PAUSED"), "status", "paused", Grey},
		{"pending", Status("PENDING"), "status", "pending", Grey},
		{"uptime 100", Uptime("30d", 100, true), "uptime 30d", "100%", BrightGreen},
		{"uptime never rounds up to 100", Uptime("30d", 99.9999, true), "uptime 30d", "99.99%", BrightGreen},
		{"uptime 98.5", Uptime("7d", 98.5, true), "uptime 7d", "98.50%", YellowGreen},
		{"uptime low", Uptime("24h", 42, true), "uptime 24h", "42.00%", Red},
		{"uptime no data", Uptime("30d", 100, false), "uptime 30d", "no data", Grey},
		{"fast", Response("24h", 123*time.Millisecond, 10), "response time 24h", "123 ms", BrightGreen},
		{"slow", Response("24h", 2500*time.Millisecond, 10), "response time 24h", "2.50 s", Red},
		{"no results", Response("1h", 0, 0), "response time 1h", "no data", Grey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := parse(t, tc.b)
			if want := tc.label + ": " + tc.value; d.Label != want || d.Title != want {
				t.Errorf("aria-label %q, title %q; want %q", d.Label, d.Title, want)
			}
			if len(d.Rects) != 3 || d.Rects[1].Fill != tc.fill {
				t.Errorf("rects %+v; want the value's fill %s", d.Rects, tc.fill)
			}
			if len(d.Texts) != 4 || d.Texts[1] != tc.label || d.Texts[3] != tc.value {
				t.Errorf("texts %q; want label %q and value %q", d.Texts, tc.label, tc.value)
			}
		})
	}
}

func TestBadgeEscapesText(t *testing.T) {
	t.Parallel()
	b := Badge{Label: `<script>&"x"`, Value: "a</text><svg onload=alert(1)>", Color: Red}
	d := parse(t, b)
	if d.Texts[1] != b.Label || d.Texts[3] != b.Value {
		t.Errorf("texts %q; want the label and value back verbatim", d.Texts)
	}
	if strings.Contains(string(b.SVG()), "<script") || strings.Contains(string(b.SVG()), "<svg onload") {
		t.Errorf("markup in the texts was not escaped:\n%s", b.SVG())
	}
}

func TestBadgeWidthFollowsText(t *testing.T) {
	t.Parallel()
	up, maint := parse(t, Status("UP")), parse(t, Status("MAINTENANCE"))
	if up.Width < 40 || maint.Width <= up.Width+40 {
		t.Errorf("width of status:up %d, of status:maintenance %d; want the longer text to widen the badge", up.Width, maint.Width)
	}
}
