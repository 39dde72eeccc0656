// Package render renders the Vantage Helm chart (deploy/kubernetes/vantage) with Helm's own
// template engine and value coalescing — what `helm template` prints — without a helm binary
// or a cluster. Tests and cmd/vantage-render use it.
package render

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// Options says what to render.
type Options struct {
	// ChartDir is the chart's directory. Default: deploy/kubernetes/vantage of this checkout.
	ChartDir string
	// Release and Namespace name the release. Defaults "vantage" and "vantage".
	Release   string
	Namespace string
	// ValueFiles are read in order over the chart's values.yaml, then Values over them; later
	// sources win, maps merge key by key (as helm -f ... --set ...).
	ValueFiles []string
	Values     map[string]any
}

// Object is one rendered Kubernetes object.
type Object struct {
	Kind, Name string
	Source     string         // template file it came from
	YAML       string         // the manifest as rendered
	Map        map[string]any // the manifest decoded
}

// Render renders the chart and returns its objects in Helm's install order.
func Render(o Options) ([]Object, error) {
	if o.ChartDir == "" {
		o.ChartDir = ChartDir()
	}
	if o.Release == "" {
		o.Release = "vantage"
	}
	if o.Namespace == "" {
		o.Namespace = "vantage"
	}
	chart, err := loader.Load(o.ChartDir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", o.ChartDir, err)
	}
	vals := map[string]any{}
	for _, f := range o.ValueFiles {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return nil, fmt.Errorf("values file %s: %w", f, err)
		}
		vals = Merge(vals, v)
	}
	vals = Merge(vals, o.Values)
	top, err := chartutil.ToRenderValues(chart, vals,
		chartutil.ReleaseOptions{Name: o.Release, Namespace: o.Namespace, IsInstall: true, Revision: 1}, nil)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	files, err := engine.Render(chart, top)
	if err != nil {
		return nil, err
	}
	for name := range files { // NOTES.txt and helpers are not manifests
		if !strings.HasSuffix(name, ".yaml") {
			delete(files, name)
		}
	}
	_, manifests, err := releaseutil.SortManifests(files, chartutil.DefaultVersionSet, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("sort manifests: %w", err)
	}
	var objs []Object
	for _, m := range manifests {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(m.Content), &doc); err != nil {
			return nil, fmt.Errorf("%s: rendered YAML does not parse: %w\n%s", m.Name, err, m.Content)
		}
		if len(doc) == 0 {
			continue
		}
		if m.Head == nil || m.Head.Kind == "" || m.Head.Metadata == nil || m.Head.Metadata.Name == "" {
			return nil, fmt.Errorf("%s: a manifest without kind or metadata.name:\n%s", m.Name, m.Content)
		}
		objs = append(objs, Object{Kind: m.Head.Kind, Name: m.Head.Metadata.Name, Source: m.Name, YAML: m.Content, Map: doc})
	}
	return objs, nil
}

// Merge returns base with over laid on it: maps merge key by key, anything else in over
// replaces what base has. Neither argument is changed.
func Merge(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = Merge(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// ChartDir is deploy/kubernetes/vantage of the checkout this package was built from, or of
// the working directory's checkout when that file is not there (a moved binary).
func ChartDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "..", "..", "kubernetes", "vantage")
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
			return filepath.Clean(dir)
		}
	}
	return filepath.Join("deploy", "kubernetes", "vantage")
}

// YAML joins objects into one multi-document stream, each with its source, as helm template
// prints it.
func YAML(objs []Object) string {
	var b strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", o.Source, strings.TrimSpace(o.YAML))
	}
	return b.String()
}
