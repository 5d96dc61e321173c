// The `calibrate` and `validate` subcommands (CLI only: parsing, files, exit codes).
#include "sim/core/app/commands.hpp"

#include "sim/core/base/atomic_file.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/validate/calibrate.hpp"
#include "sim/validate/scenario_yaml.hpp"
#include "sim/validate/validate.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace mlsim {

namespace {
// A file in the temporary directory, removed when the command ends (also on an exception).
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
} // namespace

void add_calibrate_command(CLI::App& app, CommandStatus& status) {
  struct Args {
    std::string out, gpu = "auto", cache_dir, gpu_results;
    bool quick = false;
    int reps = 0;
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
  cmd->callback([args, &status] {
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
    validate::write_profile(p, out);
    fmt::print("profile written to {} ({:.1f} s); use it in a scenario with `preset: {}`\n", out, p.meta.duration_s,
               out);
  });
}

void add_validate_command(CLI::App& app, CommandStatus& status) {
  struct Args {
    std::string profile, json, cache_dir, gpu = "auto", keep_scenarios;
    bool quick = false;
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
  cmd->callback([args, &status] {
    if (!args->json.empty())
      check_output_path("--json", args->json); // before hours of measuring
    validate::ValidateOptions opt;
    opt.quick = args->quick;
    opt.cache_dir = args->cache_dir;
    opt.length = validate::default_length(args->quick);
    if (args->gpu == "auto") {
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
      source = "in-process quick calibration";
      temp = std::make_unique<TempFile>(fmt::format("mlsim-validate-profile-{}.yaml", ::getpid()));
      validate::write_profile(profile, temp->path); // the scenarios' presets read it
      profile_path = temp->path;
    }
    if (opt.use_gpu && !profile.accelerator)
      throw InputError("--profile " + args->profile, "accelerator", "a profile measured with a GPU (a GPU is present)",
                       "a profile without an accelerator section");
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
