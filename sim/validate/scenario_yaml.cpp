#include "sim/validate/scenario_yaml.hpp"

#include "sim/core/run/isolated.hpp"
#include "sim/core/run/report_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

namespace mlsim::validate {

namespace {
const StageCost* find_stage(const Profile& p, const char* name) {
  auto it = p.cpu.stage_costs.find(name);
  return it == p.cpu.stage_costs.end() ? nullptr : &it->second;
}

// An explicit {per_sample, per_byte, per_pixel} cost in the scenario's units.
std::string cost_map(double per_sample_s, double per_byte_s, double per_pixel_s) {
  return fmt::format("{{per_sample: \"{:.9g} ns\", per_byte: \"{:.9g} ns\", per_pixel: \"{:.9g} ns\"}}", per_sample_s * 1e9,
                     per_byte_s * 1e9, per_pixel_s * 1e9);
}

// The node: CPU consumer (nominal accelerator) or GPU consumer (the profile's accelerator and PCIe).
std::string node_yaml(const JobConfig& cfg, const JobInputs& in, const Profile& p, const std::string& profile) {
  // The other tenants' load is measured on the cores the job may use (the torch client sums its allowed
  // cores' lines of /proc/stat; mlsim's own loader uses every core), so a job held to `cfg.cores` meets
  // all of it.
  const int cores = cfg.cores > 0 ? std::min(cfg.cores, p.cpu.cores) : p.cpu.cores;
  const JobCpu share = job_cpu(cores, in.background_cores, in.group_scheduling);
  std::string cpu = fmt::format("{{preset: \"{}\", cores: {}, core_speed: {:.6g}", profile, share.cores,
                                p.cpu.core_speed * share.speed * in.host_speed);
  // The GEMM runs at core_flops x core_speed: core_speed carries the spin's host_speed, which the
  // consumer's own reference replaces where it was timed.
  if (double rate = host_gemm_rate(p, cfg.gemm_n); rate > 0)
    cpu += fmt::format(", core_flops: \"{:.6g} FLOP/s\"", rate * in.consumer_speed_or_host() / in.host_speed);
  // The fresh pages' price as the faults ran (fault_speed), against cores whose speed divides it.
  if (p.cpu.page_fault_s > 0 && in.fault_speed != 1.0)
    cpu += fmt::format(", page_fault: \"{:.6g} us\"", 1e6 * p.cpu.page_fault_s * in.host_speed / in.fault_speed);
  cpu += "}";
  std::string extra;
  if (cfg.gpu && p.accelerator) {
    const PcieSchema s = pcie_schema_for(p.pcie ? p.pcie->bandwidth_Bps : 0.0);
    extra = fmt::format("      accelerators: {{preset: \"{}\", count: 1}}\n"
                        "      # the measured H2D bandwidth as generation x lanes x efficiency; the consumer\n"
                        "      # copies from pageable memory\n"
                        "      pcie: {{generation: {}, lanes: {}, protocol_efficiency: {:.6g}, latency: \"{:.6g} us\", "
                        "pinned: false}}\n",
                        profile, s.generation, s.lanes, s.protocol_efficiency,
                        p.pcie ? p.pcie->latency_s * 1e6 : 1.0);
  } else {
    extra = "      # nominal: the step is one host op; the batch handed over is a pointer (see hand_over)\n"
            "      accelerators: {preset: h100-sxm, count: 1}\n"
            "      pcie: {generation: 5, lanes: 16, protocol_efficiency: 1.0, latency: 0 s, pinned: true}\n";
  }
  // The simulator reads every sample of a RAM-resident dataset over the node's RAM bus (bytes at
  // ram.bandwidth) before the worker maps it; the real read is a copy out of the page cache, so the
  // bus runs at the calibrated warm read's copy rate (1 / file_read_warm.per_byte) and only the
  // read's per-file part is CPU work of the read stage.
  std::string ram = fmt::format("{{preset: \"{}\"", profile);
  if (const StageCost* r = find_stage(p, "file_read_warm"); r && r->per_byte_s > 0)
    ram += fmt::format(", bandwidth: \"{:.6g} GB/s\"", 1e-9 / r->per_byte_s);
  ram += "}";
  return fmt::format("    - name: host\n"
                     "      cpu: {}\n"
                     "      ram: {}\n"
                     "      nic: 10gbe\n"
                     "{}",
                     cpu, ram, extra);
}

// ", cost: <name>" when the profile calibrated the stage; a stage it lacks costs nothing.
std::string named_cost(const Profile& p, const char* name) {
  return find_stage(p, name) ? fmt::format(", cost: {}", name) : "";
}

// The torch DataLoader's default transforms (pytorch_loader_bench.py), each priced by the client's fit;
// the collation is part of the framework's worker cost (framework_costs.worker_*).
std::string torch_stages_yaml(const JobConfig& cfg, const Profile& p) {
  for (const char* name : {"torch_decode", "torch_random_resized_crop", "torch_random_horizontal_flip",
                           "torch_to_tensor", "torch_normalize"})
    if (!find_stage(p, name))
      throw std::runtime_error(fmt::format("the profile has no {} cost: run `mlsim calibrate --client pytorch`", name));
  return fmt::format("    - {{name: decode, cost: torch_decode, output: {{dtype: uint8}}}}\n"
                     "    - {{name: crop, cost: torch_random_resized_crop, output: {{width: {0}, height: {0}}}}}\n"
                     "    - {{name: flip, cost: torch_random_horizontal_flip}}\n"
                     "    - {{name: to_tensor, kind: convert, cost: torch_to_tensor}}\n"
                     "    - {{name: normalize, cost: torch_normalize, output: {{dtype: fp32}}}}\n"
                     "  batch: {{collate: {{per_sample: 0 s}}}}\n",
                     cfg.out_side);
}

// The pipeline's framework costs: none for mlsim's own C++ loader, the profile's for the torch one.
std::string framework_costs_yaml(const JobConfig& cfg, const Profile& p) {
  if (cfg.client != "pytorch")
    return "  # mlsim's own C++ loader: none of a Python framework's receive/worker costs\n"
           "  framework_costs: {receive_per_batch: 0 s, receive_per_byte: 0 s, worker_per_batch: 0 s, "
           "worker_per_byte: 0 s, worker_fresh_pages_per_byte: 0, pin_per_byte: 0 s, receive_latency: 0 s}\n";
  if (!p.framework_costs)
    throw std::runtime_error("the profile has no framework_costs.pytorch: run `mlsim calibrate --client pytorch`");
  const FrameworkCostsProfile& f = *p.framework_costs;
  // pin_memory: true with no pin cost: the real run copies nothing (no CUDA), and a pageable
  // staging copy (pin_memory: false) would add a memcpy the real run does not make. copy: serialized:
  // the real DataLoader has no pin-memory thread (pin_memory=False), so next() itself receives each
  // batch, its CPU and its latency in the training loop, not one batch ahead in another thread.
  return fmt::format("  pin_memory: true\n"
                     "  copy: serialized\n"
                     "  persistent_workers: false\n"
                     "  framework_costs: {{receive_per_batch: \"{:.9g} s\", receive_per_byte: \"{:.9g} s\", "
                     "worker_per_batch: \"{:.9g} s\", worker_per_byte: \"{:.9g} s\", worker_fresh_pages_per_byte: {:.9g}, "
                     "pin_per_byte: 0 s, worker_startup: \"{:.9g} s\", receive_latency: \"{:.9g} s\"}}\n",
                     f.receive_per_batch_s, f.receive_per_byte_s, f.worker_per_batch_s, f.worker_per_byte_s,
                     f.worker_fresh_pages_per_byte, f.worker_startup_s, f.receive_latency_s);
}

std::string stages_yaml(const JobConfig& cfg, const Profile& p) {
  if (cfg.client == "pytorch")
    return torch_stages_yaml(cfg, p);
  const StageCost* flip = find_stage(p, "flip");
  const StageCost* collate = find_stage(p, "collate");
  const double sample_fp32_bytes = 3.0 * cfg.out_side * cfg.out_side * 4.0;
  std::string s;
  if (const StageCost* r = find_stage(p, "file_read_warm")) // the per-file part; the copy is the RAM read
    s += fmt::format("    - {{name: read_file, kind: map, cost: {}}}\n", cost_map(r->per_sample_s, 0.0, 0.0));
  s += fmt::format("    - {{name: decode{}, output: {{dtype: uint8}}}}\n", named_cost(p, "jpeg_decode"));
  s += fmt::format("    - {{name: crop{}, output: {{width: {}, height: {}}}}}\n", named_cost(p, "random_resized_crop"),
                   cfg.out_side, cfg.out_side);
  if (flip) // the loader flips half the samples (rng() & 1)
    s += fmt::format("    - {{name: flip, cost: {}}}\n",
                     cost_map(0.5 * flip->per_sample_s, 0.5 * flip->per_byte_s, 0.5 * flip->per_pixel_s));
  s += fmt::format("    - {{name: normalize{}, output: {{dtype: fp32}}}}\n", named_cost(p, "normalize_fp32"));
  if (!cfg.gpu)
    s += "    - {name: hand_over, output: {bytes: 8 B}}\n";
  s += "  batch: {collate: ";
  if (!collate)
    s += "{per_sample: 0 s}";
  else if (cfg.gpu)
    s += "collate";
  else // the full-size collate, priced per sample (the handed-over bytes are a pointer's)
    s += cost_map(collate->per_sample_s + collate->per_byte_s * sample_fp32_bytes, 0.0, 0.0);
  s += "}\n";
  return s;
}

std::string model_yaml(const JobConfig& cfg) {
  if (cfg.client == "pytorch") // the emulated accelerator: a sleep of step_s per step
    return fmt::format("model: {{name: emulated-accelerator, step_time: \"{:.9g} s\"}}\n", cfg.step_s);
  const double per_sample = cfg.consumer_flops() / cfg.batch_size;
  if (!cfg.gpu)
    return fmt::format("model:\n"
                       "  name: eigen-gemm-{}x{}\n"
                       "  # one host op on one core: the consumer thread's {} GEMMs of {}^3, no parameters (no backward)\n"
                       "  ops: [{{name: gemm_stack, kind: matmul, flops: \"{:.9g} FLOP\", placement: host}}]\n",
                       cfg.consumer_layers, cfg.gemm_n, cfg.consumer_layers, cfg.gemm_n, per_sample);
  std::string ops;
  const long m = std::max<long>(1, cfg.gemm_n / cfg.batch_size); // per sample: the planner multiplies m by the batch
  for (int l = 0; l < cfg.consumer_layers; ++l)
    ops += fmt::format("{}{{name: gemm{}, kind: matmul, flops: \"{:.9g} FLOP\", dims: {{m: {}, n: {}, k: {}}}}}",
                       l ? ", " : "", l, per_sample / cfg.consumer_layers, m, cfg.gemm_n, cfg.gemm_n);
  return fmt::format("model:\n  name: cublas-gemm-{}x{}\n  precision: fp16\n  input_dtype: fp16\n  ops: [{}]\n",
                     cfg.consumer_layers, cfg.gemm_n, ops);
}
} // namespace

std::string scenario_label(const JobConfig& cfg) {
  std::string l = cfg.label();
  std::replace(l.begin(), l.end(), ' ', '-');
  return l;
}

double host_gemm_rate(const Profile& p, int n) {
  const StageCost* g = find_stage(p, "host_gemm_fp32");
  if (!g || g->per_flop_s <= 0)
    return 0.0;
  const double flops = 2.0 * n * n * n;
  return flops / g->cost_s(0, 0, flops);
}

JobCpu job_cpu(int cores, double background_cores, bool group_scheduling) {
  const double c = std::max(1, cores);
  const double left = std::clamp(c - std::max(0.0, background_cores), 0.05 * c, c); // E, never zero
  JobCpu j;
  j.cores = static_cast<int>(c);
  if (group_scheduling) { // the whole-core count whose worst per-thread speed error is smaller (see the header)
    const double lo = std::max(1.0, std::floor(left)), hi = std::max(1.0, std::ceil(left - 1e-9));
    j.cores = static_cast<int>(left / lo - 1.0 <= 1.0 - left / hi ? lo : hi);
  }
  j.speed = left / j.cores;
  return j;
}

std::string scenario_yaml(const JobConfig& cfg, const JobInputs& in, const Profile& profile,
                          const std::string& profile_path, const RunLength& length) {
  const double width = std::sqrt(in.mean_pixels * 4.0 / 3.0); // the calibration images are 4:3
  const bool torch = cfg.client == "pytorch";
  // the torch client's data set is exactly the run's samples (one epoch); mlsim's loader cycles its files
  const long samples = torch ? long(length.warmup + length.measured) * cfg.batch_size
                             : std::max<long>(static_cast<long>(in.files.size()),
                                              long(length.warmup + length.measured + cfg.loader_threads +
                                                   cfg.prefetch_depth) * cfg.batch_size);
  return fmt::format(
      "name: validate-{label}\n"
      "description: \"generated by mlsim validate: {label}\"\n"
      "hardware:\n"
      "  nodes:\n"
      "{node}"
      "dataset:\n"
      "  samples: {samples}\n"
      "  sample_size: \"{bytes:.1f} B\"\n"
      "  image: {{width: {w:.4f}, height: {h:.4f}, channels: 3}}\n"
      "  location: ram\n"
      "pipeline:\n"
      "  framework: pytorch\n"
      "  batch_size: {batch}\n"
      "  workers: {workers}\n"
      "  # {prefetch_why}\n"
      "  prefetch: {prefetch}\n"
      "{pinned}"
      "{order}"
      "{framework_costs}"
      "  stages:\n"
      "{stages}"
      "{model}"
      // The real loader makes exactly the run's batches and stops: so does the simulated one.
      "run: {{steps: {steps}, warmup_steps: {warmup}, seed: 1, pipeline_stops_after_last_batch: true}}\n",
      fmt::arg("label", scenario_label(cfg)),
      fmt::arg("node", node_yaml(cfg, in, profile, profile_path)),
      // the loader cycles through the set's files: as many samples as the run reads, all in RAM
      fmt::arg("samples", samples), fmt::arg("bytes", in.mean_bytes),
      fmt::arg("w", width), fmt::arg("h", width * 0.75), fmt::arg("batch", cfg.batch_size),
      fmt::arg("workers", cfg.loader_threads),
      fmt::arg("prefetch_why", torch ? fmt::format("prefetch_factor 2 x {} workers", cfg.loader_threads)
                                     : fmt::format("the real queue depth {} + one batch held by each of the {} "
                                                   "loaders (see scenario_yaml.hpp)",
                                                   cfg.prefetch_depth, cfg.loader_threads)),
      fmt::arg("prefetch", torch ? 2 * cfg.loader_threads : cfg.prefetch_depth + cfg.loader_threads),
      fmt::arg("pinned", torch ? "" : cfg.gpu ? "  pin_memory: false\n" : "  pin_memory: true\n"),
      // mlsim's loader: each thread takes the next batch id and pushes it when done (loader_job.cpp)
      fmt::arg("order", torch ? "" : "  worker_assignment: first_free\n  batch_order: as_ready\n"),
      fmt::arg("framework_costs", framework_costs_yaml(cfg, profile)),
      fmt::arg("stages", stages_yaml(cfg, profile)), fmt::arg("model", model_yaml(cfg)),
      fmt::arg("steps", length.warmup + length.measured), fmt::arg("warmup", length.warmup));
}

Predictor simulator_predictor(SimulateFn simulate, Profile profile, std::string profile_path, RunLength length,
                              std::string keep_dir) {
  const size_t launches = launch_count(profile);
  return [simulate = std::move(simulate), profile = std::move(profile), profile_path = std::move(profile_path),
          length, keep_dir = std::move(keep_dir), launches](const JobConfig& cfg, const JobInputs& in) {
    const std::string yaml = scenario_yaml(cfg, in, profile, profile_path, length);
    if (!keep_dir.empty()) {
      std::filesystem::create_directories(keep_dir);
      std::string name = scenario_label(cfg) + (in.background_cores > 0 ? "-busy" : "") + ".yaml";
      std::ofstream(std::filesystem::path(keep_dir) / name) << yaml;
    }
    // Each calibration process's page faults (cpu.launch, cpu.hpp): the prediction is the mean over the
    // draws, as the measured figure is the median of runs in fresh processes.
    Prediction p;
    std::map<std::string, int> bottlenecks;
    const int processes = cfg.client == "pytorch" ? cfg.loader_threads : 1;
    const std::vector<LaunchDraw> draws = launch_draws(launches, processes);
    for (const LaunchDraw& d : draws) {
      std::vector<std::string> overrides;
      if (!d.launches.empty())
        overrides.push_back(d.launches.size() == 1
                                ? fmt::format("hardware.nodes.0.cpu.launch={}", d.launches.front())
                                : fmt::format("hardware.nodes.0.cpu.launch=[{}]", fmt::join(d.launches, ",")));
      const RunMetrics r = simulate(yaml, overrides);
      p.throughput += r.throughput * d.weight;
      p.stall += r.breakdown.input * d.weight;
      p.step_time_s += r.step_mean * d.weight;
      if (launches > 0)
        p.launch_throughputs.push_back(r.throughput);
      ++bottlenecks[r.bottleneck_kind + ":" + r.bottleneck_name];
    }
    p.bottleneck = std::max_element(bottlenecks.begin(), bottlenecks.end(), [](const auto& a, const auto& b) {
                     return a.second < b.second;
                   })->first; // the most launches' (the first name on a tie)
    return p;
  };
}

std::vector<LaunchDraw> launch_draws(size_t launches, int processes) {
  if (launches == 0)
    return {{{}, 1.0}};
  const auto w = static_cast<size_t>(std::max(1, processes));
  std::vector<LaunchDraw> out;
  // Multisets of w launches out of `launches`, ascending: each the w! / prod(m_k!) orderings' share.
  std::vector<size_t> pick(w, 0);
  const double orderings = std::pow(static_cast<double>(launches), static_cast<double>(w));
  for (;;) {
    double ways = std::tgamma(static_cast<double>(w) + 1.0);
    for (size_t i = 0; i < w;) {
      size_t j = i;
      while (j < w && pick[j] == pick[i])
        ++j;
      ways /= std::tgamma(static_cast<double>(j - i) + 1.0);
      i = j;
    }
    out.push_back({pick, ways / orderings});
    size_t i = w; // the next multiset: the last entry that can grow, and every entry after it set to it
    while (i > 0 && pick[i - 1] + 1 == launches)
      --i;
    if (i == 0)
      break;
    const size_t v = pick[i - 1] + 1;
    std::fill(pick.begin() + static_cast<long>(i) - 1, pick.end(), v);
  }
  return out;
}

size_t launch_count(const Profile& profile) {
  size_t n = 0;
  for (const auto& [name, cost] : profile.cpu.stage_costs)
    n = std::max(n, cost.fresh_pages.launches.size());
  return n;
}

Predictor mlsim_simulator_predictor(Profile profile, std::string profile_path, RunLength length,
                                    std::string keep_dir) {
  SimulateFn fn = [](const std::string& yaml, const std::vector<std::string>& overrides) {
    return metrics_from_json(simulate_scenario_text(yaml, overrides, "<mlsim validate scenario>"));
  };
  return simulator_predictor(std::move(fn), std::move(profile), std::move(profile_path), length,
                             std::move(keep_dir));
}

} // namespace mlsim::validate
