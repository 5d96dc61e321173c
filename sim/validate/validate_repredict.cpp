// `mlsim validate --repredict`: an earlier report's measurements, predicted again (validate.hpp).
#include "sim/core/base/errors.hpp"
#include "sim/validate/file_io.hpp"
#include "sim/validate/loader_job.hpp"
#include "sim/validate/validate.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace mlsim::validate {

namespace {

// Reads the fields of one report file, naming the file and the key in every error.
class ReportFields {
public:
  explicit ReportFields(std::string path) : path_(std::move(path)) {}

  const nlohmann::json& need(const nlohmann::json& obj, const std::string& key, const std::string& what,
                             const std::string& where) const {
    if (!obj.is_object() || !obj.contains(key))
      throw InputError(path_, where + key, what, "nothing");
    return obj.at(key);
  }
  double number(const nlohmann::json& obj, const std::string& key, const std::string& where) const {
    const auto& v = need(obj, key, "a number", where);
    if (!v.is_number())
      throw InputError(path_, where + key, "a number", v.dump());
    return v.get<double>();
  }
  double number_or(const nlohmann::json& obj, const std::string& key, double fallback, const std::string& where) const {
    return obj.is_object() && obj.contains(key) ? number(obj, key, where) : fallback;
  }
  int count(const nlohmann::json& obj, const std::string& key, const std::string& where, int lo = 0) const {
    const double v = number(obj, key, where);
    if (v != static_cast<double>(static_cast<long>(v)) || v < lo || v > 1e9)
      throw InputError(path_, where + key, "a whole number >= " + std::to_string(lo), obj.at(key).dump());
    return static_cast<int>(v);
  }
  std::string text(const nlohmann::json& obj, const std::string& key, const std::string& where) const {
    const auto& v = need(obj, key, "a string", where);
    if (!v.is_string())
      throw InputError(path_, where + key, "a string", v.dump());
    return v.get<std::string>();
  }
  bool flag_or(const nlohmann::json& obj, const std::string& key, bool fallback, const std::string& where) const {
    if (!obj.is_object() || !obj.contains(key))
      return fallback;
    if (!obj.at(key).is_boolean())
      throw InputError(path_, where + key, "true or false", obj.at(key).dump());
    return obj.at(key).get<bool>();
  }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

// `group_scheduling`: this machine's setting, for reports from before the field (a report is normally read
// again where it was made).
ConfigResult read_row(const ReportFields& f, const nlohmann::json& c, const std::string& client, const std::string& at,
                      bool group_scheduling) {
  ConfigResult row;
  const auto& cfg = f.need(c, "config", "the configuration", at);
  const std::string cat = at + "config.";
  row.cfg.client = client;
  row.cfg.loader_threads = f.count(cfg, "loader_threads", cat, 1);
  row.cfg.prefetch_depth = f.count(cfg, "prefetch_depth", cat, 1);
  row.cfg.consumer = f.text(cfg, "consumer", cat);
  row.cfg.consumer_layers = f.count(cfg, "consumer_layers", cat);
  row.cfg.gemm_n = f.count(cfg, "gemm_n", cat, 1);
  row.cfg.image_set = f.text(cfg, "image_set", cat);
  row.cfg.batch_size = f.count(cfg, "batch_size", cat, 1);
  row.cfg.gpu = f.flag_or(cfg, "gpu", false, cat);
  if (client == "pytorch") {
    row.cfg.step_s = f.number(cfg, "step_s", cat);
    row.cfg.step_ratio = f.number(cfg, "step_ratio", cat);
    row.cfg.cores = f.count(cfg, "cores", cat);
  }
  row.inputs.mean_bytes = f.number(cfg, "image_bytes", cat);
  row.inputs.mean_pixels = f.number(cfg, "image_pixels", cat);
  if (!(row.inputs.mean_bytes > 0) || !(row.inputs.mean_pixels > 0))
    throw InputError(f.path(), cat + "image_bytes", "a positive mean file size and pixel count",
                     cfg.at("image_bytes").dump() + ", " + cfg.at("image_pixels").dump());
  // Only their number reaches a prediction (mlsim's loader cycles through its files).
  row.inputs.files.assign(static_cast<size_t>(cfg.contains("image_files") ? f.count(cfg, "image_files", cat) : 0), "");

  const auto& m = f.need(c, "measured", "the measured figures", at);
  const std::string mat = at + "measured.";
  row.measured.throughput = f.number(m, "throughput", mat);
  if (!(row.measured.throughput > 0))
    throw InputError(f.path(), mat + "throughput", "a positive throughput", m.at("throughput").dump());
  row.measured.stall = f.number(m, "stall", mat);
  row.measured.step_time_s = f.number(m, "step_time_s", mat);
  row.measured.step_p50_s = f.number_or(m, "step_time_p50_s", 0.0, mat);
  row.measured.consumer_compute_s = f.number_or(m, "consumer_compute_s", 0.0, mat);
  row.measured.other_cpu_cores = f.number_or(m, "other_cpu_cores", 0.0, mat);
  row.measured.self_cpu_cores = f.number_or(m, "self_cpu_cores", 0.0, mat);
  row.measured.faults_per_sample = f.number_or(m, "faults_per_sample", -1.0, mat);
  row.measured.steps = static_cast<int>(f.number_or(m, "steps", 0.0, mat));
  row.robust.median = row.measured;
  row.robust.throughput_spread = f.number_or(m, "throughput_spread", 0.0, mat);
  row.robust.stall_spread = f.number_or(m, "stall_spread", 0.0, mat);
  row.robust.step_spread = f.number_or(m, "step_time_spread", 0.0, mat);
  row.robust.runs = static_cast<int>(f.number_or(m, "runs", 1.0, mat));
  row.robust.rejected = static_cast<int>(f.number_or(m, "rejected_runs", 0.0, mat));
  if (m.contains("drifts") && m.at("drifts").is_array())
    for (const auto& d : m.at("drifts"))
      if (d.is_number()) {
        row.robust.drifts.push_back(d.get<double>());
        row.robust.max_abs_drift = std::max(row.robust.max_abs_drift, std::abs(d.get<double>()));
      }
  row.robust.speed = f.number_or(m, "speed_vs_session_start", 1.0, mat);
  // The machine's state during the runs, as the original prediction had it.
  row.inputs.host_speed = f.number_or(m, "speed_vs_calibration", 1.0, mat);
  row.spin_speed = f.number_or(m, "spin_speed_vs_calibration", row.inputs.host_speed, mat);
  row.inputs.consumer_speed = f.number_or(m, "consumer_speed_vs_calibration", 0.0, mat);
  row.inputs.fault_speed = f.number_or(m, "page_fault_speed_vs_calibration", 1.0, mat);
  row.inputs.background_cores = row.measured.other_cpu_cores;
  row.inputs.group_scheduling = f.flag_or(m, "group_scheduling", group_scheduling, mat);
  if (!(row.inputs.host_speed > 0))
    throw InputError(f.path(), mat + "speed_vs_calibration", "a positive speed", m.at("speed_vs_calibration").dump());
  if (!(row.inputs.fault_speed > 0))
    throw InputError(f.path(), mat + "page_fault_speed_vs_calibration", "a positive speed",
                     m.at("page_fault_speed_vs_calibration").dump());
  return row;
}

} // namespace

ValidationReport read_validation_json(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "a report (JSON written by `mlsim validate --json`)");
  const ReportFields f(path);
  if (!j.is_object())
    throw InputError(path, "", "an object (a report of `mlsim validate --json`)", j.dump().substr(0, 40));
  ValidationReport r;
  r.client = j.contains("client") ? f.text(j, "client", "") : "mlsim";
  if (r.client != "mlsim" && r.client != "pytorch")
    throw InputError(path, "client", "mlsim or pytorch", "'" + r.client + "'");
  r.host = j.value("host", std::string());
  r.cpu_model = j.value("cpu_model", std::string());
  r.gpu = f.flag_or(j, "gpu", false, "");
  r.robust.repeats = static_cast<int>(f.number_or(j, "repeats", 1.0, ""));
  r.robust.drift_threshold = f.number_or(j, "drift_threshold", 0.10, "");
  r.at_calibrated_speed = f.flag_or(j, "at_calibrated_speed", false, "");
  r.faults_by_reference = f.flag_or(j, "faults_by_reference", false, "");
  const auto& configs = f.need(j, "configs", "a list of measured configurations", "");
  if (!configs.is_array() || configs.empty())
    throw InputError(path, "configs", "a non-empty list of measured configurations", configs.dump().substr(0, 40));
  // Reports from before `run_length`: the quick grids are 5 (mlsim) and 3 (pytorch) configurations.
  const bool quick = configs.size() <= (r.client == "pytorch" ? 3u : 5u);
  r.length = client_length(r.client, quick);
  if (j.contains("run_length")) {
    r.length.warmup = f.count(j.at("run_length"), "warmup", "run_length.");
    r.length.measured = f.count(j.at("run_length"), "measured", "run_length.", 1);
  }
  const bool here = autogroup_scheduling();
  for (size_t i = 0; i < configs.size(); ++i)
    r.rows.push_back(read_row(f, configs[i], r.client, "configs." + std::to_string(i) + ".", here));
  return r;
}

void repredict(ValidationReport& r, const Predictor& predict, const std::string& predictor_name,
               bool at_calibrated_speed, bool faults_by_reference) {
  r.predictor = predictor_name;
  r.at_calibrated_speed = at_calibrated_speed;
  r.faults_by_reference = faults_by_reference;
  for (ConfigResult& row : r.rows)
    predict_measured(row, predict, at_calibrated_speed, faults_by_reference);
  summarise_rows(r);
}

} // namespace mlsim::validate
