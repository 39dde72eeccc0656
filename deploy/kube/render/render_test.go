package render_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/vantagehq/vantage/deploy/kube/render"
)

// required are the values a release cannot do without.
var required = map[string]any{"secrets": map[string]any{
	"databaseURL": "postgres://vantage@db:5432/vantage?sslmode=verify-full",
	"secretKey":   "c2VjcmV0LWtleS1vZi0zMi1ieXRlcy0wMTIzNDU2Nzg5YWI=",
	"agentToken":  "agent-token-0123456789",
}}

// objects renders with values over the required ones and decodes every object strictly
// into its Kubernetes type: a misspelt or misplaced field fails here, as the API server would
// refuse it.
func objects(t *testing.T, values map[string]any) map[string]runtime.Object {
	t.Helper()
	objs, err := render.Render(render.Options{Values: render.Merge(required, values)})
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	out := map[string]runtime.Object{}
	for _, o := range objs {
		key := o.Kind + "/" + o.Name
		if _, dup := out[key]; dup {
			t.Errorf("%s rendered twice", key)
		}
		if o.Kind == "ScaledObject" { // a KEDA type, not in client-go's scheme
			out[key] = nil
			continue
		}
		obj, _, err := decoder.Decode([]byte(o.YAML), nil, nil)
		if err != nil {
			t.Fatalf("%s (%s) is not a valid Kubernetes object: %v\n%s", key, o.Source, err, o.YAML)
		}
		out[key] = obj
	}
	return out
}

func TestDefaultsRenderAProductionLayout(t *testing.T) {
	t.Parallel()
	objs := objects(t, nil)
	kinds := map[string]int{}
	for key := range objs {
		kinds[strings.Split(key, "/")[0]]++
	}
	want := map[string]int{"Deployment": 3, "StatefulSet": 1, "Service": 3, "PodDisruptionBudget": 4, "NetworkPolicy": 3, "Secret": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s objects, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}

	cp := objs["Deployment/vantage-controlplane"].(*appsv1.Deployment)
	if *cp.Spec.Replicas < 2 {
		t.Errorf("control plane replicas %d, want at least 2", *cp.Spec.Replicas)
	}
	c := cp.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("control plane probes: readiness %+v liveness %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	checkHardened(t, "control plane", c)
	if env(c, "VANTAGE_ALLOW_PRIVATE_TARGETS") != "false" || env(c, "VANTAGE_NATS_URL") != "nats://vantage-nats:4222" ||
		env(c, "VANTAGE_NATS_STREAM_REPLICAS") != "3" {
		t.Errorf("control plane env: private targets %q, NATS %q, stream replicas %q", env(c, "VANTAGE_ALLOW_PRIVATE_TARGETS"),
			env(c, "VANTAGE_NATS_URL"), env(c, "VANTAGE_NATS_STREAM_REPLICAS"))
	}
	for _, name := range []string{"VANTAGE_DATABASE_URL", "VANTAGE_SECRET_KEY"} {
		if ref := secretRef(c, name); ref == nil || ref.Name != "vantage" || (ref.Optional != nil && *ref.Optional) {
			t.Errorf("%s is not read from Secret vantage: %+v", name, ref)
		}
	}
	// The shared development token is optional: production agents have tokens of their own.
	if ref := secretRef(c, "VANTAGE_AGENT_TOKEN"); ref == nil || ref.Name != "vantage" || ref.Optional == nil || !*ref.Optional {
		t.Errorf("VANTAGE_AGENT_TOKEN of the control plane: %+v, want optional from Secret vantage", ref)
	}
	pdb := objs["PodDisruptionBudget/vantage-controlplane"].(*policyv1.PodDisruptionBudget)
	if !selects(pdb.Spec.Selector.MatchLabels, cp.Spec.Template.Labels) || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("control plane PDB %+v does not keep one replica of %v", pdb.Spec, cp.Spec.Template.Labels)
	}

	for _, region := range []string{"us-east-1", "eu-west-2"} {
		d, ok := objs["Deployment/vantage-agent-"+region].(*appsv1.Deployment)
		if !ok {
			t.Fatalf("no agent Deployment for %s", region)
		}
		a := d.Spec.Template.Spec.Containers[0]
		if env(a, "VANTAGE_REGIONS") != "cloud:"+region || env(a, "VANTAGE_AGENT_CONCURRENCY") != "" ||
			env(a, "VANTAGE_CONTROLPLANE_ADDR") != "vantage-controlplane:9090" || env(a, "VANTAGE_ALLOW_PRIVATE_TARGETS") != "false" {
			t.Errorf("agent %s env: %+v", region, a.Env)
		}
		if ref := secretRef(a, "VANTAGE_AGENT_TOKEN"); ref == nil || ref.Name != "vantage" {
			t.Errorf("agent %s token from %+v", region, ref)
		}
		checkHardened(t, "agent "+region, a)
		if *d.Spec.Replicas != 2 {
			t.Errorf("agent %s replicas %d, want the default 2", region, *d.Spec.Replicas)
		}
	}

	sts := objs["StatefulSet/vantage-nats"].(*appsv1.StatefulSet)
	routes := ""
	for _, a := range sts.Spec.Template.Spec.Containers[0].Args {
		routes = strings.TrimPrefix(a, "--routes=")
		if routes != a {
			break
		}
	}
	wantRoutes := "nats://vantage-nats-0.vantage-nats-headless.vantage.svc.cluster.local:6222,nats://vantage-nats-1.vantage-nats-headless.vantage.svc.cluster.local:6222,nats://vantage-nats-2.vantage-nats-headless.vantage.svc.cluster.local:6222"
	if *sts.Spec.Replicas != 3 || routes != wantRoutes || !slices.Contains(sts.Spec.Template.Spec.Containers[0].Args, "--jetstream") {
		t.Errorf("NATS: %d replicas, args %v", *sts.Spec.Replicas, sts.Spec.Template.Spec.Containers[0].Args)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Errorf("NATS has %d volume claim templates, want 1 for JetStream", len(sts.Spec.VolumeClaimTemplates))
	}

	// Every Service selects pods the chart runs.
	pods := map[string]map[string]string{}
	for key, o := range objs {
		switch w := o.(type) {
		case *appsv1.Deployment:
			pods[key] = w.Spec.Template.Labels
		case *appsv1.StatefulSet:
			pods[key] = w.Spec.Template.Labels
		}
	}
	for key, o := range objs {
		svc, ok := o.(*corev1.Service)
		if !ok {
			continue
		}
		n := 0
		for _, l := range pods {
			if selects(svc.Spec.Selector, l) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s selects the pods of %d workloads, want 1", key, n)
		}
	}
}

func TestNetworkPoliciesConfineEachComponent(t *testing.T) {
	t.Parallel()
	objs := objects(t, nil)
	cp := objs["Deployment/vantage-controlplane"].(*appsv1.Deployment).Spec.Template.Labels
	agent := objs["Deployment/vantage-agent-us-east-1"].(*appsv1.Deployment).Spec.Template.Labels
	nats := objs["StatefulSet/vantage-nats"].(*appsv1.StatefulSet).Spec.Template.Labels
	policy := func(name string) *networkingv1.NetworkPolicy {
		return objs["NetworkPolicy/"+name].(*networkingv1.NetworkPolicy)
	}
	// ingressPeers: for each port, whether pods with these labels may connect.
	allowed := func(p *networkingv1.NetworkPolicy, from map[string]string, port int) bool {
		for _, rule := range p.Spec.Ingress {
			portOK := false
			for _, rp := range rule.Ports {
				portOK = portOK || rp.Port.IntValue() == port
			}
			for _, peer := range rule.From {
				if portOK && peer.PodSelector != nil && peer.NamespaceSelector == nil && selects(peer.PodSelector.MatchLabels, from) {
					return true
				}
			}
		}
		return false
	}
	egressTo := func(p *networkingv1.NetworkPolicy, to map[string]string, port int) bool {
		for _, rule := range p.Spec.Egress {
			for _, peer := range rule.To {
				for _, rp := range rule.Ports {
					if peer.PodSelector != nil && selects(peer.PodSelector.MatchLabels, to) && rp.Port.IntValue() == port {
						return true
					}
				}
			}
		}
		return false
	}
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"agents reach the control plane's gRPC", allowed(policy("vantage-controlplane"), agent, 9090), true},
		{"agents do not reach the control plane's API", allowed(policy("vantage-controlplane"), agent, 8080), false},
		{"agents reach NATS", allowed(policy("vantage-nats"), agent, 4222), true},
		{"the control plane reaches NATS", allowed(policy("vantage-nats"), cp, 4222), true},
		{"agents do not reach NATS routes", allowed(policy("vantage-nats"), agent, 6222), false},
		{"NATS members reach each other's routes", allowed(policy("vantage-nats"), nats, 6222), true},
		{"the control plane does not reach agents", allowed(policy("vantage-agent"), cp, 8081), false},
		{"agents may dial NATS", egressTo(policy("vantage-agent"), nats, 4222), true},
		{"agents may dial the control plane's gRPC", egressTo(policy("vantage-agent"), cp, 9090), true},
		{"the control plane may dial NATS", egressTo(policy("vantage-controlplane"), nats, 4222), true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	for _, name := range []string{"vantage-controlplane", "vantage-agent", "vantage-nats"} {
		p := policy(name)
		if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			t.Errorf("%s: policy types %v, want Ingress and Egress", name, p.Spec.PolicyTypes)
		}
	}
	// Agents accept only metrics scrapes, from outside the release's pods.
	for _, rule := range policy("vantage-agent").Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port.IntValue() != 9101 {
				t.Errorf("agents accept port %s", p.Port.String())
			}
		}
	}
	// The probes' internet egress leaves out private ranges.
	last := policy("vantage-agent").Spec.Egress[len(policy("vantage-agent").Spec.Egress)-1]
	if b := last.To[0].IPBlock; b == nil || b.CIDR != "0.0.0.0/0" || !slices.Contains(b.Except, "10.0.0.0/8") {
		t.Errorf("agent probe egress %+v", last)
	}
}

func TestRegionsEachGetAnAgentDeploymentWithTheirOwnSettings(t *testing.T) {
	t.Parallel()
	objs := objects(t, map[string]any{"agents": map[string]any{"regions": []any{
		map[string]any{"region": "cloud:ap-southeast-2", "replicas": 3, "concurrency": 64, "tokenSecret": "agent-ap"},
		map[string]any{"region": "cloud:us-east-1"},
	}}})
	ap := objs["Deployment/vantage-agent-ap-southeast-2"].(*appsv1.Deployment)
	c := ap.Spec.Template.Spec.Containers[0]
	if *ap.Spec.Replicas != 3 || env(c, "VANTAGE_AGENT_CONCURRENCY") != "64" || secretRef(c, "VANTAGE_AGENT_TOKEN").Name != "agent-ap" {
		t.Errorf("ap-southeast-2 agent: replicas %d, env %+v", *ap.Spec.Replicas, c.Env)
	}
	us := objs["Deployment/vantage-agent-us-east-1"].(*appsv1.Deployment)
	if *us.Spec.Replicas != 2 || env(us.Spec.Template.Spec.Containers[0], "VANTAGE_AGENT_CONCURRENCY") != "" {
		t.Errorf("us-east-1 agent does not keep the defaults: %+v", us.Spec)
	}
	if _, ok := objs["Deployment/vantage-agent-eu-west-2"]; ok {
		t.Error("a region not listed still has a Deployment")
	}
	// Each region's pods are its own: the Deployments' selectors do not overlap.
	if selects(ap.Spec.Selector.MatchLabels, us.Spec.Template.Labels) {
		t.Error("the ap-southeast-2 Deployment selects us-east-1 pods")
	}
}

func TestPendingJobsAutoscaling(t *testing.T) {
	t.Parallel()
	objs, err := render.Render(render.Options{Values: render.Merge(required, map[string]any{
		"agents": map[string]any{"autoscaling": map[string]any{"enabled": true, "maxReplicas": 7, "pendingJobsPerReplica": 40}},
	})})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if o.Kind != "ScaledObject" {
			continue
		}
		n++
		region := strings.TrimPrefix(o.Name, "vantage-agent-")
		spec := o.Map["spec"].(map[string]any)
		trigger := spec["triggers"].([]any)[0].(map[string]any)
		meta := trigger["metadata"].(map[string]any)
		wantQuery := fmt.Sprintf(`max(vantage_region_jobs_pending{region="cloud:%s"})`, region)
		if spec["scaleTargetRef"].(map[string]any)["name"] != o.Name || spec["maxReplicaCount"] != float64(7) ||
			trigger["type"] != "prometheus" || meta["query"] != wantQuery || meta["threshold"] != "40" {
			t.Errorf("ScaledObject %s: %+v", o.Name, spec)
		}
	}
	if n != 2 {
		t.Errorf("%d ScaledObjects, want one per region (2)", n)
	}
	for _, o := range objs {
		if o.Kind == "Deployment" && strings.Contains(o.Name, "-agent-") {
			if _, ok := o.Map["spec"].(map[string]any)["replicas"]; ok {
				t.Errorf("%s sets replicas while the autoscaler owns them", o.Name)
			}
		}
	}
}

func TestExternalNATS(t *testing.T) {
	t.Parallel()
	objs := objects(t, map[string]any{"nats": map[string]any{"enabled": false, "url": "nats://nats-a:4222,nats://nats-b:4222"}})
	for key := range objs {
		if strings.Contains(key, "nats") {
			t.Errorf("%s rendered with nats.enabled false", key)
		}
	}
	c := objs["Deployment/vantage-controlplane"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	if env(c, "VANTAGE_NATS_URL") != "nats://nats-a:4222,nats://nats-b:4222" || env(c, "VANTAGE_NATS_STREAM_REPLICAS") != "1" {
		t.Errorf("control plane NATS URL %q, stream replicas %q", env(c, "VANTAGE_NATS_URL"), env(c, "VANTAGE_NATS_STREAM_REPLICAS"))
	}
	objs = objects(t, map[string]any{"nats": map[string]any{"enabled": false, "url": "nats://nats-a:4222"},
		"controlPlane": map[string]any{"natsStreamReplicas": 3}})
	c = objs["Deployment/vantage-controlplane"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	if env(c, "VANTAGE_NATS_STREAM_REPLICAS") != "3" {
		t.Errorf("stream replicas %q with controlPlane.natsStreamReplicas 3", env(c, "VANTAGE_NATS_STREAM_REPLICAS"))
	}
}

func TestBadValuesAreRefusedWithTheirName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"no database URL", map[string]any{"secrets": map[string]any{"databaseURL": ""}}, "secrets.databaseURL is required"},
		{"client CA without TLS", map[string]any{"controlPlane": map[string]any{"grpcTLS": map[string]any{"clientCASecret": "ca"}}}, "controlPlane.grpcTLS.clientCASecret needs controlPlane.grpcTLS.secret"},
		{"leaf nodes without accounts", map[string]any{"nats": map[string]any{"leafnodes": map[string]any{"enabled": true}}}, "nats.leafnodes.enabled needs nats.accountsSecret"},
		{"client certificate without TLS", map[string]any{"agents": map[string]any{"tls": map[string]any{"clientCertSecret": "c"}}}, "tls.clientCertSecret needs TLS"},
		{"own secret without a name", map[string]any{"secrets": map[string]any{"create": false}}, "secrets.existingSecret is required"},
		{"region without prefix", map[string]any{"agents": map[string]any{"regions": []any{map[string]any{"region": "us-east-1"}}}}, `region "us-east-1" must be a region value`},
		{"region twice", map[string]any{"agents": map[string]any{"regions": []any{map[string]any{"region": "cloud:us-east-1"}, map[string]any{"region": "cloud:us-east-1"}}}}, "cloud:us-east-1 is listed twice"},
		{"external NATS without URL", map[string]any{"nats": map[string]any{"enabled": false}}, "nats.url is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := render.Render(render.Options{Values: render.Merge(required, tc.values)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func checkHardened(t *testing.T, what string, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s security context %+v: want non-root, read-only root, no privilege escalation", what, sc)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s resources %+v: want memory requests and limits", what, c.Resources)
	}
}

func env(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func secretRef(c corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

func selects(selector, podLabels map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(podLabels))
}

// TestProductionAgentChannel renders the production settings of the agent channel: TLS with
// client certificates, no shared token, a token Secret per region, NATS accounts.
func TestProductionAgentChannel(t *testing.T) {
	t.Parallel()
	objs := objects(t, map[string]any{
		"secrets": map[string]any{"agentToken": ""},
		"controlPlane": map[string]any{"grpcTLS": map[string]any{"secret": "vantage-grpc-tls", "clientCASecret": "vantage-agents-ca"},
			"natsURLSecret": "vantage-nats-controlplane"},
		"agents": map[string]any{"tls": map[string]any{"caSecret": "vantage-grpc-ca", "serverName": "grpc.vantage.example.com",
			"clientCertSecret": "vantage-agent-client"},
			"regions": []any{
				map[string]any{"region": "cloud:us-east-1", "natsURLSecret": "vantage-nats-us-east-1"},
				map[string]any{"region": "cloud:eu-west-2", "tokenSecret": "eu-token", "natsURLSecret": "vantage-nats-eu-west-2"},
			}},
		"nats": map[string]any{"accountsSecret": "vantage-nats-accounts", "leafnodes": map[string]any{"enabled": true}},
	})
	if s, ok := objs["Secret/vantage"].(*corev1.Secret); !ok || s.StringData["agent-token"] != "" {
		t.Errorf("the chart's Secret carries a shared agent token: %+v", s)
	}
	cp := objs["Deployment/vantage-controlplane"].(*appsv1.Deployment).Spec.Template.Spec
	c := cp.Containers[0]
	if env(c, "VANTAGE_GRPC_TLS_CERT") != "/etc/vantage/grpc-tls/tls.crt" || env(c, "VANTAGE_GRPC_TLS_KEY") != "/etc/vantage/grpc-tls/tls.key" ||
		env(c, "VANTAGE_GRPC_CLIENT_CA") != "/etc/vantage/grpc-client-ca/ca.crt" {
		t.Errorf("control plane TLS env: %+v", c.Env)
	}
	if ref := secretRef(c, "VANTAGE_NATS_URL"); ref == nil || ref.Name != "vantage-nats-controlplane" || ref.Key != "nats-url" {
		t.Errorf("control plane NATS URL from %+v", ref)
	}
	mounted(t, "control plane", cp, c, map[string]string{"/etc/vantage/grpc-tls": "vantage-grpc-tls", "/etc/vantage/grpc-client-ca": "vantage-agents-ca"})

	for region, token := range map[string]string{"us-east-1": "vantage-agent-us-east-1", "eu-west-2": "eu-token"} {
		spec := objs["Deployment/vantage-agent-"+region].(*appsv1.Deployment).Spec.Template.Spec
		a := spec.Containers[0]
		if ref := secretRef(a, "VANTAGE_AGENT_TOKEN"); ref == nil || ref.Name != token {
			t.Errorf("agent %s token from %+v, want Secret %s", region, ref, token)
		}
		if ref := secretRef(a, "VANTAGE_NATS_URL"); ref == nil || ref.Name != "vantage-nats-"+region {
			t.Errorf("agent %s NATS URL from %+v", region, ref)
		}
		if env(a, "VANTAGE_NATS_API_PREFIX") != "vantage.js.api" || env(a, "VANTAGE_CONTROLPLANE_CA") != "/etc/vantage/controlplane-ca/ca.crt" ||
			env(a, "VANTAGE_CONTROLPLANE_SERVER_NAME") != "grpc.vantage.example.com" || env(a, "VANTAGE_AGENT_TLS_CERT") != "/etc/vantage/agent-tls/tls.crt" {
			t.Errorf("agent %s env: %+v", region, a.Env)
		}
		mounted(t, "agent "+region, spec, a, map[string]string{"/etc/vantage/controlplane-ca": "vantage-grpc-ca", "/etc/vantage/agent-tls": "vantage-agent-client"})
	}
	sts := objs["StatefulSet/vantage-nats"].(*appsv1.StatefulSet).Spec.Template.Spec
	if !slices.Contains(sts.Containers[0].Args, "--config=/etc/nats/auth/accounts.conf") {
		t.Errorf("NATS args %v: the accounts are not loaded", sts.Containers[0].Args)
	}
	mounted(t, "NATS", sts, sts.Containers[0], map[string]string{"/etc/nats/auth": "vantage-nats-accounts"})
	leaf, ok := objs["Service/vantage-nats-leafnodes"].(*corev1.Service)
	if !ok || leaf.Spec.Type != corev1.ServiceTypeLoadBalancer || leaf.Spec.Ports[0].Port != 7422 {
		t.Errorf("leaf node Service: %+v", leaf)
	}
	np := objs["NetworkPolicy/vantage-nats"].(*networkingv1.NetworkPolicy)
	open := false
	for _, in := range np.Spec.Ingress {
		for _, p := range in.Ports {
			open = open || p.Port.IntValue() == 7422
		}
	}
	if !open {
		t.Error("the NATS NetworkPolicy does not let leaf nodes in")
	}
}

// mounted checks that c mounts, at each path, a volume of spec from the named Secret.
func mounted(t *testing.T, what string, spec corev1.PodSpec, c corev1.Container, want map[string]string) {
	t.Helper()
	for path, secret := range want {
		found := false
		for _, m := range c.VolumeMounts {
			if m.MountPath != path {
				continue
			}
			for _, v := range spec.Volumes {
				if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == secret {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s does not mount Secret %s at %s", what, secret, path)
		}
	}
}
