#!/usr/bin/env bash
# Configures and builds the clang ASan+UBSan build with the libFuzzer targets in build-fuzz/ (or $MLSIM_FUZZ_BUILD).
# Arguments: targets (default: fuzz_scenario_check).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${MLSIM_FUZZ_BUILD:-build-fuzz}
# No CUDA here: nvcc does not take clang 14 as its host compiler, and the GPU kernels are not what is fuzzed.
# -O1 with line tables only: as libFuzzer's docs suggest, and cheaper to compile than -O2 -g
# (the CI runs this build on 2 cores).
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DMLSIM_SANITIZE=ON -DMLSIM_FUZZ=ON -DCMAKE_CUDA_COMPILER= >/dev/null
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_scenario_check)
for t in "${targets[@]}"; do cmake --build "$dir" -j"$(nproc)" --target "$t"; done
