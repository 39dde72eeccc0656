package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// errorItem is one entry of errors[] (and of messages[] on success).
type errorItem struct {
	Code    int     `json:"code"`
	Message string  `json:"message"`
	Type    *string `json:"type"`
}

// envelope is the response shape of every /v1 route (api/openapi/openapi.yaml).
type envelope struct {
	Success    bool        `json:"success"`
	Result     any         `json:"result"`
	Errors     []errorItem `json:"errors"`
	Messages   []errorItem `json:"messages"`
	ResultInfo *resultInfo `json:"result_info,omitempty"`
}

// resultInfo is list metadata: count is the items on this page.
type resultInfo struct {
	Page       int64 `json:"page"`
	PerPage    int64 `json:"per_page"`
	Count      int   `json:"count"`
	TotalCount int64 `json:"total_count"`
}

// handlerFn is the shape of every API handler: the status and result of a success, or the
// error to answer instead. Only wrap renders them, so no handler can answer twice or go on
// after a failure. A handler that wrote its own answer (a file, a CSV) returns selfWritten.
type handlerFn func(c *gin.Context) (status int, result any, err error)

// wrap makes h a gin handler that renders what h returns: the failure envelope for an error
// (fail), the list envelope for a page (listed), the success envelope for anything else.
func wrap(h handlerFn) gin.HandlerFunc {
	return func(c *gin.Context) {
		status, result, err := h(c)
		if err != nil {
			fail(c, err)
			return
		}
		if status == selfWritten {
			return
		}
		env := envelope{Success: true, Result: result, Errors: []errorItem{}, Messages: []errorItem{}}
		if l, isPage := result.(listPage); isPage {
			env.Result, env.ResultInfo = l.items, &l.info
		}
		c.JSON(status, env)
	}
}

// selfWritten is the status a handler returns once it wrote its own answer.
const selfWritten = 0

// listPage is a page of a list, which wrap renders with its result_info.
type listPage struct {
	items any // a non-nil slice: an empty page is [], never null
	info  resultInfo
}

// listed answers a page of items, p and total describing it, or err.
func listed[T any](items []T, p page, total int64, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	if items == nil {
		items = []T{}
	}
	return http.StatusOK, listPage{items: items, info: resultInfo{Page: p.Page, PerPage: p.PerPage, Count: len(items), TotalCount: total}}, nil
}

// done answers v with 200, or err.
func done(v any, err error) (int, any, error) { return reply(http.StatusOK, v, err) }

// created answers v with 201, or err.
func created(v any, err error) (int, any, error) { return reply(http.StatusCreated, v, err) }

func reply(status int, v any, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return status, v, nil
}

// rendered answers render(v) with status, or err; render never sees the zero value of a
// failed call.
func rendered[T, J any](status int, render func(T) J, v T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return status, render(v), nil
}

// removed is the answer of every delete, {id}, or err.
func removed(id string, err error) (int, any, error) { return done(gin.H{"id": id}, err) }

// mapped renders every item with render; the result is never nil.
func mapped[T, J any](items []T, render func(T) J) []J {
	out := make([]J, len(items))
	for i, v := range items {
		out[i] = render(v)
	}
	return out
}

// apiError is an error with its HTTP rendering decided.
type apiError struct {
	Status  int
	Code    int // errors[].code; the status unless the contract pins another number
	Type    string
	Message string
	Items   []errorItem // several errors at once (validation); Message is then unused
}

func (e *apiError) Error() string { return e.Message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "validation_error", Message: fmt.Sprintf(format, args...)}
}

func notFound(resource string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "not_found", Message: resource + " not found"}
}

func forbidden(msg string) *apiError {
	return &apiError{Status: http.StatusForbidden, Type: "forbidden", Message: msg}
}

// ctxResource is the gin context key naming the resource a route serves, for 404 messages.
const ctxResource = "vantage.resource"

// fail renders err as a failure envelope. It is the one place where errors become HTTP.
func fail(c *gin.Context, err error) {
	e := toAPIError(c, err)
	items := e.Items
	if len(items) == 0 {
		code := e.Code
		if code == 0 {
			code = e.Status
		}
		items = []errorItem{{Code: code, Message: e.Message, Type: strPtr(e.Type)}}
	}
	if e.Status >= 500 {
		logger(c).ErrorContext(c.Request.Context(), "request failed", "err", err, "status", e.Status)
	}
	c.AbortWithStatusJSON(e.Status, envelope{Success: false, Result: nil, Errors: items, Messages: []errorItem{}})
}

func toAPIError(c *gin.Context, err error) *apiError {
	var ae *apiError
	var fe fieldErrors
	var ce *store.ConflictError
	var ve *store.ValidationError
	var pe *statuspage.PlanLimitError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &fe):
		items := make([]errorItem, len(fe))
		for i, f := range fe {
			items[i] = errorItem{Code: http.StatusBadRequest, Message: f.Error(), Type: strPtr("validation_error")}
		}
		return &apiError{Status: http.StatusBadRequest, Items: items, Message: fe.Error()}
	case errors.As(err, &ve):
		return badRequest("%s", ve.Error())
	case errors.As(err, &pe):
		return &apiError{Status: http.StatusForbidden, Type: pe.Type, Message: pe.Message}
	case errors.As(err, &ce):
		return &apiError{Status: http.StatusConflict, Code: ce.Code, Type: ce.Type, Message: ce.Message}
	case errors.Is(err, store.ErrNotFound):
		res, _ := c.Get(ctxResource)
		name, _ := res.(string)
		if name == "" {
			name = "resource"
		}
		return notFound(name)
	case errors.Is(err, store.ErrConflict):
		return &apiError{Status: http.StatusConflict, Type: "conflict", Message: "the change conflicts with an existing resource"}
	case errors.Is(err, store.ErrUnavailable):
		return &apiError{Status: http.StatusServiceUnavailable, Type: "storage_unavailable", Message: "storage is unavailable, try again"}
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: http.StatusServiceUnavailable, Type: "request_timeout", Message: "the request took longer than its deadline, try again"}
	case errors.Is(err, auth.ErrCSRF):
		return forbidden(err.Error())
	case errors.Is(err, auth.ErrNoSession):
		return &apiError{Status: http.StatusUnauthorized, Type: "unauthorized", Message: err.Error()}
	case errors.Is(err, auth.ErrInvalidToken):
		return &apiError{Status: http.StatusUnauthorized, Type: "unauthorized", Message: err.Error()}
	}
	return &apiError{Status: http.StatusInternalServerError, Type: "internal_error", Message: "internal error"}
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

const ctxLogger = "vantage.logger"

func logger(c *gin.Context) *slog.Logger {
	if l, ok := c.Get(ctxLogger); ok {
		return l.(*slog.Logger)
	}
	return slog.Default()
}
