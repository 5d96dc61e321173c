#!/usr/bin/env python3
"""Predicted vs published, per set: runs every scenario of scenarios/published (or those whose name starts with
--only) through `mlsim run` and prints, per set, the rows, how many are within 10 % of the published figure and
the mean absolute error -- the README's "Published results" table, reproduced from the files.

Each scenario names its published figure in its header ("Published: N"); its set comes from its file name (the
SETS table below, first match wins). --json writes every row (file, set, published, predicted, error).

    python3 bench/published_sets.py                      # all sets (~2 minutes on 2 cores)
    python3 bench/published_sets.py --only efficientnet  # the files whose names start with it
"""
import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (file-name prefix, set) in the README's order; the first prefix that matches names the set.
SETS = [
    ("rn50-pytorch", "ResNet-50, PyTorch (pytorch-21.03; V100, A100)"),
    ("rn50-tf-xla", "ResNet-50, TF1 + XLA (20.06; V100, A100)"),
    ("bert-large-pytorch2006", "BERT-large, PyTorch (pytorch:20.06; V100, 1 GPU)"),
    ("bert-large-pytorch-dgxa100", "BERT-large, PyTorch (pytorch:20.06; A100, 1 and 8 GPUs)"),
    ("bert-large-pytorch", "BERT-large, PyTorch (pytorch:19.07; V100, 1-16 GPUs)"),
    ("resnext101-pytorch2006", "ResNeXt-101 32x4d, PyTorch (pytorch-20.06; V100, A100)"),
    ("resnext101-pytorch2103", "ResNeXt-101 32x4d, PyTorch (pytorch-21.03; V100, A100)"),
    ("se-resnext101-pytorch2103", "SE-ResNeXt-101 32x4d, PyTorch (pytorch-21.03; V100, A100)"),
    ("resnext101-tf-xla", "ResNeXt-101 32x4d, TF1 + XLA (20.06; A100 40 GB)"),
    ("efficientnet-b0-pytorch2103", "EfficientNet-B0 / B4, PyTorch (pytorch-21.03; V100, A100)"),
    ("efficientnet-b4-pytorch2103", "EfficientNet-B0 / B4, PyTorch (pytorch-21.03; V100, A100)"),
    ("efficientnet-b0-tf2-xla", "EfficientNet-B0 / B4, TF2 + XLA (21.09; V100, A100)"),
    ("efficientnet-b4-tf2-xla", "EfficientNet-B0 / B4, TF2 + XLA (21.09; V100, A100)"),
]


def set_of(name):
    for prefix, label in SETS:
        if name.startswith(prefix):
            return label
    return "other"


def published_figure(path):
    with open(path) as f:
        head = "".join(f.readline() for _ in range(4))
    m = re.search(r"Published: ([0-9][0-9.,]*)", head)
    if not m:
        raise SystemExit(f"{path}: no 'Published: N' in its first lines")
    return float(m.group(1).rstrip(".").replace(",", ""))


def predict(mlsim, path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        r = subprocess.run([mlsim, "run", path, "--quiet", "--no-recommendations", "--no-cores-needed",
                            "--json", out], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{path}: mlsim run exited {r.returncode}: {r.stderr.strip()}")
        with open(out) as f:
            return json.load(f)["throughput_samples_per_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlsim", default=os.path.join(ROOT, "build", "mlsim"))
    ap.add_argument("--dir", default=os.path.join(ROOT, "scenarios", "published"))
    ap.add_argument("--only", default="", help="file-name prefix")
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    files = sorted(f for f in os.listdir(args.dir) if f.endswith(".yaml") and f.startswith(args.only))
    if not files:
        raise SystemExit(f"no scenario in {args.dir} starts with '{args.only}'")
    paths = [os.path.join(args.dir, f) for f in files]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        predicted = list(pool.map(lambda p: predict(args.mlsim, p), paths))
    rows = []
    for f, p, q in zip(files, paths, predicted):
        pub = published_figure(p)
        rows.append({"file": f, "set": set_of(f), "published": pub, "predicted": q, "error": (q - pub) / pub})
    order = [label for _, label in SETS] + ["other"]
    print(f"{'set':<62} {'rows':>4} {'within 10 %':>11} {'mean abs. error':>15}")
    for label in sorted({r["set"] for r in rows}, key=order.index):
        errors = [abs(r["error"]) for r in rows if r["set"] == label]
        print(f"{label:<62} {len(errors):>4} {sum(e <= 0.10 for e in errors):>11} "
              f"{100 * statistics.mean(errors):>14.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
