#include "sim/validate/predictor.hpp"

#include <algorithm>
#include <cmath>

namespace mlsim::validate {

namespace {
double stage(const Profile& p, const char* name, double bytes, double pixels) {
  auto it = p.cpu.stage_costs.find(name);
  return it == p.cpu.stage_costs.end() ? 0.0 : it->second.cost_s(bytes, pixels);
}
} // namespace

JobCosts job_costs(const Profile& p, const JobConfig& cfg, const JobInputs& in) {
  JobCosts c;
  const double out_px = double(cfg.out_side) * cfg.out_side;
  const double per_sample = stage(p, "file_read_warm", in.mean_bytes, 0) +
                            stage(p, "jpeg_decode", in.mean_bytes, in.mean_pixels) +
                            stage(p, "random_resized_crop", 0, in.mean_pixels) + 0.5 * stage(p, "flip", 0, out_px) +
                            stage(p, "normalize_fp32", 0, out_px) + stage(p, "collate", out_px * 12.0, 0);
  const double core_speed = p.cpu.core_speed * in.host_speed;
  c.loader_s = per_sample * cfg.batch_size / core_speed;
  if (auto g = p.cpu.stage_costs.find("host_gemm_fp32"); g != p.cpu.stage_costs.end())
    c.consumer_s = cfg.consumer_layers * g->second.cost_s(0, 0, 2.0 * cfg.gemm_n * cfg.gemm_n * cfg.gemm_n) /
                   (p.cpu.core_speed * in.consumer_speed_or_host());
  c.eta_all = cpu_all_cores_efficiency(p.cpu); // the profile's cpu.all_cores_efficiency
  return c;
}

Prediction closed_form_prediction(const Profile& p, const JobConfig& cfg, const JobInputs& in) {
  const JobCosts c = job_costs(p, cfg, in);
  const double cores = p.cpu.cores, k = cfg.loader_threads, b = std::max(0.0, in.background_cores);
  auto speed = [&](double busy) { // per-thread speed with `busy` of the job's threads running
    const double share = std::min(1.0, cores / (busy + b));
    return share * (busy + b > 1.0 && cores > 1.0 ? c.eta_all : 1.0);
  };
  const double s_L = speed(k + 1.0); // loaders run alongside the consumer
  const double X_loader = k * s_L / c.loader_s;
  const double X_consumer = speed(std::min(k, 1.0) + 1.0) / c.consumer_s;
  const double job_cores = std::min(k + 1.0, cores * (k + 1.0) / (k + 1.0 + b));
  const double X_cores = job_cores * (cores > 1 ? c.eta_all : 1.0) / (c.loader_s + c.consumer_s);
  Prediction pr;
  double X = std::min({X_loader, X_consumer, X_cores});
  pr.bottleneck = X == X_consumer ? "consumer" : X == X_loader ? "loader" : "cores";
  const double loaders_busy = std::min(k, X * c.loader_s / s_L);
  const double s_C = speed(loaders_busy + 1.0);
  pr.throughput = X * cfg.batch_size;
  pr.step_time_s = 1.0 / X;
  // A consumer-bound job never waits (in the mean); otherwise the consumer computes
  // for G / s_C of each 1 / X.
  pr.stall = pr.bottleneck == "consumer" ? 0.0 : std::clamp(1.0 - X * c.consumer_s / s_C, 0.0, 1.0);
  return pr;
}

Predictor closed_form_predictor(const Profile& p) {
  return [p](const JobConfig& cfg, const JobInputs& in) { return closed_form_prediction(p, cfg, in); };
}

} // namespace mlsim::validate
