package httpserve

import (
	"net/http"
	"net/http/pprof"
)

// Profiling adds Go's profiler (net/http/pprof) under /debug/pprof/ to mux. The binaries add
// it to their private metrics listener, and only when asked (VANTAGE_PPROF): a profile shows
// the program's internals and costs CPU while it is taken.
func Profiling(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
