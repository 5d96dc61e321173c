#include "sim/validate/gpu/gpu_results_json.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/validate/file_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <initializer_list>

namespace mlsim::validate {

GpuBenchResult read_gpu_results_json(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "GPU measurements (JSON written by mlsim-gpu-measure)");
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
  // The string `key` of `obj` (absent: `fallback`), which must be one of `choices`.
  auto one_of = [&](const nlohmann::json& obj, const char* key, std::initializer_list<std::string> choices,
                    const std::string& where, const std::string& fallback = "") {
    const std::string v = obj.contains(key) && obj.at(key).is_string() ? obj.at(key).get<std::string>()
                          : obj.contains(key)                          ? obj.at(key).dump()
                                                                       : fallback;
    if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
      std::string expected;
      for (const auto& c : choices)
        expected += (expected.empty() ? "" : " or ") + c;
      throw InputError(path, where + key, expected, "'" + v + "'");
    }
    return v;
  };
  auto integers = [&](const nlohmann::json& obj, std::initializer_list<std::pair<const char*, int*>> fields,
                      const std::string& where) {
    for (auto [key, field] : fields)
      *field = static_cast<int>(number(obj, key, where));
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
    integers(g, {{"m", &p.m}, {"n", &p.n}, {"k", &p.k}}, at);
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
    p.op = one_of(c, "op", {"fwd", "bwd_data", "bwd_filter"}, at);
    p.dtype = c.value("dtype", std::string());
    integers(c, {{"n", &p.n}, {"c", &p.c}, {"h", &p.h}, {"w", &p.w}, {"k", &p.k}, {"r", &p.r}, {"s", &p.s},
                 {"stride", &p.stride}, {"pad", &p.pad}}, at);
    if (c.contains("groups")) // files written before grouped convolutions were swept have none
      integers(c, {{"groups", &p.groups}}, at);
    p.seconds = number(c, "seconds", at);
    p.spread = c.value("spread", 0.0);
    p.layout = one_of(c, "layout", {"nhwc", "nchw"}, at, "nhwc");
    p.autotuned = c.value("autotuned", false);
    if (!(p.seconds > 0) || p.n <= 0 || p.c <= 0 || p.k <= 0 || p.stride <= 0 || p.out_h() <= 0 || p.out_w() <= 0 ||
        p.groups <= 0 || p.c % p.groups != 0 || p.k % p.groups != 0)
      throw InputError(path, at.substr(0, at.size() - 1),
                       "positive dims, stride and time, and a group count dividing c and k", c.dump());
    r.conv.push_back(p);
  }
  r.norm_note = j.value("norm_note", std::string());
  i = 0;
  for (const auto& c : j.contains("norm") ? j.at("norm") : nlohmann::json::array()) {
    const std::string at = "norm." + std::to_string(i++) + ".";
    NormPoint p;
    p.op = one_of(c, "op", {"fwd", "bwd"}, at);
    p.dtype = one_of(c, "dtype", {"fp32", "fp16"}, at);
    p.layout = one_of(c, "layout", {"nhwc", "nchw"}, at);
    integers(c, {{"n", &p.n}, {"c", &p.c}, {"h", &p.h}, {"w", &p.w}}, at);
    p.seconds = number(c, "seconds", at);
    p.spread = c.value("spread", 0.0);
    if (!(p.seconds > 0) || p.n <= 0 || p.c <= 0 || p.h <= 0 || p.w <= 0)
      throw InputError(path, at.substr(0, at.size() - 1), "positive dims and time", c.dump());
    r.norm.push_back(p);
  }
  return r;
}

} // namespace mlsim::validate
