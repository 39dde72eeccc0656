package pwscript

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Annotation is an entry of testInfo.annotations, as Playwright reports it.
type Annotation struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// testInfoState is what testInfo keeps for one test: the same object is the second argument
// of the test's body and hooks and what test.info() returns, so annotations pushed in a hook
// are there in the body.
type testInfoState struct {
	obj         *goja.Object
	annotations *goja.Object
}

// testInfo is the second argument of a test body and hook, and test.info(), for the test
// running.
func (r *run) testInfo() goja.Value {
	tr := r.cur
	if tr == nil {
		panic(r.typeError("test.info() can only be called while a test is running"))
	}
	if st, ok := r.infos[tr]; ok {
		return st.obj
	}
	st := &testInfoState{annotations: r.vm.NewArray()}
	title, titlePath := "", []any{r.prog.Filename}
	if t := tr.test; t != nil {
		title = t.title
		for _, p := range t.titlePath() {
			titlePath = append(titlePath, p)
		}
	}
	outputDir := outputDirOf(r.prog.Filename, tr.test)
	target := r.vm.NewObject()
	members := map[string]any{
		"title": title, "titlePath": titlePath, "file": r.prog.Filename, "retry": 0, "repeatEachIndex": 0,
		"workerIndex": 0, "parallelIndex": 0, "project": r.object("testInfo.project", map[string]any{"name": "chromium"}),
		"annotations": st.annotations,
		"outputDir":   outputDir,
		"attachments": r.vm.NewArray(),
		"setTimeout": func(call goja.FunctionCall) goja.Value {
			tr.setTimeout(time.Duration(call.Argument(0).ToFloat() * float64(time.Millisecond)))
			return goja.Undefined()
		},
		"outputPath": func(call goja.FunctionCall) goja.Value {
			parts := []string{outputDir}
			for i, a := range call.Arguments {
				s, ok := a.Export().(string)
				if !ok {
					panic(r.typeError("testInfo.outputPath: argument %d: expected a string, got %s", i+1, describeType(a)))
				}
				parts = append(parts, s)
			}
			p := path.Join(parts...)
			if !strings.HasPrefix(p, outputDir+"/") && p != outputDir {
				panic(r.typeError("testInfo.outputPath: the path must stay inside the test's output directory"))
			}
			return r.vm.ToValue(p)
		},
		"attach": func(call goja.FunctionCall) goja.Value { return r.attach(call, tr) },
	}
	for k, v := range members {
		must(target.Set(k, v))
	}
	// The live members, read when the script asks (status in an afterEach hook says how the
	// test went, timeout follows setTimeout).
	getter := func(name string, get func() any) {
		must(target.DefineAccessorProperty(name, r.vm.ToValue(func(goja.FunctionCall) goja.Value { return r.vm.ToValue(get()) }), nil, goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
	getter("timeout", func() any { return tr.timeout.Milliseconds() })
	getter("status", func() any { return string(statusOf(tr)) })
	getter("expectedStatus", func() any {
		if tr.expectFail {
			return string(StatusFailed)
		}
		return string(StatusPassed)
	})
	getter("duration", func() any { return time.Since(tr.start).Milliseconds() })
	st.obj = r.strict("testInfo", target)
	if r.infos == nil {
		r.infos = map[*testRun]*testInfoState{}
	}
	r.infos[tr] = st
	return st.obj
}

// statusOf is a test's status as testInfo.status tells it while the test runs: passed until
// it fails.
func statusOf(tr *testRun) Status {
	f := tr.failure
	switch {
	case f == nil:
		return StatusPassed
	case f.Cause == causeSkip:
		return StatusSkipped
	case f.Cause == CauseTimeout && strings.HasPrefix(f.Message, "Test timeout"):
		return StatusTimedOut
	}
	return StatusFailed
}

// attach is testInfo.attach(name, { body, contentType, path }): the body, or the artifact
// the run wrote at path (a screenshot), kept as an artifact called name. It returns a
// promise, as Playwright's does; it settles at once.
func (r *run) attach(call goja.FunctionCall, tr *testRun) goja.Value {
	const method = "testInfo.attach"
	name := artifactName(r.argString(call, 0, method, "name"))
	if name == "" {
		panic(r.typeError("%s: name: expected a file name", method))
	}
	opts := r.options(r.argObject(call, 1, method), method, "body", "contentType", "path")
	var body []byte
	contentType := ""
	if v, ok := opts["contentType"]; ok {
		contentType = v.String()
	}
	bodyV, hasBody := opts["body"]
	pathV, hasPath := opts["path"]
	switch {
	case hasBody && hasPath:
		panic(r.typeError("%s: only one of body and path can be given", method))
	case hasBody:
		b, isText, ok := bytesOf(bodyV)
		if !ok {
			panic(r.typeError("%s: body: expected a string or a Uint8Array, got %s", method, describeType(bodyV)))
		}
		body = b
		if contentType == "" {
			contentType = "application/octet-stream"
			if isText {
				contentType = "text/plain"
			}
		}
	case hasPath:
		p, _ := pathV.Export().(string)
		from := artifactName(p)
		a, ok := r.artifacts.get(from)
		switch {
		case ok:
			body = a.Body
			if contentType == "" {
				contentType = a.ContentType
			}
		case r.artifacts.droppedNames[from]:
			// The file was dropped by the caps; so is its attachment, with a line saying so.
			r.artifacts.drop(name, fmt.Sprintf("attachment %q dropped: %q was dropped by the caps", name, from))
			return r.settled()
		default:
			panic(r.typeError("%s: ENOENT: no such file %q: a path names a file the run wrote, such as a screenshot taken with { path } (scripts have no file system)", method, p))
		}
	default:
		panic(r.typeError("%s: expected { body } or { path }", method))
	}
	if contentType == "" {
		contentType = contentTypeOf(name, "application/octet-stream")
	}
	r.artifacts.put(r.artifacts.unique(name), contentType, body)
	return r.settled()
}

// settled is a promise resolved with undefined.
func (r *run) settled() goja.Value {
	p, resolve, _ := r.vm.NewPromise()
	must(resolve(goja.Undefined()))
	return r.vm.ToValue(p)
}

// bytesOf reads an attachment body: a string (text), a typed array or an ArrayBuffer.
func bytesOf(v goja.Value) (b []byte, isText, ok bool) {
	switch x := v.Export().(type) {
	case string:
		return []byte(x), true, true
	case []byte:
		return append([]byte(nil), x...), false, true
	case goja.ArrayBuffer:
		return append([]byte(nil), x.Bytes()...), false, true
	}
	return nil, false, false
}

// annotationsOf reads the test's testInfo.annotations when the test ends: what the script
// pushed, whatever its shape, as type and description strings.
func (r *run) annotationsOf(tr *testRun) []Annotation {
	st, ok := r.infos[tr]
	if !ok {
		return nil
	}
	delete(r.infos, tr)
	var out []Annotation
	n := st.annotations.Get("length").ToInteger()
	for i := range min(n, maxAnnotations) {
		o, ok := st.annotations.Get(fmt.Sprint(i)).(*goja.Object)
		if !ok {
			continue
		}
		a := Annotation{}
		if v := o.Get("type"); v != nil && !goja.IsUndefined(v) {
			a.Type = truncate(v.String(), maxAnnotationText)
		}
		if v := o.Get("description"); v != nil && !goja.IsUndefined(v) {
			a.Description = truncate(v.String(), maxAnnotationText)
		}
		out = append(out, a)
	}
	return out
}

// Bounds of what a test's annotations put in the report.
const (
	maxAnnotations    = 50
	maxAnnotationText = 500
)

var unsafeInPath = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// outputDirOf is testInfo.outputDir: Playwright's test-results/<file>-<title>-<project>. It is
// a name, not a directory: a screenshot written under it is an artifact of the run.
func outputDirOf(file string, t *testCase) string {
	base := strings.TrimSuffix(path.Base(file), path.Ext(file))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".spec"), ".test")
	parts := []string{base}
	if t != nil {
		parts = append(parts, t.titlePath()...)
	}
	parts = append(parts, "chromium")
	slug := strings.Trim(unsafeInPath.ReplaceAllString(strings.Join(parts, "-"), "-"), "-")
	if len(slug) > 60 {
		slug = slug[:60]
	}
	return "test-results/" + slug
}

// asTestTimeout makes a failure that is an operation running into the test's deadline
// ("locator.click: Test timeout of 20000ms exceeded.\nCall log: …") read as Playwright
// reports it: the test timed out, and the operation's error follows with its call log.
func asTestTimeout(tr *testRun, f *Failure) {
	head := fmt.Sprintf("Test timeout of %dms exceeded.", tr.timeout.Milliseconds())
	if f.Cause != CauseTimeout || strings.HasPrefix(f.Message, "Test timeout") || !strings.Contains(f.Message, ": "+head) {
		return
	}
	f.Message = head + "\n\nError: " + f.Message
}

// resolveURL resolves a page.goto URL against Options.BaseURL, as Playwright does
// (new URL(url, baseURL)); without a base, or when either does not parse, it is the URL as
// given.
func (r *run) resolveURL(target string) string {
	return resolveURL(target, r.opts.BaseURL)
}

// baseURLValue is the baseURL fixture.
func (r *run) baseURLValue() goja.Value {
	if r.opts.BaseURL == "" {
		return goja.Undefined()
	}
	return r.vm.ToValue(r.opts.BaseURL)
}
