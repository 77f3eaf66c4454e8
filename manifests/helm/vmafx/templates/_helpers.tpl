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
(list $ "vmafx-operator" "operator"). Its selector is app.kubernetes.io/name alone, as in the
kustomize manifests.
*/}}
{{- define "vmafx.componentLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ index . 1 }}
{{ include "vmafx.labels" $root }}
{{- if gt (len .) 2 }}
vmafx.dev/component: {{ index . 2 }}
{{- end }}
{{- end }}

{{/* vmafx.image is repository:tag of an image value; the tag defaults to appVersion. */}}
{{- define "vmafx.image" -}}
{{- $root := index . 0 -}}
{{- $image := index . 1 -}}
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
to, by the role name's prefix: operator (and the trainers it runs), scheduler or devicePlugin. A role of a new
component renders always rather than silently not at all.
*/}}
{{- define "vmafx.roleComponent" -}}
{{- if or (hasPrefix "vmafx-operator-" .) (hasPrefix "vmafx-trainer" .) -}}operator
{{- else if hasPrefix "vmafx-scheduler-" . -}}scheduler
{{- else if hasPrefix "vmafx-device-plugin" . -}}devicePlugin
{{- end -}}
{{- end }}

{{/* vmafx.serviceMonitor is "true" when ServiceMonitors are wanted and the cluster serves them. */}}
{{- define "vmafx.serviceMonitor" -}}
{{- if and .Values.monitoring.serviceMonitor.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") -}}
true
{{- end -}}
{{- end }}
