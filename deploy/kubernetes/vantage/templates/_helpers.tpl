{{/* Name of every object: the release name, with "-vantage" unless it already says vantage. */}}
{{- define "vantage.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Selector labels of a component: (dict "ctx" $ "component" "agent"). */}}
{{- define "vantage.selectorLabels" -}}
app.kubernetes.io/name: vantage
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* All labels of a component. */}}
{{- define "vantage.labels" -}}
{{ include "vantage.selectorLabels" . }}
app.kubernetes.io/part-of: vantage
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version }}
{{- end -}}

{{/* Image reference: (dict "ctx" $ "name" .Values.images.agent). */}}
{{- define "vantage.image" -}}
{{- $img := .ctx.Values.images -}}
{{- $tag := default .ctx.Chart.AppVersion $img.tag -}}
{{- if $img.registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $img.registry) .name $tag -}}
{{- else -}}
{{- printf "%s:%s" .name $tag -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding database-url, secret-key, agent-token, bootstrap-token, smtp-url. */}}
{{- define "vantage.secretName" -}}
{{- if .Values.secrets.create -}}
{{- include "vantage.fullname" . -}}
{{- else -}}
{{- required "secrets.existingSecret is required when secrets.create is false" .Values.secrets.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* NATS client URL(s) the control plane and the agents use. */}}
{{- define "vantage.natsURL" -}}
{{- if .Values.nats.enabled -}}
{{- if .Values.nats.url -}}
{{- .Values.nats.url -}}
{{- else -}}
{{- printf "nats://%s-nats:4222" (include "vantage.fullname" .) -}}
{{- end -}}
{{- else -}}
{{- required "nats.url is required when nats.enabled is false" .Values.nats.url -}}
{{- end -}}
{{- end -}}

{{/* gRPC address agents dial. */}}
{{- define "vantage.grpcAddress" -}}
{{- default (printf "%s-controlplane:9090" (include "vantage.fullname" .)) .Values.controlPlane.grpcAddress -}}
{{- end -}}

{{/* Route URLs of the NATS cluster members, comma-separated. */}}
{{- define "vantage.natsRoutes" -}}
{{- if .Values.nats.routes -}}
{{- join "," .Values.nats.routes -}}
{{- else -}}
{{- $name := printf "%s-nats" (include "vantage.fullname" .) -}}
{{- $routes := list -}}
{{- range $i := until (int .Values.nats.replicas) -}}
{{- $routes = append $routes (printf "nats://%s-%d.%s-headless.%s.svc.%s:6222" $name $i $name $.Release.Namespace $.Values.nats.clusterDomain) -}}
{{- end -}}
{{- join "," $routes -}}
{{- end -}}
{{- end -}}

{{/* Region token of a region value: "cloud:us-east-1" -> "us-east-1". */}}
{{- define "vantage.regionToken" -}}
{{- trimPrefix "cloud:" . -}}
{{- end -}}

{{/* Security context every Vantage container runs with. */}}
{{- define "vantage.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Egress to the cluster DNS, which every NetworkPolicy of the chart allows. */}}
{{- define "vantage.dnsEgress" -}}
- to:
    - namespaceSelector: {}
      podSelector:
        matchLabels:
          k8s-app: kube-dns
  ports:
    - {protocol: UDP, port: 53}
    - {protocol: TCP, port: 53}
{{- end -}}

{{/* Replicas of the job stream: the setting, or the chart's NATS cluster size (JetStream allows 5). */}}
{{- define "vantage.streamReplicas" -}}
{{- if .Values.controlPlane.natsStreamReplicas -}}
{{- .Values.controlPlane.natsStreamReplicas -}}
{{- else if .Values.nats.enabled -}}
{{- min 5 (int .Values.nats.replicas) -}}
{{- else -}}
1
{{- end -}}
{{- end -}}
