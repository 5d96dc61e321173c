#!/usr/bin/env bash
# The GPU checks of `mlsim calibrate` and `mlsim validate` on a lent GPU machine
# that has the CUDA toolkit but none of mlsim's other dependencies (SimGrid,
# yaml-cpp, libjpeg-turbo, the photos): one prepared script, two halves.
#
#   bash sim/validate/gpu/device_check.sh pack   # here, after the build: fills .device/ (git-ignored)
#   bash sim/validate/gpu/device_check.sh run    # there, from the repository root, .device/ carried;
#                                                # results go to $OUT (default /tmp/mlsim-device)
#
# pack: build/mlsim, its GPU module build/libmlsim-gpu.so (found next to it)
#   and build/mlsim-gpu-measure, the shared libraries mlsim
#   needs that are neither glibc, the C++ runtime nor CUDA's (~42 MB), and
#   four photos of ~1 MB for the quick calibration set.
# run: nvidia-smi; mlsim-gpu-measure, full sweep (the GPU alone: cuBLAS GEMMs,
#   HBM, PCIe, and cuDNN convolutions when cuDNN is there; rebuilt with nvcc if
#   the carried one does not start) -> gpu.json; ResNet-50 training steps in
#   eager PyTorch (rn50_torch_steps.py) -> rn50.json; BERT-large micro-batches with their kernels by class
#   (bert_torch_steps.py) -> bert.json; fused attention's fraction of the peak and the LM-head
#   GEMM at an unaligned and a padded vocabulary (transformer_kernels.py) -> transformer.json; the kernel-model fit of
#   gpu.json and its table of achieved vs datasheet efficiency per op class
#   -> gpu-fit.yaml and calibrate.txt; mlsim calibrate --quick --gpu required
#   -> profile.yaml; mlsim validate --quick on it -> validate.json. Logs go to
#   device.log (MLSIM_SKIP_RN50=1 leaves the PyTorch steps out; MLSIM_CNN_STEPS=1 adds EfficientNet-B0 and
#   ResNeXt-101 32x4d training steps, rn50_torch_steps.py --model, -> <model>.json). Each step's output is kept; a failing
#   step does not stop the next. cuDNN: the shim libcudnn.so.9 travels in .device/lib (so mlsim starts
#   anywhere); its engines are taken from the host (PyTorch's nvidia-cudnn
#   wheel, or the CUDA folder); without them the convolutions are skipped with
#   a message.
# Then, here: build/mlsim calibrate --gpu-results <OUT>/gpu.json --out
#   sim/hardware/profiles/<gpu>-<date>.yaml, or keep <OUT>/profile.yaml whole;
#   sim/hardware/profiles/README.md keeps the committed runs' figures.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
case "${1:-}" in
pack)
  [ -x build/mlsim ] || { echo "build first: cmake --build build" >&2; exit 2; }
  rm -rf .device && mkdir -p .device/lib .device/photos
  cp build/mlsim .device/
  [ -x build/mlsim-gpu-measure ] && cp build/mlsim-gpu-measure .device/
  [ -f build/libmlsim-gpu.so ] && cp build/libmlsim-gpu.so .device/
  ldd build/mlsim | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|cuda|cublas' |
    xargs -r -I{} cp -L {} .device/lib/
  [ -f build/libmlsim-gpu.so ] && ldd build/libmlsim-gpu.so | awk '$1 ~ /^libcudnn\.so/ && $3 ~ /^\// {print $3}' |
    xargs -r -I{} cp -L {} .device/lib/
  ls -S /usr/share/backgrounds/mate/*/*.jpg 2>/dev/null |
    while read -r f; do s=$(stat -c %s "$f"); [ "$s" -gt 500000 ] && [ "$s" -lt 1300000 ] && echo "$f"; done |
    head -4 | xargs -r -I{} cp {} .device/photos/
  du -sh .device
  ;;
run)
  OUT=${OUT:-/tmp/mlsim-device}
  mkdir -p "$OUT"
  log="$OUT/device.log" txt="$OUT/calibrate.txt"
  # cuDNN and, where the CUDA folder lacks them, cuBLAS and the runtime: from the NVIDIA wheels next to PyTorch.
  site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)
  wheel_dir() { find "$site/nvidia" -name "$1" 2>/dev/null | head -1 | xargs -r dirname; }
  cudnn=$(wheel_dir 'libcudnn.so.9')
  wheels=$(for l in libcublas.so.13 libcublasLt.so.13 libcudart.so.13; do wheel_dir "$l"; done | sort -u | paste -sd:)
  export LD_LIBRARY_PATH="${cudnn:+$cudnn:}$PWD/.device/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${wheels:+:$wheels}:${LD_LIBRARY_PATH:-}"
  export MLSIM_PHOTO_DIR="$PWD/.device/photos" MLSIM_PRESET_DIR="$PWD/sim/hardware/presets"
  export MLSIM_CALIB_DIR=/tmp/mlsim-calib
  { date -u; grep -m1 "model name" /proc/cpuinfo; echo "cpus: $(nproc)"; nvidia-smi
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
    echo "cuDNN from: ${cudnn:-none found}; wheels: ${wheels:-none}"; } >> "$log" 2>&1
  # 1. The GPU alone (full sweep: GEMM squares 128..8192, cuDNN at batch 64); rebuilt with nvcc if the
  #    carried program does not start there.
  measure=.device/mlsim-gpu-measure
  if ! timeout 240 "$measure" > "$OUT/gpu.json" 2>> "$log"; then
    echo "carried mlsim-gpu-measure failed: building it here" >> "$log"
    conv="sim/validate/gpu/conv_bench_nocudnn.cpp" conv_flags=""
    if [ -n "$cudnn" ] && [ -f "$cudnn/../include/cudnn.h" ]; then
      conv="sim/validate/gpu/conv_bench_cudnn.cu" conv_flags="-I$cudnn/../include -L$cudnn -l:libcudnn.so.9"
    elif [ -f /usr/local/cuda/include/cudnn.h ]; then
      conv="sim/validate/gpu/conv_bench_cudnn.cu" conv_flags="-lcudnn"
    fi
    nvcc -O3 -std=c++17 -arch=sm_90 -I. sim/validate/gpu/gpu_bench.cu "$conv" sim/validate/gpu/measure_main.cpp \
      -lcublas $conv_flags -o /tmp/mlsim-gpu-measure >> "$log" 2>&1 &&
      timeout 240 /tmp/mlsim-gpu-measure > "$OUT/gpu.json" 2>> "$log"
  fi
  echo "mlsim-gpu-measure: exit $?" >> "$log"
  # 2. ResNet-50 training steps in eager PyTorch: the measured side of the accelerator-step prediction.
  if [ "${MLSIM_SKIP_RN50:-0}" = 1 ]; then
    echo "rn50_torch_steps: skipped (MLSIM_SKIP_RN50=1)" >> "$log"
  else
    timeout 240 env -u LD_LIBRARY_PATH python3 sim/validate/gpu/rn50_torch_steps.py --out "$OUT/rn50.json" >> "$log" 2>&1
    echo "rn50_torch_steps: exit $?" >> "$log"
    # BERT-large micro-batches (autocast, the model cast to fp16 as apex O2, TF32) with their kernels by class.
    timeout 240 env -u LD_LIBRARY_PATH python3 sim/validate/gpu/bert_torch_steps.py --out "$OUT/bert.json" >> "$log" 2>&1
    echo "bert_torch_steps: exit $?" >> "$log"
  fi
  # Grouped and depthwise convolutions in whole training steps (ResNeXt-101 32x4d, EfficientNet-B0), on request:
  # MLSIM_CNN_STEPS=1 (they do not fit the command limit beside the checks above).
  if [ "${MLSIM_CNN_STEPS:-0}" = 1 ]; then
    for m in efficientnet_b0 resnext101_32x4d; do
      timeout 150 env -u LD_LIBRARY_PATH python3 sim/validate/gpu/rn50_torch_steps.py --model "$m" --quick \
        --out "$OUT/$m.json" >> "$log" 2>&1
      echo "rn50_torch_steps --model $m: exit $?" >> "$log"
    done
  fi
  # 2b. Transformer kernels: fused attention's fraction of the peak and the unaligned LM-head GEMM
  #     (transformer_kernels.py; the bf16 dense peak from the preset of the GPU nvidia-smi names).
  peak=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 |
    awk '/H100|H200/ {print 989.4; next} /A100/ {print 312; next} {print 0}')
  if [ "${peak:-0}" != 0 ]; then
    timeout 120 env -u LD_LIBRARY_PATH python3 sim/validate/gpu/transformer_kernels.py --out "$OUT/transformer.json" \
      --peak-tflops "$peak" >> "$log" 2>&1
    echo "transformer_kernels: exit $?" >> "$log"
  else
    echo "transformer_kernels: skipped (no bf16 peak known for this GPU)" >> "$log"
  fi
  # 3. The kernel-model fit of the measurements (no GPU needed) and its efficiency table.
  .device/mlsim calibrate --gpu-results "$OUT/gpu.json" --out "$OUT/gpu-fit.yaml" > "$txt" 2>&1
  echo "calibrate --gpu-results: exit $?" >> "$txt"
  # 4. The whole host and GPU, quick, then the validation on that profile.
  timeout 150 .device/mlsim calibrate --quick --gpu required --out "$OUT/profile.yaml" >> "$txt" 2>&1
  echo "calibrate: exit $?" >> "$txt"
  if [ -f "$OUT/profile.yaml" ]; then
    timeout 150 .device/mlsim validate --quick --profile "$OUT/profile.yaml" --json "$OUT/validate.json" >> "$txt" 2>&1
    echo "validate: exit $?" >> "$txt"
  else
    echo "validate: skipped (calibrate wrote no profile)" >> "$txt"
  fi
  awk '/^achieved vs datasheet/ {on = 1; print; next} on && /^  / {print; next} {on = 0}' "$txt"
  grep -E '^(amp|tf32|fp32|sdpa|lm_head)|exit' "$log"
  grep -E 'exit' "$txt"
  ;;
*)
  echo "usage: $0 pack | run" >&2
  exit 2
  ;;
esac
