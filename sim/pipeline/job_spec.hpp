// The typed description of the training job around the models: the dataset, the run length, the
// all-reduce choice, and the context the pipeline and trainer actors read (JobContext). Filled by the
// scenario loader (sim/core/run/scenario.* and sim/core/run/load/).
#pragma once

#include "sim/hardware/node_spec.hpp"
#include "sim/pipeline/collective_algorithm.hpp"
#include "sim/pipeline/model_spec.hpp"
#include "sim/pipeline/pipeline_spec.hpp"
#include "sim/pipeline/sample_size.hpp"

#include <optional>
#include <string>

namespace mlsim {

// Where the dataset lives: a disk of each trainer node, remote storage, or preloaded in RAM.
enum class DataLocation { local, remote, ram };
template <> struct EnumNames<DataLocation> {
  static constexpr std::array<std::pair<DataLocation, std::string_view>, 3> table{{
      {DataLocation::local, "local"}, {DataLocation::remote, "remote"}, {DataLocation::ram, "ram"}}};
};

struct DatasetSpec {
  long long samples = 0;
  SampleSizeDistribution sample_size; // encoded bytes as stored
  std::optional<double> width, height, channels; // decoded image shape, if images
  DataLocation location = DataLocation::local;
  std::string disk;               // local: the disk's name on each trainer node
  bool page_cache = true;         // later epochs read RAM when the dataset fits
};

struct DistributionSpec {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring; // sim/pipeline/collective.hpp
};

struct RunSpec {
  long steps = 20;
  long warmup_steps = 2;
  unsigned long long seed = 1;
  bool replica_folding = true; // simulate 2 of many identical trainer nodes (see sim/core/run/scenario.hpp)
  // false (default): the pipeline keeps producing until the trainers stop, so the last steps see the
  // same contention as the others (steady state); true: it makes exactly `steps` batches per
  // accelerator and stops, like a real loader given a fixed number of batches.
  bool pipeline_stops_after_last_batch = false;
  // Stop once every trainer repeats itself and write the remaining steps as that repetition
  // (sim/pipeline/steady_state.hpp); never with pipeline_stops_after_last_batch.
  bool fast_forward = true;
  Seconds max_wall{0.0};      // wall-clock limit of one simulation (0: none), see sim/core/base/run_watch.hpp
  std::string max_wall_where; // its file:line:col, for the message when it is reached
};

// What the input pipeline and trainer actors read of the job: their own specs, not the whole scenario.
struct JobContext {
  const PipelineSpec* pipeline = nullptr;
  const DatasetSpec* dataset = nullptr;
  const StorageSpec* storage = nullptr;
  const RunSpec* run = nullptr;
  long micro_batches = 1;    // batches per step (model.gradient_accumulation)
  bool reduce_every_micro_batch = false; // model.gradient_sync: micro_batch
  int job_trainer_nodes = 1; // the job's trainer nodes share the dataset, folded or not
};

} // namespace mlsim
