// `mlsim sweep`, `mlsim merge` and (from rightsize_command.cpp) `mlsim rightsize`.
#include "sim/core/base/atomic_file.hpp"
#include "sim/core/studies/child_pool.hpp"
#include "sim/core/app/commands.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/studies/rightsize.hpp"
#include "sim/core/studies/sweep_merge.hpp"
#include "sim/core/studies/sweep_run.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>

namespace mlsim {
namespace {

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> overrides, vary;
  int jobs = 0;
  std::string out, shard = "0/1";
  bool resume = false, list = false;
};

struct MergeArgs {
  std::vector<std::string> files;
  std::string out;
};

size_t stop_after_from_env() {
  const char* v = std::getenv("MLSIM_SWEEP_STOP_AFTER");
  return v ? static_cast<size_t>(std::strtoull(v, nullptr, 10)) : 0;
}

void add_sweep(CLI::App& app, CommandStatus& status) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Simulate every point of a grid of overrides; one CSV row per point");
  cmd->footer(
      "Grid: the cartesian product of the --vary axes, the last one changing fastest; points are numbered\n"
      "from 0 in that order. Each point runs in its own process, --jobs at a time. With --out, rows are\n"
      "appended as points finish (a killed sweep keeps them; --resume runs only the missing ones) and the\n"
      "complete file is rewritten in grid order. A point that fails to simulate is a row with status 'error'.\n"
      "Columns: point, <varied keys>, status, step_time_s, step_time_p99_s, throughput_samples_per_s,\n"
      "stall_share, accelerator_utilization, bottleneck_kind, bottleneck_name, bottleneck_utilization,\n"
      "cost_per_hour_usd, cost_per_step_usd, cost_per_epoch_usd, cost_per_million_samples_usd, error.\n"
      "Examples:\n"
      "  mlsim sweep scenarios/quickstart.yaml --vary hardware.nodes.0.cpu.cores=8..64:8 --out cores.csv\n"
      "  mlsim sweep s.yaml --vary pipeline.batch_size=64,128,256 --vary model.dtype=fp32,fp16 --jobs 8\n"
      "  mlsim sweep s.yaml --vary ... --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT --out part.$SLURM_ARRAY_TASK_ID.csv");
  cmd->add_option("scenario", a->scenario, "Scenario YAML file")->required();
  cmd->add_option("--vary", a->vary, "An axis: KEY=V1,V2,... or KEY=LO..HI[:STEP] (repeatable)")
      ->type_name("KEY=VALUES")
      ->required();
  cmd->add_option("--set", a->overrides, "Override a key at every point: path.to.key=value (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--jobs,-j", a->jobs, "Simulations at once (default: the CPUs this process may use)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--out,-o", a->out, "Results CSV (default: stdout, at the end)");
  cmd->add_flag("--resume", a->resume, "Keep the rows already in --out and run only the missing points");
  cmd->add_option("--shard", a->shard, "Run only slice I of N of the grid (points p with p % N == I), 0 <= I < N")
      ->type_name("I/N");
  cmd->add_flag("--list", a->list, "Print the points (of the shard) and their overrides; simulate nothing");
  cmd->callback([a, &status] {
    SweepOptions o;
    o.scenario = a->scenario;
    o.base_overrides = a->overrides;
    for (const auto& v : a->vary)
      o.axes.push_back(parse_axis(v));
    o.shard = parse_shard(a->shard);
    if (a->list) {
      SweepGrid grid(o.axes);
      for (size_t p : grid.shard_points(o.shard)) {
        std::cout << p;
        for (const auto& ov : grid.overrides(p))
          std::cout << "  --set '" << ov << "'";
        std::cout << "\n";
      }
      return;
    }
    o.jobs = a->jobs > 0 ? a->jobs : available_cpus();
    o.out = a->out;
    o.resume = a->resume;
    o.progress = ::isatty(STDERR_FILENO) != 0;
    o.stop_after = stop_after_from_env();
    SweepSummary s = run_sweep(o);
    std::cerr << "mlsim sweep: " << s.points << " points" << (o.shard.count > 1 ? " in this shard" : "") << ", "
              << s.ran << " simulated";
    if (s.skipped > 0)
      std::cerr << ", " << s.skipped << " already in " << o.out;
    if (s.failed > 0)
      std::cerr << ", " << s.failed << " failed (status 'error' rows)";
    std::cerr << (o.out.empty() ? "" : " -> " + o.out) << "\n";
    status.exit_code = 0;
  });
}

void add_merge(CLI::App& app, CommandStatus& status) {
  auto a = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand("merge", "Join the results files of a sweep's shards, in grid order");
  cmd->footer("Example: mlsim merge part.*.csv --out results.csv\n"
              "Points missing below the largest point number are listed on stderr (exit status 3).");
  cmd->add_option("files", a->files, "Results CSV files written by `mlsim sweep --shard`")->required();
  cmd->add_option("--out,-o", a->out, "Merged CSV (default: stdout)");
  cmd->callback([a, &status] {
    if (!a->out.empty())
      check_output_path("--out", a->out);
    MergeResult r = merge_results(a->files);
    for (const auto& w : r.warnings)
      std::cerr << "mlsim merge: " << w << "\n";
    if (a->out.empty())
      std::cout << r.text;
    else
      write_file_atomically(a->out, r.text);
    std::cerr << "mlsim merge: " << r.rows << " rows from " << a->files.size() << " files"
              << (a->out.empty() ? "" : " -> " + a->out) << "\n";
    status.exit_code = 0;
    if (!r.missing.empty()) {
      std::cerr << "mlsim merge: " << r.missing.size() << " points missing:";
      for (size_t i = 0; i < r.missing.size() && i < 20; ++i)
        std::cerr << " " << r.missing[i];
      std::cerr << (r.missing.size() > 20 ? " ..." : "") << "\n";
      status.exit_code = 3;
    }
  });
}

} // namespace

void add_sweep_commands(CLI::App& app, CommandStatus& status) {
  add_sweep(app, status);
  add_merge(app, status);
  add_rightsize_command(app, status);
}

} // namespace mlsim
