#!/usr/bin/python3
"""A real torch.utils.data.DataLoader, measured for mlsim (the pytorch client of calibrate and validate).

mlsim starts this file with Debian's /usr/bin/python3 and talks JSON lines: one request per line on
stdin, one answer per line on stdout (stderr is for humans). Requests ("op"):
  probe       the versions of torch, torchvision and PIL; ok false (and why) when one cannot be imported
  calibrate   raw measurements, fitted by mlsim (sim/validate/pytorch_calibrate.hpp):
                transforms  each transform's CPU cost (thread CPU time, mean over calls, median over reps) on
                            inputs of several sizes; decode = torchvision's pil_loader (open, read, convert RGB)
                in_loop     each stage's CPU time and minor page faults per sample inside a DataLoader worker:
                            the sweep's files of one size after another through pil_loader and the whole
                            chain, every stage timed once per sample, a fresh loader per size; the whole
                            sweep in `in_loop_processes` fresh interpreters (see fresh_process)
                page_fault  thread CPU time of one minor page fault (fresh anonymous pages touched once)
                receive     CPU time of next() in the training process vs batch bytes, workers doing no image work,
                            and the wall time of next() beyond it with the batch ready (its latency)
                worker      CPU time and minor page faults of the workers per batch (fetch, default_collate into
                            shared memory, pickling)
                pin         CPU time of the pin-memory thread per batch (only where CUDA is available)
                startup     time from iter() to each worker's first batch (persistent_workers=False)
                shared_core samples per CPU-second of 1, 2 and 3 processes running the chain on one core
  run         one validation configuration: the DataLoader (workers, batch, the transforms) feeding an emulated
              accelerator (time.sleep of a fixed step) on the allowed cores; throughput, stall, step, CPU used,
              minor page faults of the training process and its workers per sample; in a fresh interpreter,
              as a training script starts (see fresh_process)
  quit
Nothing here fits or judges: it measures and reports.
"""
import json
import os
import resource
import sys
import time
import warnings

# Holding the job to fewer cores than workers is the point of some configurations, not a mistake.
warnings.filterwarnings("ignore", message="This DataLoader will create")


def fail_probe(reason):
    return {"ok": False, "reason": reason}


try:
    import torch
    import torchvision
    import PIL
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset
    from torchvision import transforms as T
    IMPORT_ERROR = None
except Exception as e:  # any import failure means "no usable torch" to mlsim
    IMPORT_ERROR = f"{type(e).__name__}: {e}"

DEFAULT_TRANSFORMS = [
    "RandomResizedCrop(224)",
    "RandomHorizontalFlip()",
    "ToTensor()",
    "Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])",
]


def build_transforms(exprs):
    """torchvision transform objects from expressions such as "RandomResizedCrop(224)" (names of
    torchvision.transforms only)."""
    names = {n: getattr(T, n) for n in dir(T) if not n.startswith("_")}
    out = []
    for e in exprs or DEFAULT_TRANSFORMS:
        out.append((stage_name(e), eval(e, {"__builtins__": {}}, names)))  # noqa: S307 (names of T only)
    return out


def stage_name(expr):
    """"RandomResizedCrop(224)" -> "torch_random_resized_crop"."""
    cls = expr.split("(")[0].strip()
    snake = "".join("_" + c.lower() if c.isupper() else c for c in cls).lstrip("_")
    return "torch_" + snake


def pil_loader(path):
    # torchvision.datasets.folder.pil_loader: what ImageFolder does per sample
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


def size_of(x):
    """(pixels, bytes) of a PIL image or a tensor."""
    if isinstance(x, torch.Tensor):
        return float(x.shape[-1] * x.shape[-2]), float(x.numel() * x.element_size())
    w, h = x.size
    return float(w * h), float(w * h * len(x.getbands()))


def cpu_cost(fn, arg, calls, reps):
    """Median over reps of the mean thread CPU time of `calls` calls (a random transform averages its draws)."""
    fn(arg)  # warm-up
    per_rep = []
    for _ in range(reps):
        t0 = time.thread_time_ns()
        for _ in range(calls):
            fn(arg)
        per_rep.append((time.thread_time_ns() - t0) * 1e-9 / calls)
    per_rep.sort()
    med = per_rep[len(per_rep) // 2]
    spread = (per_rep[-1] - per_rep[0]) / (2 * med) if med > 0 and len(per_rep) > 1 else 0.0
    return med, spread


# ---------------------------------------------------------------- CPU accounting of a process tree

def task_cpu_s(pid):
    """CPU time of every thread of a process (/proc/<pid>/task/*/schedstat, nanoseconds)."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except OSError:
        pass
    return total * 1e-9


def machine_busy_s(cpus):
    """CPU time spent on the cores in `cpus` (by anyone): the job runs there, and only what others run there
    competes with it (a job held to one core does not feel a tenant on the other)."""
    total = 0.0
    with open("/proc/stat") as f:
        for line in f:
            name = line.split(" ", 1)[0]
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
                user, nice, system, idle, iowait, irq, softirq, steal = [float(x) for x in line.split()[1:9]]
                total += user + nice + system + irq + softirq
    return total / os.sysconf("SC_CLK_TCK")


def minor_faults(pid):
    """Minor page faults of a process so far (/proc/<pid>/stat, field 10)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[7])
    except (OSError, IndexError, ValueError):
        return 0


def worker_pids(it):
    return [w.pid for w in getattr(it, "_workers", [])]


# ---------------------------------------------------------------- data sets

class FileDataset(Dataset):
    """The files in a fixed stride (as mlsim's own validate loader), decoded and transformed."""

    def __init__(self, files, length, transform):
        self.files, self.length, self.transform = files, length, transform

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        return self.transform(pil_loader(self.files[(i * 7) % len(self.files)]))


class NullDataset(Dataset):
    """Samples that cost nothing to make: the loader's own costs alone."""

    def __init__(self, shape, length):
        self.sample, self.length = torch.zeros(shape), length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        return self.sample


# ---------------------------------------------------------------- calibrate

def measure_transforms(req):
    reps, calls = req.get("reps", 3), req.get("calls", 8)
    torch.manual_seed(0)
    chain = build_transforms(req.get("transforms"))
    decode = {"name": "torch_decode", "regressor": "bytes+pixels", "points": []}
    stages = {name: {"name": name, "regressor": "pixels", "points": [], "expr": ""} for name, _ in chain}
    for (name, _), e in zip(chain, req.get("transforms") or DEFAULT_TRANSFORMS):
        stages[name]["expr"] = e
    for img in req["sweep"]:
        cost, spread = cpu_cost(pil_loader, img["path"], 1, reps)
        decode["points"].append({"bytes": img["bytes"], "pixels": img["width"] * img["height"], "cost_s": cost,
                                 "spread": spread})
    # Each transform on its input as the chain makes it, and on the full-size image with the resizing
    # transforms skipped (so that the transforms after a crop see 2+ sizes too), up to full_size_max_px:
    # far larger inputs leave the caches and follow another line than the crop's output does.
    full_max = req.get("full_size_max_px", 200000)
    for img in req.get("sizes", req["sweep"]):
        src = pil_loader(img["path"])
        for skip_resizers in (False, True) if img["width"] * img["height"] <= full_max else (False,):
            x = src
            for name, t in chain:
                px, by = size_of(x)
                y = t(x)
                if skip_resizers and size_of(y)[0] != px:
                    continue
                cost, spread = cpu_cost(t, x, calls, reps)
                stages[name]["points"].append({"pixels": px, "bytes": by, "cost_s": cost, "spread": spread})
                x = y
    for s in stages.values():  # the same input twice (no resizer before it) is one point
        seen, pts = set(), []
        for p in s["points"]:
            if p["pixels"] not in seen:
                seen.add(p["pixels"])
                pts.append(p)
        s["points"] = pts
    return [decode] + list(stages.values())


class InLoopDataset(Dataset):
    """measure_in_loop's samples: one size group's files in a fixed stride through pil_loader and the chain,
    each stage's thread CPU time and minor page faults recorded as the worker pays them."""

    def __init__(self, files, length, chain):
        self.files, self.length, self.chain = files, length, chain
        self.stride = 7 if len(files) % 7 else 5

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        img = self.files[(i * self.stride) % len(self.files)]
        marks = [(time.thread_time_ns(), thread_faults())]
        x = pil_loader(img["path"])
        marks.append((time.thread_time_ns(), thread_faults()))
        sizes = [(img["bytes"], img["width"] * img["height"])]
        for _, t in self.chain:
            sizes.append(size_of(x)[::-1])
            x = t(x)
            marks.append((time.thread_time_ns(), thread_faults()))
        costs = [[(b[0] - a[0]) * 1e-9, b[1] - a[1]] for a, b in zip(marks, marks[1:])]
        return x, json.dumps({"sizes": sizes, "costs": costs})


def thread_faults():
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def measure_in_loop(req):
    """Per sample, each stage's thread CPU time and minor page faults inside a DataLoader worker, as the worker
    pays them: one size group of the sweep (the files of one width) at a time, each through a fresh DataLoader
    with one worker, at each batch size of `in_loop_batches`, as a data set of images of about one size is
    loaded. A stage timed alone, again and again on one input, finds its input and its code warm; here each
    stage finds in the caches what the stage before it left. Group and batch matter for the faults: an image
    buffer is faulted in page by page whenever the allocator got it from the kernel afresh, and that depends
    on what the process allocated and freed before (glibc maps blocks above its mmap threshold and raises
    the threshold when one is freed; it returns the heap's free top to the kernel past the trim threshold,
    which the worker's live samples, a batch of them until the collate, hold back). Points carry the stage's
    input size, as the isolated ones do, the faults and the batch."""
    torch.manual_seed(1)
    chain = build_transforms(req.get("transforms"))
    groups = {}
    for img in req.get("in_loop", req["sweep"]):
        groups.setdefault(img["width"] * img["height"], []).append(img)
    passes = req.get("in_loop_passes", 2)
    batches = req.get("in_loop_batches", [8, 32] if req.get("quick", False) else [4, 8, 16, 32])
    out = {"torch_decode": []}
    out.update({name: [] for name, _ in chain})
    names = list(out)
    for batch in batches:
        for pixels in sorted(groups):
            files = groups[pixels]
            # Two batches of warm-up: the worker's first batches grow its heap (every live sample's buffers
            # faulted in once), later ones reuse what the collate freed, as a training run's steady state.
            warm = max(8, 2 * batch)
            # At least `in_loop_min_samples` timed (64; quick: 0): a worker's faults move from batch to batch
            # (1024x768 at batch 16: 147-645 a sample, total with the collate), and two batches of 16 in one
            # process met 16, 321 and 442 a sample where eight met 166-371.
            least = -(-req.get("in_loop_min_samples", 0 if req.get("quick", False) else 64) // batch)
            n = warm + batch * max(2, -(-passes * len(files) // batch), least)
            dl = DataLoader(InLoopDataset(files, n, chain), batch_size=batch, num_workers=1)
            seen = 0
            for _, records in dl:
                for rec in records:
                    seen += 1
                    if seen <= warm:  # the interpreter, the caches and the heap warm up
                        continue
                    r = json.loads(rec)
                    for name, (by, px), (cost, faults) in zip(names, r["sizes"], r["costs"]):
                        # source_pixels: the file's image, which decides the stages' fresh pages after the crop too
                        out[name].append({"bytes": by, "pixels": px, "source_pixels": pixels, "cost_s": cost,
                                          "faults": faults, "batch": batch})
            del dl
    return out


def measure_page_fault(req):
    """Thread CPU time of one minor page fault: touch each page of a fresh anonymous mapping once, then again
    (no faults: the loop's own cost), the difference per page; median of 5."""
    import mmap
    size = (16 if req.get("quick", False) else 64) << 20
    pages, per = size // 4096, []
    for _ in range(5):
        m = mmap.mmap(-1, size)
        t0 = time.thread_time_ns()
        for i in range(0, size, 4096):
            m[i] = 1
        t1 = time.thread_time_ns()
        for i in range(0, size, 4096):
            m[i] = 2
        t2 = time.thread_time_ns()
        m.close()
        per.append(max(0, (t1 - t0) - (t2 - t1)) * 1e-9 / pages)
    per.sort()
    return {"seconds": per[2], "spread": (per[-1] - per[0]) / (2 * per[2]) if per[2] > 0 else 0.0}


def _chain_share(files, exprs, core, seconds, warm, out):
    """One process of measure_shared_core: the chain over the files on `core` for `seconds`, the first
    `warm` samples untimed; puts (samples, CPU seconds, minor page faults) of the timed part."""
    os.sched_setaffinity(0, {core})
    torch.set_num_threads(1)
    chain = [t for _, t in build_transforms(exprs)]
    n, i = 0, 0
    stride = 7 if len(files) % 7 else 5
    c0, f0 = None, 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if i == warm:
            c0, f0 = time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            n = 0
        x = pil_loader(files[(i * stride) % len(files)]["path"])
        for t in chain:
            x = t(x)
        n += 1
        i += 1
    if c0 is None:  # never past the warm-up: nothing timed
        out.put((0, 0.0, 0))
    else:
        out.put((n, time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))


def measure_shared_core(req):
    """Samples per CPU-second of k processes running the loader chain on one core, k = 1, 2, 3: the
    work a core gets done when it switches among k workers, whose data evict each other from its
    caches. Order 1 2 3 3 2 1 (a drift of the host cancels in the pairs) after an untimed round of one
    (the first round ran up to a quarter slower: files and code not yet cached); CPU seconds, not wall
    time, so time other tenants take from the core does not count.
    Each process's first `warm` samples are not timed, and a round of k lasts (1 + k) base periods so
    that each process still has about one to count: a fresh process grows its heap and copies the
    parent's pages it writes to (fork), one fault at a time. Timed from their first sample, 3 processes
    sharing 3 s met 1,255-1,430 minor faults a sample against 730-800 for one process over the same
    files (fewer samples each to spread their start-up over), which read as a 30-40 % shared-core
    loss on a host with ~11 us faults; after 24 samples each they met the same ~650-700. A DataLoader
    worker lives for the epoch: its steady state is what the validation runs and the in-loop tables
    measure."""
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    files = req["sweep"]
    core = sorted(os.sched_getaffinity(0))[0]
    quick = req.get("quick", False)
    base, warm = (0.75, 6) if quick else (2.0, 24)
    rates = {1: [], 2: [], 3: []}
    faults = {1: [], 2: [], 3: []}
    for i, k in enumerate((1, 1, 2, 3, 3, 2, 1)):
        q = ctx.Queue()
        procs = [ctx.Process(target=_chain_share, args=(files, req.get("transforms"), core, base * (1 + k), warm, q))
                 for _ in range(k)]
        for p in procs:
            p.start()
        got = [q.get() for _ in procs]
        for p in procs:
            p.join()
        samples, cpu, minflt = sum(g[0] for g in got), sum(g[1] for g in got), sum(g[2] for g in got)
        if i > 0 and cpu > 0:
            rates[k].append(samples / cpu)
            faults[k].append(minflt / samples)
    return [{"processes": k, "samples_per_cpu_s": rates[k], "faults_per_sample": faults[k]} for k in rates]


def loader_cost_points(shapes, batches, n_batches, workers, pin):
    """CPU per batch of next() in this thread, of the workers, and of this process' other threads."""
    out = []
    for shape in shapes:
        for b in batches:
            dl = DataLoader(NullDataset(shape, (n_batches + 8) * b), batch_size=b, num_workers=workers,
                            pin_memory=pin)
            it = iter(dl)
            for _ in range(2):  # workers started
                next(it)
            t0 = time.perf_counter()
            for _ in range(3):  # back to back: the workers' pace, one batch every `pace` seconds
                next(it)
            pace = (time.perf_counter() - t0) / 3
            pids = worker_pids(it)
            w0, f0 = sum(task_cpu_s(p) for p in pids), sum(minor_faults(p) for p in pids)
            p0, m0 = task_cpu_s(os.getpid()), time.thread_time()
            recv, latency = [], []
            for _ in range(n_batches):
                time.sleep(max(0.005, 2 * pace))  # an emulated step: the next batch is ready when next() starts
                t0, c0 = time.perf_counter(), time.thread_time()
                batch = next(it)
                c1, t1 = time.thread_time(), time.perf_counter()
                recv.append(c1 - c0)
                latency.append(max(0.0, (t1 - t0) - (c1 - c0)))  # waiting inside next(), not computing
                del batch
            m1, p1 = time.thread_time(), task_cpu_s(os.getpid())
            w1, f1 = sum(task_cpu_s(p) for p in pids), sum(minor_faults(p) for p in pids)
            del it, dl
            recv.sort()
            latency.sort()  # the median: a call that waited out another tenant's time slice is the host's noise
            numel = 1
            for d in shape:
                numel *= d
            out.append({"batch": b, "sample_shape": list(shape), "batch_bytes": float(b * numel * 4),
                        "receive_s": recv[len(recv) // 2],
                        "receive_spread": (recv[3 * len(recv) // 4] - recv[len(recv) // 4]) / (2 * recv[len(recv) // 2])
                        if recv[len(recv) // 2] > 0 else 0.0,
                        "latency_s": latency[len(latency) // 2],
                        "worker_s": (w1 - w0) / n_batches,
                        "worker_faults": (f1 - f0) / n_batches,
                        "other_threads_s": max(0.0, (p1 - p0) - (m1 - m0)) / n_batches})
    return out


def loader_points_fresh(shapes, batches, n_batches):
    """loader_cost_points with one worker, in a fresh interpreter: a worker's own cost, as the in-loop stage
    costs are measured (the simulator adds what workers sharing cores cost: cpu.all_cores_efficiency,
    cpu.shared_core_efficiency). Why: measured with two workers in the calibrating process (which had just
    timed the transforms on images up to 24 Mpx, and whose allocator state its workers inherit), the workers'
    CPU beyond their page faults came out 1.2-1.4 ns a batch byte on the 2-core development VM, ~0.8 ms a
    224x224 fp32 sample; with one worker in fresh processes -0.05..0.06 ns/B in two probes and 0.93 in one
    calibration (the workers of a real run over 500x375 files: ~0.1 ms a sample beyond the chain and the
    faults)."""
    ans = fresh_process("loader_points", {"shapes": [list(s) for s in shapes], "batches": list(batches),
                                          "n_batches": n_batches})
    return ans["points"]


def op_loader_points(req):
    return {"ok": True, "points": loader_cost_points([tuple(s) for s in req["shapes"]], req["batches"],
                                                     req["n_batches"], 1, False)}


def measure_startup(worker_counts, reps):
    out = []
    for w in worker_counts:
        arrivals = []
        for _ in range(reps):
            dl = DataLoader(NullDataset((3, 8, 8), 4 * w), batch_size=1, num_workers=w, persistent_workers=False)
            t0 = time.perf_counter()
            it = iter(dl)
            first = []
            for _ in range(w):  # batch k comes from worker k: each worker's first batch
                next(it)
                first.append(time.perf_counter() - t0)
            arrivals.append(first)
            del it, dl
        out.append({"workers": w, "first_batch_s": arrivals})
    return out


def op_calibrate(req):
    quick = req.get("quick", False)
    shapes = [(3, 64, 64), (3, 224, 224)] if quick else [(3, 64, 64), (3, 160, 160), (3, 224, 224), (3, 320, 320)]
    batches = [8, 32] if quick else [8, 16, 32]
    n = 16 if quick else 40
    # The in-loop points in fresh processes: their workers inherit a training script's allocator state
    # (imports only), not that of the isolated timings' large images, and a layout each (fresh_process).
    in_loop = in_loop_fresh(req)
    res = {"ok": True, "versions": versions(), "in_loop": in_loop, "transforms": measure_transforms(req),
           "page_fault": measure_page_fault(req),
           "loader": loader_points_fresh(shapes, batches, n)}
    if torch.cuda.is_available():
        res["pin"] = loader_cost_points(shapes, batches, n, 2, True)
    else:
        res["pin_skipped"] = "torch.cuda.is_available() is False: pin_memory has no page-locked copy to make"
    res["startup"] = measure_startup([1, 2] if quick else [1, 2, 3], 3 if quick else 5)
    res["shared_core"] = measure_shared_core(req)
    return res


# ---------------------------------------------------------------- run one configuration

def op_run(req):
    return fresh_process("run_here", req)


def op_run_here(req):
    w, b, step_s = req["workers"], req["batch"], req["step_s"]
    warmup, measured = req["warmup"], req["measured"]
    total = warmup + measured
    chain = T.Compose([t for _, t in build_transforms(req.get("transforms"))])
    old = os.sched_getaffinity(0)
    cores = req.get("cores", 0)
    if cores > 0:
        os.sched_setaffinity(0, set(sorted(old)[:cores]))  # the workers, forked below, inherit it
    try:
        dl = DataLoader(FileDataset(req["files"], total * b, chain), batch_size=b, num_workers=w,
                        prefetch_factor=req.get("prefetch_factor", 2), persistent_workers=False)
        it = iter(dl)
        waits, steps, ends = [], [], []
        for i in range(total):
            if i == warmup:
                pids = [os.getpid()] + worker_pids(it)
                cpus = os.sched_getaffinity(0)
                cpu0, busy0, start = sum(task_cpu_s(p) for p in pids), machine_busy_s(cpus), time.perf_counter()
                faults0 = sum(minor_faults(p) for p in pids)
            t0 = time.perf_counter()
            batch = next(it)
            t1 = time.perf_counter()
            time.sleep(step_s)  # the emulated accelerator
            t2 = time.perf_counter()
            del batch
            if i >= warmup:
                waits.append(t1 - t0)
                steps.append(t2 - t1)
                ends.append(t2)
        cpu1, busy1 = sum(task_cpu_s(p) for p in pids), machine_busy_s(cpus)
        faults1 = sum(minor_faults(p) for p in pids)
        del it, dl
    finally:
        os.sched_setaffinity(0, old)
    window = ends[-1] - start
    intervals = [e - s for e, s in zip(ends, [start] + ends[:-1])]
    intervals.sort()
    return {"ok": True, "throughput": measured * b / window, "stall": sum(waits) / window,
            "step_time_s": sum(intervals) / len(intervals), "step_p50_s": intervals[len(intervals) // 2],
            "device_step_s": sum(steps) / len(steps), "window_s": window,
            "self_cpu_cores": (cpu1 - cpu0) / window,
            "faults_per_sample": (faults1 - faults0) / (measured * b),
            "other_cpu_cores": max(0.0, (busy1 - busy0) - (cpu1 - cpu0)) / window}


def versions():
    return {"torch": torch.__version__, "torchvision": torchvision.__version__, "pil": PIL.__version__,
            "python": sys.version.split()[0], "cuda": bool(torch.cuda.is_available())}


def fresh_process(op, req):
    """`op` on `req` in a new interpreter running this file, its answer. Why: a DataLoader's workers are
    forked from the training process and inherit its address-space layout, which the kernel randomises
    per exec (ASLR), and with it how often glibc hands a large image buffer pages it must fault in afresh
    rather than pages the heap kept. On the 2-core development VM (a fault ~10 us) one worker loading
    1024x768 JPEGs at batch 16 faulted 178, 652 and 1,366 pages per sample in three fresh processes
    (decode 5.6 / 10.0 / 18.7 ms a sample), and 252-333 in four with randomisation off (setarch -R).
    Measurements made in one long-lived process all share one draw of that layout: every point of a
    calibration, every configuration of a validation, wrong together. A training run is a fresh process."""
    import subprocess
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    out, _ = child.communicate(json.dumps(dict(req, op=op)) + "\n" + json.dumps({"op": "quit"}) + "\n")
    lines = [line for line in out.splitlines() if line.strip()]
    if child.returncode != 0 or not lines:
        raise RuntimeError(f"the fresh process for {op} exited with {child.returncode} and no answer")
    ans = json.loads(lines[-1])
    if isinstance(ans, dict) and ans.get("ok") is False:
        raise RuntimeError(ans.get("reason", f"the fresh process for {op} failed"))
    return ans


def in_loop_fresh(req):
    """measure_in_loop in `in_loop_processes` fresh interpreters (3; 2 with quick), one pass each over a
    size group's files: the points of every layout together, each tagged with its process."""
    n = req.get("in_loop_processes", 2 if req.get("quick", False) else 3)
    out = {}
    for k in range(n):
        got = fresh_process("in_loop", dict(req, in_loop_passes=req.get("in_loop_passes", 1)))
        for name, pts in got.items():
            for pt in pts:
                pt["process"] = k
            out.setdefault(name, []).extend(pts)
    return out


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # anything printed by a library goes to stderr, never into the JSON stream
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "quit":
            break
        if IMPORT_ERROR is not None:
            ans = fail_probe(IMPORT_ERROR)
        elif op == "probe":
            ans = {"ok": True, "versions": versions()}
        else:
            try:
                torch.set_num_threads(1)
                ans = {"calibrate": op_calibrate, "run": op_run, "run_here": op_run_here,
                       "in_loop": measure_in_loop, "loader_points": op_loader_points}[op](req)
            except Exception as e:  # an answer, not a dead pipe
                ans = {"ok": False, "reason": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(ans) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
