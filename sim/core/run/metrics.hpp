// Figures of a run, derived from the recorder: what reports print.
//
// Steady state = steps at index >= warmup_steps, over every rank. Step time
// statistics are over those (rank, step) records; the breakdown is the mean of
// each part over the mean step time, with `other` the remainder, so the six
// fractions sum to 1. Throughput = global batch / mean step time.
// Figures of "the node" (stage costs, input analysis, transfer chain) are the first trainer group's
// first node, the job's nominal node; capacities of a job of several trainer groups are its
// slowest group's per node times the job's nodes (a synchronous job moves at its slowest node).
#pragma once

#include "sim/core/run/scenario.hpp"
#include "sim/core/run/simulation.hpp"

#include <map>
#include <string>
#include <vector>

namespace mlsim {

struct Breakdown {
  double input = 0, host_compute = 0, h2d = 0, device_compute = 0, collective = 0, other = 0;
};

struct StageFigure {
  std::string name;
  double capacity_samples_per_s = 0; // what the stage could deliver alone with its workers and cores
  double utilization = 0;            // achieved / capacity
  double busy_share = 0;             // share of the workers' time spent in this stage
  double cost_per_sample = 0;        // seconds one of the workers' cores spends per sample (0: read)
};

struct LinkFigure {
  std::string name;
  std::string kind;
  double capacity_bytes_per_s = 0;
  double utilization = 0;
};

struct OpFigure {
  std::string name, kind, path;
  double time_fraction = 0, utilization = 0;
  double useful_flop_fraction = 1; // useful over executed FLOPs (below 1 when padded)
  std::string fusion, why;         // the fusion kind ("" when a single op); the cause of its time
  std::vector<std::string> fused;  // the ops a fusion stands for
};

// Device ops on the matrix path (tensor cores / a TPU's matrix unit), from the step plan.
struct MatrixPathFigure {
  std::string name;                 // "tensor core" or "matrix unit"
  double utilization = 0;           // useful FLOPs over (time on the path x its peak)
  double useful_flop_fraction = 1;  // useful over executed FLOPs (1 - the matrix unit's padding)
  double time_fraction = 0;         // share of device op time spent on the path
};

// The profiler's input-pipeline analysis, per steady step of the first node.
struct InputAnalysis {
  double read_on_demand = 0;  // wall seconds with a read in progress while the accelerator waited for input
  double read_in_advance = 0; // seconds of reading while it computed (hidden by prefetching)
  double preprocessing = 0;   // core-seconds of the map stages and collation
  double enqueue = 0;         // seconds copying the batch to the device
};

// One trainer group's steady steps, as means over its ranks' (rank, step) records, in seconds per step.
// The job is synchronous: a group that finishes its own work (input wait, copies, compute) before the
// slowest group waits the difference in the all-reduce, so its `collective` holds that wait.
struct NodeGroupFigure {
  std::string name;
  int nodes = 0;
  int workers_per_node = 0;
  double worker_cores = 0; // cores its pipeline workers may use per node (service: its share)
  double step = 0, input = 0, host_compute = 0, h2d = 0, device_compute = 0, collective = 0;
  double own() const { return step - collective; } // the step without its exposed all-reduce wait
};

struct RunMetrics {
  std::string scenario;
  long steps_simulated = 0; // per accelerator; fewer than steps_requested after a fast-forward
  long steps_requested = 0;
  double step_mean = 0, step_p50 = 0, step_p99 = 0;
  double throughput = 0;
  Breakdown breakdown;
  std::string input_bound; // highly | moderately | not
  double accelerator_utilization = 0;
  double op_device = 0, op_host = 0;
  double precision_fp16 = 0, precision_fp32 = 0;
  std::string bottleneck_kind, bottleneck_name;
  double bottleneck_utilization = 0;
  std::vector<StageFigure> stages;
  InputAnalysis input_analysis;
  std::vector<LinkFigure> transfer_chain;
  LinkFigure slowest_link;                 // the chain's link closest to its capacity
  double pipeline_capacity = 0;            // samples/s all CPU stages together can deliver
  double pipeline_cpu_utilization = 0;     // throughput / pipeline_capacity
  std::vector<OpFigure> top_ops;
  std::map<std::string, double> fusion_time; // share of op time per fusion kind ("output fusion", ...)
  MatrixPathFigure matrix_path;
  double memory_footprint = 0, memory_capacity = 0;
  // Per step: the host's time issuing the device ops and the device's wait for it (step_graph/host_issue.hpp;
  // both 0 where the stack does not model it).
  double host_issue_s = 0, host_issue_wait_s = 0;
  double samples_consumed = 0;
  double padded_fraction = 0;
  double cost_per_hour = 0;   // all nodes of the scenario (trainers and data service)
  double dataset_samples = 0;
  int ranks = 0;
  int simulated_nodes = 0; // trainer nodes simulated in detail (replica folding: 2 of many)
  int workers_per_node = 0;
  double worker_cores = 0; // cores the pipeline workers of one trainer node may use (service: its share)
  // Per trainer group, in file order; the pacing group is the one with the longest own time.
  std::vector<NodeGroupFigure> node_groups;
  size_t pacing_group = 0;

  // The stall that paces the job: the input share of the pacing group's step with several trainer
  // groups (the job's mean would dilute one slow node's stall over all ranks), else breakdown.input.
  double pacing_stall() const {
    if (node_groups.size() < 2)
      return breakdown.input;
    const NodeGroupFigure& g = node_groups[pacing_group];
    return g.step > 0 ? g.input / g.step : 0.0;
  }

  // Cost of one step, one epoch and one million samples at cost_per_hour (0 when nothing ran).
  double cost_per_step() const { return cost_per_hour / 3600.0 * step_mean; }
  double cost_per_epoch() const { return throughput > 0 ? cost_per_hour / 3600.0 * dataset_samples / throughput : 0.0; }
  double cost_per_million() const { return throughput > 0 ? cost_per_hour / 3600.0 * 1e6 / throughput : 0.0; }
};

RunMetrics compute_metrics(const Scenario& scenario, const SimulationOutput& out);

// The busy periods compute_metrics reads (Recorder::busy; a run records only these). It reads no span:
// a run without a trace records none.
std::vector<std::string> busy_periods_read_by_metrics(const Scenario& scenario);

// "highly" (>= 20 %), "moderately" (>= 5 %) or "not" input-bound.
std::string classify_input_bound(double input_share);

// Nearest-rank percentile of unsorted values.
double percentile(std::vector<double> values, double p);

} // namespace mlsim
