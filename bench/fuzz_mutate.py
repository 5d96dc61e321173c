#!/usr/bin/env python3
"""Mutated scenarios through `mlsim run`, classified by how each run ended.

Each case takes a scenario from scenarios/, applies 1-3 mutations (a value set
to 0, -1, 1e308, nan, unicode, a huge count; a line duplicated or deleted; a
--set override with garbage), runs

    mlsim run CASE --no-recommendations --no-cores-needed --quiet   (timeout 60 s)

and, when run rejects it (exit 2), `mlsim check CASE` too. Counted:
  signal        ended by a signal (segfault, abort): a crash
  exit1         exit 1 (internal error) on a mutated input
  timeout       still running after the timeout
  no_position   exit 2 whose message has neither file:line:col nor the --set that caused it
  disagreement  run exits 2 but check accepts the scenario
Findings are copied to OUT/findings/<class>/ with the command and its stderr.
Usage: fuzz_mutate.py MLSIM OUT N [--jobs J] [--timeout S] [--seed K]
"""
import argparse, concurrent.futures as cf, glob, json, os, random, re, shutil, subprocess, sys, time

VALUES = ["0", "-1", "1e308", "-1e308", ".nan", "nan", ".inf", "1e-308", "\"\"", "null", "[]", "{}",
          "2305843009213693952", "9223372036854775807", "100000", "1000000000", "\"\u00e9\u00e8\u2603\"",
          "\"\\xff\"", "1e308 s", "1e308 GB", "0 s", "-1 GB/s", "nan ms", "1e308 TFLOP/s", "2.5", "true", "x"]
SETS = ["pipeline.workers=100000", "pipeline.prefetch=1e308", "run.steps=-1", "hardware.nodes.0.count=100000",
        "pipeline.batch_size=nan", "hardware.nodes.0.cpu.cores=", "=", "a.b.c=1", "pipeline.stages.99.cost=1",
        "hardware.nodes.0.ram.size=1e308 GB", "dataset.samples=0", "run.seed=-5", "pipeline.batch.collate.per_byte=1e308 s",
        "hardware.nodes.0.accelerators.count=100000", "model.precision=\u00e9", "pipeline.stages.1={name: shuffle, buffer: 100000000}",
        "run.max_wall=-1 s", "hardware.nodes=[]", "pipeline=[1,2]"]
POSITION = re.compile(r"(:\d+:\d+: )|(--set )")


def mutate(lines, rng):
    lines = list(lines)
    sets = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        value_lines = [i for i, l in enumerate(lines) if re.search(r":\s*\S", l) and not l.lstrip().startswith("#")]
        if kind < 0.55 and value_lines:
            i = rng.choice(value_lines)
            line = lines[i]
            # Replace one scalar value (after a "key:"), inside flow maps too.
            spots = [m for m in re.finditer(r"(\w+):\s*([^,{}\[\]\n#]+)", line)]
            if spots:
                m = rng.choice(spots)
                lines[i] = line[:m.start(2)] + rng.choice(VALUES) + line[m.end(2):]
        elif kind < 0.7 and lines:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
        elif kind < 0.85 and lines:
            del lines[rng.randrange(len(lines))]
        else:
            sets.append(rng.choice(SETS))
    # Keep runs short unless the mutation is about the length.
    out = []
    for l in lines:
        m = re.match(r"(\s*)steps:\s*(\d+)\s*$", l)
        if m and int(m.group(2)) > 12:
            l = f"{m.group(1)}steps: 12\n"
        out.append(l)
    return out, sets


def run_case(args, k, seed_files):
    rng = random.Random(args.seed * 1000003 + k)
    src = rng.choice(seed_files)
    with open(src, encoding="utf-8") as f:
        lines, sets = mutate(f.readlines(), rng)
    path = os.path.join(args.out, "cases", f"case{k:06d}.yaml")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        text = "".join(lines)
        # The warm-up steps must stay below the steps for most cases to reach the simulation.
        text = re.sub(r"warmup_steps:\s*(\d+)", lambda m: "warmup_steps: " + str(min(int(m.group(1)), 4)), text)
        f.write(text)
    set_args = [a for s in sets for a in ("--set", s)]
    cmd = [args.mlsim, "run", path, "--no-recommendations", "--no-cores-needed", "--quiet"] + set_args
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=args.timeout)
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        rc, err = "timeout", ""
    secs = time.time() - t0
    cls = None
    if rc == "timeout":
        cls = "timeout"
    elif rc < 0 or rc >= 128:
        cls = "signal"
    elif rc == 1:
        cls = "exit1"
    elif rc == 2:
        first = err.strip().splitlines()[0] if err.strip() else ""
        if not POSITION.search(first):
            cls = "no_position"
        else:
            c = subprocess.run([args.mlsim, "check", path] + set_args, capture_output=True, timeout=args.timeout)
            if c.returncode == 0:
                cls = "disagreement"
    if cls:
        d = os.path.join(args.out, "findings", cls)
        os.makedirs(d, exist_ok=True)
        shutil.copy(path, d)
        with open(os.path.join(d, os.path.basename(path) + ".txt"), "w") as f:
            f.write(" ".join(cmd) + f"\nrc={rc}\n{err}")
    os.unlink(path)
    return k, rc, cls, secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mlsim")
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seed_files = sorted(glob.glob(os.path.join(root, "scenarios", "**", "*.yaml"), recursive=True))
    os.makedirs(os.path.join(args.out, "cases"), exist_ok=True)
    counts = {"cases": 0, "exit0": 0, "exit2": 0, "signal": 0, "exit1": 0, "timeout": 0, "no_position": 0,
              "disagreement": 0}
    slowest = 0.0
    t0 = time.time()
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        for k, rc, cls, secs in pool.map(lambda k: run_case(args, k, seed_files), range(args.n)):
            counts["cases"] += 1
            slowest = max(slowest, secs)
            if rc == 0:
                counts["exit0"] += 1
            elif rc == 2:
                counts["exit2"] += 1
            if cls:
                counts[cls] += 1
            if counts["cases"] % 250 == 0:
                print(json.dumps(counts), f"{time.time() - t0:.0f} s", flush=True)
    counts["slowest_run_s"] = round(slowest, 2)
    counts["wall_s"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "mutate-summary.json"), "w") as f:
        json.dump(counts, f, indent=1)
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
