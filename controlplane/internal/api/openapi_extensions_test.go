package api

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// extensionsPage is the page that lists what the API offers beyond the public API contract.
const extensionsPage = "../../../docs/api-extensions.md"

// TestOpenAPIExtensionsDocumented compares the places the OpenAPI document marks with
// x-vantage-extension with the names listed in the first column of the tables of
// docs/api-extensions.md (its section "In the OpenAPI document"): each must be in both.
func TestOpenAPIExtensionsDocumented(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(mustOpenAPI(t), &doc); err != nil {
		t.Fatal(err)
	}
	marked, err := openAPIExtensions(doc)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(extensionsPage)
	if err != nil {
		t.Fatal(err)
	}
	listed := pageExtensions(string(page))
	if len(marked) == 0 || len(listed) == 0 {
		t.Fatalf("found %d marked and %d listed extensions; the comparison would prove nothing", len(marked), len(listed))
	}
	var unlisted, unmarked []string
	for name := range marked {
		if !listed[name] {
			unlisted = append(unlisted, name)
		}
	}
	for name := range listed {
		if _, ok := marked[name]; !ok {
			unmarked = append(unmarked, name)
		}
	}
	sort.Strings(unlisted)
	sort.Strings(unmarked)
	if len(unlisted) > 0 {
		t.Errorf("marked x-vantage-extension in the OpenAPI document but not listed in %s:\n  %s",
			extensionsPage, strings.Join(unlisted, "\n  "))
	}
	if len(unmarked) > 0 {
		t.Errorf("listed in %s but not marked x-vantage-extension in the OpenAPI document:\n  %s",
			extensionsPage, strings.Join(unmarked, "\n  "))
	}
}

// openAPIExtensions names every place of the document marked x-vantage-extension, with the
// mark's text (the reason): "GET /path" for an operation, "GET /path 409" for one of its
// responses, "GET /path ?name" for an inline parameter, and the component's name for a
// component ("Schema", "Schema.property" for a property of a schema or of one of its allOf
// members). A mark anywhere else, or one without a reason, is an error.
func openAPIExtensions(doc map[string]any) (map[string]string, error) {
	out := map[string]string{}
	add := func(name string, v any) error {
		why, _ := v.(string)
		if strings.TrimSpace(why) == "" {
			return fmt.Errorf("x-vantage-extension of %s must say why, as a string", name)
		}
		out[name] = why
		return nil
	}
	var errs []string
	var walk func(v any, pointer string, name func(key string) string)
	walk = func(v any, pointer string, name func(key string) string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "x-vantage-extension" {
					n := name("")
					if n == "" {
						errs = append(errs, "x-vantage-extension at "+pointer+" is at no place a name can be given to")
					} else if err := add(n, e); err != nil {
						errs = append(errs, err.Error())
					}
					continue
				}
				walk(e, pointer+"/"+k, func(string) string { return "" })
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", pointer, i), func(string) string { return "" })
			}
		}
	}
	fixed := func(n string) func(string) string { return func(string) string { return n } }
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }

	for path, item := range obj(doc["paths"]) {
		for method, op := range obj(item) {
			if method == "parameters" {
				for i, p := range op.([]any) {
					walk(p, fmt.Sprintf("/paths/%s/parameters/%d", path, i), fixed(path+" ?"+fmt.Sprint(obj(p)["name"])))
				}
				continue
			}
			opName := strings.ToUpper(method) + " " + path
			for k, e := range obj(op) {
				at := fmt.Sprintf("/paths/%s/%s/%s", path, method, k)
				switch k {
				case "x-vantage-extension":
					if err := add(opName, e); err != nil {
						errs = append(errs, err.Error())
					}
				case "responses":
					for status, r := range obj(e) {
						walk(r, at+"/"+status, fixed(opName+" "+status))
					}
				case "parameters":
					for i, p := range e.([]any) {
						walk(p, fmt.Sprintf("%s/%d", at, i), fixed(opName+" ?"+fmt.Sprint(obj(p)["name"])))
					}
				default:
					walk(e, at, fixed(""))
				}
			}
		}
	}
	for kind, comps := range obj(obj(doc["components"])) {
		for compName, c := range obj(comps) {
			at := "/components/" + kind + "/" + compName
			if kind != "schemas" {
				walk(c, at, fixed(compName))
				continue
			}
			schema := obj(c)
			members := []map[string]any{schema}
			if all, ok := schema["allOf"].([]any); ok {
				for _, m := range all {
					members = append(members, obj(m))
				}
			}
			for k, e := range schema {
				switch k {
				case "x-vantage-extension":
					if err := add(compName, e); err != nil {
						errs = append(errs, err.Error())
					}
				case "properties", "allOf":
				default:
					walk(e, at+"/"+k, fixed(""))
				}
			}
			for i, m := range members {
				for prop, p := range obj(m["properties"]) {
					walk(p, at+"/properties/"+prop, fixed(compName+"."+prop))
				}
				if i == 0 {
					continue
				}
				for k, e := range m { // an inline allOf member: its mark names the schema
					if k != "properties" {
						walk(map[string]any{k: e}, fmt.Sprintf("%s/allOf/%d", at, i-1), fixed(compName))
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// pageIdentifier is a name in backquotes.
var pageIdentifier = regexp.MustCompile("`([^`]+)`")

// pageExtensions reads the names in the first column of the tables of the page's section
// "## In the OpenAPI document" (up to the next "## " heading).
func pageExtensions(page string) map[string]bool {
	names := map[string]bool{}
	in := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == "In the OpenAPI document"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range pageIdentifier.FindAllStringSubmatch(cells[1], -1) {
			names[m[1]] = true
		}
	}
	return names
}
