#!/usr/bin/env bash
# `cmake --install` gives a working mlsim: the installed binary finds the installed presets relative to
# itself (not the source tree's), runs the installed scenarios from any folder, and MLSIM_PRESET_DIR
# still wins. Where a private mount namespace is allowed, the source tree's presets are also hidden
# to show that the installed copy does not need them.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
bin="$tmp/prefix/bin/mlsim"
share="$tmp/prefix/share/mlsim"
test -x "$bin"
test -f "$share/presets/accelerators.yaml"
test -f "$share/scenarios/quickstart.yaml"

version=$(env -u MLSIM_PRESET_DIR "$bin" --version)
echo "$version"
grep -qx "presets: $share/presets" <<<"$version" || { echo "FAIL: installed binary uses other presets"; exit 1; }

cd "$tmp"
env -u MLSIM_PRESET_DIR "$bin" check "$share/scenarios/quickstart.yaml"
env -u MLSIM_PRESET_DIR "$bin" run "$share/scenarios/quickstart.yaml" --no-recommendations --no-cores-needed \
  --quiet --json "$tmp/out.json"
grep -q '"throughput_samples_per_s"' "$tmp/out.json"

# The GPU module is installed beside the binary's lib/ and the installed mlsim loads that copy.
if [ -f "$build/libmlsim-gpu.so" ]; then
  test -f "$tmp/prefix/lib/mlsim/libmlsim-gpu.so"
  set +e
  LD_DEBUG=files "$bin" calibrate --quick --gpu required --out "$tmp/gpu.yaml" >/dev/null 2>"$tmp/ld"
  set -e
  grep -q "file=$tmp/prefix/lib/mlsim/libmlsim-gpu.so" "$tmp/ld" ||
    { echo "FAIL: the installed mlsim did not load the installed GPU module"; grep -m3 mlsim-gpu "$tmp/ld"; exit 1; }
  echo "ok: the installed GPU module loads"
fi

# MLSIM_PRESET_DIR wins; a folder without presets is exit 2 with a message, not a crash.
mkdir "$tmp/empty"
set +e
MLSIM_PRESET_DIR="$tmp/empty" "$bin" check "$share/scenarios/quickstart.yaml" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] || { echo "FAIL: an empty MLSIM_PRESET_DIR gave exit $rc"; cat "$tmp/err"; exit 1; }

# The source tree's presets hidden (a private mount namespace, where the sandbox allows one).
if unshare -m true 2>/dev/null; then
  unshare -m bash -c "mount -t tmpfs none '$src/sim/hardware/presets' && \
    env -u MLSIM_PRESET_DIR '$bin' check '$share/scenarios/quickstart.yaml'"
  echo "ok with the source presets hidden"
else
  echo "no private mount namespace here: the hidden-source step was skipped"
fi
echo "install test passed"
