{{/* The name of every object: fullnameOverride, else the release name. */}}
{{- define "raven.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "raven.selectorLabels" -}}
app.kubernetes.io/name: raven
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "raven.labels" -}}
{{ include "raven.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "raven.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "raven.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: give the existing ServiceAccount's name when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* "true" when leader election is on: as set, else when replicaCount > 1. */}}
{{- define "raven.leaderElection" -}}
{{- if kindIs "invalid" .Values.leaderElection.enabled -}}
{{- and (gt (int .Values.replicaCount) 1) (not .Values.sharding.enabled) -}}
{{- else -}}
{{- .Values.leaderElection.enabled -}}
{{- end -}}
{{- end -}}

{{/* Refuse combinations that cannot work, naming the value and what would be valid. */}}
{{- define "raven.validate" -}}
{{- $replicas := int .Values.replicaCount -}}
{{- $type := .Values.checkpoint.type -}}
{{- if not (has $type (list "sqlite" "postgres")) -}}
{{- fail (printf "checkpoint.type: %q is not valid; use sqlite (one replica) or postgres (any number)" $type) -}}
{{- end -}}
{{- if and (gt $replicas 1) (eq $type "sqlite") -}}
{{- fail (printf "checkpoint.type: sqlite is a file on one pod's volume and works with replicaCount 1 only (got replicaCount %d); use checkpoint.type: postgres with checkpoint.postgres.existingSecret for several replicas" $replicas) -}}
{{- end -}}
{{- if and .Values.sharding.enabled (eq $type "sqlite") -}}
{{- fail "sharding.enabled: the replicas share their checkpoint; use checkpoint.type: postgres with checkpoint.postgres.existingSecret" -}}
{{- end -}}
{{- if and .Values.sharding.enabled (eq (include "raven.leaderElection" .) "true") -}}
{{- fail "leaderElection.enabled: true with sharding.enabled: choose one (sharded replicas each own a part of the objects; leader election makes one replica do everything)" -}}
{{- end -}}
{{- if and (gt $replicas 1) (eq (include "raven.leaderElection" .) "false") (not .Values.sharding.enabled) -}}
{{- fail (printf "leaderElection.enabled: false with replicaCount %d would run %d active daemons delivering every change %d times; leave it unset (on above 1 replica) or set replicaCount: 1" $replicas $replicas $replicas) -}}
{{- end -}}
{{- if eq $type "postgres" -}}
{{- if not .Values.checkpoint.postgres.existingSecret -}}
{{- fail "checkpoint.postgres.existingSecret: required with checkpoint.type postgres: the name of a Secret in the release's namespace whose key checkpoint.postgres.secretKey holds the postgres:// URL" -}}
{{- end -}}
{{- if not .Values.redactionKey.existingSecret -}}
{{- fail "redactionKey.existingSecret: required with checkpoint.type postgres: the name of a Secret whose key redactionKey.secretKey holds one key (16 characters or more) for every replica, so Secret fingerprints agree whichever replica leads" -}}
{{- end -}}
{{- end -}}
{{- if and (not (kindIs "invalid" .Values.podDisruptionBudget.minAvailable)) (not (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable)) -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both (set the other to null)" -}}
{{- end -}}
{{- if ge (float64 .Values.shutdown.drainTimeoutSeconds) (float64 .Values.terminationGracePeriodSeconds) -}}
{{- fail (printf "shutdown.drainTimeoutSeconds (%v) must be less than terminationGracePeriodSeconds (%v), or SIGKILL ends the drain" .Values.shutdown.drainTimeoutSeconds .Values.terminationGracePeriodSeconds) -}}
{{- end -}}
{{- range $key := list "server" "checkpoint" "leaderElection" "sharding" "shutdown" -}}
{{- if hasKey $.Values.config $key -}}
{{- fail (printf "config.%s: the chart writes this part of raven.yaml; set the chart's values instead (see the chart's README.md)" $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* raven.yaml: the config value plus what the chart owns. */}}
{{- define "raven.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $_ := set $config "server" (dict "address" "0.0.0.0" "port" (int .Values.service.port)) -}}
{{- if eq .Values.checkpoint.type "postgres" -}}
{{- $pg := .Values.checkpoint.postgres -}}
{{- $_ := set $config "checkpoint" (dict "type" "postgres" "url" "${RAVEN_CHECKPOINT_URL}" "schema" $pg.schema "flushIntervalMs" (int $pg.flushIntervalMs) "timeoutSeconds" $pg.timeoutSeconds) -}}
{{- else -}}
{{- $_ := set $config "checkpoint" (dict "type" "sqlite" "path" "/var/lib/raven/raven-state.db") -}}
{{- end -}}
{{- $le := .Values.leaderElection -}}
{{- $_ := set $config "leaderElection" (dict "enabled" (eq (include "raven.leaderElection" .) "true") "namespace" .Release.Namespace "name" (include "raven.fullname" .) "leaseDurationSeconds" $le.leaseDurationSeconds "renewDeadlineSeconds" $le.renewDeadlineSeconds "retryPeriodSeconds" $le.retryPeriodSeconds) -}}
{{- if .Values.sharding.enabled -}}
{{- $sh := .Values.sharding -}}
{{- $_ := set $config "sharding" (dict "enabled" true "namespace" .Release.Namespace "group" (include "raven.fullname" .) "field" $sh.field "buckets" (int $sh.buckets) "leaseDurationSeconds" $sh.leaseDurationSeconds "renewDeadlineSeconds" $sh.renewDeadlineSeconds "retryPeriodSeconds" $sh.retryPeriodSeconds) -}}
{{- end -}}
{{- $_ := set $config "shutdown" (dict "drainTimeoutSeconds" .Values.shutdown.drainTimeoutSeconds) -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
The ClusterRole's read rules: rbac.rules when given, else one rule per API group of
config.watchers[].resource, groups and resources sorted, as deploy/rbac-from-config.ts prints them.
Without discovery a resource is read as written: group/version/plural, v1/plural, plural.group or
plural (the core group); a short name or a kind needs rbac.rules.
*/}}
{{- define "raven.readRules" -}}
{{- if .Values.rbac.rules -}}
{{- toYaml .Values.rbac.rules -}}
{{- else -}}
{{- $groups := dict -}}
{{- range $i, $w := .Values.config.watchers -}}
{{- $resource := required (printf "config.watchers[%d].resource: required (such as deployments.apps)" $i) $w.resource -}}
{{- $group := "" -}}
{{- $plural := $resource -}}
{{- $parts := splitList "/" $resource -}}
{{- if eq (len $parts) 3 -}}
{{- $group = index $parts 0 -}}
{{- $plural = index $parts 2 -}}
{{- else if eq (len $parts) 2 -}}
{{- $plural = index $parts 1 -}}
{{- else if contains "." $resource -}}
{{- $dot := splitn "." 2 $resource -}}
{{- $plural = $dot._0 -}}
{{- $group = $dot._1 -}}
{{- end -}}
{{- $_ := set $groups $group (append (get $groups $group | default list) $plural) -}}
{{- end -}}
{{- range $group := keys $groups | sortAlpha }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ get $groups $group | uniq | sortAlpha | toJson }}
  verbs: [get, list, watch]
{{- end -}}
{{- end -}}
{{- end -}}
