// The raw GPU measurements as JSON, written by `mlsim-gpu-measure` (a small
// program that needs only the CUDA toolkit, for GPU hosts where mlsim itself
// is not installed) and read by `mlsim calibrate --gpu-results FILE`, which
// fits and writes the profile elsewhere. Header-only and dependency-free so
// that nvcc alone builds the measuring program (one line):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. sim/validate/gpu/gpu_bench.cu
//        sim/validate/gpu/conv_bench_cudnn.cu sim/validate/gpu/measure_main.cpp
//        -lcublas -lcudnn -o gpu-measure
// (conv_bench_nocudnn.cpp and no -lcudnn where cuDNN is not installed).
// Layout: {"format": "mlsim-gpu-results/1", "gpu": {name, driver,
// memory_bytes}, "reps", "hbm_Bps", "cast_f32_f16_Bps", "cast_f16_f32_Bps",
// "launch_overhead_s", "gemm": [{dtype, m, n, k, seconds, spread}],
// "h2d_pinned" | "h2d_pageable" | "d2h_pinned" | "hbm_copies": [{bytes, seconds}],
// "conv": [{op, dtype, n, c, h, w, k, r, s, stride, pad, seconds, spread, layout, autotuned}],
// "conv_note", "norm": [{op, dtype, layout, n, c, h, w, seconds, spread}], "norm_note"} (hbm_copies, conv,
// conv_note, norm, norm_note, and a conv's layout and autotuned may be absent: older files; a conv without
// them was NHWC with the heuristics' algorithm).
#pragma once

#include "sim/validate/gpu/gpu_bench.hpp"

#include <cstdio>
#include <ostream>
#include <string>

namespace mlsim::validate {

inline constexpr const char* kGpuResultsFormat = "mlsim-gpu-results/1";

inline void write_gpu_results_json(const GpuBenchResult& r, std::ostream& out) {
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return std::string(b);
  };
  auto str = [](const std::string& s) {
    std::string o = "\"";
    for (char c : s)
      o += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return o + "\"";
  };
  auto copies = [&](const char* key, const std::vector<CopyPoint>& v) {
    out << ",\n  " << str(key) << ": [";
    for (size_t i = 0; i < v.size(); ++i)
      out << (i ? ", " : "") << "{\"bytes\": " << num(v[i].bytes) << ", \"seconds\": " << num(v[i].seconds) << "}";
    out << "]";
  };
  out << "{\n  \"format\": " << str(kGpuResultsFormat) << ",\n  \"gpu\": {\"name\": " << str(r.info.name)
      << ", \"driver\": " << str(r.info.driver) << ", \"memory_bytes\": " << num(r.info.memory_bytes) << "},\n"
      << "  \"reps\": " << r.reps << ",\n  \"hbm_Bps\": " << num(r.hbm_Bps)
      << ",\n  \"cast_f32_f16_Bps\": " << num(r.cast_f32_f16_Bps) << ",\n  \"cast_f16_f32_Bps\": "
      << num(r.cast_f16_f32_Bps) << ",\n  \"launch_overhead_s\": " << num(r.launch_overhead_s)
      << ",\n  \"gemm\": [";
  for (size_t i = 0; i < r.gemm.size(); ++i) {
    const GemmPoint& g = r.gemm[i];
    out << (i ? ",\n    " : "\n    ") << "{\"dtype\": " << str(g.dtype) << ", \"m\": " << g.m << ", \"n\": " << g.n
        << ", \"k\": " << g.k << ", \"seconds\": " << num(g.seconds) << ", \"spread\": " << num(g.spread) << "}";
  }
  out << "]";
  copies("h2d_pinned", r.h2d_pinned);
  copies("h2d_pageable", r.h2d_pageable);
  copies("d2h_pinned", r.d2h_pinned);
  copies("hbm_copies", r.hbm_copies);
  out << ",\n  \"conv_note\": " << str(r.conv_note) << ",\n  \"conv\": [";
  for (size_t i = 0; i < r.conv.size(); ++i) {
    const ConvPoint& c = r.conv[i];
    out << (i ? ",\n    " : "\n    ") << "{\"op\": " << str(c.op) << ", \"dtype\": " << str(c.dtype)
        << ", \"n\": " << c.n << ", \"c\": " << c.c << ", \"h\": " << c.h << ", \"w\": " << c.w
        << ", \"k\": " << c.k << ", \"r\": " << c.r << ", \"s\": " << c.s << ", \"stride\": " << c.stride
        << ", \"pad\": " << c.pad << ", \"groups\": " << c.groups << ", \"seconds\": " << num(c.seconds) << ", \"spread\": " << num(c.spread)
        << ", \"layout\": " << str(c.layout) << ", \"autotuned\": " << (c.autotuned ? "true" : "false") << "}";
  }
  out << "],\n  \"norm_note\": " << str(r.norm_note) << ",\n  \"norm\": [";
  for (size_t i = 0; i < r.norm.size(); ++i) {
    const NormPoint& b = r.norm[i];
    out << (i ? ",\n    " : "\n    ") << "{\"op\": " << str(b.op) << ", \"dtype\": " << str(b.dtype)
        << ", \"layout\": " << str(b.layout) << ", \"n\": " << b.n << ", \"c\": " << b.c << ", \"h\": " << b.h
        << ", \"w\": " << b.w << ", \"seconds\": " << num(b.seconds) << ", \"spread\": " << num(b.spread) << "}";
  }
  out << "]\n}\n";
}

// Reads what write_gpu_results_json wrote (in the library: nlohmann-json); InputError on a bad file.
GpuBenchResult read_gpu_results_json(const std::string& path);

} // namespace mlsim::validate
