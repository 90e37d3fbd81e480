#!/usr/bin/env bash
# One Harbor trial replayed with plain podman (or docker), the steps Harbor's docker/podman
# environment takes (docs/containers.md): build environment/, start the container, run the
# agent step (oracle: solution/ copied to /solution, solve.sh run; empty: nothing), copy
# tests/ to /tests only then, run tests/test.sh, read /logs/verifier/reward.txt.
# usage: harbor_replay.sh ENGINE TASK_DIR oracle|empty   (prints the reward, 0 or 1)
set -euo pipefail
engine=$1 task=$2 agent=$3
name="fbkit-replay-$$"
img="localhost/$name:latest"
build=(build -q -f "$task/environment/Dockerfile" -t "$img")
[ "$engine" = podman ] && build+=(--pull=never)
"$engine" "${build[@]}" "$task/environment" > /dev/null
trap '"$engine" rm -f "$name" >/dev/null 2>&1 || true; "$engine" rmi -f "$img" >/dev/null 2>&1 || true' EXIT
"$engine" run -d --name "$name" "$img" sh -c 'sleep infinity' > /dev/null
"$engine" exec -u root "$name" bash -c 'mkdir -p /logs/verifier /logs/agent /logs/artifacts && chmod 777 /logs/verifier /logs/agent /logs/artifacts'
if [ "$agent" = oracle ]; then
  "$engine" exec -u root "$name" mkdir -p /solution
  tar -C "$task/solution" -cf - . | "$engine" exec -i -u root "$name" tar -xf - -C /solution
  "$engine" exec -u root "$name" bash -c 'chmod +x /solution/solve.sh'
  "$engine" exec "$name" bash -c '(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1' || true
fi
"$engine" exec -u root "$name" bash -c 'rm -f -- /logs/verifier/reward.txt /logs/verifier/reward.json; mkdir -p /tests'
tar -C "$task/tests" -cf - . | "$engine" exec -i -u root "$name" tar -xf - -C /tests
"$engine" exec -u root "$name" bash -c 'chmod +x /tests/test.sh'
"$engine" exec "$name" bash -c '(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1' || true
"$engine" exec "$name" cat /logs/verifier/reward.txt
