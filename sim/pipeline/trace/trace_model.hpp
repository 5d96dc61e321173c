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

// Whether the scenario's accelerator is another than the one the trace was measured on.
bool moves_device(const TraceModel& m, const AcceleratorSpec& acc);
// The share of kernel time whose dtype the names do not say, and the largest such kernel (`example`);
// `fp64` when some kernel is fp64. Above 5 % no precision or device what-if is answered.
double unknown_dtype_share(const MeasuredStep& s, std::string& example, bool& fp64);

// The replayed step for this accelerator and batch (the loader has refused the what-ifs the trace
// cannot answer: sim/core/run/load/model_load.hpp).
StepPlan plan_trace_step(const TraceModel& m, const AcceleratorSpec& acc, long batch);

} // namespace mlsim
