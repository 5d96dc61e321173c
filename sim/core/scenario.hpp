// A scenario: the typed, validated form of a scenario YAML file.
//
//   name: ...
//   hardware:  nodes (groups of identical machines), network, storage
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

#include "sim/core/config_node.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/hardware/cpu.hpp"
#include "sim/hardware/disk.hpp"
#include "sim/hardware/nic.hpp"
#include "sim/hardware/nvlink.hpp"
#include "sim/hardware/pcie.hpp"
#include "sim/hardware/ram.hpp"
#include "sim/pipeline/model_spec.hpp"
#include "sim/pipeline/pipeline_spec.hpp"
#include "sim/pipeline/sample_size.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mlsim {

struct NodeSpec {
  std::string name;
  int count = 1;
  std::string role = "trainer"; // trainer | data_service
  CpuSpec cpu;
  RamSpec ram;
  std::vector<DiskSpec> disks;
  NicSpec nic;
  PcieSpec pcie;
  int accelerator_count = 0;
  AcceleratorSpec accelerator;
  NvlinkSpec nvlink;
  DollarsPerSec price{0.0};
};

// Remote storage (object store / network file system) reached over the NICs.
struct StorageSpec {
  bool present = false;
  BytesPerSec bandwidth{0.0}; // aggregate egress of the storage service
  double random_read_iops = 0.0;
  Seconds latency{0.0};       // per request
};

struct NetworkSpec {
  Seconds switch_latency{1e-6}; // between any two NICs (a non-blocking switch)
};

struct DatasetSpec {
  long long samples = 0;
  SampleSizeDistribution sample_size; // encoded bytes as stored
  std::optional<double> width, height, channels; // decoded image shape, if images
  std::string location = "local"; // local (a node disk), remote (storage), ram (preloaded)
  std::string disk;               // local: the disk's name on each trainer node
  bool page_cache = true;         // later epochs read RAM when the dataset fits
};

struct DistributionSpec {
  std::string algorithm = "ring"; // ring | tree | hierarchical | parameter_server (sim/pipeline/collective.hpp)
};

struct RunSpec {
  long steps = 20;
  long warmup_steps = 2;
  unsigned long long seed = 1;
  bool replica_folding = true; // simulate 2 of many identical trainer nodes (see simulation.hpp)
  // false (default): the pipeline keeps producing until the trainers stop, so the last steps see the
  // same contention as the others (steady state); true: it makes exactly `steps` batches per
  // accelerator and stops, like a real loader given a fixed number of batches.
  bool pipeline_stops_after_last_batch = false;
};

// Replica folding: a job of more than kFoldAbove identical trainer nodes (local or remote data, ring
// or hierarchical all-reduce) is simulated as 2 of them. By symmetry every node's links carry the same
// traffic as the 2 simulated ones (each NIC one ring flow out and one in), the collective formulas use
// the job's rank and node counts, and shared remote storage is scaled to the simulated share.
// What is lost: stragglers among more than two nodes (the slowest of many), contention in the switch.
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

  const NodeSpec& trainer_node() const; // the (first) node group with accelerators
  int total_accelerators() const;
  const NodeSpec* find_node(const std::string& name) const;
  // Trainer node instances simulated in detail: all of them, or 2 when replica folding applies.
  int simulated_trainer_nodes() const;
};

Scenario load_scenario(const ConfigNode& root);
Scenario load_scenario_file(const std::string& file, const std::vector<std::string>& overrides = {});

} // namespace mlsim
