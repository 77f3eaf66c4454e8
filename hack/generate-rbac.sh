#!/usr/bin/env bash
# generate-rbac.sh writes one minimal ClusterRole per controller or component from the
# +kubebuilder:rbac markers in its package, into manifests/rbac/<role>.yaml.
# A line below is <role name> <package path>; packages that do not exist yet are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
roles=(
  "vmafx-operator-job          ./operator/internal/controller/job"
  "vmafx-operator-node         ./operator/internal/controller/node"
  "vmafx-operator-training     ./operator/internal/controller/training"
  "vmafx-operator-manager      ./operator/internal/manager"
  "vmafx-scheduler-placement   ./scheduler-plugin/internal/placement"
  "vmafx-device-plugin         ./device-plugin/internal/heartbeat"
  "vmafx-trainer               ./worker/internal/trainer"
)
mkdir -p manifests/rbac
for line in "${roles[@]}"; do
  read -r name pkg <<<"$line"
  compgen -G "$pkg/*.go" >/dev/null || continue
  out=$(mktemp -d)
  go tool controller-gen rbac:roleName="$name" paths="$pkg" output:rbac:artifacts:config="$out"
  if [ -f "$out/role.yaml" ]; then mv "$out/role.yaml" "manifests/rbac/$name.yaml"; fi
  rm -rf "$out"
done

# The kustomization that installs every generated role.
hack/generate-kustomization.sh manifests/rbac "hack/generate-rbac.sh from the +kubebuilder:rbac markers"
