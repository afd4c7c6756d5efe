#!/usr/bin/env bash
# Tunes over N Slurm array tasks, then merges and distills in one dependent
# job:
#   GRADTUNE_SHARD_DIR=/shared/run1 scripts/slurm/submit.sh N [tune options] [-- distill options]
# e.g. scripts/slurm/submit.sh 8 --budget 3600 -- --remeasure 3
# Prints the two job ids. Every node must be of the CPU class the records are
# for (`gradtune variants | head -1`): `gradtune merge` refuses logs of
# several classes. Extra sbatch options (partition, time limit) go in
# SBATCH_* environment variables, e.g. SBATCH_PARTITION=tune.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GRADTUNE_ROOT="${GRADTUNE_ROOT:-$(cd "$here/../.." && pwd)}"
: "${GRADTUNE_SHARD_DIR:?set GRADTUNE_SHARD_DIR to a directory every node sees}"
export GRADTUNE_SHARD_DIR
n="${1:?usage: submit.sh N [tune options] [-- distill options]}"; shift
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: N must be a positive number, not '$n'" >&2; exit 2; }
tune_args=(); distill_args=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; distill_args=("$@"); break; fi
  tune_args+=("$1"); shift
done
mkdir -p "$GRADTUNE_SHARD_DIR"
array="$(sbatch --parsable --export=ALL --array=0-$((n - 1)) --output="$GRADTUNE_SHARD_DIR/tune-%a.out" \
  "$here/tune-array.sbatch" "${tune_args[@]}")"
final="$(sbatch --parsable --export=ALL --dependency=afterok:"${array%%;*}" --output="$GRADTUNE_SHARD_DIR/merge.out" \
  "$here/merge-distill.sbatch" "${distill_args[@]}")"
echo "tuning: array job ${array%%;*} ($n tasks); merge and distill: job ${final%%;*}"
