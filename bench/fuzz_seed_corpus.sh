#!/usr/bin/env bash
# Fills a corpus directory (argument) with the scenarios of scenarios/ and tests/fuzz/seeds/ (existing entries kept).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$1
mkdir -p "$corpus"
for f in scenarios/*.yaml scenarios/*/*.yaml tests/fuzz/seeds/*.yaml; do
  cp -n "$f" "$corpus/seed-$(basename "$f")"
done
