package kubeplay_test

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/vantagehq/vantage/deploy/kube/kubeplay"
	"github.com/vantagehq/vantage/deploy/kube/render"
)

func object(t *testing.T, doc string) render.Object {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return render.Object{Kind: m["kind"].(string), Name: m["metadata"].(map[string]any)["name"].(string), YAML: doc, Map: m}
}

const statefulSet = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: q}
spec:
  serviceName: q-headless
  replicas: 2
  selector: {matchLabels: {app: q}}
  template:
    metadata: {labels: {app: q, tier: queue}}
    spec:
      containers:
        - name: server
          image: example/q:1
          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: MODE, value: cluster}
          args: ["--name=$(POD_NAME)", "--mode=$(MODE)"]
          ports: [{name: client, containerPort: 4222}]
          readinessProbe: {httpGet: {path: /healthz, port: 8222}}
          volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`

const headless = `
apiVersion: v1
kind: Service
metadata: {name: q-headless}
spec:
  clusterIP: None
  selector: {app: q}
  ports: [{name: client, port: 4222, targetPort: client}]
`

func TestStatefulSetReplicasBecomePodsWithStableNamesAndClaims(t *testing.T) {
	t.Parallel()
	plan, err := kubeplay.Adapt([]render.Object{object(t, headless), object(t, statefulSet)}, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Units) != 2 {
		t.Fatalf("%d units, want one per replica", len(plan.Units))
	}
	if !slices.Equal(plan.Volumes, []string{"data-q-0", "data-q-1"}) {
		t.Errorf("volumes %v", plan.Volumes)
	}
	u := plan.Units[1]
	if u.Kind != "Pod" || u.Name != "q-1" || !slices.Equal(u.Containers["q-1"], []string{"q-1-server"}) {
		t.Errorf("unit %s %s, containers %v", u.Kind, u.Name, u.Containers)
	}
	for _, want := range []string{"q-headless", "q-headless.ns.svc.cluster.local", "q-1.q-headless.ns.svc.cluster.local"} {
		if !slices.Contains(u.Aliases, want) {
			t.Errorf("aliases %v lack %s", u.Aliases, want)
		}
	}
	docs := strings.Split(u.YAML, "---\n")
	var pvc, pod map[string]any
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		switch m["kind"] {
		case "PersistentVolumeClaim":
			pvc = m
		case "Pod":
			pod = m
		}
	}
	if pvc == nil || pvc["metadata"].(map[string]any)["name"] != "data-q-1" {
		t.Fatalf("claim %v", pvc)
	}
	spec := pod["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	if args := c["args"].([]any); args[0] != "--name=q-1" || args[1] != "--mode=cluster" {
		t.Errorf("args %v: $(VAR) not expanded", args)
	}
	if _, ok := c["readinessProbe"]; ok {
		t.Error("probe kept")
	}
	if _, ok := c["ports"]; ok {
		t.Error("ports kept (podman would publish them on the host)")
	}
	if spec["hostname"] != "q-1" || pod["metadata"].(map[string]any)["labels"].(map[string]any)["tier"] != "queue" {
		t.Errorf("pod %v", pod)
	}
	vol := spec["volumes"].([]any)[0].(map[string]any)
	if vol["name"] != "data" || vol["persistentVolumeClaim"].(map[string]any)["claimName"] != "data-q-1" {
		t.Errorf("volume %v", vol)
	}
}

func TestSecretsBecomePodmanSecretData(t *testing.T) {
	t.Parallel()
	plan, err := kubeplay.Adapt([]render.Object{object(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds}
data: {token: aGVsbG8=}
stringData: {url: "postgres://db"}
`)}, "ns")
	if err != nil {
		t.Fatal(err)
	}
	got := plan.Secrets["creds"]
	if string(got["token"]) != "hello" || string(got["url"]) != "postgres://db" {
		t.Errorf("secret data %q", got)
	}
}

func TestWhatCannotBeEmulatedIsRefused(t *testing.T) {
	t.Parallel()
	deployment := func(args string) string {
		return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
        - name: c
          image: example/d:1
          args: [` + args + `]
          ports: [{name: http, containerPort: 8080}]
`
	}
	for _, tc := range []struct {
		name string
		docs []string
		want string
	}{
		{"unknown kind", []string{"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\n"}, "CronJob/nightly: podman kube play cannot run this kind"},
		{"a Service remapping a port", []string{deployment(`"x"`), "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  selector: {app: d}\n  ports: [{port: 80, targetPort: http}]\n"}, "port 80 goes to 8080"},
		{"$(VAR) in a Deployment", []string{deployment(`"--id=$(POD_NAME)"`)}, "$(VAR) in command or args"},
		{"$(VAR) with no env", []string{strings.Replace(statefulSet, "--mode=$(MODE)", "--zone=$(ZONE)", 1)}, "$(ZONE)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var objs []render.Object
			for _, d := range tc.docs {
				objs = append(objs, object(t, d))
			}
			if _, err := kubeplay.Adapt(objs, "ns"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestDeploymentsKeepTheirReplicasAndAnswerToTheirServices(t *testing.T) {
	t.Parallel()
	objs, err := render.Render(render.Options{Values: map[string]any{"secrets": map[string]any{
		"databaseURL": "postgres://db/v", "secretKey": "k", "agentToken": "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := kubeplay.Adapt(objs, "vantage")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, u := range plan.Units {
		names = append(names, u.Name)
		if u.Name == "vantage-controlplane" {
			if len(u.Containers) != 2 || !slices.Contains(u.Aliases, "vantage-controlplane") {
				t.Errorf("control plane unit: containers %v aliases %v", u.Containers, u.Aliases)
			}
		}
		if strings.HasPrefix(u.Name, "vantage-agent-") && len(u.Aliases) != 0 {
			t.Errorf("agents answer to %v, but no Service selects them", u.Aliases)
		}
	}
	slices.Sort(names)
	want := []string{"vantage-agent-eu-west-2", "vantage-agent-us-east-1", "vantage-controlplane", "vantage-nats-0", "vantage-nats-1", "vantage-nats-2"}
	if !slices.Equal(names, want) {
		t.Errorf("units %v, want %v", names, want)
	}
	if len(plan.Skipped) == 0 || len(plan.Secrets["vantage"]) != 3 {
		t.Errorf("skipped %v, secrets %v", plan.Skipped, plan.Secrets)
	}
}
