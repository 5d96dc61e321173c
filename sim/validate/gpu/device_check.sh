#!/usr/bin/env bash
# The GPU checks of `mlsim calibrate` and `mlsim validate` on a lent GPU machine
# that has the CUDA toolkit but none of mlsim's other dependencies (SimGrid,
# yaml-cpp, libjpeg-turbo, the photos): one prepared script, two halves.
#
#   bash sim/validate/gpu/device_check.sh pack   # here, after the build: fills .device/ (git-ignored)
#   bash sim/validate/gpu/device_check.sh run    # there, from the repository root, .device/ carried;
#                                                # results go to $OUT (default /tmp/mlsim-device)
#
# pack: build/mlsim and build/mlsim-gpu-measure, the shared libraries mlsim
#   needs that are neither glibc, the C++ runtime nor CUDA's (~42 MB), and
#   four photos of ~1 MB for the quick calibration set.
# run: nvidia-smi; mlsim-gpu-measure (the GPU alone: cuBLAS GEMMs, HBM, PCIe,
#   and cuDNN convolutions when cuDNN is there; rebuilt with nvcc if the
#   carried one does not start); the kernel-model fit of those measurements
#   and its table of achieved vs datasheet efficiency per op class
#   (efficiency.txt); mlsim calibrate --quick --gpu required; mlsim validate
#   --quick on that profile. Each step's output is kept; a failing step does
#   not stop the next. About 3-5 minutes on an H200 host. cuDNN: the shim
#   libcudnn.so.9 travels in .device/lib (so mlsim starts anywhere); its
#   engines are taken from the host (PyTorch's nvidia-cudnn wheel, or the
#   CUDA folder); without them the convolutions are skipped with a message.
# Then, here: build/mlsim calibrate --gpu-results <OUT>/gpu.json --out
#   sim/hardware/profiles/<gpu>-<date>.yaml, or keep <OUT>/profile.yaml whole.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
case "${1:-}" in
pack)
  [ -x build/mlsim ] || { echo "build first: cmake --build build" >&2; exit 2; }
  rm -rf .device && mkdir -p .device/lib .device/photos
  cp build/mlsim .device/
  [ -x build/mlsim-gpu-measure ] && cp build/mlsim-gpu-measure .device/
  ldd build/mlsim | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|cuda|cublas' |
    xargs -r -I{} cp -L {} .device/lib/
  ldd build/mlsim | awk '$1 ~ /^libcudnn\.so/ && $3 ~ /^\// {print $3}' | xargs -r -I{} cp -L {} .device/lib/
  ls -S /usr/share/backgrounds/mate/*/*.jpg 2>/dev/null |
    while read -r f; do s=$(stat -c %s "$f"); [ "$s" -gt 500000 ] && [ "$s" -lt 1300000 ] && echo "$f"; done |
    head -4 | xargs -r -I{} cp {} .device/photos/
  du -sh .device
  ;;
run)
  OUT=${OUT:-/tmp/mlsim-device}
  mkdir -p "$OUT"
  cudnn=$(python3 -c 'import nvidia.cudnn as c, os; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null)
  export LD_LIBRARY_PATH="${cudnn:+$cudnn:}$PWD/.device/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
  export MLSIM_PHOTO_DIR="$PWD/.device/photos" MLSIM_PRESET_DIR="$PWD/sim/hardware/presets"
  export MLSIM_CALIB_DIR=/tmp/mlsim-calib
  measure=.device/mlsim-gpu-measure
  nvidia-smi >> "$OUT/gpu-measure.err" 2>&1
  if ! "$measure" --quick > "$OUT/gpu.json" 2>> "$OUT/gpu-measure.err"; then
    conv="sim/validate/gpu/conv_bench_nocudnn.cpp" conv_flags=""
    if [ -n "$cudnn" ] && [ -f "$cudnn/../include/cudnn.h" ]; then
      conv="sim/validate/gpu/conv_bench_cudnn.cu" conv_flags="-I$cudnn/../include -L$cudnn -l:libcudnn.so.9"
    elif [ -f /usr/local/cuda/include/cudnn.h ]; then
      conv="sim/validate/gpu/conv_bench_cudnn.cu" conv_flags="-lcudnn"
    fi
    nvcc -O3 -std=c++17 -arch=sm_90 -I. sim/validate/gpu/gpu_bench.cu "$conv" sim/validate/gpu/measure_main.cpp \
      -lcublas $conv_flags -o /tmp/mlsim-gpu-measure >> "$OUT/gpu-measure.err" 2>&1 &&
      /tmp/mlsim-gpu-measure --quick > "$OUT/gpu.json" 2>> "$OUT/gpu-measure.err"
  fi
  # The kernel-model fit of those measurements (no GPU needed) and its efficiency table.
  .device/mlsim calibrate --gpu-results "$OUT/gpu.json" --out /tmp/mlsim-gpu-fit.yaml > "$OUT/calibrate.txt" 2>&1
  echo "calibrate --gpu-results: exit $?" >> "$OUT/calibrate.txt"
  awk '/^achieved vs datasheet/ {on = 1; print; next} on && /^  / {print; next} {on = 0}' "$OUT/calibrate.txt" \
    > "$OUT/efficiency.txt"
  [ -s "$OUT/efficiency.txt" ] || echo "no efficiency table: see calibrate.txt" > "$OUT/efficiency.txt"
  .device/mlsim calibrate --quick --gpu required --out "$OUT/profile.yaml" >> "$OUT/calibrate.txt" 2>&1
  echo "calibrate: exit $?" >> "$OUT/calibrate.txt"
  if [ -f "$OUT/profile.yaml" ]; then
    .device/mlsim validate --quick --profile "$OUT/profile.yaml" --json "$OUT/validate.json" > "$OUT/validate.txt" 2>&1
    echo "validate: exit $?" >> "$OUT/validate.txt"
  else
    echo "validate: skipped (calibrate wrote no profile)" > "$OUT/validate.txt"
  fi
  tail -n 20 "$OUT/efficiency.txt" "$OUT/calibrate.txt" "$OUT/validate.txt" 2>/dev/null
  ;;
*)
  echo "usage: $0 pack | run" >&2
  exit 2
  ;;
esac
