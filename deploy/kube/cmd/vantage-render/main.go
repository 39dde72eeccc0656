// Command vantage-render prints the Vantage chart's manifests, as `helm template` would, using
// Helm's engine as a library (no helm binary needed):
//
//	go run ./cmd/vantage-render -f my-values.yaml --set controlPlane.replicas=3 > vantage.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/strvals"

	"github.com/vantagehq/vantage/deploy/kube/render"
)

type list []string

func (l *list) String() string     { return fmt.Sprint(*l) }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var files, sets list
	o := render.Options{Values: map[string]any{}}
	flag.StringVar(&o.ChartDir, "chart", render.ChartDir(), "chart directory")
	flag.StringVar(&o.Release, "release", "vantage", "release name")
	flag.StringVar(&o.Namespace, "namespace", "vantage", "namespace")
	flag.Var(&files, "f", "values file (repeatable; later ones win)")
	flag.Var(&sets, "set", "key=value over the values files (repeatable), as helm --set")
	flag.Parse()
	o.ValueFiles = files
	for _, s := range sets {
		if err := strvals.ParseInto(s, o.Values); err != nil {
			fmt.Fprintf(os.Stderr, "vantage-render: --set %s: %v\n", s, err)
			os.Exit(2)
		}
	}
	objs, err := render.Render(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vantage-render:", err)
		os.Exit(1)
	}
	fmt.Print(render.YAML(objs))
}
