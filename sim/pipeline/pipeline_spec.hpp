// The `pipeline:` section: how samples become batches on the host.
//
// A pipeline is a list of per-sample stages (read, map, convert, shuffle, cache)
// followed by batching (collation, padding) and an optional device stage
// (preprocessing placed on the accelerator). Framework presets fill the
// parallelism and buffering defaults:
//   tf.data          parallel map over elements (workers = cores unless set),
//                    a batch is split into chunks built in parallel; prefetch
//                    K batches ahead.
//   pytorch          DataLoader: `workers` processes per accelerator, each
//                    building whole batches; prefetch_factor x workers
//                    batches outstanding; pin_memory.
//   keras-generator  one Python thread producing on demand: no overlap with
//                    the step unless `workers`/`prefetch` are given.
// Stage costs: `{per_sample, per_byte, per_pixel}` (of the stage's input), a
// calibrated name (`cost: flip`) or a scaled one (`cost: {calibrated: flip,
// scale: 0.5}`); `probability: p` (a random transform) costs p x the cost on
// average. `kind: convert` is a tensor conversion (ToTensor: uint8 HWC ->
// float32 CHW): a map whose output dtype defaults to fp32, the same elements.
// `copy`: overlapped (default when pinned and prefetching: the next batch is
// copied to the device on its own stream during the current step) or
// serialized (the copy runs in the step, before its ops).
// Whole-batch workers (pytorch, keras-generator): `worker_assignment:
// round_robin` (pytorch's default: batch i to worker i mod W, DataLoader's
// worker cycle) or `first_free` (the others': the worker free the longest, a
// pool's shared task queue); `batch_order: in_order` (pytorch's and keras'
// default: batch i is handed to the step before i + 1, one that came early
// waits) or `as_ready` (a loader whose threads push whichever is done).
// Element-parallel pipelines take neither key.
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"
#include "sim/hardware/cpu.hpp"
#include "sim/pipeline/framework_costs.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mlsim {

enum class StageKind { read, map, shuffle, cache };

// Where the pipeline runs: on each trainer node, or in a data service (another node group).
enum class PipelinePlacement { local, service };
template <> struct EnumNames<PipelinePlacement> {
  static constexpr std::array<std::pair<PipelinePlacement, std::string_view>, 2> table{{
      {PipelinePlacement::local, "local"}, {PipelinePlacement::service, "service"}}};
};

// The host-to-device copy: on its own stream one batch ahead of the step, or in the step (see above).
enum class CopyMode { overlapped, serialized };
template <> struct EnumNames<CopyMode> {
  static constexpr std::array<std::pair<CopyMode, std::string_view>, 2> table{{
      {CopyMode::overlapped, "overlapped"}, {CopyMode::serialized, "serialized"}}};
};

// Whole-batch workers: which worker builds a batch, and the order the step gets them (see above).
enum class WorkerAssignment { round_robin, first_free };
template <> struct EnumNames<WorkerAssignment> {
  static constexpr std::array<std::pair<WorkerAssignment, std::string_view>, 2> table{{
      {WorkerAssignment::round_robin, "round_robin"}, {WorkerAssignment::first_free, "first_free"}}};
};
enum class BatchOrder { in_order, as_ready };
template <> struct EnumNames<BatchOrder> {
  static constexpr std::array<std::pair<BatchOrder, std::string_view>, 2> table{{
      {BatchOrder::in_order, "in_order"}, {BatchOrder::as_ready, "as_ready"}}};
};

// Variable-size samples in a batch: as they are, or padded to the longest.
enum class BatchPadding { none, longest };
template <> struct EnumNames<BatchPadding> {
  static constexpr std::array<std::pair<BatchPadding, std::string_view>, 2> table{{
      {BatchPadding::none, "none"}, {BatchPadding::longest, "longest"}}};
};

// A sample's element type after a stage: its size, and whether host arithmetic is fp16.
enum class ElementType { uint8, fp32, fp16 };
template <> struct EnumNames<ElementType> {
  static constexpr std::array<std::pair<ElementType, std::string_view>, 3> table{{
      {ElementType::uint8, "uint8"}, {ElementType::fp32, "fp32"}, {ElementType::fp16, "fp16"}}};
};

// What a stage turns a sample into. Unset fields keep the incoming value.
struct StageOutput {
  std::optional<double> width, height, channels; // image shape after the stage
  std::optional<ElementType> dtype;               // element size and host fp16 cost
  std::optional<Bytes> bytes;                     // a fixed size (e.g. a serialized record)
  std::optional<double> scale;                    // bytes multiplied by this (e.g. 0.25 after a crop)
};

struct StageSpec {
  std::string name;
  StageKind kind = StageKind::map;
  StageCost cost;          // core-seconds on the reference CPU, per sample
  StageOutput output;
  int parallelism = 0;     // read stage: concurrent readers (0: the workers read inline)
  long buffer_samples = 0; // shuffle: buffer size in samples
};

struct BatchingSpec {
  StageCost collate;               // core-seconds per batch: per_sample x n + per_byte x bytes
  BatchPadding padding = BatchPadding::none;
};

struct DeviceStageSpec {
  bool present = false;
  std::string name = "device_preprocess";
  StageCost cost; // accelerator-seconds per sample (per_sample, per_byte, per_pixel)
};

struct PipelineSpec {
  Framework framework = Framework::custom;
  long batch_size = 1;         // per accelerator
  int workers = 0;             // concurrent CPU workers per pipeline (0: the node's cores)
  int prefetch = 2;            // batches produced ahead per accelerator (0: on demand, no overlap)
  int chunks_per_batch = 0;    // element-parallel: chunks per node batch (0: one per worker)
  bool whole_batch_workers = false; // pytorch: each worker builds whole batches
  WorkerAssignment assignment = WorkerAssignment::first_free; // whole-batch workers (see above)
  BatchOrder order = BatchOrder::as_ready;                     // whole-batch workers (see above)
  bool pinned = true;               // pinned host buffers for the host-to-device copy
  bool persistent_workers = true;   // false (pytorch's default): workers restart each epoch, see framework_costs.hpp
  // The host-to-device copy on its own stream, one batch ahead of the step (DALI; PyTorch with pin_memory and
  // non_blocking; tf.data prefetching to the device): default when pinned and prefetching. Else serialised.
  CopyMode copy = CopyMode::overlapped;
  PipelinePlacement placement = PipelinePlacement::local;
  std::string service_node;         // name of the data-service node group
  bool coordinated_reads = false;   // service: every trainer of a round gets batches of similar size
  int shared_by_jobs = 1;           // service: jobs reading this preprocessed stream (they share its cost)
  std::vector<StageSpec> stages;
  BatchingSpec batching;
  DeviceStageSpec device_stage;
  FrameworkCosts framework_costs; // the loader's own costs (framework_costs.hpp)

  int effective_workers(int cores) const { return workers > 0 ? workers : cores; }
};

} // namespace mlsim
