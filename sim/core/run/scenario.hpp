// A scenario: the typed, validated form of a scenario YAML file.
//
//   name: ...
//   hardware:  nodes (groups of identical machines; one or more trainer groups), network, storage
//   dataset:   samples, sample sizes, image shape, where it lives
//   pipeline:  see sim/pipeline/pipeline_spec.hpp
//   model:     see sim/pipeline/model_spec.hpp
//   distribution: data-parallel all-reduce settings
//   run:       steps, warmup_steps, seed
//
// load_scenario() checks every key (unknown keys are errors with a "did you
// mean"), resolves presets, and checks cross-field rules (a batch larger than
// the dataset, a dataset on a disk that does not exist...).
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/pipeline/job_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mlsim {

// Replica folding: a job of more than kFoldAbove identical trainer nodes (local or remote data, ring
// or hierarchical all-reduce) is simulated as 2 of them. By symmetry every node's links carry the same
// traffic as the 2 simulated ones (each NIC one ring flow out and one in), the collective formulas use
// the job's rank and node counts, and shared remote storage is scaled to the simulated share.
// What is lost: stragglers among more than two nodes (the slowest of many), contention in the switch.
// Only a job whose trainer nodes are one group is folded: with several groups every node is simulated.
inline constexpr int kFoldAbove = 4;

struct Scenario {
  std::string name;
  std::string file;
  std::vector<NodeSpec> nodes;
  NetworkSpec network;
  StorageSpec storage;
  DatasetSpec dataset;
  PipelineSpec pipeline;
  ModelSpec model;
  DistributionSpec distribution;
  RunSpec run;
  std::string batch_size_where; // file:line:col of pipeline.batch_size, for errors found while planning

  // Trainer node groups (role: trainer, with accelerators), in file order: together one synchronous
  // data-parallel job. They may differ in everything but the accelerator count per node.
  std::vector<const NodeSpec*> trainer_groups() const;
  const NodeSpec& trainer_node() const; // the first trainer group: the job's nominal node
  int trainer_nodes() const;            // nodes over all trainer groups
  int total_accelerators() const;
  const NodeSpec* find_node(const std::string& name) const;
  // Trainer node instances simulated in detail: all of them, or 2 when replica folding applies.
  int simulated_trainer_nodes() const;
  // What the models take: the platform's machines, and the job context of the pipeline and trainers.
  PlatformSpec platform_spec() const;
  JobContext job_context() const;
};

// Everything `mlsim run` would reject, rejected at load: keys, types, ranges, cross-field rules, the
// step's device memory and what this process can simulate (limits.hpp).
Scenario load_scenario(const ConfigNode& root);
// Keys, types, ranges and cross-field rules only: a sweep's grid is checked this way up front, and a
// point that does not fit (memory, limits) becomes that point's error row when it is loaded to run.
Scenario parse_scenario(const ConfigNode& root);
Scenario load_scenario_file(const std::string& file, const std::vector<std::string>& overrides = {});

} // namespace mlsim
