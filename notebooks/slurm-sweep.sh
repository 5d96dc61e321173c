#!/bin/bash
# A large `mlsim sweep` as a Slurm job array: task I of N runs shard I/N of the grid
# (the points p with p % N == I) and writes its own CSV; merge them when all are done.
#
#   1. Edit SCENARIO, the --vary axes (VARY) and the array size below (--array=0-(N-1)).
#      `mlsim sweep SCENARIO --vary ... --list | wc -l` prints the number of points.
#   2. Submit:   sbatch notebooks/slurm-sweep.sh
#      (override without editing: sbatch --array=0-63 --export=ALL,MLSIM=/path/to/mlsim notebooks/slurm-sweep.sh)
#   3. Merge:    mlsim merge "$OUTDIR"/part-*.csv --out results.csv
#      merge lists the points missing from the parts (exit status 3): a task that died or timed out.
#   4. Rerun a dead or timed-out task: sbatch --array=<its index> notebooks/slurm-sweep.sh
#      It resumes: the points already in its part file are kept and not simulated again.
#
# Each simulation is single-threaded; a task runs as many at once as the CPUs Slurm gives it
# (mlsim reads the task's CPU affinity), so --cpus-per-task sets the parallelism per task.
#SBATCH --job-name=mlsim-sweep
#SBATCH --array=0-15
#SBATCH --cpus-per-task=8
#SBATCH --mem-per-cpu=1G
#SBATCH --time=01:00:00
#SBATCH --output=mlsim-sweep-%A_%a.log
set -euo pipefail

MLSIM=${MLSIM:-build/mlsim}
SCENARIO=${SCENARIO:-scenarios/examples/cpu-bound-imagenet.yaml}
OUTDIR=${OUTDIR:-sweep-results}
VARY=(
  --vary "hardware.nodes.0.cpu.cores=8..256:8"
  --vary "model.forward_flops_per_sample=1 GFLOP,8.2 GFLOP,20 GFLOP"
  --vary "pipeline.batch_size=64,128,256"
)

I=$(( ${SLURM_ARRAY_TASK_ID:?run this script with sbatch --array} - ${SLURM_ARRAY_TASK_MIN:-0} ))  # 0-based shard index
N=${SLURM_ARRAY_TASK_COUNT:-$(( ${SLURM_ARRAY_TASK_MAX:-0} - ${SLURM_ARRAY_TASK_MIN:-0} + 1 ))}
mkdir -p "$OUTDIR"

# --resume makes a requeued or resubmitted task continue where it stopped.
"$MLSIM" sweep "$SCENARIO" "${VARY[@]}" \
  --shard "$I/$N" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
  --out "$OUTDIR/part-$I.csv" --resume
