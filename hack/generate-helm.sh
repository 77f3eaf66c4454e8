#!/usr/bin/env bash
# generate-helm.sh copies into the Helm chart (manifests/helm/vmafx) what controller-gen
# generates: the CRDs (into crds/, which Helm installs before anything else) and the
# roles (into files/rbac/, which templates/rbac-generated.yaml includes as they are).
# crds/ and files/rbac/ are rewritten from scratch, so a file removed at its source
# disappears from the chart too; `make verify` fails on any drift. The chart is the one
# source of the install: hack/render-manifests renders the kustomize folders from it.
set -euo pipefail
cd "$(dirname "$0")/.."
chart=manifests/helm/vmafx
rm -rf "$chart/crds" "$chart/files/rbac"
mkdir -p "$chart/crds" "$chart/files/rbac"
for f in manifests/crd/*.yaml; do
  case "$f" in */kustomization.yaml) continue ;; esac
  cp "$f" "$chart/crds/"
done
for f in manifests/rbac/*.yaml manifests/rbac/gateway/*.yaml; do
  case "$f" in */kustomization.yaml) continue ;; esac
  cp "$f" "$chart/files/rbac/"
done
