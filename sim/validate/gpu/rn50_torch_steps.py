#!/usr/bin/env python3
"""ResNet-50 training steps in eager PyTorch on the local GPU: the measured side
of mlsim's accelerator-step prediction for a machine it has calibrated.

For each configuration (precision, memory layout, batch, where the input comes
from) it builds torchvision's ResNet-50, runs SGD-momentum training steps as
NVIDIA's DeepLearningExamples recipe does (cudnn.benchmark on, GradScaler for
fp16 AMP, channels_last for AMP), and reports:
  - the step time: median of per-step CUDA-event intervals after a warm-up,
    and the mean over the timed steps by the host clock;
  - the peak memory the caching allocator handed out (max_memory_allocated)
    and held (max_memory_reserved): the reference for mlsim's memory model;
  - for the profiled configurations, every CUDA kernel's count and total time
    over a few steps (torch.profiler), for the per-op-class comparison, and
    the host's top-level ops with their CPU time (where the host's time to
    issue a step goes, per op kind).
Batch 16 is the host's own figure: the GPU's work is a few ms there, so the
step is the time the host takes to issue it. Beside the steps: the host's CPU
(/proc/cpuinfo) and its time to call one tiny op (an add on one-element
tensors) and one tiny layer's forward and backward, so the host part of a
step can be set against other hosts' (the same calls on a CPU-only machine
with --smoke give its dispatch cost, without the CUDA launch).
Inputs: synthetic, generated on the device ("device"), or a uint8 NHWC batch in
pinned host memory copied with non_blocking=True and normalised on the GPU each
step ("pinned_uint8", the recipe's prefetcher), which shows whether the copy
overlaps compute. Nothing here is fitted: it is a measurement to compare with.
--model resnext101_32x4d or efficientnet_b0 runs those models instead (torchvision's layers, as mlsim's presets
of the same names; AMP in NHWC and TF32/FP32 in NCHW at NVIDIA's ConvNets recipe batches, each profiled; RMSprop
for EfficientNet): grouped and depthwise convolutions as the GPU runs them, to set against
`build/bench/step_breakdown <gpu> <precision> <batch> pytorch-eager <layout> <model>`.

  python3 rn50_torch_steps.py --out rn50.json [--quick]
  python3 rn50_torch_steps.py --model efficientnet_b0 --quick --out effnet.json
  python3 rn50_torch_steps.py --smoke          # CPU, batch 2: checks the code paths, measures nothing
  python3 rn50_torch_steps.py --smoke --host-only --out h.json   # this host's CPU and call times only
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torchvision

CONFIGS = [
    # name, precision, layout, batch, input, profiled
    ("amp-fp16-nhwc-b256", "amp_fp16", "nhwc", 256, "device", True),
    ("amp-fp16-nhwc-b256-pinned", "amp_fp16", "nhwc", 256, "pinned_uint8", False),
    ("amp-fp16-nhwc-b128", "amp_fp16", "nhwc", 128, "device", False),
    ("amp-bf16-nhwc-b256", "amp_bf16", "nhwc", 256, "device", False),
    ("tf32-nchw-b256", "tf32", "nchw", 256, "device", True),
    ("fp32-nchw-b256", "fp32", "nchw", 256, "device", True),
    ("fp32-nchw-b128", "fp32", "nchw", 128, "device", False),
    # Batch 16: the GPU's work is a few ms, so the step is the host's time to issue it (the stacks'
    # host_issue figure, sim/hardware/presets/stacks.yaml), with and without GradScaler's sync; profiled
    # for the host's time per op kind (the CPU side of the profile, host_ops).
    ("amp-fp16-nhwc-b16", "amp_fp16", "nhwc", 16, "device", True),
    ("tf32-nchw-b16", "tf32", "nchw", 16, "device", False),
]
# The other CNNs: the recipe batches of NVIDIA's ConvNets configs.yml (DGX A100: ResNeXt 128, EfficientNet-B0 256;
# FP32 at the DGX-1 batch, half of it), every configuration profiled.
OTHER_CONFIGS = {
    "resnext101_32x4d": [("amp-fp16-nhwc-b128", "amp_fp16", "nhwc", 128, "device", True),
                         ("tf32-nchw-b128", "tf32", "nchw", 128, "device", True),
                         ("fp32-nchw-b64", "fp32", "nchw", 64, "device", True)],
    "efficientnet_b0": [("amp-fp16-nhwc-b256", "amp_fp16", "nhwc", 256, "device", True),
                        ("tf32-nchw-b256", "tf32", "nchw", 256, "device", True),
                        ("fp32-nchw-b128", "fp32", "nchw", 128, "device", True)],
}


def build_model(name):
    """torchvision's layers for `name` (ResNeXt-101 32x4d is its ResNet with 32 groups of 4 channels)."""
    if name == "resnext101_32x4d":
        from torchvision.models.resnet import Bottleneck, ResNet
        return ResNet(Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=4)
    return getattr(torchvision.models, name)()


def optimizer_for(name, model):
    """The recipe's optimizer: SGD with momentum, RMSprop with momentum for EfficientNet (configs.yml)."""
    if name.startswith("efficientnet"):
        return torch.optim.RMSprop(model.parameters(), lr=0.08, alpha=0.9, eps=0.01, momentum=0.9, weight_decay=1e-5)
    return torch.optim.SGD(model.parameters(), lr=0.256, momentum=0.875, weight_decay=3.0517578125e-05)


def grad_scaler(device, enabled):
    """torch.amp.GradScaler where it exists (PyTorch >= 2.3), else the older CUDA-only one."""
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler(device, enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled and device == "cuda")


def run_config(name, precision, layout, batch, source, profiled, device, warmup, steps, model_name="resnet50"):
    cuda = device == "cuda"
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    amp_dtype = {"amp_fp16": torch.float16, "amp_bf16": torch.bfloat16}.get(precision)
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format

    torch.manual_seed(0)
    model = build_model(model_name).to(device).to(memory_format=fmt)
    opt = optimizer_for(model_name, model)
    scaler = grad_scaler(device, precision == "amp_fp16")
    loss_fn = torch.nn.CrossEntropyLoss()
    labels = torch.randint(0, 1000, (batch,), device=device)
    size = 224 if cuda else 64
    x_dev = torch.randn(batch, 3, size, size, device=device).contiguous(memory_format=fmt)
    host = None
    if source == "pinned_uint8":
        host = torch.randint(0, 256, (batch, size, size, 3), dtype=torch.uint8)
        if cuda:
            host = host.pin_memory()
        mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255], device=device).view(1, 3, 1, 1)
        std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255], device=device).view(1, 3, 1, 1)

    def step():
        if host is not None:
            xb = host.to(device, non_blocking=True).permute(0, 3, 1, 2).float()
            x = xb.sub_(mean).div_(std).contiguous(memory_format=fmt)
        else:
            x = x_dev
        # (the CPU smoke run autocasts to bf16: fp16 autocast is CUDA's)
        with torch.autocast(device, dtype=amp_dtype if cuda and amp_dtype else torch.bfloat16,
                            enabled=amp_dtype is not None):
            loss = loss_fn(model(x), labels)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    for _ in range(warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
    events = []
    t0 = time.perf_counter()
    for _ in range(steps):
        if cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            events.append(e)
        step()
    if cuda:
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        events.append(e)
        torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / steps
    per_step = [a.elapsed_time(b) * 1e-3 for a, b in zip(events, events[1:])] if cuda else [wall]
    out = {
        "name": name, "precision": precision, "layout": layout, "batch": batch, "input": source,
        "warmup_steps": warmup, "steps": steps,
        "step_s_median": statistics.median(per_step), "step_s_mean_host": wall,
        "step_s_p10": sorted(per_step)[len(per_step) // 10], "step_s_p90": sorted(per_step)[(9 * len(per_step)) // 10],
        "images_per_s": batch / statistics.median(per_step),
    }
    if cuda:
        out["max_memory_allocated_B"] = torch.cuda.max_memory_allocated()
        out["max_memory_reserved_B"] = torch.cuda.max_memory_reserved()
        out["parameters"] = sum(p.numel() for p in model.parameters())
    if profiled:
        prof = profile_kernels(step, device, 3)
        out["kernels"], out["host_ops"] = prof["kernels"], prof["host_ops"]
    del model, opt, x_dev, host
    if cuda:
        torch.cuda.empty_cache()
    return out


def profile_kernels(step, device, steps):
    """Each kernel's count and total device time over `steps` steps, and the host's ops (profile_host_ops)."""
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(steps):
            step()
        if device == "cuda":
            torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        if device == "cuda" and e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0.0)
        if device != "cuda":
            us = e.self_cpu_time_total
        rows.append({"kernel": e.key, "count": e.count // steps, "us_per_step": us / steps})
    rows.sort(key=lambda r: -r["us_per_step"])
    return {"kernels": rows, "host_ops": profile_host_ops(prof, steps)}


def profile_host_ops(prof, steps):
    """The host side of a profile: each top-level CPU op's (no CPU parent: what the Python thread and the
    autograd engine's thread call) count and time per step, by name, the most costly first."""
    by_name = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CPU or e.cpu_parent is not None:
            continue
        r = by_name.setdefault(e.name, {"op": e.name, "count": 0, "us_per_step": 0.0})
        r["count"] += 1
        r["us_per_step"] += e.cpu_time_total
    rows = sorted(by_name.values(), key=lambda r: -r["us_per_step"])
    for r in rows:
        r["count"] //= steps
        r["us_per_step"] /= steps
    return rows


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def host_calls(device, calls):
    """The host's time a call: an add on one-element tensors (dispatch and launch), and a 1x1 Linear's
    forward and backward (autograd's bookkeeping too), each the median of five runs of `calls` calls."""
    x = torch.ones(1, device=device)
    y = torch.ones(1, device=device)
    layer = torch.nn.Linear(1, 1).to(device)

    def add():
        torch.add(x, y, out=x)

    def fwd_bwd():
        layer(y).sum().backward()

    out = {}
    for name, fn in (("add", add), ("linear_forward_backward", fwd_bwd)):
        runs = []
        for _ in range(6):
            if device == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            if device == "cuda":
                torch.cuda.synchronize()
            runs.append((time.perf_counter() - t0) / calls)
        out[name + "_us"] = statistics.median(runs[1:]) * 1e6  # the first run warms up
    return out


def write_json(result, path):
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=1)


def run_each(configs, run, result, out_path, describe):
    """Runs each configuration (run(config) -> dict with "name"), keeping a failing one's error without losing
    the others, prints describe(r) for each, and writes the results after each (so a time limit keeps what
    was measured)."""
    for config in configs:
        try:
            r = run(config)
        except Exception as e:  # one failing configuration must not lose the others
            r = {"name": config[0], "error": f"{type(e).__name__}: {e}"}
        result["configs"].append(r)
        print(f"{r['name']:28s} " + (f"failed: {r['error']}" if "error" in r else describe(r)), flush=True)
        write_json(result, out_path)


def step_arguments(doc, quick_help, smoke_help):
    """The measurement scripts' common command line: --out, --quick, --smoke."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", help="JSON file for the results")
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--smoke", action="store_true", help=smoke_help)
    return ap


def gpu_or_cpu(smoke, prog):
    """The device: the CPU for a smoke run, else the GPU, or None (after saying so) where there is none."""
    if smoke:
        return "cpu"
    if not torch.cuda.is_available():
        print(f"{prog}: no usable GPU (torch.cuda.is_available() is False)", file=sys.stderr)
        return None
    return "cuda"


def main():
    ap = step_arguments(__doc__, "fewer steps", "CPU, batch 2, two steps: the code paths only")
    ap.add_argument("--host-only", action="store_true", help="the host's CPU and call times, no training steps")
    ap.add_argument("--model", default="resnet50", choices=["resnet50"] + sorted(OTHER_CONFIGS),
                    help="the CNN to train (default resnet50)")
    a = ap.parse_args()
    device = gpu_or_cpu(a.smoke, "rn50_torch_steps")
    if device is None:
        return 2
    warmup, steps = (1, 2) if a.smoke else ((8, 15) if a.quick else (12, 30))
    result = {"model": a.model, "torch": torch.__version__, "torchvision": torchvision.__version__,
              "host_cpu": cpu_model(),
              "host_call": host_calls(device, 200 if a.smoke else 5000), "configs": []}
    print(f"host: {result['host_cpu'] or 'unknown CPU'}; a call: add {result['host_call']['add_us']:.1f} us, "
          f"1x1 linear forward+backward {result['host_call']['linear_forward_backward_us']:.1f} us", flush=True)
    if a.host_only:
        write_json(result, a.out)
        return 0
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        result.update({"gpu": p.name, "sm_count": p.multi_processor_count, "memory_B": p.total_memory,
                       "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()})
    def run(c):
        name, precision, layout, batch, source, profiled = c
        return run_config(name, precision, layout, 2 if a.smoke else batch, source, profiled, device, warmup, steps,
                          a.model)

    def describe(r):
        return (f"step {r['step_s_median'] * 1e3:8.2f} ms (p10 {r['step_s_p10'] * 1e3:.2f}, "
                f"p90 {r['step_s_p90'] * 1e3:.2f}) {r['images_per_s']:8.1f} img/s  "
                f"peak alloc {r.get('max_memory_allocated_B', 0) / 2**30:6.2f} GiB")

    run_each(OTHER_CONFIGS.get(a.model, CONFIGS), run, result, a.out, describe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
