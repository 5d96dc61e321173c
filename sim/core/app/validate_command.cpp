// The `calibrate` and `validate` subcommands (CLI only: parsing, files, exit codes).
#include "sim/core/app/commands.hpp"

#include "sim/core/base/atomic_file.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/validate/calibrate.hpp"
#include "sim/validate/client_process.hpp"
#include "sim/validate/pytorch_calibrate.hpp"
#include "sim/validate/pytorch_validate.hpp"
#include "sim/validate/scenario_yaml.hpp"
#include "sim/validate/validate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace mlsim {

namespace {
// A file in the temporary directory, removed when the command ends (also on an exception).
// The client named by --client can run here; else says what it needs (the command then ends, exit 0).
bool client_available(const std::string& client, const char* command) {
  if (client != "pytorch")
    return true;
  const validate::ClientProbe probe = validate::probe_pytorch_client();
  if (!probe.available)
    fmt::print("mlsim {} --client pytorch: skipped: {} ({} says: {})\n", command, validate::kPytorchInstallHint,
               validate::client_python(), probe.reason);
  return probe.available;
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name) : path((std::filesystem::temp_directory_path() / name).string()) {}
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// `validate --repredict`: the report's rows predicted again from `profile_file` (the same one, or a newer
// calibration of the same host); measures nothing, so it runs anywhere the profile and report are.
void repredict_report(const std::string& report_file, const std::string& profile_file, const std::string& json,
                      const std::string& keep_scenarios, bool at_calibrated_speed, bool faults_by_reference) {
  if (profile_file.empty())
    throw InputError("--repredict " + report_file, "--profile", "the calibrated profile to predict from",
                     "none given");
  validate::ValidationReport r = validate::read_validation_json(report_file); // InputError -> exit 2
  const validate::Profile profile = validate::read_profile(profile_file);
  if (r.client == "pytorch" && !profile.framework_costs)
    throw InputError("--profile " + profile_file, "framework_costs.pytorch",
                     "a profile made by `mlsim calibrate --client pytorch` (the report is the pytorch client's)",
                     "a profile without it");
  const std::string profile_path = std::filesystem::absolute(profile_file).string();
  fmt::print("validate --repredict: {} configurations of {} ({} client), predictor: {}\n", r.rows.size(), report_file,
             r.client, validate::kSimulatorLabel);
  validate::repredict(r, validate::mlsim_simulator_predictor(profile, profile_path, r.length, keep_scenarios),
                      validate::kSimulatorLabel, at_calibrated_speed, faults_by_reference);
  r.profile_source = profile_file;
  validate::print_report(r, std::cout);
  if (!json.empty())
    write_file_atomically(json, validate::report_to_json(r).dump(2) + "\n");
}
} // namespace

void add_calibrate_command(CLI::App& app, CommandStatus& status) {
  struct Args {
    std::string out, gpu = "auto", cache_dir, gpu_results, client = "mlsim";
    std::vector<std::string> transforms;
    std::string transforms_from;
    bool quick = false;
    int reps = 0;
    int launches = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure this machine with real work (JPEG decode and augmentation of real photos, IDX parsing, memcpy, "
      "disk reads, host GEMM; CUDA GEMMs, HBM, PCIe and launch overhead when a GPU is present) and write a "
      "hardware profile that scenarios can use with `preset: <profile.yaml>`.");
  cmd->add_option("--out", args->out, "profile file to write (default: profiles/<host>.yaml)");
  cmd->add_flag("--quick", args->quick, "fewer inputs and repetitions (well under 30 s on 2 cores)");
  cmd->add_option("--gpu", args->gpu, "auto: measure a GPU if one is usable; off: CPU only; required: exit 2 without one")
      ->check(CLI::IsMember({"auto", "off", "required"}));
  cmd->add_option("--reps", args->reps, "repetitions per measurement (default 3 quick, 7 full)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--cache-dir", args->cache_dir,
                  "where the calibration images and disk probe go (default $MLSIM_CALIB_DIR, "
                  "$XDG_CACHE_HOME/mlsim/calib or /tmp/mlsim-calib)");
  cmd->add_option("--gpu-results", args->gpu_results,
                  "measure nothing here: fit GPU measurements made on another host by mlsim-gpu-measure (JSON) and "
                  "write a profile with their accelerator and PCIe sections only");
  cmd->add_option("--client", args->client,
                  "mlsim: mlsim's own C++ loader stages only; pytorch: also a real torch DataLoader (transforms, "
                  "receive, worker, pin and start-up costs) through /usr/bin/python3 ($MLSIM_PYTHON)")
      ->check(CLI::IsMember({"mlsim", "pytorch"}));
  cmd->add_option("--transforms", args->transforms,
                  "with --client pytorch: the torchvision transforms to measure, e.g. \"RandomResizedCrop(224)\" "
                  "\"ToTensor()\" (default: RandomResizedCrop(224) RandomHorizontalFlip() ToTensor() Normalize(...))");
  cmd->add_option("--launches", args->launches,
                  "with --client pytorch: fresh processes the in-loop sweep runs in, each its own page-fault table "
                  "(cpu.launch; default 3, 2 with --quick): each process draws its own fault count")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--transforms-from", args->transforms_from,
                  "with --client pytorch: the transforms a scenario's pipeline stages stand for (crop, resize, flip, "
                  "to_tensor/convert, normalize by name)")
      ->check(CLI::ExistingFile)
      ->excludes("--transforms");
  cmd->callback([args, &status] {
    if (args->launches > 0 && args->client != "pytorch")
      throw InputError("--launches", "--client", "pytorch (the launches are the pytorch client's processes)",
                       args->client);
    if (!client_available(args->client, "calibrate"))
      return;
    if (!args->transforms_from.empty()) { // InputError (exit 2) on a bad scenario, before any measuring
      std::vector<std::string> skipped;
      args->transforms = validate::transforms_from_stages(load_scenario_file(args->transforms_from).pipeline, &skipped);
      fmt::print("transforms from {}: {} (not transforms: {})\n", args->transforms_from,
                 fmt::join(args->transforms, ", "), fmt::join(skipped, ", "));
      if (args->transforms.empty())
        throw InputError(args->transforms_from, "pipeline.stages", "a crop, resize, flip, to_tensor or normalize stage",
                         "none");
    }
    if (!args->gpu_results.empty()) { // InputError (exit 2) on a bad file
      validate::Profile p = validate::profile_from_gpu_results(args->gpu_results, std::cout);
      const std::string out = args->out.empty() ? "profiles/gpu.yaml" : args->out;
      validate::write_profile(p, out);
      fmt::print("profile written to {}; use it in a scenario with `accelerators: {{preset: {}, count: N}}`\n", out,
                 out);
      return;
    }
    validate::CalibrateOptions opt;
    opt.quick = args->quick;
    opt.reps = args->reps;
    opt.cache_dir = args->cache_dir;
    opt.gpu = args->gpu == "off"        ? validate::GpuMode::off
              : args->gpu == "required" ? validate::GpuMode::required
                                        : validate::GpuMode::automatic;
    if (opt.gpu == validate::GpuMode::required) { // fail fast, before minutes of CPU work
      validate::GpuInfo g = validate::probe_gpu();
      if (!g.available) {
        std::cerr << "mlsim calibrate: --gpu required, but " << g.reason << "\n";
        status.exit_code = 2;
        return;
      }
    }
    const std::string out = args->out.empty() ? "profiles/" + validate::host_name() + ".yaml" : args->out;
    check_output_path("--out", out); // before minutes of measuring
    validate::Profile p = validate::run_calibration(opt, std::cout); // runtime_error: exit 1 in main
    if (args->client == "pytorch")
      validate::add_pytorch_calibration(
          p, {opt.quick, p.meta.repetitions, args->transforms, opt.cache_dir, args->launches}, std::cout);
    validate::write_profile(p, out);
    fmt::print("profile written to {} ({:.1f} s); use it in a scenario with `preset: {}`\n", out, p.meta.duration_s,
               out);
  });
}

void add_validate_command(CLI::App& app, CommandStatus& status) {
  struct Args {
    std::string profile, json, cache_dir, gpu = "auto", keep_scenarios, client = "mlsim", repredict, speed = "measured",
                fault_speed = "cores";
    bool quick = false;
    int repeats = 0, max_repeats = 0;
    double drift_threshold = 0.10, spread_threshold = 0.10;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Run a real loader (real files, JPEG decode, augmentation, a bounded prefetch queue) feeding a real consumer "
      "(GEMMs on the GPU, or an Eigen GEMM thread without one) over a grid of configurations, predict the same "
      "configurations with the mlsim simulator from the calibrated profile, and print predicted vs. measured "
      "throughput, stall share and step time.");
  cmd->add_option("--profile", args->profile, "calibrated profile (default: a quick in-process CPU calibration)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--quick", args->quick, "a 5-configuration grid with short runs");
  cmd->add_option("--json", args->json, "also write the results as JSON to this file");
  cmd->add_option("--gpu", args->gpu, "auto: GPU consumer when a GPU is usable; off: CPU consumer")
      ->check(CLI::IsMember({"auto", "off"}));
  cmd->add_option("--cache-dir", args->cache_dir, "where the calibration images are (see calibrate --help)");
  cmd->add_option("--keep-scenarios", args->keep_scenarios,
                  "also write each configuration's generated scenario to this folder (for `mlsim run`)");
  cmd->add_option("--client", args->client,
                  "mlsim: mlsim's own C++ loader and consumer; pytorch: a real torch DataLoader feeding an emulated "
                  "accelerator (a sleep per step), through /usr/bin/python3 ($MLSIM_PYTHON)")
      ->check(CLI::IsMember({"mlsim", "pytorch"}));
  cmd->add_option("--repeats", args->repeats, "runs of each configuration, interleaved (default 1 quick, 2 full)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--max-repeats", args->max_repeats,
                  "run a configuration whose throughput spread is over --spread-threshold again, up to this many "
                  "runs in all (default: twice --repeats; with --quick, --repeats)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--spread-threshold", args->spread_threshold,
                  "half the range of a configuration's throughputs over their median above which it runs again "
                  "(default 0.10)")
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--drift-threshold", args->drift_threshold,
                  "reject a run whose reference spin loop changed speed by more than this fraction (default 0.10)")
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--speed", args->speed,
                  "measured: predict each configuration on cores as fast as the reference decode (and GEMM) ran "
                  "around its runs (default); calibrated: on cores as calibrated (the references still reported)")
      ->check(CLI::IsMember({"measured", "calibrated"}));
  cmd->add_option("--fault-speed", args->fault_speed,
                  "cores: price the loader's fresh pages (page faults) as fast as the cores run (default); reference: "
                  "as fast as a reference page fault ran around each configuration's runs (the pytorch client; the "
                  "`pf` figure is reported either way)")
      ->check(CLI::IsMember({"cores", "reference"}));
  cmd->add_option("--repredict", args->repredict,
                  "measure nothing: predict again the configurations of an earlier `validate --json` report (at "
                  "the machine state it measured: cores' speeds, other tenants' load) from --profile, and compare "
                  "with its measurements")
      ->check(CLI::ExistingFile);
  cmd->callback([args, &status] {
    if (!args->json.empty())
      check_output_path("--json", args->json); // before hours of measuring
    if (!args->repredict.empty()) {
      repredict_report(args->repredict, args->profile, args->json, args->keep_scenarios, args->speed == "calibrated",
                       args->fault_speed == "reference");
      return;
    }
    if (!client_available(args->client, "validate"))
      return;
    validate::ValidateOptions opt;
    opt.quick = args->quick;
    opt.cache_dir = args->cache_dir;
    const bool torch = args->client == "pytorch";
    opt.length = validate::client_length(args->client, args->quick);
    opt.robust.repeats = args->repeats > 0 ? args->repeats : (args->quick ? 1 : 2);
    opt.robust.drift_threshold = args->drift_threshold;
    opt.robust.max_repeats = args->max_repeats > 0 ? args->max_repeats
                                                   : (args->quick ? opt.robust.repeats : 2 * opt.robust.repeats);
    opt.robust.spread_threshold = args->spread_threshold;
    if (args->gpu == "auto" && !torch) {
      validate::GpuInfo g = validate::probe_gpu();
      opt.use_gpu = g.available;
      if (!g.available)
        fmt::print("GPU: none ({}); the consumer is an Eigen GEMM thread on the CPU\n", g.reason);
    }
    validate::Profile profile;
    std::string source, profile_path;
    std::unique_ptr<TempFile> temp;
    if (!args->profile.empty()) {
      profile = validate::read_profile(args->profile); // InputError -> exit 2
      source = args->profile;
      profile_path = std::filesystem::absolute(args->profile).string(); // the scenarios name it as a preset
    } else {
      fmt::print("no --profile: calibrating the CPU first (quick, in-process, not kept)\n");
      validate::CalibrateOptions c;
      c.quick = true;
      c.cache_dir = args->cache_dir;
      c.include_disk = false;
      c.gpu = opt.use_gpu ? validate::GpuMode::automatic : validate::GpuMode::off;
      profile = validate::run_calibration(c, std::cout);
      if (torch)
        validate::add_pytorch_calibration(profile, {true, 3, {}, args->cache_dir}, std::cout);
      source = "in-process quick calibration";
      temp = std::make_unique<TempFile>(fmt::format("mlsim-validate-profile-{}.yaml", ::getpid()));
      validate::write_profile(profile, temp->path); // the scenarios' presets read it
      profile_path = temp->path;
    }
    if (opt.use_gpu && !profile.accelerator)
      throw InputError("--profile " + args->profile, "accelerator", "a profile measured with a GPU (a GPU is present)",
                       "a profile without an accelerator section");
    opt.calibration_reference_s = torch && profile.framework_costs ? profile.framework_costs->reference_spin_s
                                                                   : profile.meta.reference_spin_s;
    opt.calibration_gemm_reference_s = profile.meta.reference_gemm_s;
    opt.calibration_decode_reference_s = torch && profile.framework_costs ? profile.framework_costs->reference_decode_s
                                                                          : profile.meta.reference_decode_s;
    opt.reference_decode_image = profile.meta.reference_decode_image;
    opt.calibration_fault_reference_s = torch && profile.framework_costs ? profile.framework_costs->reference_page_fault_s : 0.0;
    opt.at_calibrated_speed = args->speed == "calibrated";
    opt.faults_by_reference = args->fault_speed == "reference";
    std::unique_ptr<validate::ClientProcess> client;
    if (torch) {
      if (!profile.framework_costs)
        throw InputError("--profile " + args->profile, "framework_costs.pytorch",
                         "a profile made by `mlsim calibrate --client pytorch`", "a profile without it");
      client = std::make_unique<validate::ClientProcess>(validate::client_python(), validate::pytorch_client_script());
      opt.run = validate::pytorch_runner(*client);
      opt.grid = validate::pytorch_grid(args->quick, profile.cpu.cores, profile, [&](const std::string& set) {
        return validate::inputs_for_set(set, args->cache_dir, args->quick);
      });
    }
    // Each prediction is one simulation in a forked child (this process never runs a SimGrid engine
    // itself); run_validation predicts after each real run, when the loader threads have been joined.
    fmt::print("validate: {} configurations, predictor: {}\n",
               (opt.grid.empty() ? validate::default_grid(opt.quick, opt.use_gpu) : opt.grid).size(),
               validate::kSimulatorLabel);
    validate::ValidationReport r =
        validate::run_validation(opt, validate::mlsim_simulator_predictor(profile, profile_path, opt.length,
                                                                                     args->keep_scenarios),
                                 validate::kSimulatorLabel, std::cout);
    r.profile_source = source;
    validate::print_report(r, std::cout);
    if (!args->json.empty()) // whole or not at all
      write_file_atomically(args->json, validate::report_to_json(r).dump(2) + "\n");
    (void)status;
  });
}

} // namespace mlsim
