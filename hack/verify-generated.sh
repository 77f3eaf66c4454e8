#!/usr/bin/env bash
# verify-generated.sh regenerates every generated file in a copy of the work tree and fails
# when the committed output differs, so that nothing generated can be stale or hand-edited.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard -z | xargs -0 tar -cf - | tar -xf - -C "$tmp"
make -C "$tmp" --no-print-directory generate >/dev/null
# Generated paths: deepcopy next to the API types, everything under manifests that
# controller-gen writes, the chart's values schema and the values reference made from its
# values.yaml (helm-values-schema-json and helm-docs), the install rendered from the
# chart (hack/render-manifests), the API reference page made from the CRDs (hack/apiref),
# the names reference made from apis/vmafx/v1 (hack/namesref), and the worker's SPIR-V
# (hack/generate-spirv.sh). One list, one find expression per use.
generated=(
  -name 'zz_generated*'
  -o -path './manifests/crd/vmafx.dev_*.yaml' -o -path './manifests/crd/kustomization.yaml'
  -o -path './manifests/rbac/*.yaml'
  -o -path './manifests/helm/vmafx/crds/*' -o -path './manifests/helm/vmafx/files/rbac/*'
  -o -path './manifests/default/*' -o -path './manifests/overlays/local/*'
  -o -path './manifests/helm/vmafx/values.schema.json' -o -path './docs/values-reference.md'
  -o -path './docs/api-reference.md' -o -path './docs/reference.md'
  -o -path './vmaf/*.spv'
)
status=0
while IFS= read -r f; do
  if ! cmp -s "$tmp/$f" "$f"; then echo "stale generated file: $f (run 'make generate')"; status=1; fi
done < <(cd "$tmp" && find . \( "${generated[@]}" \) -type f | sed 's|^\./||')
# A generated file that exists here but would no longer be generated is stale too.
while IFS= read -r f; do
  if [ ! -e "$tmp/$f" ]; then echo "generated file no longer produced: $f"; status=1; fi
done < <(find . \( "${generated[@]}" \) -type f -not -path './.git/*' | sed 's|^\./||')
[ $status -eq 0 ] && echo "generated files are up to date"
exit $status
