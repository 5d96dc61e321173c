#include "sim/validate/pytorch_validate.hpp"

#include "sim/validate/client_process.hpp"

#include <algorithm>
#include <stdexcept>

namespace mlsim::validate {

double torch_batch_cost_s(const Profile& p, const JobConfig& cfg, const JobInputs& in) {
  const double side = cfg.out_side, crop_px = side * side;
  auto cost = [&](const char* name, double bytes, double px) {
    auto it = p.cpu.stage_costs.find(name);
    return it == p.cpu.stage_costs.end() ? 0.0
                                         : it->second.cost_s(bytes, px, 0.0, cfg.batch_size, in.mean_pixels);
  };
  const double per_sample = cost("torch_decode", in.mean_bytes, in.mean_pixels) +
                            cost("torch_random_resized_crop", 3 * in.mean_pixels, in.mean_pixels) +
                            cost("torch_random_horizontal_flip", 3 * crop_px, crop_px) +
                            cost("torch_to_tensor", 3 * crop_px, crop_px) +
                            cost("torch_normalize", 12 * crop_px, crop_px);
  const double batch_bytes = cfg.batch_size * 12.0 * crop_px;
  const double worker = p.framework_costs ? p.framework_costs->worker_per_batch_s +
                                                p.framework_costs->worker_per_byte_s * batch_bytes
                                          : 0.0;
  return cfg.batch_size * per_sample + worker;
}

std::vector<JobConfig> pytorch_grid(bool quick, int host_cores, const Profile& p,
                                    const std::function<JobInputs(const std::string&)>& inputs) {
  struct Point {
    const char* set;
    int cores, workers, batch;
    double ratio;
  };
  std::vector<Point> pts;
  if (quick) {
    pts = {{"imagenet", 0, 1, 8, 1.0}, {"imagenet", 1, 2, 8, 0.5}, {"large", 0, 2, 8, 2.0}};
  } else {
    const double ratios[] = {1.0, 0.5, 2.0};
    size_t i = 0;
    for (const char* set : {"imagenet", "large"})
      for (int cores : {1, 0})
        for (int w : {1, 2, 3})
          for (int b : {8, 16})
            pts.push_back({set, cores, w, b, ratios[i++ % 3]});
  }
  std::map<std::string, JobInputs> in;
  std::vector<JobConfig> grid;
  for (const auto& pt : pts) {
    if (!in.count(pt.set))
      in[pt.set] = inputs(pt.set);
    JobConfig c;
    c.client = "pytorch";
    c.image_set = pt.set;
    c.cores = host_cores > 1 ? pt.cores : 0; // on one core "1" and "all" are the same
    c.loader_threads = pt.workers;
    c.batch_size = pt.batch;
    c.step_ratio = pt.ratio;
    const int usable = std::max(1, std::min(pt.workers, c.cores > 0 ? c.cores : host_cores));
    c.step_s = pt.ratio * torch_batch_cost_s(p, c, in[pt.set]) / usable;
    grid.push_back(c);
  }
  return grid;
}

std::function<Measured(const JobConfig&, const JobInputs&, const RunLength&)> pytorch_runner(ClientProcess& client) {
  return [&client](const JobConfig& cfg, const JobInputs& in, const RunLength& len) {
    nlohmann::json req = {{"op", "run"},          {"workers", cfg.loader_threads}, {"batch", cfg.batch_size},
                          {"step_s", cfg.step_s}, {"warmup", len.warmup},          {"measured", len.measured},
                          {"cores", cfg.cores},   {"files", in.files}};
    const nlohmann::json a = client.ask(req);
    if (!a.value("ok", false))
      throw std::runtime_error("the pytorch client failed on " + cfg.label() + ": " +
                               a.value("reason", std::string("no reason given")));
    Measured m;
    m.throughput = a.at("throughput");
    m.stall = a.at("stall");
    m.step_time_s = a.at("step_time_s");
    m.step_p50_s = a.at("step_p50_s");
    m.consumer_compute_s = a.at("device_step_s");
    m.other_cpu_cores = a.at("other_cpu_cores");
    m.self_cpu_cores = a.at("self_cpu_cores");
    m.window_s = a.at("window_s");
    m.faults_per_sample = a.value("faults_per_sample", -1.0);
    m.steps = len.measured;
    return m;
  };
}

} // namespace mlsim::validate
