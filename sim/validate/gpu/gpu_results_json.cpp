#include "sim/validate/gpu/gpu_results_json.hpp"

#include "sim/core/base/errors.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace mlsim::validate {

GpuBenchResult read_gpu_results_json(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path, "", "a readable file of GPU measurements (mlsim-gpu-measure's output)", "no such file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, "", "JSON written by mlsim-gpu-measure", std::string("invalid JSON: ") + e.what());
  }
  // `where`: the dotted path of `obj` in the file ("gpu.", "gemm.3."), for the messages.
  auto need = [&](const nlohmann::json& obj, const char* key, const char* what,
                  const std::string& where = "") -> const nlohmann::json& {
    if (!obj.is_object() || !obj.contains(key))
      throw InputError(path, where + key, what, "nothing");
    return obj.at(key);
  };
  auto number = [&](const nlohmann::json& obj, const char* key, const std::string& where = "") {
    const auto& v = need(obj, key, "a number", where);
    if (!v.is_number())
      throw InputError(path, where + key, "a number", v.dump());
    return v.get<double>();
  };
  if (j.value("format", std::string()) != kGpuResultsFormat)
    throw InputError(path, "format", std::string("\"") + kGpuResultsFormat + "\"",
                     j.contains("format") ? j["format"].dump() : "nothing");
  GpuBenchResult r;
  const auto& gpu = need(j, "gpu", "an object {name, driver, memory_bytes}");
  r.info.available = true;
  r.info.name = gpu.value("name", std::string());
  r.info.driver = gpu.value("driver", std::string());
  r.info.memory_bytes = number(gpu, "memory_bytes", "gpu.");
  r.reps = static_cast<int>(number(j, "reps"));
  r.hbm_Bps = number(j, "hbm_Bps");
  r.cast_f32_f16_Bps = number(j, "cast_f32_f16_Bps");
  r.cast_f16_f32_Bps = number(j, "cast_f16_f32_Bps");
  r.launch_overhead_s = number(j, "launch_overhead_s");
  size_t i = 0;
  for (const auto& g : need(j, "gemm", "a list of GEMM timings")) {
    const std::string at = "gemm." + std::to_string(i++) + ".";
    GemmPoint p;
    p.dtype = g.value("dtype", std::string());
    p.m = static_cast<int>(number(g, "m", at));
    p.n = static_cast<int>(number(g, "n", at));
    p.k = static_cast<int>(number(g, "k", at));
    p.seconds = number(g, "seconds", at);
    p.spread = g.value("spread", 0.0);
    if (!(p.seconds > 0) || p.m <= 0 || p.n <= 0 || p.k <= 0)
      throw InputError(path, at.substr(0, at.size() - 1), "positive dims and time", g.dump());
    r.gemm.push_back(p);
  }
  for (auto [key, list] : {std::pair{"h2d_pinned", &r.h2d_pinned}, std::pair{"h2d_pageable", &r.h2d_pageable},
                           std::pair{"d2h_pinned", &r.d2h_pinned}, std::pair{"hbm_copies", &r.hbm_copies}}) {
    if (list == &r.hbm_copies && !j.contains(key))
      continue; // files of the first format version have no HBM size sweep
    i = 0;
    for (const auto& c : need(j, key, "a list of copy timings")) {
      const std::string at = std::string(key) + "." + std::to_string(i++) + ".";
      list->push_back({number(c, "bytes", at), number(c, "seconds", at)});
    }
  }
  r.conv_note = j.value("conv_note", std::string());
  i = 0;
  for (const auto& c : j.contains("conv") ? j.at("conv") : nlohmann::json::array()) {
    const std::string at = "conv." + std::to_string(i++) + ".";
    ConvPoint p;
    p.op = c.value("op", std::string());
    p.dtype = c.value("dtype", std::string());
    if (p.op != "fwd" && p.op != "bwd_data" && p.op != "bwd_filter")
      throw InputError(path, at + "op", "fwd, bwd_data or bwd_filter", "'" + p.op + "'");
    int* dims[] = {&p.n, &p.c, &p.h, &p.w, &p.k, &p.r, &p.s, &p.stride, &p.pad};
    const char* names[] = {"n", "c", "h", "w", "k", "r", "s", "stride", "pad"};
    for (size_t d = 0; d < 9; ++d)
      *dims[d] = static_cast<int>(number(c, names[d], at));
    p.seconds = number(c, "seconds", at);
    p.spread = c.value("spread", 0.0);
    p.layout = c.value("layout", std::string("nhwc"));
    p.autotuned = c.value("autotuned", false);
    if (!(p.seconds > 0) || p.n <= 0 || p.c <= 0 || p.k <= 0 || p.stride <= 0 || p.out_h() <= 0 || p.out_w() <= 0)
      throw InputError(path, at.substr(0, at.size() - 1), "positive dims, stride and time", c.dump());
    if (p.layout != "nhwc" && p.layout != "nchw")
      throw InputError(path, at + "layout", "nhwc or nchw", "'" + p.layout + "'");
    r.conv.push_back(p);
  }
  r.norm_note = j.value("norm_note", std::string());
  i = 0;
  for (const auto& c : j.contains("norm") ? j.at("norm") : nlohmann::json::array()) {
    const std::string at = "norm." + std::to_string(i++) + ".";
    NormPoint p;
    p.op = c.value("op", std::string());
    p.dtype = c.value("dtype", std::string());
    p.layout = c.value("layout", std::string());
    if (p.op != "fwd" && p.op != "bwd")
      throw InputError(path, at + "op", "fwd or bwd", "'" + p.op + "'");
    if (p.layout != "nhwc" && p.layout != "nchw")
      throw InputError(path, at + "layout", "nhwc or nchw", "'" + p.layout + "'");
    if (p.dtype != "fp32" && p.dtype != "fp16")
      throw InputError(path, at + "dtype", "fp32 or fp16", "'" + p.dtype + "'");
    int* dims[] = {&p.n, &p.c, &p.h, &p.w};
    const char* names[] = {"n", "c", "h", "w"};
    for (size_t d = 0; d < 4; ++d)
      *dims[d] = static_cast<int>(number(c, names[d], at));
    p.seconds = number(c, "seconds", at);
    p.spread = c.value("spread", 0.0);
    if (!(p.seconds > 0) || p.n <= 0 || p.c <= 0 || p.h <= 0 || p.w <= 0)
      throw InputError(path, at.substr(0, at.size() - 1), "positive dims and time", c.dump());
    r.norm.push_back(p);
  }
  return r;
}

} // namespace mlsim::validate
