// Package badge draws the public SVG badges of checks (GET /badges/{token}/…svg): a
// shields.io-style flat badge, a grey label on the left and a coloured value on the right, and
// the values and colours of the three kinds (status, uptime, response time). It knows nothing
// of checks, tokens or HTTP; the api package reads the figures and serves the bytes.
package badge

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Colours of the value side, shields.io's named ones.
const (
	BrightGreen = "#4c1"
	Green       = "#97ca00"
	YellowGreen = "#a4a61d"
	Yellow      = "#dfb317"
	Orange      = "#fe7d37"
	Red         = "#e05d44"
	Blue        = "#007ec6"
	Grey        = "#9f9f9f"
	labelColour = "#555"
)

// Badge is what one badge shows.
type Badge struct {
	Label string
	Value string
	Color string // one of the colours above
}

// Status is the status badge of a check whose status (as the API derives it, without MUTED:
// whether alerts are muted is the owner's business) is status.
func Status(status string) Badge {
	b := Badge{Label: "status", Color: Grey}
	switch status {
	case "UP":
		b.Value, b.Color = "up", BrightGreen
	case "DOWN":
		b.Value, b.Color = "down", Red
	case "VERIFYING":
		b.Value, b.Color = "verifying", Yellow
	case "RECOVERING":
		b.Value, b.Color = "recovering", Yellow
	case "MAINTENANCE":
		b.Value, b.Color = "maintenance", Blue
	case "PAUSED":
		b.Value = "paused"
	default:
		b.Value = "pending"
	}
	return b
}

// Uptime is the uptime badge over the range named rng ("30d"): percent with two decimals,
// truncated so that anything short of 100 never reads 100%; observed false (no time of the
// range was observed yet) reads "no data".
func Uptime(rng string, percent float64, observed bool) Badge {
	b := Badge{Label: "uptime " + rng}
	if !observed {
		b.Value, b.Color = "no data", Grey
		return b
	}
	p := math.Floor(percent*100) / 100
	if p >= 100 {
		b.Value = "100%"
	} else {
		b.Value = strconv.FormatFloat(p, 'f', 2, 64) + "%"
	}
	switch {
	case p >= 99.9:
		b.Color = BrightGreen
	case p >= 99:
		b.Color = Green
	case p >= 97:
		b.Color = YellowGreen
	case p >= 95:
		b.Color = Yellow
	case p >= 90:
		b.Color = Orange
	default:
		b.Color = Red
	}
	return b
}

// Response is the response-time badge over the range named rng: the median d of results
// passing runs; with none, "no data".
func Response(rng string, d time.Duration, results int64) Badge {
	b := Badge{Label: "response time " + rng}
	if results == 0 {
		b.Value, b.Color = "no data", Grey
		return b
	}
	ms := d.Seconds() * 1000
	if ms < 1000 {
		b.Value = fmt.Sprintf("%.0f ms", ms)
	} else {
		b.Value = fmt.Sprintf("%.2f s", ms/1000)
	}
	switch {
	case ms < 200:
		b.Color = BrightGreen
	case ms < 500:
		b.Color = Green
	case ms < 1000:
		b.Color = Yellow
	case ms < 2000:
		b.Color = Orange
	default:
		b.Color = Red
	}
	return b
}

// SVG draws the badge. Both texts are XML-escaped; the colour is one of the package's.
func (b Badge) SVG() []byte {
	lw, vw := textWidth(b.Label)+10, textWidth(b.Value)+10
	w := lw + vw
	label, value := escape(b.Label), escape(b.Value)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`, w, label, value)
	fmt.Fprintf(&buf, `<title>%s: %s</title>`, label, value)
	buf.WriteString(`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	fmt.Fprintf(&buf, `<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`, w)
	fmt.Fprintf(&buf, `<g clip-path="url(#r)"><rect width="%d" height="20" fill="%s"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>`,
		lw, labelColour, lw, vw, escape(b.Color), w)
	buf.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">`)
	for _, t := range []struct {
		x    float64
		text string
	}{{float64(lw) / 2, label}, {float64(lw) + float64(vw)/2, value}} {
		fmt.Fprintf(&buf, `<text x="%.1f" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%.1f" y="14">%s</text>`, t.x, t.text, t.x, t.text)
	}
	buf.WriteString(`</g></svg>`)
	return buf.Bytes()
}

func escape(s string) string {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(s)) // writes to a bytes.Buffer cannot fail
	return buf.String()
}

// textWidth is the width in pixels of s in 11px Verdana, from the widths of its characters
// (rounded up); characters outside the table count as a wide one.
func textWidth(s string) int {
	var w float64
	for _, r := range s {
		if cw, ok := verdana11[r]; ok {
			w += cw
		} else {
			w += 8.5
		}
	}
	return int(math.Ceil(w))
}

// verdana11 are the advance widths of Verdana at 11px of the characters badges show.
var verdana11 = map[rune]float64{
	' ': 3.87, '%': 11.85, '(': 4.55, ')': 4.55, '-': 4.99, '.': 4.35, '/': 4.9, ':': 4.71,
	'0': 7, '1': 7, '2': 7, '3': 7, '4': 7, '5': 7, '6': 7, '7': 7, '8': 7, '9': 7,
	'a': 6.66, 'b': 6.86, 'c': 5.77, 'd': 6.86, 'e': 6.64, 'f': 3.84, 'g': 6.86, 'h': 6.96,
	'i': 3.01, 'j': 3.78, 'k': 6.51, 'l': 3.01, 'm': 10.7, 'n': 6.96, 'o': 6.68, 'p': 6.86,
	'q': 6.86, 'r': 4.69, 's': 5.73, 't': 4.33, 'u': 6.96, 'v': 6.51, 'w': 8.98, 'x': 6.51,
	'y': 6.51, 'z': 5.76,
}
