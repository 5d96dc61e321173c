// The trace form of `model:` and the what-ifs a trace can answer (model_load.hpp).
#include "sim/core/run/load/model_load.hpp"

#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/preset_library.hpp"
#include "sim/pipeline/trace/trace_events.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace mlsim {
namespace {

std::string resolve_path(const ConfigNode& node, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute())
    return path;
  std::filesystem::path base = std::filesystem::path(node.source_file()).parent_path();
  return base.empty() ? path : (base / p).string();
}

} // namespace

TraceModel parse_trace_model(const ConfigNode& node) {
  node.allow_only(with_loop_keys({"trace", "steps", "step_op", "batch", "measured_on", "precision", "name"}));
  TraceModel m;
  ConfigNode trace = node.child("trace");
  m.path = resolve_path(node, node.get_string("trace"));
  m.name = node.get_string("name", std::filesystem::path(m.path).filename().string());
  if (ConfigNode steps = node.child("steps"); steps.defined()) {
    auto items = steps.is_sequence() ? steps.items() : std::vector<ConfigNode>{};
    if (items.size() != 2 || items[0].as_integer() < 0 || items[0].as_integer() > items[1].as_integer())
      steps.fail("[first, last] step numbers (inclusive), 0 <= first <= last", steps.quoted());
    m.selection.first = static_cast<long>(items[0].as_integer());
    m.selection.last = static_cast<long>(items[1].as_integer());
  }
  m.selection.step_op = node.get_string("step_op", "");
  try {
    TraceFile file = read_trace(m.path);
    m.step = measure_step(file, m.selection);
  } catch (const InputError& e) {
    throw InputError(trace.where() + ": " + trace.path() + ": " + e.what());
  }
  m.batch = node.has("batch") ? static_cast<long>(node.get_integer("batch", std::nullopt, 1)) : m.step.batch;
  if (node.has("measured_on")) {
    ConfigNode on = node.child("measured_on");
    if (m.step.cpu_only)
      on.fail("no measured_on for a CPU-only trace (its ops ran on the host, not on an accelerator)",
              on.quoted());
    m.measured_on = accelerator_preset(node.get_choice("measured_on", preset_names("accelerators")));
  }
  if (node.has("precision")) {
    ConfigNode prec = node.child("precision");
    if (m.step.cpu_only)
      prec.fail("no precision what-if for a CPU-only trace (CPU op names do not say which device path they take)",
                prec.quoted());
    m.precision = prec.as_enum<PrecisionPolicy>();
    std::string example;
    bool fp64 = false;
    double share = unknown_dtype_share(m.step, example, fp64);
    if (fp64 || share > 0.05)
      prec.fail("a trace whose kernel names say their dtype (fp32/tf32/fp16/bf16) for at least 95 % of kernel time",
                fmt::format("{:.1f} % unknown{}, e.g. '{}'", share * 100, fp64 ? " or fp64" : "", example));
  }
  return m;
}

void check_trace_what_ifs(const TraceModel& m, const AcceleratorSpec& acc, const ConfigNode& accelerator_node,
                          long batch, const ConfigNode& batch_node) {
  if (moves_device(m, acc)) {
    std::string example;
    bool fp64 = false;
    double share = unknown_dtype_share(m.step, example, fp64);
    if (fp64 || share > 0.05)
      accelerator_node.fail(fmt::format("the trace's accelerator ({}) or a trace whose kernel names say their dtype "
                                        "for at least 95 % of kernel time",
                                        m.measured_on->name),
                            fmt::format("{} with {:.1f} % unknown{}, e.g. '{}'", acc.name, share * 100,
                                        fp64 ? " or fp64" : "", example));
  }
  if (m.batch == batch)
    return;
  if (m.batch < 0)
    batch_node.fail("the per-device batch the trace ran, which it does not say (no input shapes): give model.batch",
                    std::to_string(batch));
  if (!m.step.shapes)
    batch_node.fail(fmt::format("the trace's batch {} (it has no input shapes, record_shapes=True, so per-sample "
                                "ops cannot be told from per-step ones)",
                                m.batch),
                    std::to_string(batch));
  bool any = false;
  for (const auto& op : m.step.ops)
    any = any || op.per_sample;
  if (!any)
    batch_node.fail(fmt::format("the trace's batch {} (no op of the trace takes a first input dim of {})", m.batch,
                                m.batch),
                    std::to_string(batch));
}

} // namespace mlsim
