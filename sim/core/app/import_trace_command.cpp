// `mlsim import-trace`: read a profiler trace and write the `model:` section that replays it.
//
// The section goes through the same parser as a scenario's (sim/pipeline/trace/trace_model.hpp), so
// what the command accepts a scenario accepts. It opens with comments that account for the measured
// step: data-loader wait and batch copy (which mlsim's pipeline and PCIe models replace), the device
// timeline (kernels and idle time, replayed), and the gradient collectives (re-simulated).
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/model_load.hpp"
#include "sim/core/base/atomic_file.hpp"
#include "sim/core/app/commands.hpp"
#include "sim/core/run/load/preset_library.hpp"
#include "sim/pipeline/model_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

namespace mlsim {
namespace {

struct ImportArgs {
  std::string trace, steps, step_op, measured_on, out;
  long batch = 0;
};

// "NVIDIA A100-SXM4-40GB" -> a100-sxm4-40gb; "NVIDIA H200" -> h200-sxm (the only preset starting so).
std::string match_preset(const std::string& device) {
  std::string n;
  for (char c : device)
    n += c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* vendor : {"nvidia-", "tesla-"})
    if (n.rfind(vendor, 0) == 0)
      n = n.substr(std::string(vendor).size());
  auto names = preset_names("accelerators");
  if (std::find(names.begin(), names.end(), n) != names.end())
    return n;
  std::string family = n.substr(0, n.find('-'));
  std::string found;
  for (const auto& p : names)
    if (!family.empty() && p.rfind(family, 0) == 0) {
      if (!found.empty())
        return ""; // ambiguous: let the user say
      found = p;
    }
  return found;
}

std::string section_yaml(const ImportArgs& a, const std::string& trace_path, const std::string& measured_on) {
  std::string y = fmt::format("model:\n  trace: {}\n", trace_path);
  if (!a.steps.empty()) {
    auto colon = a.steps.find(':');
    if (colon == std::string::npos)
      throw InputError("--steps", "", "A:B (first and last step numbers, inclusive)", "'" + a.steps + "'");
    y += fmt::format("  steps: [{}, {}]\n", a.steps.substr(0, colon), a.steps.substr(colon + 1));
  }
  if (!a.step_op.empty())
    y += fmt::format("  step_op: '{}'\n", a.step_op);
  if (a.batch > 0)
    y += fmt::format("  batch: {}\n", a.batch);
  if (!measured_on.empty())
    y += fmt::format("  measured_on: {}\n", measured_on);
  return y;
}

std::string ms(Seconds s) { return fmt::format("{:.3f} ms", s.value() * 1e3); }

std::string summary(const TraceModel& m) {
  const MeasuredStep& s = m.step;
  Seconds kernels{0.0}, idle{0.0};
  size_t n_kernels = 0, per_sample = 0, transfers = 0;
  for (const auto& op : s.ops) {
    if (op.kind == MeasuredKind::kernel) {
      kernels += op.duration;
      ++n_kernels;
      per_sample += op.per_sample;
    } else if (op.kind == MeasuredKind::idle) {
      idle += op.duration;
    } else {
      ++transfers;
    }
  }
  std::string first = s.steps.empty() ? "" : std::to_string(s.steps.front());
  std::string last = s.steps.empty() ? "" : std::to_string(s.steps.back());
  std::string r;
  r += fmt::format("# Imported from {} ({} events, {}{}), steps {}..{}: {}.\n", m.path, s.events, s.format,
                   s.device_name.empty() ? "" : ", " + s.device_name, first, last, s.selection);
  r += fmt::format("# Measured step {} = data-loader wait {} + batch copy {} ({:.0f} B, {}) + device timeline {}",
                   ms(s.step_time), ms(s.input_wait), ms(s.batch_copy), s.batch_copy_bytes.value(),
                   s.batch_copy_pinned ? "pinned" : "pageable", ms(device_timeline(s)));
  r += fmt::format(" ({} {}: {}, idle waiting for the host: {}).\n", n_kernels,
                   s.cpu_only ? "CPU ops (a CPU-only trace: they are the device step)" : "device ops", ms(kernels),
                   ms(idle));
  r += "# Replayed: the device timeline as measured. Re-simulated by mlsim: the input pipeline, the batch copy\n"
       "# (PCIe, pcie.pinned), ";
  r += fmt::format("{} other host<->device copies, and ", transfers);
  Bytes grad{0.0};
  std::string algos;
  for (const auto& b : s.buckets) {
    grad += b.bytes;
    if (!b.algorithm.empty() && algos.find(b.algorithm) == std::string::npos)
      algos += (algos.empty() ? "" : ", ") + b.algorithm;
  }
  r += fmt::format("{} gradient collectives ({:.3g} MB{}).\n", s.buckets.size(), grad.value() / 1e6,
                   algos.empty() ? "" : "; NCCL chose " + algos + ", distribution.algorithm sets mlsim's");
  if (m.batch > 0)
    r += fmt::format("# Batch {} per device ({}); {} of {} ops scale with it when pipeline.batch_size differs.\n",
                     m.batch, s.batch == m.batch ? "from the input shapes" : "as given", per_sample, n_kernels);
  else
    r += "# Batch unknown (no input shapes: profile with record_shapes=True or pass --batch); another batch is refused.\n";
  return r;
}

} // namespace

void add_import_trace_command(CLI::App& app, CommandStatus&) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import-trace", "Read a torch.profiler (Kineto) or TensorFlow profiler trace and write the model: section "
                      "that replays its training step");
  cmd->add_option("trace", a->trace, "Chrome-trace JSON (.json or .json.gz)")->required();
  cmd->add_option("--steps", a->steps, "Steps to use, first:last inclusive (default: all)")->type_name("A:B");
  cmd->add_option("--step-op", a->step_op, "The op marking each step when there are no ProfilerStep#N markers");
  cmd->add_option("--batch", a->batch, "Per-device batch the trace ran (default: from the input shapes)");
  cmd->add_option("--measured-on", a->measured_on,
                  "Accelerator preset the trace was recorded on (default: matched from the trace's device name)");
  cmd->add_option("--out", a->out, "Write the section to this YAML file (default: print it)");
  cmd->callback([a] {
    // The trace path as the section will hold it: relative to the file the section is written to.
    std::string path = a->trace;
    if (!a->out.empty()) {
      auto dir = std::filesystem::absolute(a->out).parent_path();
      path = std::filesystem::relative(std::filesystem::absolute(a->trace), dir).string();
    }
    std::string measured_on = a->measured_on;
    // First pass without measured_on: the trace tells which device it ran on.
    std::string yaml = section_yaml(*a, a->trace, ""); // parsed here: the path as given
    ModelSpec spec;
    try {
      spec = parse_model(ConfigNode::load_string(yaml, "import-trace").required("model"));
    } catch (const InputError& e) { // the trace's own message, without the section's position
      std::string m = e.what();
      auto at = m.find(": model.trace: ");
      if (m.rfind("import-trace:", 0) == 0 && at != std::string::npos)
        throw InputError(m.substr(at + 15));
      throw;
    }
    if (measured_on.empty() && !spec.trace->step.cpu_only)
      measured_on = match_preset(spec.trace->step.device_name);
    if (!measured_on.empty())
      spec = parse_model(ConfigNode::load_string(section_yaml(*a, a->trace, measured_on), "import-trace")
                             .required("model"));
    std::string text = summary(*spec.trace) + section_yaml(*a, path, measured_on);
    if (!spec.trace->step.cpu_only && measured_on.empty())
      text += fmt::format("  # measured_on: <accelerator preset>   (device '{}' matched none; set it to move kernels "
                          "to another accelerator)\n",
                          spec.trace->step.device_name);
    if (a->out.empty()) {
      std::cout << text;
    } else {
      write_file_atomically(a->out, text);
      std::cout << text << "wrote " << a->out << "\n";
    }
  });
}

} // namespace mlsim
