{{/*
Names, labels and the checks that keep names valid. Object names start from
"gantry.fullname"; the coordinator's objects add "-coordinator", "-token", "-runs";
each worker group's MPIJob is "<fullname>-<key>".
*/}}

{{- define "gantry.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The base of every object name. Not truncated: a name that is too long fails with a
message (gantry.checkName) rather than being cut into a collision.
*/}}
{{- define "gantry.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gantry.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fails unless `name` (with `longest` more characters that Kubernetes or the MPI
Operator append to it) is a DNS-1035 label: at most 63 characters of a-z, 0-9 and
'-', starting with a letter and ending with a letter or digit.
Call with (dict "name" N "longest" SUFFIX "what" DESCRIPTION).
*/}}
{{- define "gantry.checkName" -}}
{{- $full := printf "%s%s" .name .longest }}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" .name) }}
{{- fail (printf "%s name %q is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter): choose another release name, fullnameOverride or worker group key" .what .name) }}
{{- end }}
{{- if gt (len $full) 63 }}
{{- fail (printf "%s name %q is too long: %q has %d characters, more than the 63 of a DNS label; shorten fullnameOverride (or the release name) or the worker group key" .what .name $full (len $full)) }}
{{- end }}
{{- end }}

{{- define "gantry.coordinatorName" -}}
{{- printf "%s-coordinator" (include "gantry.fullname" .) }}
{{- end }}

{{/* The Service's in-cluster address, host:port. */}}
{{- define "gantry.coordinatorAddress" -}}
{{- printf "%s.%s.svc:%d" (include "gantry.coordinatorName" .) .Release.Namespace (int .Values.coordinator.port) }}
{{- end }}

{{- define "gantry.tokenSecretName" -}}
{{- default (printf "%s-token" (include "gantry.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{- define "gantry.runsClaimName" -}}
{{- default (printf "%s-runs" (include "gantry.fullname" .)) .Values.runs.existingClaim }}
{{- end }}

{{- define "gantry.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gantry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every object; add app.kubernetes.io/component where it applies. */}}
{{- define "gantry.labels" -}}
helm.sh/chart: {{ include "gantry.chart" . }}
{{ include "gantry.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gantry
{{- end }}

{{- define "gantry.image" -}}
{{- printf "%s:%s" .image.repository (default .chart.AppVersion .image.tag) }}
{{- end }}

{{/* The data roots the coordinator accepts: data.roots, plus the data volume's path. */}}
{{- define "gantry.dataRoots" -}}
{{- $roots := .Values.data.roots }}
{{- if .Values.data.existingClaim }}
{{- $roots = append $roots .Values.data.mountPath }}
{{- end }}
{{- toJson (uniq $roots) }}
{{- end }}

{{/* Pod-level securityContext shared by every pod of the chart. */}}
{{- define "gantry.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.fsGroup }}
# Re-own a volume only when its top folder is not the group's yet: the runs volume can
# hold many files, and a recursive chown at every pod start would be slow.
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* Container-level securityContext: nothing to escalate, no capability. */}}
{{- define "gantry.containerSecurityContext" -}}
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
{{- end }}

{{/* Volumes and mounts of the token Secret and the data volume. */}}
{{- define "gantry.tokenVolume" -}}
- name: token
  secret:
    secretName: {{ include "gantry.tokenSecretName" . }}
    defaultMode: 0440
{{- end }}

{{- define "gantry.dataVolume" -}}
{{- if .Values.data.existingClaim }}
- name: data
  persistentVolumeClaim:
    claimName: {{ .Values.data.existingClaim }}
    readOnly: true
{{- end }}
{{- end }}

{{- define "gantry.dataMount" -}}
{{- if .Values.data.existingClaim }}
- name: data
  mountPath: {{ .Values.data.mountPath }}
  readOnly: true
{{- end }}
{{- end }}

{{/* The path at which the token file is mounted. */}}
{{- define "gantry.tokenPath" -}}
/etc/gantry/token/token
{{- end }}

{{/*
A worker group's effective settings as JSON: each field of workerDefaults, replaced by
the group's own when it has one (runPolicy and serve field by field), and `enabled`
(default true). Plain assignments, not sprig's merge, which would let a default
override a group's false or 0. Call with (dict "root" $ "group" GROUP).
*/}}
{{- define "gantry.workerGroup" -}}
{{- $group := default (dict) .group }}
{{- $effective := dict "enabled" (ternary $group.enabled true (hasKey $group "enabled")) }}
{{- range $field, $default := .root.Values.workerDefaults }}
{{- if not (hasKey $group $field) }}
{{- $_ := set $effective $field $default }}
{{- else if has $field (list "runPolicy" "serve") }}
{{- $merged := deepCopy $default }}
{{- range $k, $v := index $group $field }}
{{- $_ := set $merged $k $v }}
{{- end }}
{{- $_ := set $effective $field $merged }}
{{- else }}
{{- $_ := set $effective $field (index $group $field) }}
{{- end }}
{{- end }}
{{- toJson $effective }}
{{- end }}
