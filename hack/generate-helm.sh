#!/usr/bin/env bash
# generate-helm.sh copies into the Helm chart (manifests/helm/vmafx) every file the chart
# must not keep a second copy of: the generated CRDs (into crds/, which Helm installs
# before anything else), the generated roles (into files/rbac/, which
# templates/rbac-generated.yaml includes as they are), vmafx-scheduler's
# KubeSchedulerConfiguration and the device plugin's admission policy (into files/, read by
# the templates with .Files.Get). crds/ and files/ are rewritten from scratch, so a file
# removed at its source disappears from the chart too; `make verify` fails on any drift.
set -euo pipefail
cd "$(dirname "$0")/.."
chart=manifests/helm/vmafx
rm -rf "$chart/crds" "$chart/files"
mkdir -p "$chart/crds" "$chart/files/rbac"
for f in manifests/crd/*.yaml; do
  case "$f" in */kustomization.yaml) continue ;; esac
  cp "$f" "$chart/crds/"
done
for f in manifests/rbac/*.yaml manifests/rbac/gateway/*.yaml; do
  case "$f" in */kustomization.yaml) continue ;; esac
  cp "$f" "$chart/files/rbac/"
done
cp manifests/scheduler/config.yaml "$chart/files/scheduler-config.yaml"
cp manifests/device-plugin/admission-policy.yaml "$chart/files/device-plugin-admission-policy.yaml"
