#!/usr/bin/env bash
# generate-rbac.sh writes one minimal ClusterRole per controller or component from the
# +kubebuilder:rbac markers in its package, into manifests/rbac/<role>.yaml.
# A line below is <role name> <package path> [subfolder]; packages that do not exist yet
# are skipped. The front doors' roles go to manifests/rbac/gateway/: the kustomize install
# is the platform alone, and the chart installs them with its server and mcp workloads.
set -euo pipefail
cd "$(dirname "$0")/.."
roles=(
  "vmafx-operator-job          ./operator/internal/controller/job"
  "vmafx-operator-node         ./operator/internal/controller/node"
  "vmafx-operator-training     ./operator/internal/controller/training"
  "vmafx-operator-comparison   ./operator/internal/controller/comparison"
  "vmafx-operator-ladder       ./operator/internal/controller/ladder"
  "vmafx-operator-manager      ./operator/internal/manager"
  "vmafx-scheduler-placement   ./scheduler-plugin/internal/placement"
  "vmafx-device-plugin         ./device-plugin/internal/heartbeat"
  "vmafx-gateway-access        ./gateway/internal/access     gateway"
  "vmafx-gateway-jobs          ./gateway/internal/jobs       gateway"
  "vmafx-gateway-mcp           ./gateway/internal/mcpserver  gateway"
  "vmafx-trainer               ./trainer/internal/trainer"
)
mkdir -p manifests/rbac manifests/rbac/gateway
for line in "${roles[@]}"; do
  read -r name pkg sub <<<"$line"
  compgen -G "$pkg/*.go" >/dev/null || continue
  out=$(mktemp -d)
  go tool controller-gen rbac:roleName="$name" paths="$pkg" output:rbac:artifacts:config="$out"
  if [ -f "$out/role.yaml" ]; then mv "$out/role.yaml" "manifests/rbac/${sub:+$sub/}$name.yaml"; fi
  rm -rf "$out"
done

# The kustomizations that install every generated role.
hack/generate-kustomization.sh manifests/rbac "hack/generate-rbac.sh from the +kubebuilder:rbac markers"
hack/generate-kustomization.sh manifests/rbac/gateway "hack/generate-rbac.sh from the +kubebuilder:rbac markers"
