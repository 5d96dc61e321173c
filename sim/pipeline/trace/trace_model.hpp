// The `model:` section when the step comes from a profiler trace, and its plan.
//
//   model: {trace: run1.pt.trace.json, steps: [5, 10]}
//   model: {trace: tf.trace.json.gz, step_op: train_function, batch: 64,
//           measured_on: a100-sxm4-40gb, precision: mixed_fp16}
// Keys: trace (path, relative to the scenario file), steps ([first, last],
// inclusive; default all), step_op (the op marking each step when the trace
// has no ProfilerStep#N markers), batch (the per-device batch the trace ran;
// default: read from the input shapes), measured_on (the accelerator preset the
// trace was recorded on; default: the scenario's own, no scaling), precision
// (a what-if: run the kernels in another precision), name.
// The plan replays the measured step (measured_step.hpp): kernel times as
// measured, scaled only by the what-ifs the scenario asks for:
//   - another accelerator (hardware.nodes.N.accelerators != measured_on) and
//     another precision: kernel_time_ratio() by op class and dtype;
//   - another batch (pipeline.batch_size != batch): kernels whose CPU op's
//     first input dim is the batch scale linearly with it; the others (weights,
//     optimizer, idle waits for the host) do not.
// Refused (InputError, exit 2) where the trace cannot answer: a CPU-only
// trace on another accelerator or precision; another batch without input
// shapes or without a known measured batch; another accelerator or precision
// when kernels holding more than 5 % of kernel time do not say their dtype
// (fp64 kernels: always).
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"
#include "sim/pipeline/step_plan.hpp"
#include "sim/pipeline/trace/measured_step.hpp"

#include <optional>
#include <string>

namespace mlsim {

struct TraceModel {
  std::string name;
  std::string path;                          // as resolved (relative to the scenario's folder)
  StepSelection selection;
  MeasuredStep step;
  long batch = -1;                           // measured per-device batch (-1: unknown)
  std::optional<AcceleratorSpec> measured_on;
  std::optional<PrecisionPolicy> precision;  // the what-if; none = as measured
};

// Parses and loads the trace (throws InputError with the trace's byte offset on a bad file).
TraceModel parse_trace_model(const ConfigNode& node);

// Refuses the what-ifs the trace cannot answer, at the key that asks for them.
void check_trace_what_ifs(const TraceModel& m, const AcceleratorSpec& acc, const ConfigNode& accelerator_node,
                          long batch, const ConfigNode& batch_node);

// The replayed step for this accelerator and batch (after check_trace_what_ifs).
StepPlan plan_trace_step(const TraceModel& m, const AcceleratorSpec& acc, long batch);

} // namespace mlsim
