#!/bin/bash
# Schema check of deploy/k8s/ (every Job against Kubernetes' own schemas, offline, strict:
# unknown fields fail) with kubernetes-validate from setup.sh, and a syntax check of the
# driver scripts. A manifest with a misspelt field must fail the same check, so the check
# itself is known to bite. No cluster runs them here.
# usage: k8s_manifests_test.sh SOURCE_DIR
set -euo pipefail
src=$1
validate=$src/.deps/tools/kubernetes-validate/venv/bin/kubernetes-validate
[ -x "$validate" ] || { echo "kubernetes-validate is not installed: run ./setup.sh"; exit 1; }
files=("$src"/deploy/k8s/*.yaml)
[ ${#files[@]} -ge 6 ] || { echo "expected the six stage manifests, found ${#files[@]}"; exit 1; }
"$validate" --strict "${files[@]}"
bash -n "$src/deploy/k8s/pipeline.sh"
for stage in trace build all all-summary infer eval; do
  [ -f "$src/deploy/k8s/fbkit-$stage-job.yaml" ] || { echo "pipeline.sh needs fbkit-$stage-job.yaml"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/completions:/completionz:/' "$src/deploy/k8s/fbkit-trace-job.yaml" > "$tmp/bad.yaml"
if "$validate" --strict --quiet "$tmp/bad.yaml" > "$tmp/out" 2>&1; then
  echo "a misspelt field passed the check"; exit 1
fi
grep -q "completionz" "$tmp/out"
echo "k8s manifests valid; a misspelt field is caught"
