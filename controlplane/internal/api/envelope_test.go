package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestWrapRendersWhatHandlersReturn pins the one place where handler results become HTTP: the
// API tests reach it only through the handlers, which never return some of these values.
func TestWrapRendersWhatHandlersReturn(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.ReleaseMode)
	cases := []struct {
		name       string
		h          handlerFn
		wantStatus int
		wantBody   string
	}{
		{"created", func(*gin.Context) (int, any, error) { return created(gin.H{"id": "a"}, nil) }, http.StatusCreated,
			`{"success":true,"result":{"id":"a"},"errors":[],"messages":[]}`},
		{"null result", func(*gin.Context) (int, any, error) { return done(nil, nil) }, http.StatusOK,
			`{"success":true,"result":null,"errors":[],"messages":[]}`},
		{"nil list is an empty page", func(*gin.Context) (int, any, error) {
			return listed([]string(nil), page{Page: 2, PerPage: 5}, 5, nil)
		}, http.StatusOK,
			`{"success":true,"result":[],"errors":[],"messages":[],"result_info":{"page":2,"per_page":5,"count":0,"total_count":5}}`},
		{"list of rendered items", func(*gin.Context) (int, any, error) {
			return listed(mapped([]int{1, 2}, func(i int) int { return i * 10 }), page{Page: 1, PerPage: 2}, 2, nil)
		}, http.StatusOK,
			`{"success":true,"result":[10,20],"errors":[],"messages":[],"result_info":{"page":1,"per_page":2,"count":2,"total_count":2}}`},
		{"error wins over a page", func(*gin.Context) (int, any, error) {
			return listed([]string{"x"}, page{Page: 1, PerPage: 1}, 1, store.ErrNotFound)
		}, http.StatusNotFound,
			`{"success":false,"result":null,"errors":[{"code":404,"message":"widget not found","type":"not_found"}],"messages":[]}`},
		{"render skipped on error", func(*gin.Context) (int, any, error) {
			return rendered(http.StatusOK, func(*int) int { panic("rendered a failed call") }, nil, store.ErrNotFound)
		}, http.StatusNotFound,
			`{"success":false,"result":null,"errors":[{"code":404,"message":"widget not found","type":"not_found"}],"messages":[]}`},
		{"removed", func(*gin.Context) (int, any, error) { return removed("b", nil) }, http.StatusOK,
			`{"success":true,"result":{"id":"b"},"errors":[],"messages":[]}`},
		{"self written", func(c *gin.Context) (int, any, error) {
			c.Data(http.StatusTeapot, "text/plain", []byte("own"))
			return selfWritten, nil, nil
		}, http.StatusTeapot, "own"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gin.New()
			r.GET("/", resource("widget"), wrap(tc.h))
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
			if w.Code != tc.wantStatus || w.Body.String() != tc.wantBody {
				t.Fatalf("got %d %s\nwant %d %s", w.Code, w.Body.String(), tc.wantStatus, tc.wantBody)
			}
		})
	}
}
