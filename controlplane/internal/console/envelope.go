package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The API's response envelope (api/openapi/openapi.yaml), for the session routes' JSON.
type envelope struct {
	Success  bool        `json:"success"`
	Result   any         `json:"result"`
	Errors   []errorItem `json:"errors"`
	Messages []errorItem `json:"messages"`
}

type errorItem struct {
	Code    int     `json:"code"`
	Message string  `json:"message"`
	Type    *string `json:"type"`
}

// httpError is an error with its answer decided.
type httpError struct {
	Status  int
	Type    string
	Message string
}

func (e *httpError) Error() string { return e.Message }

// fieldError is a 400 naming the field at fault.
func fieldError(field, msg string) *httpError {
	return &httpError{Status: http.StatusBadRequest, Type: "validation_error", Message: field + ": " + msg}
}

// fail renders err as the failure envelope; it is the one place where the session routes'
// errors become HTTP. Unexpected errors are logged (never with a secret: none reaches an error).
func (s *Sessions) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := s.toHTTPError(r, err)
	t := e.Type
	writeJSON(w, e.Status, envelope{Success: false, Result: nil, Messages: []errorItem{},
		Errors: []errorItem{{Code: e.Status, Message: e.Message, Type: &t}}})
}

func (s *Sessions) toHTTPError(r *http.Request, err error) *httpError {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he
	case errors.Is(err, auth.ErrInvalidToken), errors.Is(err, auth.ErrNoSession):
		msg := "not signed in, or the session or its token has expired or been revoked"
		if errors.Is(err, auth.ErrInvalidToken) && r.URL.Path == "/console/session" && r.Method == http.MethodPost {
			msg = "token: " + auth.ErrInvalidToken.Error()
		}
		return &httpError{Status: http.StatusUnauthorized, Type: "unauthorized", Message: msg}
	case errors.Is(err, auth.ErrCSRF):
		return &httpError{Status: http.StatusForbidden, Type: "forbidden", Message: err.Error()}
	case errors.Is(err, auth.ErrNoOrganization):
		return &httpError{Status: http.StatusForbidden, Type: "forbidden", Message: err.Error()}
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return &httpError{Status: http.StatusServiceUnavailable, Type: "storage_unavailable", Message: "storage is unavailable, try again"}
	}
	s.log.ErrorContext(r.Context(), "console session request failed", "err", err, "method", r.Method, "path", r.URL.Path)
	return &httpError{Status: http.StatusInternalServerError, Type: "internal_error", Message: "internal error"}
}

// writeJSON writes v, never cached (it names the caller).
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
