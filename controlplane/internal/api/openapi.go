package api

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"sync"

	"github.com/gin-gonic/gin"
)

// openAPIFiles is the OpenAPI 3.1 document in parts: 00-base.json holds the document's frame and
// the shared components; every other file adds the paths (and components) of one area, so that
// each area is documented beside the others without one file everybody edits. The parts are
// written by hand from api.md and the supplement; TestOpenAPICoversEveryRoute fails when a
// route is missing.
//
//go:embed openapi/*.json
var openAPIFiles embed.FS

// openAPIDocument is the merged document, built once.
var openAPIDocument = sync.OnceValues(func() ([]byte, error) { return mergeOpenAPI(openAPIFiles) })

// mergeOpenAPI merges the parts in name order. A part may add paths, tags and components; one
// that redefines an existing path or component is an error.
func mergeOpenAPI(files fs.FS) ([]byte, error) {
	names, err := fs.Glob(files, "openapi/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var doc map[string]any
	for _, name := range names {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, err
		}
		var part map[string]any
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("openapi part %s: %w", name, err)
		}
		if doc == nil {
			doc = part
			continue
		}
		if err := mergeSection(doc, part, "paths", name); err != nil {
			return nil, err
		}
		if comps, ok := part["components"].(map[string]any); ok {
			dst, _ := doc["components"].(map[string]any)
			for kind := range comps {
				if err := mergeSection(dst, comps, kind, name); err != nil {
					return nil, err
				}
			}
		}
		if tags, ok := part["tags"].([]any); ok {
			existing, _ := doc["tags"].([]any)
			doc["tags"] = append(existing, tags...)
		}
	}
	return json.Marshal(doc)
}

// mergeSection copies src[key]'s entries into dst[key], refusing duplicates.
func mergeSection(dst, src map[string]any, key, part string) error {
	add, ok := src[key].(map[string]any)
	if !ok {
		return nil
	}
	into, ok := dst[key].(map[string]any)
	if !ok {
		into = map[string]any{}
		dst[key] = into
	}
	for k, v := range add {
		if _, dup := into[k]; dup {
			return fmt.Errorf("openapi part %s: %s %q is already defined", part, key, k)
		}
		into[k] = v
	}
	return nil
}

// serveOpenAPI serves the OpenAPI document at GET /v1/openapi.json, without authentication.
func serveOpenAPI(c *gin.Context) {
	doc, err := openAPIDocument()
	if err != nil {
		fail(c, err)
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json; charset=utf-8", doc)
}
