package api

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"
)

// openAPIFiles is the OpenAPI 3.1 document in parts, one YAML file per resource:
// openapi.yaml is the root (info, servers, security, tags and the components every resource
// shares: the envelopes, the failure responses, pagination), and each other file adds the paths
// and components of one resource. The tests check the document against the route table
// (openapi_test.go) and validate every request and response of the API tests against it with
// kin-openapi (openapi_validate_test.go).
//
//go:embed openapi/*.yaml
var openAPIFiles embed.FS

// openAPIRoot is the part every other part is merged into.
const openAPIRoot = "openapi/openapi.yaml"

// openAPIDocument is the assembled document as JSON, built once (New fails when it cannot be).
var openAPIDocument = sync.OnceValues(func() ([]byte, error) { return assembleOpenAPI(openAPIFiles) })

// openAPIYAML is the same document as YAML, for the tools that prefer it.
var openAPIYAML = sync.OnceValues(func() ([]byte, error) {
	doc, err := openAPIDocument()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	return yaml.Marshal(v)
})

// assembleOpenAPI merges the parts into the root in name order and encodes the result as JSON.
// A part may add paths, tags and components; one that redefines a path or a component, or that
// sets anything else, is an error.
func assembleOpenAPI(files fs.FS) ([]byte, error) {
	doc, err := readOpenAPIPart(files, openAPIRoot)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(files, path.Join(path.Dir(openAPIRoot), "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		if name == openAPIRoot {
			continue
		}
		part, err := readOpenAPIPart(files, name)
		if err != nil {
			return nil, err
		}
		if err := mergeOpenAPIPart(doc, part, name); err != nil {
			return nil, err
		}
	}
	return json.Marshal(doc)
}

// readOpenAPIPart decodes one YAML part.
func readOpenAPIPart(files fs.FS, name string) (map[string]any, error) {
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, err
	}
	var part map[string]any
	if err := yaml.Unmarshal(b, &part); err != nil {
		return nil, fmt.Errorf("openapi part %s: %w", name, err)
	}
	return part, nil
}

// mergeOpenAPIPart adds part's paths, components and tags to doc.
func mergeOpenAPIPart(doc, part map[string]any, name string) error {
	for key, value := range part {
		switch key {
		case "paths":
			if err := mergeSection(doc, part, key, name); err != nil {
				return err
			}
		case "components":
			comps, ok := value.(map[string]any)
			if !ok {
				return fmt.Errorf("openapi part %s: components is not a mapping", name)
			}
			dst, _ := doc["components"].(map[string]any)
			if dst == nil {
				dst = map[string]any{}
				doc["components"] = dst
			}
			for kind := range comps {
				if err := mergeSection(dst, comps, kind, name); err != nil {
					return err
				}
			}
		case "tags":
			tags, ok := value.([]any)
			if !ok {
				return fmt.Errorf("openapi part %s: tags is not a list", name)
			}
			existing, _ := doc["tags"].([]any)
			doc["tags"] = append(existing, tags...)
		default:
			return fmt.Errorf("openapi part %s: only the root may set %q", name, key)
		}
	}
	return nil
}

// mergeSection copies src[key]'s entries into dst[key], refusing duplicates.
func mergeSection(dst, src map[string]any, key, part string) error {
	add, ok := src[key].(map[string]any)
	if !ok {
		return fmt.Errorf("openapi part %s: %s is not a mapping", part, key)
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
func serveOpenAPI(c *gin.Context) (int, any, error) {
	return serveDocument(c, openAPIDocument, "application/json; charset=utf-8")
}

// serveOpenAPIYAML serves the OpenAPI document at GET /v1/openapi.yaml, without authentication.
func serveOpenAPIYAML(c *gin.Context) (int, any, error) {
	return serveDocument(c, openAPIYAML, "application/yaml; charset=utf-8")
}

func serveDocument(c *gin.Context, doc func() ([]byte, error), contentType string) (int, any, error) {
	b, err := doc()
	if err != nil {
		return 0, nil, err
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, contentType, b)
	return selfWritten, nil, nil
}
