package pwscript

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiSite serves /api/ for the request fixture's tests and corpus scripts: a login that hands
// out a token, items behind it, and endpoints that echo, redirect, stall, set cookies and
// answer any status.
func apiSite() http.Handler {
	mux := http.NewServeMux()
	// What the routes below do not answer is the static site's (testdata/site/api/orders.json).
	mux.Handle("/api/", http.FileServer(http.Dir("testdata/site")))
	const token = "tok-4711"
	writeJSON := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("POST /api/login", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ User, Password string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.User == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "user and password are required"})
			return
		}
		if in.Password != "hunter2-secret" {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "wrong password"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"token": token, "user": map[string]string{"name": in.User}})
	})
	mux.HandleFunc("/api/items", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "no token"})
			return
		}
		if r.Method == http.MethodPost {
			writeJSON(w, http.StatusCreated, map[string]any{"id": 3, "name": "created"})
			return
		}
		writeJSON(w, http.StatusOK, []map[string]any{{"id": 1, "name": "apple"}, {"id": 2, "name": "pear"}})
	})
	mux.HandleFunc("/api/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		headers := map[string]string{}
		for k := range r.Header {
			headers[strings.ToLower(k)] = r.Header.Get(k)
		}
		out := map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "headers": headers, "body": string(body)}
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			if err := r.ParseMultipartForm(1 << 20); err == nil {
				fields := map[string]string{}
				for k, v := range r.MultipartForm.Value {
					fields[k] = v[0]
				}
				files := map[string]any{}
				for k, fhs := range r.MultipartForm.File {
					f, _ := fhs[0].Open()
					content, _ := io.ReadAll(f)
					f.Close()
					files[k] = map[string]string{"filename": fhs[0].Filename, "type": fhs[0].Header.Get("Content-Type"), "content": string(content)}
				}
				out["fields"], out["files"] = fields, files
			}
		}
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("/api/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d body", code)
	})
	mux.HandleFunc("/api/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n <= 0 {
			writeJSON(w, http.StatusOK, map[string]string{"arrived": "yes"})
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/api/redirect/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/api/slow", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		writeJSON(w, http.StatusOK, map[string]int{"waited": ms})
	})
	mux.HandleFunc("/api/cookie/set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: r.URL.Query().Get("v"), Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "theme", Value: "dark", Path: "/"})
		writeJSON(w, http.StatusOK, map[string]string{"set": "yes"})
	})
	mux.HandleFunc("/api/cookie/get", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		v := ""
		if err == nil {
			v = c.Value
		}
		writeJSON(w, http.StatusOK, map[string]string{"session": v})
	})
	mux.HandleFunc("/api/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	})
	return mux
}
