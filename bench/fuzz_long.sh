#!/usr/bin/env bash
# Fuzzes the scenario loader + check for a long time (default 4 h): bench/fuzz_long.sh [SECONDS] [CORPUS_DIR]
# The corpus grows between runs (default fuzz-corpus/, ignored by git); crashes are written to fuzz-artifacts/
# as crash-<sha1> files: reproduce one with build-fuzz/fuzz_scenario_check FILE.
# With -jobs, libFuzzer writes each job's output to fuzz-<job>.log in the repository root (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-14400}
corpus=${2:-fuzz-corpus}
bash bench/fuzz_build.sh fuzz_scenario_check
bash bench/fuzz_seed_corpus.sh "$corpus"
mkdir -p fuzz-artifacts
# Several workers when the machine has the cores; each keeps the shared corpus up to date.
jobs=${MLSIM_FUZZ_JOBS:-1}
exec nice build-fuzz/fuzz_scenario_check -dict=tests/fuzz/scenario.dict -max_total_time="$seconds" \
  -timeout=10 -rss_limit_mb=4096 -max_len=16384 -artifact_prefix=fuzz-artifacts/ \
  -jobs="$jobs" -workers="$jobs" -print_final_stats=1 "$corpus"
