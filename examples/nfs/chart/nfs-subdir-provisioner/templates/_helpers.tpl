{{/*
Object names, labels and the provisioner name are derived exactly as the upstream
nfs-subdir-external-provisioner chart derives them, so a release installed with that chart upgrades in
place: a StorageClass's provisioner and a Deployment's selector are immutable, and a renamed
ServiceAccount or Role would orphan the old ones. test/chart-upstream-names.test.ts holds this to
recorded renderings of upstream's chart.
*/}}

{{/* The chart name upstream's names are built from (this chart is published under its own name). */}}
{{- define "nfs-subdir-provisioner.upstreamName" -}}
nfs-subdir-external-provisioner
{{- end -}}

{{/* Value of the `app` label: nameOverride, else the upstream chart name. */}}
{{- define "nfs-subdir-provisioner.name" -}}
{{- $base := include "nfs-subdir-provisioner.upstreamName" . -}}
{{- .Values.nameOverride | default $base | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* fullnameOverride; else the release name when it already contains the name; else release-name. */}}
{{- define "nfs-subdir-provisioner.fullname" -}}
{{- $full := .Values.fullnameOverride -}}
{{- if not $full -}}
{{- $name := .Values.nameOverride | default (include "nfs-subdir-provisioner.upstreamName" .) -}}
{{- $full = ternary .Release.Name (printf "%s-%s" .Release.Name $name) (contains $name .Release.Name) -}}
{{- end -}}
{{- $full | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Deployment's selector: immutable, so exactly upstream's two keys. */}}
{{- define "nfs-subdir-provisioner.selectorLabels" -}}
app: {{ include "nfs-subdir-provisioner.name" . }}
release: {{ .Release.Name }}
{{- end -}}

{{- define "nfs-subdir-provisioner.podLabels" -}}
{{ include "nfs-subdir-provisioner.selectorLabels" . }}
{{- with .Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "nfs-subdir-provisioner.labels" -}}
chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
heritage: {{ .Release.Service }}
{{ include "nfs-subdir-provisioner.podLabels" . }}
{{- end -}}

{{- define "nfs-subdir-provisioner.serviceAccountName" -}}
{{- $default := "default" -}}
{{- if .Values.serviceAccount.create -}}
{{- $default = include "nfs-subdir-provisioner.fullname" . -}}
{{- end -}}
{{- .Values.serviceAccount.name | default $default -}}
{{- end -}}

{{- define "nfs-subdir-provisioner.provisionerName" -}}
{{- .Values.storageClass.provisionerName | default (printf "cluster.local/%s" (include "nfs-subdir-provisioner.fullname" .)) -}}
{{- end -}}

{{/*
PodSecurityPolicy was removed in Kubernetes 1.25: podSecurityPolicy.enabled is accepted everywhere, and
the policy and its `use` grant are rendered only where the cluster still serves the API.
*/}}
{{- define "nfs-subdir-provisioner.pspServed" -}}
{{- if and .Values.podSecurityPolicy .Values.podSecurityPolicy.enabled (.Capabilities.APIVersions.Has "policy/v1beta1/PodSecurityPolicy") -}}
true
{{- end -}}
{{- end -}}

{{- define "nfs-subdir-provisioner.pspUseRule" -}}
{{- if include "nfs-subdir-provisioner.pspServed" . }}
- apiGroups: ["policy"]
  resources: ["podsecuritypolicies"]
  verbs: ["use"]
  resourceNames: [{{ include "nfs-subdir-provisioner.fullname" . | quote }}]
{{- end }}
{{- end -}}
