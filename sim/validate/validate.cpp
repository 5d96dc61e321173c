#include "sim/validate/validate.hpp"

#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/file_io.hpp"
#include "sim/validate/stats.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

namespace mlsim::validate {

namespace fs = std::filesystem;

std::vector<JobConfig> default_grid(bool quick, bool gpu) {
  // Consumer cost in GEMMs per step: CPU n=256 (~1-2 ms each on one core), GPU n=4096 fp16.
  const int n = gpu ? 4096 : 256;
  const std::map<std::string, int> layers = gpu ? std::map<std::string, int>{{"light", 16}, {"heavy", 96}}
                                                : std::map<std::string, int>{{"light", 12}, {"heavy", 48}};
  auto make = [&](int k, int d, const std::string& consumer, const std::string& set) {
    JobConfig c;
    c.loader_threads = k;
    c.prefetch_depth = d;
    c.consumer = consumer;
    c.consumer_layers = layers.at(consumer);
    c.gemm_n = n;
    c.image_set = set;
    c.gpu = gpu;
    return c;
  };
  std::vector<JobConfig> g;
  if (quick) {
    g = {make(1, 2, "light", "imagenet"), make(2, 2, "light", "imagenet"), make(1, 2, "heavy", "imagenet"),
         make(3, 2, "heavy", "imagenet"), make(2, 2, "heavy", "large")};
    return g;
  }
  for (const char* set : {"imagenet", "large"})
    for (const char* consumer : {"light", "heavy"})
      for (int k : {1, 2, 3})
        for (int d : {1, 4})
          g.push_back(make(k, d, consumer, set));
  return g;
}

RunLength default_length(bool quick) { return quick ? RunLength{3, 24} : RunLength{5, 120}; }

RunLength client_length(const std::string& client, bool quick) {
  return client == "pytorch" && quick ? RunLength{2, 10} : default_length(quick);
}

JobInputs inputs_for_set(const std::string& set, const std::string& cache_dir, bool quick) {
  CalibSetOptions o{quick, cache_dir};
  JobInputs in;
  for (const auto& c : select_set(build_calib_set(o), set)) {
    in.files.push_back(c.path);
    in.mean_bytes += static_cast<double>(c.bytes);
    in.mean_pixels += c.pixels();
  }
  if (in.files.empty())
    throw std::runtime_error("no calibration images in set '" + set + "'");
  in.mean_bytes /= static_cast<double>(in.files.size());
  in.mean_pixels /= static_cast<double>(in.files.size());
  return in;
}

ErrorSummary summarise(const std::vector<double>& signed_errors) {
  std::vector<double> a;
  for (double e : signed_errors)
    a.push_back(std::fabs(e));
  ErrorSummary s;
  if (!a.empty()) {
    s.median_abs_error = median(a);
    s.max_abs_error = *std::max_element(a.begin(), a.end());
  }
  return s;
}

ValidationReport run_validation(const ValidateOptions& opt, const Predictor& predict, const std::string& predictor_name,
                                std::ostream& log) {
  ValidationReport r;
  r.predictor = predictor_name;
  r.host = host_name();
  r.cpu_model = cpu_model_name();
  r.gpu = opt.use_gpu;
  r.robust = opt.robust;
  r.length = opt.length;
  r.at_calibrated_speed = opt.at_calibrated_speed;
  r.faults_by_reference = opt.faults_by_reference;
  std::vector<JobConfig> grid = opt.grid.empty() ? default_grid(opt.quick, opt.use_gpu) : opt.grid;
  if (!grid.empty())
    r.client = grid.front().client;
  std::map<std::string, JobInputs> inputs;
  for (const auto& cfg : grid)
    if (!inputs.count(cfg.image_set))
      inputs[cfg.image_set] = inputs_for_set(cfg.image_set, opt.cache_dir, opt.quick);
  GpuGemmStackPtr gpu;
  auto run_one = [&](size_t i) {
    const JobConfig& cfg = grid[i];
    const JobInputs& in = inputs.at(cfg.image_set);
    if (opt.run)
      return opt.run(cfg, in, opt.length);
    if (cfg.gpu) { // sized for this configuration
      size_t batch_bytes = size_t(cfg.batch_size) * 3 * cfg.out_side * cfg.out_side * sizeof(float);
      gpu = make_gpu_gemm_stack(cfg.gemm_n, cfg.consumer_layers, batch_bytes);
    }
    return run_loader_job(cfg, in, opt.length, gpu.get());
  };
  RobustOptions robust = opt.robust;
  const bool host_gemm_consumer = std::any_of(grid.begin(), grid.end(), [](const JobConfig& c) {
    return c.client == "mlsim" && !c.gpu;
  });
  if (host_gemm_consumer && opt.calibration_gemm_reference_s > 0 && !robust.consumer_reference)
    robust.consumer_reference = [] { return reference_gemm_s(kReferenceGemmN); };
  if (opt.calibration_decode_reference_s > 0 && !opt.reference_decode_image.empty() && !robust.stage_reference) {
    const fs::path file = fs::path(opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir) / "jpeg" /
                          opt.reference_decode_image;
    if (fs::exists(file)) {
      auto jpeg = std::make_shared<const std::vector<unsigned char>>(read_file(file.string()));
      robust.stage_reference = [jpeg] { return reference_decode_s(*jpeg); };
    } else {
      fmt::print(log, "  the profile's reference decode image {} is not in the cache: the stages follow the spin\n",
                 file.string());
    }
  }
  if (opt.calibration_fault_reference_s > 0 && !robust.fault_reference)
    robust.fault_reference = reference_page_fault_s;
  // One prediction before any real run: a scenario the simulator refuses (a bad profile, a preset it cannot
  // read) fails now, not after the minutes of measurements it would otherwise follow.
  if (!grid.empty())
    (void)predict(grid.front(), inputs.at(grid.front().image_set));
  const std::vector<RobustMeasured> measured =
      measure_interleaved(grid.size(), robust, run_one, [&](size_t i) { return grid[i].label(); }, log);
  for (size_t i = 0; i < grid.size(); ++i) { // predictions after every real run: no simulation competes with one
    ConfigResult row;
    row.cfg = grid[i];
    row.inputs = inputs.at(grid[i].image_set);
    row.robust = measured[i];
    row.measured = measured[i].median;
    if (row.cfg.client == "pytorch" && row.measured.consumer_compute_s > 0) // the sleep as it was (it overshoots)
      row.cfg.step_s = row.measured.consumer_compute_s;
    row.inputs.host_speed = row.robust.stage_reference_s > 0
                                ? speed_vs_calibration(opt.calibration_decode_reference_s, row.robust.stage_reference_s)
                                : speed_vs_calibration(opt.calibration_reference_s, row.robust.reference_s);
    row.spin_speed = speed_vs_calibration(opt.calibration_reference_s, row.robust.reference_s);
    row.inputs.fault_speed = speed_vs_calibration(opt.calibration_fault_reference_s, row.robust.fault_reference_s);
    if (row.robust.consumer_reference_s > 0 && row.cfg.client == "mlsim" && !row.cfg.gpu)
      row.inputs.consumer_speed =
          speed_vs_calibration(opt.calibration_gemm_reference_s, row.robust.consumer_reference_s);
    row.inputs.background_cores = row.measured.other_cpu_cores;
    row.inputs.group_scheduling = autogroup_scheduling();
    predict_measured(row, predict, opt.at_calibrated_speed, opt.faults_by_reference);
    r.rows.push_back(row);
  }
  summarise_rows(r);
  return r;
}

void predict_measured(ConfigResult& row, const Predictor& predict, bool at_calibrated_speed, bool faults_by_reference) {
  JobInputs calibrated = row.inputs; // the cores as calibrated
  calibrated.host_speed = 1.0;
  calibrated.consumer_speed = 0.0;
  calibrated.fault_speed = 1.0;
  JobInputs quiet = calibrated; // and no other tenants
  quiet.background_cores = 0.0;
  row.predicted_quiet = predict(row.cfg, quiet);
  JobInputs now = row.inputs; // row.inputs keeps the measured fault speed, shown whether applied or not
  if (!faults_by_reference)
    now.fault_speed = 1.0;
  row.predicted = predict(row.cfg, at_calibrated_speed ? calibrated : now);
  row.throughput_error = (row.predicted.throughput - row.measured.throughput) / row.measured.throughput;
  row.stall_error = row.predicted.stall - row.measured.stall;
}

void summarise_rows(ValidationReport& r) {
  std::vector<double> te, se;
  for (const auto& row : r.rows)
    if (row.robust.rejected < row.robust.runs) { // a configuration whose every run drifted is not summarised
      te.push_back(row.throughput_error);
      se.push_back(row.stall_error);
    }
  r.throughput = summarise(te);
  r.stall = summarise(se);
}

namespace {
// "  [a-b]": the throughputs predicted at each calibration launch's page faults, where there are some.
std::string launch_range(const Prediction& p) {
  if (p.launch_throughputs.empty())
    return "";
  const auto [lo, hi] = std::minmax_element(p.launch_throughputs.begin(), p.launch_throughputs.end());
  return fmt::format("  [{:.1f}-{:.1f}]", *lo, *hi);
}
} // namespace

namespace {
// "0.97", "0.97/1.02" with the consumer's own speed, "0.97 pf1.12" with the page faults' (JobInputs).
std::string speed_cell(const JobInputs& in) {
  std::string s = in.consumer_speed > 0 ? fmt::format("{:.2f}/{:.2f}", in.host_speed, in.consumer_speed)
                                        : fmt::format("{:.2f}", in.host_speed);
  if (in.fault_speed != 1.0)
    s += fmt::format(" pf{:.2f}", in.fault_speed);
  return s;
}
} // namespace

void print_report(const ValidationReport& r, std::ostream& out) {
  fmt::print(out, "\npredictions: {}{}\nprofile: {}\n", r.predictor,
             r.at_calibrated_speed ? " (on cores as calibrated: the speed column is measured, not applied)" : "",
             r.profile_source);
  fmt::print(out, "{:<24} {:>9} {:>9} {:>6} {:>7}  {:>7} {:>7} {:>5} {:>6}  {:>8} {:>8}  {:>5} {:>6} {:>14} {:>5}  {}\n",
             "configuration", "pred/s", "meas/s", "+-", "error", "stall_p", "stall_m", "+-", "diff", "step_p",
             "step_m", "busy", "drift", "speed", "runs", "bottleneck (predicted)");
  for (const auto& row : r.rows) {
    const RobustMeasured& m = row.robust;
    fmt::print(out, "{:<24} {:>9.1f} {:>9.1f} {:>5.1f}% {:>+6.1f}%  {:>6.1f}% {:>6.1f}% {:>5.1f} {:>+6.1f}  {:>6.1f}ms "
                    "{:>6.1f}ms  {:>5.2f} {:>5.1f}% {:>14} {:>5}  {}{}\n",
               row.cfg.label(), row.predicted.throughput, row.measured.throughput, 100 * m.throughput_spread,
               100 * row.throughput_error, 100 * row.predicted.stall, 100 * row.measured.stall, 100 * m.stall_spread,
               100 * row.stall_error, 1e3 * row.predicted.step_time_s, 1e3 * row.measured.step_time_s,
               row.measured.other_cpu_cores, 100 * m.max_abs_drift,
               speed_cell(row.inputs),
               fmt::format("{}/{}{}", m.runs - m.rejected, m.runs, m.rejected == m.runs && m.runs > 0 ? "!" : ""),
               row.predicted.bottleneck, launch_range(row.predicted));
  }
  // The accuracy targets, the same for both clients (README: Calibration; A real PyTorch DataLoader ...).
  fmt::print(out, "throughput |error|: median {:.1f} %, max {:.1f} %   (targets 5 % / 12 %)\n",
             100 * r.throughput.median_abs_error, 100 * r.throughput.max_abs_error);
  fmt::print(out, "stall share |diff|: median {:.1f} points, max {:.1f} points   (targets 3 / 8)\n",
             100 * r.stall.median_abs_error, 100 * r.stall.max_abs_error);
  fmt::print(out, "(busy = cores' worth of CPU other processes used on the job's cores during the run; predictions "
                  "take it into "
                  "account: the job gets the rest)\n");
  fmt::print(out, "(+- = half the range over the kept repeats: throughput relative, stall in points; drift = the largest "
                  "change of a reference spin loop's speed across one run; runs = kept/all, a run whose drift is over "
                  "{:.0f} % is rejected; '!' = all drifted, kept anyway and left out of the summary; speed = the cores' "
                  "speed during the runs over during calibration, by a reference decode of one calibration JPEG timed "
                  "before and after each run (by the spin loop for a profile without one): the prediction is for cores "
                  "that fast; a/b: a for the loader stages, b for the host GEMM consumer, by a reference GEMM timed "
                  "the same way; pf x: a minor page fault x times as fast as during calibration, by a reference page "
                  "fault timed the same way: the loader's fresh pages are priced so with --fault-speed reference, "
                  "else as fast as the cores)\n",
             100 * r.robust.drift_threshold);
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const auto& row) { return !row.predicted.launch_throughputs.empty(); }))
    fmt::print(out, "(pred/s, stall_p, step_p = the mean over the calibration's launches: each fresh process's page "
                    "faults simulated in turn (cpu.launch); [a-b] = their throughputs' range)\n");
}

nlohmann::json report_to_json(const ValidationReport& r) {
  nlohmann::json j;
  j["predictor"] = r.predictor;
  j["profile"] = r.profile_source;
  j["host"] = r.host;
  j["cpu_model"] = r.cpu_model;
  j["gpu"] = r.gpu;
  j["client"] = r.client;
  j["repeats"] = r.robust.repeats;
  j["drift_threshold"] = r.robust.drift_threshold;
  j["run_length"] = {{"warmup", r.length.warmup}, {"measured", r.length.measured}};
  j["at_calibrated_speed"] = r.at_calibrated_speed;
  j["faults_by_reference"] = r.faults_by_reference;
  j["configs"] = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json c;
    c["config"] = {{"loader_threads", row.cfg.loader_threads}, {"prefetch_depth", row.cfg.prefetch_depth},
                   {"consumer", row.cfg.consumer},             {"consumer_layers", row.cfg.consumer_layers},
                   {"gemm_n", row.cfg.gemm_n},                 {"image_set", row.cfg.image_set},
                   {"batch_size", row.cfg.batch_size},         {"image_bytes", row.inputs.mean_bytes},
                   {"image_pixels", row.inputs.mean_pixels},   {"image_files", row.inputs.files.size()},
                   {"gpu", row.cfg.gpu}};
    if (row.cfg.client == "pytorch") {
      c["config"]["step_s"] = row.cfg.step_s;
      c["config"]["step_ratio"] = row.cfg.step_ratio;
      c["config"]["cores"] = row.cfg.cores;
    }
    c["label"] = row.cfg.label();
    c["predicted"] = {{"throughput", row.predicted.throughput},
                      {"stall", row.predicted.stall},
                      {"step_time_s", row.predicted.step_time_s},
                      {"bottleneck", row.predicted.bottleneck},
                      {"background_cores", row.inputs.background_cores}};
    if (!row.predicted.launch_throughputs.empty())
      c["predicted"]["launch_throughputs"] = row.predicted.launch_throughputs;
    c["predicted_quiet"] = {{"throughput", row.predicted_quiet.throughput},
                            {"stall", row.predicted_quiet.stall},
                            {"step_time_s", row.predicted_quiet.step_time_s}};
    c["measured"] = {{"throughput", row.measured.throughput},
                     {"stall", row.measured.stall},
                     {"step_time_s", row.measured.step_time_s},
                     {"step_time_p50_s", row.measured.step_p50_s},
                     {"consumer_compute_s", row.measured.consumer_compute_s},
                     {"other_cpu_cores", row.measured.other_cpu_cores},
                     {"self_cpu_cores", row.measured.self_cpu_cores},
                     {"steps", row.measured.steps}};
    if (row.measured.faults_per_sample >= 0)
      c["measured"]["faults_per_sample"] = row.measured.faults_per_sample;
    c["measured"]["throughput_spread"] = row.robust.throughput_spread;
    c["measured"]["stall_spread"] = row.robust.stall_spread;
    c["measured"]["step_time_spread"] = row.robust.step_spread;
    c["measured"]["runs"] = row.robust.runs;
    c["measured"]["rejected_runs"] = row.robust.rejected;
    c["measured"]["drifts"] = row.robust.drifts;
    c["measured"]["speed_vs_session_start"] = row.robust.speed;
    c["measured"]["speed_vs_calibration"] = row.inputs.host_speed;
    c["measured"]["spin_speed_vs_calibration"] = row.spin_speed;
    c["measured"]["group_scheduling"] = row.inputs.group_scheduling;
    if (row.inputs.consumer_speed > 0)
      c["measured"]["consumer_speed_vs_calibration"] = row.inputs.consumer_speed;
    if (row.inputs.fault_speed != 1.0 || row.robust.fault_reference_s > 0)
      c["measured"]["page_fault_speed_vs_calibration"] = row.inputs.fault_speed;
    c["throughput_error"] = row.throughput_error;
    c["stall_error"] = row.stall_error;
    j["configs"].push_back(c);
  }
  j["summary"] = {{"throughput", {{"median_abs_error", r.throughput.median_abs_error},
                                  {"max_abs_error", r.throughput.max_abs_error}}},
                  {"stall", {{"median_abs_error", r.stall.median_abs_error}, {"max_abs_error", r.stall.max_abs_error}}}};
  return j;
}

} // namespace mlsim::validate
