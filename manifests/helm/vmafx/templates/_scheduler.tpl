{{/*
vmafx.schedulerConfig is vmafx-scheduler's KubeSchedulerConfiguration: the shipped
files/scheduler-config.yaml (the profile's one copy, which the scheduler's tests load too)
with scheduler.leaderElect and the VmafxPlacement args of scheduler.placement
laid over it. When the values change nothing, the file goes in as it is, comments included.
*/}}
{{- define "vmafx.schedulerConfig" -}}
{{- $raw := .Files.Get "files/scheduler-config.yaml" -}}
{{- $config := fromYaml $raw -}}
{{- if hasKey $config "Error" -}}
{{- fail (printf "files/scheduler-config.yaml: %s" $config.Error) -}}
{{- end -}}
{{- $leaderElection := $config.leaderElection | default dict -}}
{{- $changed := or (ne (toString $leaderElection.leaderElect) (toString .Values.scheduler.leaderElect)) (not (empty .Values.scheduler.placement)) -}}
{{- /* set, not merge: merge takes false for unset and would keep the file's true. */ -}}
{{- $_ := set $leaderElection "leaderElect" .Values.scheduler.leaderElect -}}
{{- $_ := set $config "leaderElection" $leaderElection -}}
{{- $found := false -}}
{{- range $profile := $config.profiles -}}
{{- if eq $profile.schedulerName "vmafx-scheduler" -}}
{{- range $plugin := $profile.pluginConfig -}}
{{- if eq $plugin.name "VmafxPlacement" -}}
{{- $found = true -}}
{{- $args := $plugin.args | default dict -}}
{{- /* Key by key (weights one level down), so that a 0 or false from values counts. */ -}}
{{- range $key, $value := $.Values.scheduler.placement -}}
{{- if and (kindIs "map" $value) (kindIs "map" (get $args $key)) -}}
{{- range $k, $v := $value -}}
{{- $_ := set (get $args $key) $k $v -}}
{{- end -}}
{{- else -}}
{{- $_ := set $args $key $value -}}
{{- end -}}
{{- end -}}
{{- $_ := set $plugin "args" $args -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $found -}}
{{- fail "files/scheduler-config.yaml has no VmafxPlacement pluginConfig in the vmafx-scheduler profile" -}}
{{- end -}}
{{- if $changed -}}
{{- toYaml $config -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end }}
