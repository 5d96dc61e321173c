#include "sim/pipeline/trace/trace_layout.hpp"

#include "sim/core/base/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace mlsim::trace_layout {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }


std::vector<Step> find_steps(const TraceFile& t, const StepSelection& sel) {
  std::map<long, Step> by_number; // a marker may appear twice (CPU and GPU annotation): keep the first
  std::vector<Step> found;
  for (const auto& e : t.events) {
    const std::string& n = t.str(e.name);
    if (sel.step_op.empty() ? starts_with(n, "ProfilerStep#") : n == sel.step_op)
      found.push_back({sel.step_op.empty() ? std::atol(n.c_str() + 13) : 0, e.ts, e.ts + e.dur, e.pid, e.tid});
  }
  std::stable_sort(found.begin(), found.end(), [](const Step& a, const Step& b) { return a.start < b.start; });
  for (size_t i = 0; i < found.size(); ++i) {
    if (!sel.step_op.empty())
      found[i].number = static_cast<long>(i);
    by_number.try_emplace(found[i].number, found[i]);
  }
  if (by_number.empty())
    throw InputError(t.file, "",
                     sel.step_op.empty()
                         ? "ProfilerStep#N step markers (torch.profiler with a schedule and prof.step() every step), "
                           "or model.step_op naming the op that marks each step"
                         : "events named '" + sel.step_op + "' marking the steps",
                     fmt::format("none among {} events", t.total_events));
  long lo = by_number.begin()->first, hi = by_number.rbegin()->first;
  long first = sel.first < 0 ? lo : sel.first, last = sel.last < 0 ? hi : sel.last;
  if (first < lo || last > hi || first > last)
    throw InputError(t.file, "steps", fmt::format("a range within the trace's steps {}..{}", lo, hi),
                     fmt::format("{}..{}", first, last));
  std::vector<Step> steps;
  for (auto& [n, s] : by_number)
    if (n >= first && n <= last)
      steps.push_back(s);
  if (steps.empty())
    throw InputError(t.file, "steps", fmt::format("a range holding at least one of the trace's steps {}..{}", lo, hi),
                     fmt::format("{}..{}", first, last));
  return steps;
}



namespace {
Role kineto_role(const std::string& cat) {
  if (cat == "kernel")
    return Role::kernel;
  if (cat == "gpu_memcpy")
    return Role::memcpy;
  if (cat == "gpu_memset")
    return Role::memset;
  return Role::none;
}
} // namespace

Devices find_devices(const TraceFile& t) {
  Devices d;
  for (const auto& [pid, name] : t.process_names)
    d.tensorflow = d.tensorflow || starts_with(name, "/device:") || starts_with(name, "/host:");
  d.role.resize(t.events.size(), Role::none);
  std::map<int64_t, size_t> per_pid;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const TraceEvent& e = t.events[i];
    Role r = kineto_role(t.str(e.cat));
    if (r == Role::none && d.tensorflow) {
      auto p = t.process_names.find(e.pid);
      auto th = t.thread_names.find({e.pid, e.tid});
      bool device = p != t.process_names.end() && (starts_with(p->second, "/device:GPU") ||
                                                   starts_with(p->second, "/device:TPU"));
      // Only the stream lines: "TensorFlow Ops", "XLA Ops", "Steps"... are derived summaries of them.
      bool stream = th == t.thread_names.end() || starts_with(th->second, "Stream");
      if (device && stream) {
        const std::string& n = t.str(e.name);
        r = contains(n, "emcpy") ? Role::memcpy : contains(n, "emset") ? Role::memset : Role::kernel;
      }
    }
    d.role[i] = r;
    if (r != Role::none)
      ++per_pid[e.pid];
  }
  for (const auto& [pid, n] : per_pid)
    if (n > d.count) {
      d.count = n;
      d.pid = pid;
    }
  if (d.count > 0)
    for (size_t i = 0; i < t.events.size(); ++i)
      if (d.role[i] != Role::none && t.events[i].pid != d.pid)
        d.role[i] = Role::none;
  return d;
}

bool is_input_op(const std::string& n) {
  return starts_with(n, "enumerate(DataLoader)") || contains(n, "IteratorGetNext") || starts_with(n, "Iterator::");
}

bool to_device(const std::string& n) { return contains(n, "HtoD") || contains(n, "H2D"); }
bool to_host(const std::string& n) { return contains(n, "DtoH") || contains(n, "D2H"); }

// The batch: the most common first input dim of the ops that take the activations first.
long infer_batch(const TraceFile& t, const std::vector<Step>& steps) {
  std::map<int64_t, int> votes;
  for (const auto& e : t.events) {
    const std::string& n = t.str(e.name);
    if (e.leading_dim <= 0 || !(n == "aten::conv1d" || n == "aten::conv2d" || n == "aten::conv3d" ||
                                n == "aten::linear" || n == "aten::matmul" || n == "aten::bmm"))
      continue;
    for (const auto& s : steps)
      if (e.ts >= s.start && e.ts < s.end)
        ++votes[e.leading_dim];
  }
  long best = -1;
  int most = 0;
  for (const auto& [dim, n] : votes)
    if (n > most) {
      most = n;
      best = static_cast<long>(dim);
    }
  return best;
}

} // namespace mlsim::trace_layout
