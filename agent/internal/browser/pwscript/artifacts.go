package pwscript

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"

	"github.com/vantagehq/vantage/pkg/wire"
)

// Artifact is a file a run kept: a screenshot taken with { path }, or a testInfo.attach().
// Scripts have no file system: a path names an artifact of the run, nothing on disk.
type Artifact struct {
	// Name is the artifact's name, unique in the run: the path it was written to, cleaned
	// and flattened ("shots/home.png" is "shots-home.png"), or the attachment's name.
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Body        []byte `json:"body"`
}

// Caps of a run's artifacts, the defaults of Options.ArtifactMaxBytes and ArtifactMaxCount:
// enough for a screenshot or two per test and a few text attachments, small enough to travel
// in the result beside the failure screenshot.
const (
	DefaultArtifactMaxBytes = wire.MaxArtifactsBytes
	DefaultArtifactMaxCount = wire.MaxArtifacts
	// maxArtifactName bounds a name (in bytes); a longer one keeps its end, where the extension is.
	maxArtifactName = wire.MaxArtifactNameBytes
)

// artifactSet is the artifacts a run kept, and the lines saying which it dropped. It belongs
// to the loop's goroutine.
type artifactSet struct {
	maxBytes, maxCount int
	kept               []Artifact
	size               int
	dropped            []string
	droppedNames       map[string]bool
}

// put keeps body under name, replacing an artifact of that name (a second screenshot to the
// same path overwrites the first, as a file would). Over a cap, the artifact is dropped with
// a line in the report; the script goes on: a cap is never the check's failure.
func (s *artifactSet) put(name, contentType string, body []byte) {
	for i, a := range s.kept {
		if a.Name == name {
			s.size -= len(a.Body)
			s.kept = append(s.kept[:i], s.kept[i+1:]...)
			break
		}
	}
	switch {
	case len(s.kept) >= s.maxCount:
		s.drop(name, fmt.Sprintf("artifact %q dropped: a run keeps at most %d artifacts", name, s.maxCount))
	case s.size+len(body) > s.maxBytes:
		s.drop(name, fmt.Sprintf("artifact %q dropped: its %s would take the run's artifacts over their cap of %s", name, byteSize(len(body)), byteSize(s.maxBytes)))
	default:
		s.kept = append(s.kept, Artifact{Name: name, ContentType: contentType, Body: body})
		s.size += len(body)
		delete(s.droppedNames, name)
	}
}

func (s *artifactSet) drop(name, line string) {
	s.dropped = append(s.dropped, line)
	if s.droppedNames == nil {
		s.droppedNames = map[string]bool{}
	}
	s.droppedNames[name] = true
}

// get returns the artifact called name.
func (s *artifactSet) get(name string) (Artifact, bool) {
	for _, a := range s.kept {
		if a.Name == name {
			return a, true
		}
	}
	return Artifact{}, false
}

// unique returns name, or name with a number before its extension when an artifact of
// that name exists: attachments add, they do not replace.
func (s *artifactSet) unique(name string) string {
	if _, ok := s.get(name); !ok {
		return name
	}
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d%s", base, i, ext)
		if _, ok := s.get(n); !ok {
			return n
		}
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// artifactName turns a path the script gave into an artifact name: cleaned, relative, one
// segment ("./shots/home.png" is "shots-home.png"), printable. "" when nothing is left.
func artifactName(p string) string {
	p = path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))
	p = strings.Trim(p, "/")
	var b strings.Builder
	for _, c := range p {
		switch {
		case c == '/':
			b.WriteByte('-')
		case c < 0x20 || c == 0x7f || c == '"' || c == '%' || c == '?' || c == '#':
			b.WriteByte('_')
		default:
			b.WriteRune(c)
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if len(name) > maxArtifactName {
		name = name[len(name)-maxArtifactName:]
		for len(name) > 0 && !isRuneStart(name[0]) {
			name = name[1:]
		}
	}
	return name
}

// contentTypeOf is the media type a name's extension implies, as Playwright infers an
// attachment's from its path.
func contentTypeOf(name, fallback string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".txt", ".log":
		return "text/plain"
	case ".json":
		return "application/json"
	case ".html", ".htm":
		return "text/html"
	case ".csv":
		return "text/csv"
	case ".svg":
		return "image/svg+xml"
	case ".webp":
		return "image/webp"
	}
	return fallback
}

// screenshotFormat reads the screenshot options page.screenshot and locator.screenshot share:
// { type, quality, path }. Without a type the path's extension chooses, as in Playwright.
func (r *run) screenshotFormat(opts map[string]goja.Value, method string) (format page.CaptureScreenshotFormat, quality int64, name string) {
	format = page.CaptureScreenshotFormatPng
	typ := ""
	if v, ok := opts["path"]; ok {
		s, isString := v.Export().(string)
		if !isString || artifactName(s) == "" {
			panic(r.typeError("%s: path: expected a file name, got %s", method, describeType(v)))
		}
		name = artifactName(s)
		switch contentTypeOf(name, "") {
		case "image/png":
			typ = "png"
		case "image/jpeg":
			typ = "jpeg"
		default:
			panic(r.typeError("%s: path: unsupported mime type of %q: the path must end in .png, .jpg or .jpeg", method, s))
		}
	}
	if t, ok := opts["type"]; ok {
		typ = t.String()
	}
	switch typ {
	case "", "png":
	case "jpeg":
		format, quality = page.CaptureScreenshotFormatJpeg, 80
	default:
		panic(r.typeError("%s: type: expected \"png\" or \"jpeg\", got %q", method, typ))
	}
	if q, ok := opts["quality"]; ok {
		quality = q.ToInteger()
	}
	return format, quality, name
}

// screenshotResult is what a screenshot resolves to: its bytes, kept as an artifact first
// when the script gave a path (on the loop, which owns the artifacts).
func (r *run) screenshotResult(img []byte, name string, format page.CaptureScreenshotFormat) any {
	if name == "" {
		return bytesResult(img)
	}
	return jsResult(func() goja.Value {
		ct := "image/png"
		if format == page.CaptureScreenshotFormatJpeg {
			ct = "image/jpeg"
		}
		r.artifacts.put(name, ct, img)
		return r.toJS(bytesResult(img))
	})
}

// addLocatorScreenshot adds locator.screenshot(): the element, once it is visible and stable,
// scrolled into view and clipped out of the page.
func (r *run) addLocatorScreenshot(m map[string]any, l *locator) {
	m["screenshot"] = func(call goja.FunctionCall) goja.Value {
		method := "locator.screenshot"
		opts := r.options(r.argObject(call, 0, method), method, "type", "quality", "timeout", "path", "animations", "caret", "scale", "omitBackground", "mask")
		format, quality, name := r.screenshotFormat(opts, method)
		b := r.actionBudget(opts)
		return r.async(method+"("+l.desc+")", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			// "point" waits for the element to be visible and stable and scrolls it into view.
			if _, err := r.resolveOne(ctx, b, own, l, method, "point", pointArg{}, "", nil); err != nil {
				return nil, err
			}
			res, err := r.resolveOne(ctx, b, own, l, method, "read", map[string]string{"k": "box"}, "", nil)
			if err != nil {
				return nil, err
			}
			var box *struct{ X, Y, Width, Height float64 }
			if err := json.Unmarshal(res.V, &box); err != nil || box == nil || box.Width <= 0 || box.Height <= 0 {
				return nil, opErr(CauseAssertion, "%s: Error: element is not visible", method)
			}
			p := page.CaptureScreenshotParams{Format: format, CaptureBeyondViewport: new(true),
				Clip: &page.Viewport{X: box.X, Y: box.Y, Width: box.Width, Height: box.Height, Scale: 1}}
			if quality > 0 {
				p.Quality = &quality
			}
			res2, err := chromedp.Call(ctx, page.CaptureScreenshot, p)
			if err != nil {
				return nil, timedOut(ctx, err, method, b, own)
			}
			return r.screenshotResult(res2.Data, name, format), nil
		})
	}
}

// redactArtifacts redacts secrets from the names and the text artifacts of rep (an attached
// log or JSON document may quote one). Images cannot be redacted, as the failure screenshot
// cannot.
func redactArtifacts(rep *Report, redact func(string) string) {
	for i := range rep.Artifacts {
		a := &rep.Artifacts[i]
		a.Name = redact(a.Name)
		if isText(a.ContentType) {
			a.Body = []byte(redact(string(a.Body)))
		}
	}
	for i := range rep.ArtifactsDropped {
		rep.ArtifactsDropped[i] = redact(rep.ArtifactsDropped[i])
	}
}

func isText(contentType string) bool {
	ct := strings.ToLower(contentType)
	return strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") || strings.Contains(ct, "xml") || strings.Contains(ct, "javascript")
}
