{{/*
vmafx.namespace is the release namespace, which must be vmafx-system: the components look
for their VmafxNodes and leases there (vmafxv1.SystemNamespace), the generated Role
vmafx-operator-manager and the device plugin's admission policy name it.
*/}}
{{- define "vmafx.namespace" -}}
{{- if ne .Release.Namespace "vmafx-system" -}}
{{- fail (printf "the vmafx chart installs into the namespace vmafx-system, not %q: the components and the generated RBAC expect it (helm upgrade --install vmafx <chart> -n vmafx-system --create-namespace)" .Release.Namespace) -}}
{{- end -}}
{{- .Release.Namespace -}}
{{- end }}

{{/* vmafx.labels are the labels every object of the chart carries. */}}
{{- define "vmafx.labels" -}}
app.kubernetes.io/part-of: vmafx
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
vmafx.componentLabels are the labels of one component's objects and Pods; call it with
(list $ "vmafx-operator" "operator"). Its selector is app.kubernetes.io/name alone.
*/}}
{{- define "vmafx.componentLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ index . 1 }}
{{ include "vmafx.labels" $root }}
{{- if gt (len .) 2 }}
vmafx.dev/component: {{ index . 2 }}
{{- end }}
{{- end }}

{{/* vmafx.image is [imageRegistry/]repository:tag of an image value; the tag defaults to appVersion. */}}
{{- define "vmafx.image" -}}
{{- $root := index . 0 -}}
{{- $image := index . 1 -}}
{{- with $root.Values.imageRegistry }}{{ trimSuffix "/" . }}/{{ end -}}
{{- printf "%s:%s" $image.repository (toString ($image.tag | default $root.Chart.AppVersion)) -}}
{{- end }}

{{/*
vmafx.vendor maps gpu.vendor to what nodes of that vendor need, as YAML (read it with
fromYaml):
  discovery     the device plugin's VMAFX_VENDOR (which devices it offers slots on)
  backend       VMAFX_BACKEND, the vendor's native backend (GPUVendor.NativeBackend)
  nodeSelector  the label the vendor's GPU operator or Node Feature Discovery puts on
                nodes with its GPUs (empty for cpu: every Linux node qualifies)
  tolerations   the taint GPU nodes of the vendor commonly carry to keep other work away
The values schema already refuses another vendor; the fail below says the same for a chart
rendered without schema validation.
*/}}
{{- define "vmafx.vendor" -}}
{{- $vendor := .Values.gpu.vendor -}}
{{- if eq $vendor "nvidia" -}}
discovery: nvidia
backend: cuda
nodeSelector:
  nvidia.com/gpu.present: "true"
tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
{{- else if eq $vendor "amd" -}}
discovery: amd
backend: hip
nodeSelector:
  feature.node.kubernetes.io/amd-gpu: "true"
tolerations:
  - key: amd.com/gpu
    operator: Exists
    effect: NoSchedule
{{- else if eq $vendor "intel" -}}
discovery: intel
backend: sycl
nodeSelector:
  intel.feature.node.kubernetes.io/gpu: "true"
tolerations:
  - key: gpu.intel.com/i915
    operator: Exists
    effect: NoSchedule
  - key: gpu.intel.com/xe
    operator: Exists
    effect: NoSchedule
{{- else if eq $vendor "cpu" -}}
discovery: cpu
backend: cpu
nodeSelector: {}
tolerations: []
{{- else -}}
{{- fail (printf "gpu.vendor %q is not a vendor the chart knows: use nvidia, amd, intel or cpu" (toString $vendor)) -}}
{{- end -}}
{{- end }}

{{/*
vmafx.vendorResource is the extended resource the vendor's own device plugin advertises
for one GPU (empty for cpu), which the batch Job asks for.
*/}}
{{- define "vmafx.vendorResource" -}}
{{- $vendor := .Values.gpu.vendor -}}
{{- if eq $vendor "nvidia" -}}nvidia.com/gpu
{{- else if eq $vendor "amd" -}}amd.com/gpu
{{- else if eq $vendor "intel" -}}gpu.intel.com/i915
{{- else if eq $vendor "cpu" -}}
{{- else -}}
{{- fail (printf "gpu.vendor %q is not a vendor the chart knows: use nvidia, amd, intel or cpu" (toString $vendor)) -}}
{{- end -}}
{{- end }}

{{/* vmafx.klogVerbosity maps a logLevel to klog's -v for the components that log with klog. */}}
{{- define "vmafx.klogVerbosity" -}}
{{- get (dict "debug" "4" "info" "2" "warn" "0" "error" "0") . | default "2" -}}
{{- end }}

{{/*
vmafx.podSecurityContext and vmafx.containerSecurityContext are the hardened defaults of
every Pod of the chart but the device plugin: a non-root user, seccomp RuntimeDefault, no
privilege escalation, a read-only root filesystem and no capabilities. They pass the
restricted Pod Security Standard.
*/}}
{{- define "vmafx.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "vmafx.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end }}

{{/* vmafx.imagePullSecrets renders the Pod's imagePullSecrets, if any. */}}
{{- define "vmafx.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
vmafx.roleComponent is the component a generated role file (files/rbac/<name>.yaml) belongs
to, by the role name's prefix: operator (and the trainers it runs), scheduler, devicePlugin or gateway (the front doors). A role of a new
component renders always rather than silently not at all.
*/}}
{{- define "vmafx.roleComponent" -}}
{{- if or (hasPrefix "vmafx-operator-" .) (hasPrefix "vmafx-trainer" .) -}}operator
{{- else if hasPrefix "vmafx-scheduler-" . -}}scheduler
{{- else if hasPrefix "vmafx-device-plugin" . -}}devicePlugin
{{- else if hasPrefix "vmafx-gateway-" . -}}gateway
{{- end -}}
{{- end }}

{{/* vmafx.serviceMonitor is "true" when ServiceMonitors are wanted and the cluster serves them. */}}
{{- define "vmafx.serviceMonitor" -}}
{{- if and .Values.monitoring.serviceMonitor.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") -}}
true
{{- end -}}
{{- end }}

{{/*
vmafx.workloads is the list of workloads values.workload turns on, as JSON (read it with
fromJsonArray): a single name is a list of one; batch.enabled, the older switch of the
batch Job, adds "job".
*/}}
{{- define "vmafx.workloads" -}}
{{- $w := .Values.workload -}}
{{- if kindIs "string" $w }}{{ $w = list $w }}{{ end -}}
{{- if .Values.batch.enabled }}{{ $w = append $w "job" }}{{ end -}}
{{- toJson $w -}}
{{- end }}

{{/*
vmafx.enabled is "true" when the component named by (list $ name) renders: operator,
scheduler and devicePlugin with the platform workload and their own enabled value; batch
with the job workload; server and mcp with theirs; gateway (the front doors' shared
roles) with server or mcp; "" otherwise.
*/}}
{{- define "vmafx.enabled" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $w := include "vmafx.workloads" $root | fromJsonArray -}}
{{- if has $name (list "operator" "scheduler" "devicePlugin") -}}
{{- if and (has "platform" $w) (index $root.Values $name).enabled }}true{{ end -}}
{{- else if eq $name "batch" -}}
{{- if has "job" $w }}true{{ end -}}
{{- else if eq $name "gateway" -}}
{{- if or (has "server" $w) (has "mcp" $w) }}true{{ end -}}
{{- else if has $name $w -}}true
{{- end -}}
{{- end }}

{{/*
vmafx.doorContainer is the container of a front door (server or mcp), called with
(list $ values binary envPrefix): its image, ports, probes on /healthz and /readyz, TLS
from a Secret mounted at /etc/vmafx/tls, and the hardened security context.
*/}}
{{- define "vmafx.doorContainer" -}}
{{- $root := index . 0 -}}
{{- $v := index . 1 -}}
{{- $binary := index . 2 -}}
{{- $prefix := index . 3 -}}
- name: {{ $binary }}
  image: {{ include "vmafx.image" (list $root $v.image) | quote }}
  imagePullPolicy: {{ $v.image.pullPolicy }}
  args:
    - {{ printf "-v=%s" (include "vmafx.klogVerbosity" $v.logLevel) | quote }}
  env:
    - name: {{ $prefix }}ADDR
      value: {{ printf ":%d" (int $v.port) | quote }}
    - name: {{ $prefix }}PROBE_ADDR
      value: {{ printf ":%d" (int $v.probePort) | quote }}
    - name: {{ $prefix }}SHUTDOWN_TIMEOUT
      value: {{ printf "%ds" (int $v.shutdownTimeoutSeconds) | quote }}
    {{- with $v.tokenAudiences }}
    - name: {{ $prefix }}TOKEN_AUDIENCES
      value: {{ join "," . | quote }}
    {{- end }}
    {{- with $v.sessions }}
    - name: {{ $prefix }}MAX_SESSIONS_PER_USER
      value: {{ .maxPerUser | int | toString | quote }}
    - name: {{ $prefix }}MAX_SESSIONS
      value: {{ .max | int | toString | quote }}
    - name: {{ $prefix }}SESSION_IDLE_TIMEOUT
      value: {{ .idleTimeout | quote }}
    {{- end }}
    {{- with $v.console }}
    - name: {{ $prefix }}CONSOLE
      value: {{ .enabled | toString | quote }}
    - name: {{ $prefix }}CONSOLE_READ_OUTPUTS
      value: {{ .readOutputs | toString | quote }}
    {{- end }}
    {{- if hasKey $v "readOutputs" }}
    - name: {{ $prefix }}READ_OUTPUTS
      value: {{ $v.readOutputs | toString | quote }}
    {{- end }}
    {{- if $v.tls.secretName }}
    - name: {{ $prefix }}TLS_CERT_FILE
      value: /etc/vmafx/tls/tls.crt
    - name: {{ $prefix }}TLS_KEY_FILE
      value: /etc/vmafx/tls/tls.key
    {{- end }}
    {{- with $v.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    - name: {{ ternary "https" "http" (not (empty $v.tls.secretName)) }}
      containerPort: {{ $v.port }}
    - name: probes
      containerPort: {{ $v.probePort }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: probes
    periodSeconds: 10
  readinessProbe:
    httpGet:
      path: /readyz
      port: probes
    periodSeconds: 5
  {{- with $v.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- include "vmafx.containerSecurityContext" $root | nindent 4 }}
  {{- $keys := include "vmafx.consoleKeys" $v }}
  {{- if or $v.tls.secretName $keys }}
  volumeMounts:
    {{- if $v.tls.secretName }}
    - name: tls
      mountPath: /etc/vmafx/tls
      readOnly: true
    {{- end }}
    {{- if $keys }}
    # The door lays a job's Secret out here, as files, while it reads the output.
    - name: tmp
      mountPath: /tmp
    {{- end }}
  {{- end }}
{{- end }}

{{/* vmafx.consoleKeys is "true" when a door reads outputs with jobs' Secrets: vmafx-api's
console (console.readOutputs), vmafx-mcp's worst_frames pictures (readOutputs). */}}
{{- define "vmafx.consoleKeys" -}}
{{- with .console }}{{ if .readOutputs }}true{{ end }}{{ end -}}
{{- if .readOutputs }}true{{ end -}}
{{- end }}

{{/* vmafx.doorPod is the Pod spec fields shared by the front doors, called with (list $ values name). */}}
{{- define "vmafx.doorPod" -}}
{{- $root := index . 0 -}}
{{- $v := index . 1 -}}
{{- $name := index . 2 -}}
serviceAccountName: {{ $name }}
# The Endpoints controller takes the Pod out of its Service first; the door then answers
# its open long polls and finishes in-flight requests within shutdownTimeoutSeconds.
terminationGracePeriodSeconds: {{ add $v.shutdownTimeoutSeconds 10 }}
enableServiceLinks: false
{{- include "vmafx.imagePullSecrets" $root }}
securityContext:
  {{- include "vmafx.podSecurityContext" $root | nindent 2 }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $keys := include "vmafx.consoleKeys" $v }}
{{- if or $v.tls.secretName $keys }}
volumes:
  {{- if $v.tls.secretName }}
  - name: tls
    secret:
      secretName: {{ $v.tls.secretName }}
  {{- end }}
  {{- if $keys }}
  - name: tmp
    emptyDir:
      medium: Memory
      sizeLimit: 1Mi
  {{- end }}
{{- end }}
{{- end }}
