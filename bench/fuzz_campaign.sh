#!/usr/bin/env bash
# A fuzz campaign with a summary: bench/fuzz_campaign.sh [LOADER_RUNS] [MUTATED_SCENARIOS] [OUT_DIR]
#  1. LOADER_RUNS (default 1,000,000) executions of the libFuzzer loader + check target
#     (tests/fuzz/scenario_check_fuzz.cpp, ASan + UBSan), corpus seeded from scenarios/;
#  2. MUTATED_SCENARIOS (default 5,000) mutated scenarios through `mlsim run` with a 60 s timeout
#     each (bench/fuzz_mutate.py), counting signals, exit 1, timeouts, exit-2 messages without
#     file:line:col and check/run disagreements.
# Findings land in OUT_DIR (default fuzz-campaign/); OUT_DIR/summary.txt has the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
cases=${2:-5000}
out=${3:-fuzz-campaign}
mkdir -p "$out/artifacts"
bash .ci/build mlsim
bash bench/fuzz_build.sh fuzz_scenario_check
bash bench/fuzz_seed_corpus.sh "$out/corpus"
set +e
nice build-fuzz/fuzz_scenario_check -dict=tests/fuzz/scenario.dict -runs="$runs" -timeout=10 -rss_limit_mb=4096 \
  -max_len=16384 -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/corpus" 2> "$out/libfuzzer.log"
loader_rc=$?
set -e
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/libfuzzer.log" | grep -o '[0-9]*$' || echo 0)
nice python3 bench/fuzz_mutate.py build/mlsim "$out" "$cases" --jobs "${MLSIM_FUZZ_JOBS:-2}" --timeout 60
{
  echo "loader target: $execs executions, exit $loader_rc, $(ls "$out/artifacts" | wc -l) artifacts"
  echo "mutated scenarios: $(cat "$out/mutate-summary.json" | tr -d '\n ')"
} | tee "$out/summary.txt"
