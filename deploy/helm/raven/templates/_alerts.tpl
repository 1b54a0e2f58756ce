{{/*
Raven's alerting rules (docs/alerts.md has a runbook for each). Called with a dict:
  root   the chart's context (.)
  scoped true: every selector names this release's metrics Service and namespace
deploy/prometheus/raven-alerts.yaml is these rules rendered unscoped with the default values;
test/e2e/deploy-alerts.e2e.test.ts checks that the two agree.
*/}}
{{- define "raven.alertGroups" -}}
{{- $v := .root.Values -}}
{{- $sel := "" -}}
{{- if .scoped -}}
{{- $sel = printf "namespace=%q,service=%q" .root.Release.Namespace (printf "%s-metrics" (include "raven.fullname" .root)) -}}
{{- end -}}
{{- $s := ternary "" (printf "{%s}" $sel) (eq $sel "") -}}
{{- $and := ternary "" (printf "%s," $sel) (eq $sel "") -}}
{{- $lease := ternary $v.sharding.leaseDurationSeconds $v.leaderElection.leaseDurationSeconds $v.sharding.enabled -}}
{{- $rule := $v.metrics.prometheusRule -}}
- name: raven
  rules:
    - alert: RavenWatcherFailing
      expr: raven_watcher_failing{{ $s }} == 1
      for: {{ $rule.watcherFailingFor }}
      labels:
        severity: critical
      annotations:
        summary: 'Watcher {{`{{ $labels.watcher }}`}} has been failing for more than {{ $rule.watcherFailingFor }}'
        description: 'Raven cannot list or watch {{`{{ $labels.watcher }}`}} ({{`{{ $labels.instance }}`}}); changes are not seen until it recovers. The log has the Status.'
        runbook: docs/alerts.md#ravenwatcherfailing
    - alert: RavenGapReported
      expr: (increase(raven_gaps_total{{ $s }}[15m]) > 0) or (raven_gaps_total{{ $s }} unless raven_gaps_total{{ $s }} offset 15m)
      labels:
        severity: warning
      annotations:
        summary: 'Changes of {{`{{ $labels.watcher }}`}} may not have reached sink {{`{{ $labels.sink }}`}} ({{`{{ $labels.reason }}`}})'
        description: 'Intermediate changes may be missing at {{`{{ $labels.sink }}`}}; the end state was delivered. Reason: {{`{{ $labels.reason }}`}}.'
        runbook: docs/alerts.md#ravengapreported
    - alert: RavenDeadLettersGrowing
      expr: (increase(raven_deliveries_total{ {{- $and -}} outcome="dead_lettered"}[15m]) > 0) or (raven_deliveries_total{ {{- $and -}} outcome="dead_lettered"} unless raven_deliveries_total{ {{- $and -}} outcome="dead_lettered"} offset 15m)
      labels:
        severity: warning
      annotations:
        summary: 'Sink {{`{{ $labels.sink }}`}} is dead-lettering changes'
        description: 'Changes that {{`{{ $labels.sink }}`}} refused or kept failing were written to its dead-letter file in the last 15 minutes.'
        runbook: docs/alerts.md#ravendeadlettersgrowing
    - alert: RavenDeliveryLagHigh
      expr: histogram_quantile(0.99, sum without (instance, pod) (rate(raven_delivery_latency_seconds_bucket{{ $s }}[5m]))) > {{ $rule.deliveryLagSeconds }}
      for: 10m
      labels:
        severity: warning
      annotations:
        summary: 'Sink {{`{{ $labels.sink }}`}} takes more than {{ $rule.deliveryLagSeconds }} s to accept changes (99th percentile)'
        description: 'From a change being queued to {{`{{ $labels.sink }}`}} accepting it, retries included: {{`{{ $value | humanizeDuration }}`}}.'
        runbook: docs/alerts.md#ravendeliverylaghigh
    - alert: RavenDeliveryStalled
      expr: (min_over_time(raven_delivery_backlog{{ $s }}[10m]) > 0) unless on (instance, sink) (increase(raven_deliveries_total{ {{- $and -}} outcome="delivered"}[10m]) > 0)
      labels:
        severity: critical
      annotations:
        summary: 'Sink {{`{{ $labels.sink }}`}} has had changes waiting for 10 minutes and accepted none'
        description: 'The lag of {{`{{ $labels.sink }}`}} is growing without bound: {{`{{ $value }}`}} changes held on {{`{{ $labels.instance }}`}}.'
        runbook: docs/alerts.md#ravendeliverystalled
    - alert: RavenCheckpointFenced
      expr: increase(raven_checkpoint_fenced_total{{ $s }}[15m]) > 0
      labels:
        severity: critical
      annotations:
        summary: 'A checkpoint write of {{`{{ $labels.instance }}`}} was fenced'
        description: 'Another replica holds the shared checkpoint; this one stopped its work. Two replicas believed they were active.'
        runbook: docs/alerts.md#ravencheckpointfenced
    - alert: RavenNoLeader
      expr: (sum without (instance, pod) (raven_leader{{ $s }}) == 0) or absent(raven_leader{{ $s }})
      for: {{ $lease }}s
      labels:
        severity: critical
      annotations:
        summary: 'No Raven replica has been active for longer than the lease ({{ $lease }} s)'
        description: 'No replica leads (or none is scraped): no change is being delivered.'
        runbook: docs/alerts.md#ravennoleader
{{- end -}}
