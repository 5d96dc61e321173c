#!/usr/bin/env bash
# Runs every scenario under scenarios/ with two mlsim binaries and compares their --json, --trace and text
# output byte for byte (what-ifs included). Usage: tests/compare_scenario_json.sh OLD_MLSIM NEW_MLSIM
# Prints one line per scenario and a count; exits 1 when any output differs or a run fails.
set -u
old=$1 new=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
same=0 differ=0
while IFS= read -r scn; do
  rel=${scn#"$root"/}
  status=same
  for side in old new; do
    bin=${!side}
    (cd "$root" && "$bin" run "$scn" --json "$work/$side.json" --trace "$work/$side.trace" >"$work/$side.out" 2>&1)
    echo $? >"$work/$side.rc"
  done
  if ! cmp -s "$work/old.rc" "$work/new.rc" || ! cmp -s "$work/old.json" "$work/new.json" ||
     ! cmp -s "$work/old.trace" "$work/new.trace" || ! cmp -s "$work/old.out" "$work/new.out" || [ "$(cat "$work/new.rc")" != 0 ]; then
    status=DIFFERENT
  fi
  if [ $status = same ]; then same=$((same + 1)); else differ=$((differ + 1)); fi
  echo "$status $rel"
  rm -f "$work"/old.* "$work"/new.*
done < <(find "$root/scenarios" -name '*.yaml' | sort)
echo "identical: $same, different or failed: $differ"
[ $differ = 0 ]
