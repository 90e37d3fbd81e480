#!/bin/bash
# Runs fbkit's whole pipeline on Kubernetes: applies each stage's Job in order and waits for
# it to complete before the next (Kubernetes has no dependencies between Jobs); stops at
# the first Job that fails. Stages: trace (Indexed) -> build -> all (Indexed) -> all
# summary -> infer (Indexed) -> eval (Indexed); the shared volume's layout is in
# fbkit-trace-job.yaml. Edit the image, claim, N and commands in the files first.
#
#   deploy/k8s/pipeline.sh [--until all-summary] [--timeout SECONDS]  (kubectl's context)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
until_stage="" timeout=86400
while [ $# -gt 0 ]; do
  case $1 in
    --until) until_stage=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    *) echo "usage: $0 [--until STAGE] [--timeout SECONDS]" >&2; exit 2 ;;
  esac
done
for stage in trace build all all-summary infer eval; do
  kubectl apply -f "$here/fbkit-$stage-job.yaml"
  deadline=$(( $(date +%s) + timeout ))
  while :; do
    state=$(kubectl get "job/fbkit-$stage" \
      -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
    case " $state " in
      *" Complete "*) echo "fbkit-$stage complete"; break ;;
      *" Failed "*) echo "fbkit-$stage failed: see kubectl logs job/fbkit-$stage" >&2; exit 1 ;;
    esac
    [ "$(date +%s)" -lt "$deadline" ] || { echo "fbkit-$stage: timed out" >&2; exit 1; }
    sleep 10
  done
  [ "$stage" != "$until_stage" ] || break
done
