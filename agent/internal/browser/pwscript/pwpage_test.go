package pwscript

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// pageSite serves the pages of the page, network, frame and selector tests; other is a
// second server (another origin) for cross-origin frames and route.continue.
func pageSite(t *testing.T) (srv, other *httptest.Server, hits *atomic.Int64) {
	t.Helper()
	hits = &atomic.Int64{}
	otherMux := http.NewServeMux()
	otherMux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Other</title><h1>Other origin</h1><button>Far</button>`)
	})
	other = httptest.NewServer(otherMux)
	t.Cleanup(other.Close)

	mux := http.NewServeMux()
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, strings.ReplaceAll(body, "OTHER", other.URL))
		})
	}
	mux.HandleFunc("/api/data", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Source", "server")
		fmt.Fprintf(w, `{"from":"server","method":%q}`, r.Method)
	})
	mux.HandleFunc("/api/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q,"header":%q}`, r.URL.Path, r.Header.Get("X-Added"))
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/data", http.StatusFound)
	})
	page("/net.html", `<!doctype html><title>Net</title>
<button id="load" onclick="fetch('/api/data', { method: 'POST', body: 'hello' }).then((r) => r.json()).then((j) => { document.querySelector('#out').textContent = j.from })">Load</button>
<button id="log" onclick="console.log('clicked', 42, { a: 1 }); console.warn('careful')">Log</button>
<button id="boom" onclick="setTimeout(() => { throw new Error('kaboom') })">Boom</button>
<button id="ask" onclick="document.querySelector('#answer').textContent = String(confirm('Sure?'))">Ask</button>
<button id="prompt" onclick="document.querySelector('#answer').textContent = String(prompt('Name?', 'x'))">Prompt</button>
<button id="hop" onclick="fetch('/hop').then((r) => r.text()).then((t) => { document.querySelector('#out').textContent = t })">Hop</button>
<button id="missing" onclick="fetch('/api/gone').catch((e) => { document.querySelector('#out').textContent = 'failed' })">Missing</button>
<p id="out"></p><p id="answer"></p>`)
	page("/frames.html", `<!doctype html><title>Frames</title><h1>Top</h1>
<iframe id="same" name="child" src="/child.html" style="position:absolute;left:40px;top:120px;width:400px;height:200px;border:3px solid black"></iframe>
<iframe id="far" name="far" src="OTHER/far.html" style="position:absolute;left:40px;top:360px;width:400px;height:150px"></iframe>`)
	page("/child.html", `<!doctype html><title>Child</title><h2>Inside</h2>
<button onclick="this.textContent = 'Clicked inside'">Inner</button><input placeholder="Inner field">
<iframe name="grandchild" src="/grandchild.html" style="width:200px;height:80px"></iframe>`)
	page("/grandchild.html", `<!doctype html><title>Grandchild</title><p>Deep text</p>`)
	page("/selectors.html", `<!doctype html><title>Selectors</title>
<style>.box { display: inline-block; width: 80px; height: 30px; margin: 4px }</style>
<article><h2>Plans</h2>
<div class="plan"><span>Basic</span><button>Buy</button></div>
<div class="plan"><span>Pro  plan</span><button>Buy</button></div>
<div class="plan" style="display:none"><span>Hidden</span><button>Buy</button></div>
</article>
<ul><li>Apple pie</li><li>apple</li><li>Banana</li></ul>
<div id="grid"><span class="box" id="a">A</span><span class="box" id="b">B</span><br><span class="box" id="c">C</span></div>
<button disabled>Off</button><button aria-pressed="true">Bold</button>
<label>Email <input id="email"></label>`)
	page("/page.html", `<!doctype html><title>Page</title>
<button id="b1" onclick="this.dataset.n = +(this.dataset.n || 0) + 1">One</button>
<input id="name" value="">
<input id="file" type="file" multiple onchange="document.querySelector('#files').textContent = [...this.files].map((f) => f.name + ':' + f.size + ':' + f.type).join(',')">
<p id="files"></p>
<p id="sel">Select this text</p>
<div id="src" draggable="true" style="width:50px;height:50px;background:red" ondragstart="event.dataTransfer.setData('text', 'x')">drag</div>
<div id="dst" style="width:80px;height:80px;background:blue" ondragover="event.preventDefault()" ondrop="event.preventDefault(); this.textContent = 'dropped'">drop</div>
<div id="pad" style="width:200px;height:100px;background:#eee" onmousedown="this.dataset.down = event.clientX + ',' + event.clientY" onmouseup="this.dataset.up = 'yes'" ondblclick="this.dataset.dbl = 'yes'"></div>
<ul><li>One</li><li>Two</li></ul>`)
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, other, hits
}

// runPass runs a script that must pass, with BASE_URL and OTHER_URL set.
func runPass(t *testing.T, srv, other *httptest.Server, src string) *Report {
	t.Helper()
	rep := runScript(t, "page.spec.ts", "import { test, expect } from '@playwright/test';\n"+src, Options{
		Env: map[string]string{"BASE_URL": srv.URL, "OTHER_URL": other.URL},
	})
	if !rep.Passed {
		t.Fatalf("the script failed:\n%s", describeReport(rep))
	}
	return rep
}

// runFail runs a script that must fail with a message containing want.
func runFail(t *testing.T, srv, other *httptest.Server, src, want string) *Report {
	t.Helper()
	rep := runScript(t, "page.spec.ts", "import { test, expect } from '@playwright/test';\n"+src, Options{
		Env: map[string]string{"BASE_URL": srv.URL, "OTHER_URL": other.URL}, Timeout: 8e9,
	})
	if rep.Passed || rep.Failure == nil {
		t.Fatalf("the script passed, want a failure with %q:\n%s", want, describeReport(rep))
	}
	if !strings.Contains(rep.Failure.Message, want) {
		t.Fatalf("failure %q lacks %q", rep.Failure.Message, want)
	}
	return rep
}
