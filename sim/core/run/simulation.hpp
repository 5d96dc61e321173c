// One simulation of a scenario on SimGrid: builds the engine and platform,
// starts the input pipelines, communicators and trainers, runs to the end and
// returns what the recorder saw. SimGrid allows one engine per process: call
// simulate() once per process (sweeps fork a child per point, see isolated.hpp).
#pragma once

#include "sim/core/base/recorder.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/hardware/platform.hpp"
#include "sim/pipeline/batch_queue.hpp"
#include "sim/pipeline/step_plan.hpp"

#include <string>
#include <vector>

namespace mlsim {

// A trainer group's place in the run: its simulated nodes hold ranks [first_rank, first_rank + ranks).
struct TrainerGroupRun {
  std::string name;
  int nodes = 0;           // in the job
  int simulated_nodes = 0; // in detail (2 of many under replica folding)
  int first_rank = 0;
  int ranks = 0; // simulated
  int workers_per_node = 0;
};

struct SimulationOutput {
  Recorder recorder;
  std::vector<LinkInfo> links;       // with bytes carried
  std::vector<QueueStats> queues;    // one per accelerator's prefetch buffer
  StepPlan plan;                     // the step of one accelerator of the first trainer group's node
  std::vector<TrainerGroupRun> groups; // one per trainer group, in Scenario::trainer_groups() order
  double end_time = 0.0;           // the run's end, fast-forwarded steps included
  double simulated_end_time = 0.0; // the engine's clock at the end
  int ranks = 0;           // accelerators of the job
  int simulated_ranks = 0; // accelerators simulated (fewer with replica folding)
  int simulated_nodes = 0;
  int workers_per_node = 0;
  long steps_simulated = 0; // per rank; fewer than run.steps when the steady state was fast-forwarded
  double collective_closed_form = 0.0; // closed-form all-reduce time of all buckets back to back, uncontended
};

struct SimulationOptions {
  long trace_steps = 3;
  // Every span, for a trace; otherwise none (the metrics read step records, counters and busy periods).
  bool record_trace = false;
};

SimulationOutput simulate(const Scenario& scenario, const SimulationOptions& options = {});

// How many times simulate() has started in this process (a forked child starts from its parent's count):
// lets `mlsim run` prove it simulates the base scenario once.
long simulations_started();

} // namespace mlsim
