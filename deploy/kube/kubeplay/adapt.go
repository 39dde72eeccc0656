// Package kubeplay runs rendered Kubernetes manifests on one machine with `podman kube play`,
// adapting what podman does not do the way a cluster does (deploy/README.md "Trying the
// manifests with podman" lists the differences):
//
//   - Services: podman has none. Every pod joins one podman network whose DNS (aardvark) also
//     answers the names of the Services that select it — short and fully qualified — as
//     network aliases, so a Service name resolves to the addresses of all its pods (like a
//     headless Service; a client picks one, there is no virtual IP and no balancing).
//   - StatefulSets: podman plays Pods and Deployments only. Each replica becomes a Pod named
//     <set>-<ordinal>, answering to <pod>.<serviceName>.<namespace>.svc.cluster.local, with its
//     volumeClaimTemplates as PersistentVolumeClaims <template>-<pod> (podman named volumes),
//     and the $(VAR) references in its command and args expanded as the kubelet would
//     (podman passes them on literally).
//   - Secrets: podman plays no Secret objects; env secretKeyRef/secretRef read podman secrets
//     whose content is the JSON map key -> base64 value, which Up creates.
//   - Probes: podman turns an httpGet probe into a `curl` health check run through a shell
//     (neither is in the images) and runs health checks only from systemd timers; probes are
//     dropped and the caller polls /readyz itself. The images' own HEALTHCHECK (the binaries'
//     healthcheck subcommand) stays and can be run with `podman healthcheck run`.
//   - Ports: podman 4 publishes every containerPort on the host, so replicas would fight
//     over host ports; ports are dropped after Service targetPorts are resolved against them
//     (pods are reached at their network addresses, as in a cluster).
//   - NetworkPolicies, PodDisruptionBudgets and autoscalers have no podman counterpart: they
//     are listed in Plan.Skipped and not applied.
package kubeplay

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/vantagehq/vantage/deploy/kube/render"
)

// Unit is what one `podman kube play` runs: a Deployment, or one replica of a StatefulSet,
// with the DNS aliases that stand for its Services.
type Unit struct {
	Kind, Name string
	Aliases    []string
	YAML       string
	// Containers are the podman container names of its pods' containers, by pod:
	// kube play names them <pod>-<container>.
	Containers map[string][]string
}

// Plan is the rendered manifests as podman runs them.
type Plan struct {
	Secrets map[string]map[string][]byte
	Units   []Unit
	Volumes []string // named volumes the units create (PVCs)
	Skipped []string // "Kind/name: why"
}

// clusterDomain is the DNS domain the aliases use for fully-qualified Service names.
const clusterDomain = "cluster.local"

// skipped are the kinds podman has no counterpart for, and why.
var skipped = map[string]string{
	"NetworkPolicy":           "podman networks have no policies",
	"PodDisruptionBudget":     "nothing evicts pods under podman",
	"ScaledObject":            "no autoscaler under podman",
	"HorizontalPodAutoscaler": "no autoscaler under podman",
	"Service":                 "emulated by DNS aliases on the podman network",
}

// Adapt turns rendered objects of namespace into a Plan.
func Adapt(objs []render.Object, namespace string) (*Plan, error) {
	p := &Plan{Secrets: map[string]map[string][]byte{}}
	var services, configMaps []map[string]any
	for _, o := range objs {
		switch o.Kind {
		case "Secret":
			data, err := secretData(o.Map)
			if err != nil {
				return nil, fmt.Errorf("secret %s: %w", o.Name, err)
			}
			p.Secrets[o.Name] = data
		case "Service":
			services = append(services, o.Map)
		case "ConfigMap":
			configMaps = append(configMaps, o.Map)
		}
		if why, ok := skipped[o.Kind]; ok {
			p.Skipped = append(p.Skipped, o.Kind+"/"+o.Name+": "+why)
		}
	}
	for _, o := range objs {
		var units []Unit
		var err error
		switch o.Kind {
		case "Deployment":
			units, err = p.deployment(o, services, namespace)
		case "StatefulSet":
			units, err = p.statefulSet(o, services, namespace)
		case "Secret", "ConfigMap", "PersistentVolumeClaim":
		default:
			if _, ok := skipped[o.Kind]; !ok {
				return nil, fmt.Errorf("%s/%s: podman kube play cannot run this kind and nothing adapts it", o.Kind, o.Name)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", o.Kind, o.Name, err)
		}
		for _, u := range units {
			var b strings.Builder
			for _, d := range configMaps {
				y, err := yaml.Marshal(d)
				if err != nil {
					return nil, err
				}
				b.WriteString("---\n")
				b.Write(y)
			}
			u.YAML = b.String() + u.YAML
			p.Units = append(p.Units, u)
		}
	}
	return p, nil
}

// deployment plays a Deployment as it is, without probes.
func (p *Plan) deployment(o render.Object, services []map[string]any, namespace string) ([]Unit, error) {
	obj := deepCopy(o.Map)
	tpl := dig(obj, "spec", "template")
	spec := dig(tpl, "spec")
	ports := containerPorts(spec)
	dropProbesAndPorts(spec)
	if cmdArgsReference(spec) {
		return nil, fmt.Errorf("$(VAR) in command or args: podman does not expand them and a Deployment's pods cannot be expanded one by one here")
	}
	labels := stringMap(dig(tpl, "metadata", "labels"))
	aliases, err := serviceAliases(services, labels, ports, namespace)
	if err != nil {
		return nil, err
	}
	replicas := 1
	if r, ok := dig(obj, "spec")["replicas"].(float64); ok {
		replicas = int(r)
	}
	containers := map[string][]string{}
	for i := range replicas {
		pod := fmt.Sprintf("%s-pod-%d", o.Name, i)
		containers[pod] = containerNames(pod, spec)
	}
	y, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return []Unit{{Kind: o.Kind, Name: o.Name, Aliases: aliases, YAML: "---\n" + string(y), Containers: containers}}, nil
}

// statefulSet plays each replica as a Pod with its claims.
func (p *Plan) statefulSet(o render.Object, services []map[string]any, namespace string) ([]Unit, error) {
	spec := dig(o.Map, "spec")
	replicas := 1
	if r, ok := spec["replicas"].(float64); ok {
		replicas = int(r)
	}
	serviceName, _ := spec["serviceName"].(string)
	var units []Unit
	for i := range replicas {
		name := fmt.Sprintf("%s-%d", o.Name, i)
		tpl := deepCopy(dig(spec, "template"))
		podSpec := dig(tpl, "spec")
		ports := containerPorts(podSpec)
		dropProbesAndPorts(podSpec)
		podSpec["hostname"] = name
		var docs []any
		claims, _ := spec["volumeClaimTemplates"].([]any)
		for _, c := range claims {
			cm, _ := c.(map[string]any)
			tplName, _ := dig(cm, "metadata")["name"].(string)
			claim := tplName + "-" + name
			pvc := deepCopy(cm)
			pvc["apiVersion"], pvc["kind"] = "v1", "PersistentVolumeClaim"
			pvc["metadata"] = map[string]any{"name": claim}
			docs = append(docs, pvc)
			vols, _ := podSpec["volumes"].([]any)
			podSpec["volumes"] = append(vols, map[string]any{"name": tplName, "persistentVolumeClaim": map[string]any{"claimName": claim}})
			p.Volumes = append(p.Volumes, claim)
		}
		if err := expandReferences(podSpec, name, namespace); err != nil {
			return nil, err
		}
		meta := dig(tpl, "metadata")
		labels := stringMap(meta["labels"])
		pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "labels": meta["labels"], "annotations": meta["annotations"]},
			"spec":     podSpec}
		docs = append(docs, pod)
		aliases, err := serviceAliases(services, labels, ports, namespace)
		if err != nil {
			return nil, err
		}
		if serviceName != "" {
			aliases = append(aliases, fmt.Sprintf("%s.%s.%s.svc.%s", name, serviceName, namespace, clusterDomain))
		}
		var b strings.Builder
		for _, d := range docs {
			y, err := yaml.Marshal(d)
			if err != nil {
				return nil, err
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		units = append(units, Unit{Kind: "Pod", Name: name, Aliases: aliases, YAML: b.String(),
			Containers: map[string][]string{name: containerNames(name, podSpec)}})
	}
	return units, nil
}

// serviceAliases are the DNS names of the Services whose selector matches labels, after
// checking each Service port maps to the same container port (an alias cannot remap ports).
func serviceAliases(services []map[string]any, labels map[string]string, ports map[string]int, namespace string) ([]string, error) {
	var aliases []string
	for _, s := range services {
		sel := stringMap(dig(s, "spec", "selector"))
		if len(sel) == 0 || !matches(sel, labels) {
			continue
		}
		name, _ := dig(s, "metadata")["name"].(string)
		svcPorts, _ := dig(s, "spec")["ports"].([]any)
		for _, sp := range svcPorts {
			m, _ := sp.(map[string]any)
			port := int(asFloat(m["port"]))
			target := port
			switch t := m["targetPort"].(type) {
			case float64:
				target = int(t)
			case string:
				n, ok := ports[t]
				if !ok {
					return nil, fmt.Errorf("service %s: targetPort %q is no container port", name, t)
				}
				target = n
			}
			if target != port {
				return nil, fmt.Errorf("service %s: port %d goes to %d; a DNS alias cannot remap ports", name, port, target)
			}
		}
		aliases = append(aliases, name, name+"."+namespace, name+"."+namespace+".svc", name+"."+namespace+".svc."+clusterDomain)
	}
	return aliases, nil
}

func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// dropProbesAndPorts removes the probes and ports of every container (see the package comment).
func dropProbesAndPorts(spec map[string]any) {
	for _, c := range containers(spec) {
		delete(c, "ports")
		delete(c, "livenessProbe")
		delete(c, "readinessProbe")
		delete(c, "startupProbe")
	}
}

var reference = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

func cmdArgsReference(spec map[string]any) bool {
	for _, c := range containers(spec) {
		for _, key := range []string{"command", "args"} {
			list, _ := c[key].([]any)
			for _, a := range list {
				if s, _ := a.(string); reference.MatchString(s) {
					return true
				}
			}
		}
	}
	return false
}

// expandReferences replaces $(VAR) in command and args with the container's env value of VAR
// (a literal value, or the pod's name or namespace through fieldRef), as the kubelet does.
func expandReferences(spec map[string]any, pod, namespace string) error {
	for _, c := range containers(spec) {
		env := map[string]string{}
		list, _ := c["env"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			name, _ := m["name"].(string)
			if v, ok := m["value"].(string); ok {
				env[name] = v
				continue
			}
			switch dig(m, "valueFrom", "fieldRef")["fieldPath"] {
			case "metadata.name":
				env[name] = pod
			case "metadata.namespace":
				env[name] = namespace
			}
		}
		for _, key := range []string{"command", "args"} {
			list, _ := c[key].([]any)
			for i, a := range list {
				s, _ := a.(string)
				var missing string
				list[i] = reference.ReplaceAllStringFunc(s, func(ref string) string {
					name := reference.FindStringSubmatch(ref)[1]
					v, ok := env[name]
					if !ok {
						missing = name
					}
					return v
				})
				if missing != "" {
					return fmt.Errorf("%s refers to $(%s), which no env entry of the container defines", key, missing)
				}
			}
		}
	}
	return nil
}

func containers(spec map[string]any) []map[string]any {
	var out []map[string]any
	for _, key := range []string{"initContainers", "containers"} {
		list, _ := spec[key].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func containerNames(pod string, spec map[string]any) []string {
	var names []string
	list, _ := spec["containers"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		n, _ := m["name"].(string)
		names = append(names, pod+"-"+n)
	}
	return names
}

func containerPorts(spec map[string]any) map[string]int {
	ports := map[string]int{}
	for _, c := range containers(spec) {
		list, _ := c["ports"].([]any)
		for _, p := range list {
			m, _ := p.(map[string]any)
			if n, ok := m["name"].(string); ok {
				ports[n] = int(asFloat(m["containerPort"]))
			}
		}
	}
	return ports
}

// secretData is a Secret's data (base64) and stringData, decoded.
func secretData(obj map[string]any) (map[string][]byte, error) {
	out := map[string][]byte{}
	for k, v := range stringMap(obj["data"]) {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("data.%s: %w", k, err)
		}
		out[k] = b
	}
	for k, v := range stringMap(obj["stringData"]) {
		out[k] = []byte(v)
	}
	return out, nil
}

func dig(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, _ := m[k].(map[string]any)
		if next == nil {
			next = map[string]any{}
			if m != nil {
				m[k] = next
			}
		}
		m = next
	}
	return m
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		switch t := x.(type) {
		case string:
			out[k] = t
		case float64:
			out[k] = strconv.FormatFloat(t, 'f', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(t)
		}
	}
	return out
}

func asFloat(v any) float64 {
	f, _ := v.(float64)
	return f
}

func deepCopy(m map[string]any) map[string]any {
	b, err := yaml.Marshal(m)
	if err != nil {
		panic(err) // a map decoded from YAML always encodes
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}
