#!/usr/bin/env python3
"""BERT-large micro-batches in eager PyTorch on the local GPU: the measured side of mlsim's transformer step
(the bert_large preset, sim/pipeline/step_graph/model_presets_transformers.cpp) and of the precision policies
it is run under.

The model is written out with torch.nn as NVIDIA's pre-training recipe has it (modeling.py): three embeddings,
a layer norm and dropout; 24 layers of query, key and value projections, the scores' matmul, scale, additive
padding mask, softmax and probability dropout, the context matmul, the output projection, dropout, residual add
and layer norm, the 4096-wide GELU feed-forward with its dropout, add and layer norm; the masked-LM head
(dense, GELU, layer norm, the decoder tied to the word embeddings over every position) and the next-sentence
head; the loss over all positions. Each configuration times forward + backward of one micro-batch (the
gradients set to None before it, no optimizer: the part a step repeats per micro-batch) by CUDA events after a
warm-up, and profiles a few of them: every kernel's time per micro-batch and the sum by kernel class (matmul,
softmax, dropout, layer norm, elementwise, reduction, loss, embedding, copy, other).

Precisions: "amp_fp16" (autocast and GradScaler: softmax, layer norm and the loss in fp32), "half" (the model
cast to fp16 as apex O2 does, the loss on fp16 logits: mlsim's mixed_fp16_o2), "tf32", "fp32". Nothing here is
fitted: it is a measurement to compare with `build/bench/step_breakdown ... bert_large ...` per class.

  python3 bert_torch_steps.py --out bert.json [--quick]
  python3 bert_torch_steps.py --smoke          # CPU, a 2-layer model, 3 configurations: the code paths only
"""
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rn50_torch_steps import (cpu_model, gpu_or_cpu, grad_scaler, profile_kernels, run_each,  # noqa: E402
                              step_arguments)

CONFIGS = [
    # name, precision, sequence, micro-batch, profiled
    ("amp-fp16-s128-b64", "amp_fp16", 128, 64, True),
    ("half-s128-b64", "half", 128, 64, True),
    ("tf32-s128-b54", "tf32", 128, 54, True),
    ("amp-fp16-s512-b16", "amp_fp16", 512, 16, True),
    ("half-s512-b16", "half", 512, 16, True),
    ("tf32-s512-b8", "tf32", 512, 8, False),
    ("fp32-s128-b32", "fp32", 128, 32, False),
]
FULL = {"layers": 24, "width": 1024, "heads": 16, "ffn": 4096, "vocab": 30528}
SMOKE = {"layers": 2, "width": 64, "heads": 4, "ffn": 256, "vocab": 128}

CLASSES = [  # the first pattern a kernel's name contains (in any case) names its class
    ("matmul", ("gemm", "cutlass", "xmma", "cublas", "volta_", "ampere_", "sm80_", "sm90_", "turing_")),
    ("softmax", ("softmax",)),
    ("dropout", ("dropout", "philox", "fused_dropout")),
    ("layer_norm", ("layer_norm", "layernorm")),
    ("loss", ("nll_loss", "cross_entropy")),
    ("embedding", ("embedding", "index_select", "indexSelect")),
    ("reduction", ("reduce",)),
    ("copy", ("copy", "Memcpy", "Memset", "cast")),
    ("elementwise", ("elementwise", "gelu", "where", "fill", "add", "mul", "div")),
]


def kernel_class(name):
    lower = name.lower()
    for cls, patterns in CLASSES:
        if any(p.lower() in lower for p in patterns):
            return cls
    return "other"


class Layer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        w, self.heads = c["width"], c["heads"]
        self.query, self.key, self.value = (torch.nn.Linear(w, w) for _ in range(3))
        self.attn_out = torch.nn.Linear(w, w)
        self.attn_norm = torch.nn.LayerNorm(w, eps=1e-12)
        self.ffn_in = torch.nn.Linear(w, c["ffn"])
        self.ffn_out = torch.nn.Linear(c["ffn"], w)
        self.ffn_norm = torch.nn.LayerNorm(w, eps=1e-12)

    def split(self, x):
        b, s, w = x.shape
        return x.view(b, s, self.heads, w // self.heads).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + mask
        probs = F.dropout(F.softmax(scores, dim=-1), 0.1, self.training)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(x.shape)
        x = self.attn_norm(x + F.dropout(self.attn_out(ctx), 0.1, self.training))
        h = self.ffn_out(F.gelu(self.ffn_in(x)))
        return self.ffn_norm(x + F.dropout(h, 0.1, self.training))


class Bert(torch.nn.Module):
    def __init__(self, c, sequence):
        super().__init__()
        w = c["width"]
        self.words = torch.nn.Embedding(c["vocab"], w)
        self.positions = torch.nn.Embedding(max(512, sequence), w)
        self.types = torch.nn.Embedding(2, w)
        self.embed_norm = torch.nn.LayerNorm(w, eps=1e-12)
        self.layers = torch.nn.ModuleList(Layer(c) for _ in range(c["layers"]))
        self.head_dense = torch.nn.Linear(w, w)
        self.head_norm = torch.nn.LayerNorm(w, eps=1e-12)
        self.decoder_bias = torch.nn.Parameter(torch.zeros(c["vocab"]))
        self.pooler = torch.nn.Linear(w, w)
        self.nsp = torch.nn.Linear(w, 2)

    def forward(self, ids, types, pad_mask):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.words(ids) + self.positions(pos) + self.types(types)
        x = F.dropout(self.embed_norm(x), 0.1, self.training)
        mask = ((1.0 - pad_mask[:, None, None, :].to(x.dtype)) * -10000.0)
        for layer in self.layers:
            x = layer(x, mask)
        h = self.head_norm(F.gelu(self.head_dense(x)))
        logits = F.linear(h, self.words.weight, self.decoder_bias)  # tied to the word embeddings
        return logits, self.nsp(torch.tanh(self.pooler(x[:, 0])))


def run_config(name, precision, sequence, batch, profiled, device, warmup, steps, dims):
    cuda = device == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    torch.manual_seed(0)
    model = Bert(dims, sequence).to(device).train()
    half = torch.float16 if cuda else torch.bfloat16  # (the CPU smoke run uses bf16: CPU fp16 matmuls are missing)
    if precision == "half":
        model = model.to(half)
    amp = precision == "amp_fp16"
    scaler = grad_scaler(device, amp)
    ids = torch.randint(0, dims["vocab"], (batch, sequence), device=device)
    types = torch.randint(0, 2, (batch, sequence), device=device)
    pad_mask = torch.ones(batch, sequence, device=device)
    labels = torch.where(torch.rand(batch, sequence, device=device) < 0.15, ids, torch.full_like(ids, -1))
    nsp_labels = torch.randint(0, 2, (batch,), device=device)

    def micro_batch():
        for p in model.parameters():
            p.grad = None
        # (autocast only on the GPU: CPU autocast of PyTorch 1.x leaves layer_norm's bf16 input against fp32 weights)
        with torch.autocast(device, dtype=half, enabled=amp and cuda):
            logits, nsp = model(ids, types, pad_mask)
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1), ignore_index=-1) + \
                F.cross_entropy(nsp, nsp_labels)
        scaler.scale(loss).backward() if amp else (loss * (1024.0 if precision == "half" else 1.0)).backward()

    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    for _ in range(warmup):
        micro_batch()
    times = []
    for _ in range(steps):
        if cuda:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            micro_batch()
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) * 1e-3)
        else:
            t0 = time.perf_counter()
            micro_batch()
            times.append(time.perf_counter() - t0)
    out = {"name": name, "precision": precision, "sequence": sequence, "batch": batch, "warmup": warmup,
           "steps": steps, "micro_batch_s_median": statistics.median(times),
           "sequences_per_s": batch / statistics.median(times),
           "parameters": sum(p.numel() for p in model.parameters())}
    if cuda:
        out["max_memory_allocated_B"] = torch.cuda.max_memory_allocated()
    if profiled:
        kernels = profile_kernels(micro_batch, device, 3)["kernels"]
        by_class = {}
        for k in kernels:
            cls = kernel_class(k["kernel"])
            by_class[cls] = by_class.get(cls, 0.0) + k["us_per_step"]
        out["us_per_micro_batch_by_class"] = dict(sorted(by_class.items(), key=lambda kv: -kv[1]))
        out["kernels"] = kernels[:60]
    del model
    if cuda:
        torch.cuda.empty_cache()
    return out


def main():
    a = step_arguments(__doc__, "fewer micro-batches", "CPU, a 2-layer model, batch 2: the code paths only").parse_args()
    device = gpu_or_cpu(a.smoke, "bert_torch_steps")
    if device is None:
        return 2
    dims = SMOKE if a.smoke else FULL
    warmup, steps = (1, 2) if a.smoke else ((3, 8) if a.quick else (5, 20))
    result = {"torch": torch.__version__, "host_cpu": cpu_model(), "dims": dims, "configs": []}
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        result.update({"gpu": p.name, "sm_count": p.multi_processor_count, "cuda": torch.version.cuda})
    def run(c):
        name, precision, sequence, batch, profiled = c
        if a.smoke:
            sequence, batch = 16, 2
        return run_config(name, precision, sequence, batch, profiled, device, warmup, steps, dims)

    def describe(r):
        classes = ", ".join(f"{k} {v / 1e3:.1f}" for k, v in r.get("us_per_micro_batch_by_class", {}).items())
        return (f"micro-batch {r['micro_batch_s_median'] * 1e3:8.2f} ms  {r['sequences_per_s']:7.1f} seq/s"
                + (f"  ms by class: {classes}" if classes else ""))

    run_each(CONFIGS[:3] if a.smoke else CONFIGS, run, result, a.out, describe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
