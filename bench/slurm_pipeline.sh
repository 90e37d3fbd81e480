#!/bin/bash
# Runs fbkit's whole pipeline (deploy/slurm/fbkit-pipeline.sh: trace shards -> merge + build
# -> all shards -> summary -> infer shards -> eval shards, afterok between stages) for real
# on a single-node Slurm cluster of this machine (set up when none answers), against the
# same stages run locally and unsharded, and compares their outputs byte for byte: the
# ctest slurm_pipeline with the real sbatch instead of its stand-in.
#
#   bench/slurm_pipeline.sh [OUT]      (as root; default OUT /var/tmp/fbkit-slurm-pipeline)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/slurm_cluster.sh
source "$here/bench/slurm_cluster.sh"
setup_slurm
FBKIT_REAL_SLURM=1 "$here/tests/deploy/slurm_pipeline_test.sh" "$here/build/cli" "$here" \
  "${1:-/var/tmp/fbkit-slurm-pipeline}"
