#!/usr/bin/env python3
"""Transformer kernels on the local GPU: the measured side of two kernel parameters mlsim takes as leads.

1. Fused attention (PyTorch's scaled_dot_product_attention, its flash backend where the GPU has one): forward
   and forward + backward at GPT-2 and BERT shapes, bf16, causal and not. Achieved FLOP/s over the GPU's matrix
   peak is the measured `kernels.attention_fraction` (accelerators.yaml; FLOPs as mlsim counts them: 4 B S^2 D
   forward, half of it causal, backward 2.5x the forward).
2. The tensor-core alignment rule: the LM head's GEMM (tokens x width -> vocab) at GPT-2's vocabulary 50257
   (not a multiple of 8) and at 50304 (padded, as nanoGPT pads it), bf16. mlsim puts an unaligned GEMM on the
   CUDA cores (accelerators.yaml, fast_path_alignment); cuBLAS 11+ can use tensor cores for it at some rate
   of its own, which this measures.

Each kernel is checked against a float32 reference on fresh random data before it is timed (relative error
under 2e-2 for bf16), timed with CUDA events after a warm-up, median of the repeats. Nothing is fitted here.

  python3 transformer_kernels.py --out transformer.json --peak-tflops 989.4
  (without a CUDA GPU it says so and exits 0)
"""
import argparse
import json
import statistics
import sys

import torch


def median_ms(fn, warmup=5, repeats=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def rel_error(out, ref):
    return ((out.float() - ref).norm() / ref.norm()).item()


def attention(batch, heads, seq, head_dim, causal, peak):
    dev, dt = "cuda", torch.bfloat16
    q, k, v = (torch.randn(batch, heads, seq, head_dim, device=dev, dtype=dt, requires_grad=True) for _ in range(3))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    err = rel_error(out, ref)
    grad = torch.randn_like(out)
    fwd_ms = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))

    def fwd_bwd():
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(grad)

    both_ms = median_ms(fwd_bwd)
    d_model = heads * head_dim
    fwd_flops = (0.5 if causal else 1.0) * 4.0 * batch * seq * seq * d_model
    return {"batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim, "causal": causal,
            "rel_error": err, "forward_ms": fwd_ms, "forward_backward_ms": both_ms,
            "forward_fraction": fwd_flops / (fwd_ms * 1e-3) / peak,
            "forward_backward_fraction": 3.5 * fwd_flops / (both_ms * 1e-3) / peak}


def lm_head(tokens, width, vocab, peak):
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(tokens, width, device=dev, dtype=dt)
    w = torch.randn(vocab, width, device=dev, dtype=dt)
    out = x @ w.t()
    err = rel_error(out, x.float() @ w.float().t())
    ms = median_ms(lambda: x @ w.t())
    return {"tokens": tokens, "width": width, "vocab": vocab, "rel_error": err, "ms": ms,
            "fraction": 2.0 * tokens * width * vocab / (ms * 1e-3) / peak}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--peak-tflops", type=float, required=True, help="the GPU's dense bf16 matrix peak")
    args = ap.parse_args()
    if not torch.cuda.is_available() or not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        print("transformer_kernels: needs a CUDA GPU and PyTorch >= 2.0; nothing measured")
        return 0
    peak = args.peak_tflops * 1e12
    result = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "peak_tflops": args.peak_tflops,
              "attention": [], "lm_head": []}
    for batch, heads, seq, causal in [(8, 12, 1024, True), (8, 16, 1024, True), (16, 16, 512, False),
                                      (64, 16, 128, False)]:
        result["attention"].append(attention(batch, heads, seq, 64, causal, peak))
    for vocab in (50257, 50304):
        result["lm_head"].append(lm_head(8 * 1024, 768, vocab, peak))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for a in result["attention"]:
        print(f"sdpa B{a['batch']} H{a['heads']} S{a['seq']} causal={a['causal']}: fwd {a['forward_fraction']:.3f}, "
              f"fwd+bwd {a['forward_backward_fraction']:.3f} of peak (err {a['rel_error']:.1e})")
    for g in result["lm_head"]:
        print(f"lm_head vocab {g['vocab']}: {g['ms']:.3f} ms, {g['fraction']:.3f} of peak (err {g['rel_error']:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
