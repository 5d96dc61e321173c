#include "sim/pipeline/trace/measured_step.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/pipeline/trace/trace_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace mlsim {
namespace {

using namespace trace_layout;

// One step's timeline before averaging: each op with the idle time just before it.
struct Rec {
  MeasuredOp op;          // its name is filled in last: many steps' records stay small
  uint32_t name = 0;      // interned name
  Seconds idle_before{0.0};
  Seconds collective_before{0.0}; // the part of idle_before a collective covered
};
struct StepRecs {
  std::vector<Rec> recs;
  Seconds trailing_idle{0.0};
  std::vector<MeasuredBucket> buckets; // ready_after_op indexes recs
  size_t optimizer_begin = 0;
  Seconds input{0.0}, batch_copy{0.0};
  Bytes batch_bytes{0.0};
  bool pageable = false;
  double duration = 0;
};

enum class ItemKind { op, input, batch_copy, collective, transfer };
struct Item {
  double start, end;
  ItemKind kind;
  size_t event;
};

class StepBuilder {
public:
  StepBuilder(const TraceFile& t, const Devices& d, long batch) : t_(t), d_(d), batch_(batch) {
    for (size_t i = 0; i < t.events.size(); ++i) {
      const TraceEvent& e = t.events[i];
      if (d.role[i] != Role::none)
        continue;
      if (e.correlation >= 0)
        launch_ts_.try_emplace(e.correlation, e.ts);
      // The CPU op of a launch: only ops that carry what is read from them (shapes, message sizes).
      if (e.external_id >= 0 && (e.leading_dim >= 0 || e.msg_elements >= 0))
        cpu_op_[e.external_id] = i;
    }
    // Every event by the time that places it in a step (a device event: its launch), so that each
    // step reads only its own events.
    for (size_t i = 0; i < t.events.size(); ++i) {
      const TraceEvent& e = t.events[i];
      double at = e.ts;
      if (auto it = launch_ts_.find(e.correlation); d.role[i] != Role::none && e.correlation >= 0 && it != launch_ts_.end())
        at = it->second;
      by_time_.emplace_back(at, i);
    }
    std::sort(by_time_.begin(), by_time_.end());
  }

  // Indexes of the events placed in [start, end).
  std::vector<size_t> events_in(const Step& s) const {
    auto lo = std::lower_bound(by_time_.begin(), by_time_.end(), std::make_pair(s.start, size_t(0)));
    auto hi = std::lower_bound(by_time_.begin(), by_time_.end(), std::make_pair(s.end, size_t(0)));
    std::vector<size_t> out;
    for (auto it = lo; it != hi; ++it)
      out.push_back(it->second);
    std::sort(out.begin(), out.end()); // file order, as the sweep's ties expect
    return out;
  }

  StepRecs build(const Step& s) const {
    std::vector<Item> items;
    std::vector<std::pair<double, double>> optimizer_windows;
    double first_kernel = 1e300;
    for (size_t i : events_in(s)) {
      const TraceEvent& e = t_.events[i];
      if (d_.role[i] == Role::none) {
        bool on_thread = e.pid == s.pid && e.tid == s.tid;
        if (on_thread && e.ts >= s.start && e.ts < s.end) {
          const std::string& n = t_.str(e.name);
          if (is_input_op(n))
            items.push_back({e.ts, e.ts + e.dur, ItemKind::input, i});
          else if (starts_with(n, "Optimizer.step"))
            optimizer_windows.emplace_back(e.ts, e.ts + e.dur);
        }
        continue;
      }
      double launched = e.ts;
      if (auto it = launch_ts_.find(e.correlation); e.correlation >= 0 && it != launch_ts_.end())
        launched = it->second;
      if (launched < s.start || launched >= s.end)
        continue;
      const std::string& n = t_.str(e.name);
      ItemKind k = ItemKind::op;
      if (d_.role[i] == Role::kernel && is_nccl_kernel(n))
        k = ItemKind::collective;
      else if (d_.role[i] == Role::memcpy && (to_device(n) || to_host(n)))
        k = ItemKind::transfer;
      else
        first_kernel = std::min(first_kernel, e.ts);
      items.push_back({e.ts, e.ts + e.dur, k, i});
    }
    for (auto& it : items) // host-to-device copies before the first kernel carry the batch
      if (it.kind == ItemKind::transfer && it.start < first_kernel && to_device(t_.str(t_.events[it.event].name)))
        it.kind = ItemKind::batch_copy;
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.start < b.start; });
    return sweep(s, items, optimizer_windows);
  }

  StepRecs cpu_only(const Step& s) const {
    // The step thread's top-level ops (those not nested in another) are the step.
    std::vector<size_t> on_thread;
    for (size_t i : events_in(s)) {
      const TraceEvent& e = t_.events[i];
      if (e.pid == s.pid && e.tid == s.tid && e.ts >= s.start && e.ts < s.end &&
          !(e.ts == s.start && e.dur == s.end - s.start && starts_with(t_.str(e.name), "ProfilerStep#")))
        on_thread.push_back(i);
    }
    std::stable_sort(on_thread.begin(), on_thread.end(), [&](size_t a, size_t b) {
      const auto &ea = t_.events[a], &eb = t_.events[b];
      return ea.ts != eb.ts ? ea.ts < eb.ts : ea.dur > eb.dur; // a parent before the child that starts with it
    });
    std::vector<Item> items;
    std::vector<bool> per_sample;
    double top_end = -1e300;
    for (size_t i : on_thread) {
      const TraceEvent& e = t_.events[i];
      bool batch_dim = batch_ > 0 && e.leading_dim == batch_;
      if (e.ts >= top_end) {
        bool input = is_input_op(t_.str(e.name));
        items.push_back({e.ts, e.ts + e.dur, input ? ItemKind::input : ItemKind::op, i});
        per_sample.push_back(batch_dim);
        top_end = e.ts + e.dur;
      } else if (batch_dim) {
        per_sample.back() = true;
      }
    }
    cpu_per_sample_ = std::move(per_sample);
    std::vector<std::pair<double, double>> optimizer_windows;
    for (const auto& it : items)
      if (starts_with(t_.str(t_.events[it.event].name), "Optimizer.step"))
        optimizer_windows.emplace_back(it.start, it.end);
    return sweep(s, items, optimizer_windows, true);
  }

private:
  StepRecs sweep(const Step& s, const std::vector<Item>& items,
                 const std::vector<std::pair<double, double>>& optimizer_windows, bool cpu = false) const {
    StepRecs r;
    r.duration = (s.end - s.start) * 1e-6;
    r.optimizer_begin = SIZE_MAX;
    // Where the step waits for its gradients (before the optimizer), time only a collective covers is
    // exposed communication, not idle: the collective model re-simulates it. Elsewhere a gap is idle.
    std::vector<std::pair<double, double>> collectives;
    for (const auto& it : items)
      if (it.kind == ItemKind::collective)
        collectives.emplace_back(it.start, it.end);
    auto idle_between = [&](double a, double b) {
      double idle = std::max(0.0, b - a), covered_to = a;
      for (const auto& [c0, c1] : collectives) {
        double lo = std::max(c0, covered_to), hi = std::min(c1, b);
        if (hi > lo) {
          idle -= hi - lo;
          covered_to = hi;
        }
      }
      return idle;
    };
    double cursor = s.start, pending_idle = 0, pending_covered = 0, last_collective_end = -1e300;
    size_t cpu_index = 0;
    for (const auto& it : items) {
      double added = 0;
      if (it.kind != ItemKind::collective) {
        if (it.start > cursor && cursor < s.end) {
          double gap = std::min(it.start, s.end) - cursor;
          pending_idle += gap;
          pending_covered += gap - idle_between(cursor, std::min(it.start, s.end));
        }
        added = std::max(0.0, it.end - std::max(it.start, cursor));
        cursor = std::max(cursor, it.end);
      }
      const TraceEvent& e = t_.events[it.event];
      const std::string& n = t_.str(e.name);
      bool per_sample = cpu ? cpu_per_sample_[cpu_index++] : kernel_per_sample(e);
      switch (it.kind) {
      case ItemKind::input:
        r.input += Seconds(e.dur * 1e-6);
        break;
      case ItemKind::batch_copy:
        r.batch_copy += Seconds(e.dur * 1e-6);
        r.batch_bytes += Bytes(std::max(0.0, static_cast<double>(e.bytes)));
        r.pageable = r.pageable || contains(n, "Pageable") || contains(t_.str(e.detail), "pageable");
        break;
      case ItemKind::collective: {
        MeasuredBucket b;
        b.bytes = collective_bytes(e);
        b.ready_after_op = r.recs.empty() ? 0 : r.recs.size() - 1;
        b.collective = nccl_collective(n);
        b.algorithm = nccl_algorithm(n);
        b.measured = Seconds(e.dur * 1e-6);
        r.buckets.push_back(b);
        last_collective_end = std::max(last_collective_end, it.end);
        break;
      }
      case ItemKind::transfer:
      case ItemKind::op: {
        Rec rec;
        rec.name = e.name;
        rec.op.kind = it.kind == ItemKind::transfer ? MeasuredKind::transfer : MeasuredKind::kernel;
        rec.op.info = classify_kernel(n);
        if (cpu)
          rec.op.info = KernelInfo{}; // CPU ops: no device path to read from the name
        rec.op.per_sample = per_sample;
        double launched = e.ts;
        if (auto l = launch_ts_.find(e.correlation); e.correlation >= 0 && l != launch_ts_.end())
          launched = l->second;
        for (const auto& [a, b] : optimizer_windows)
          rec.op.optimizer = rec.op.optimizer || (launched >= a && launched < b);
        if (it.kind == ItemKind::transfer) {
          (to_device(n) ? rec.op.to_device : rec.op.to_host) = Bytes(std::max(0.0, static_cast<double>(e.bytes)));
        } else {
          rec.op.duration = Seconds(added * 1e-6);
        }
        rec.idle_before = Seconds(pending_idle * 1e-6);
        rec.collective_before = Seconds(pending_covered * 1e-6);
        pending_idle = pending_covered = 0;
        if (rec.op.optimizer && r.optimizer_begin == SIZE_MAX)
          r.optimizer_begin = r.recs.size();
        if (!rec.op.optimizer && r.optimizer_begin == SIZE_MAX && !r.buckets.empty() && it.start >= last_collective_end &&
            optimizer_windows.empty())
          r.optimizer_begin = r.recs.size(); // no Optimizer.step annotation: the first op after the last collective
        r.recs.push_back(std::move(rec));
        break;
      }
      }
    }
    if (cursor < s.end) {
      pending_idle += s.end - cursor;
      pending_covered += s.end - cursor - idle_between(cursor, s.end);
    }
    r.trailing_idle = Seconds(pending_idle * 1e-6);
    if (r.optimizer_begin == SIZE_MAX)
      r.optimizer_begin = r.recs.size();
    if (r.optimizer_begin < r.recs.size())
      r.recs[r.optimizer_begin].idle_before -= r.recs[r.optimizer_begin].collective_before;
    else
      r.trailing_idle -= Seconds(pending_covered * 1e-6);
    return r;
  }

  bool kernel_per_sample(const TraceEvent& e) const {
    if (batch_ <= 0 || e.external_id < 0)
      return false;
    auto it = cpu_op_.find(e.external_id);
    return it != cpu_op_.end() && t_.events[it->second].leading_dim == batch_;
  }

  Bytes collective_bytes(const TraceEvent& kernel) const {
    if (auto it = cpu_op_.find(kernel.external_id); kernel.external_id >= 0 && it != cpu_op_.end()) {
      const TraceEvent& op = t_.events[it->second];
      double size = trace_dtype_size(t_.str(op.dtype));
      if (op.msg_elements >= 0 && size > 0)
        return Bytes(static_cast<double>(op.msg_elements) * size);
    }
    if (kernel.bytes > 0)
      return Bytes(kernel.bytes);
    throw InputError(t_.where(kernel), "NCCL kernel '" + t_.str(kernel.name).substr(0, 60) + "'",
                     "its message size (a record_param_comms / nccl:* CPU op with 'In msg nelems' and 'dtype', "
                     "linked by 'External id')",
                     "none");
  }

  const TraceFile& t_;
  const Devices& d_;
  long batch_;
  std::unordered_map<int64_t, double> launch_ts_;
  std::unordered_map<int64_t, size_t> cpu_op_;
  std::vector<std::pair<double, size_t>> by_time_;
  mutable std::vector<bool> cpu_per_sample_;
};

bool same_sequence(const StepRecs& a, const StepRecs& b) {
  if (a.recs.size() != b.recs.size() || a.buckets.size() != b.buckets.size())
    return false;
  for (size_t i = 0; i < a.recs.size(); ++i)
    if (a.recs[i].name != b.recs[i].name)
      return false;
  for (size_t i = 0; i < a.buckets.size(); ++i)
    if (a.buckets[i].ready_after_op != b.buckets[i].ready_after_op)
      return false;
  return true;
}

// Averages steps with the same op sequence; otherwise keeps the median step.
StepRecs combine(std::vector<StepRecs> steps, std::string& how) {
  bool same = true;
  for (const auto& s : steps)
    same = same && same_sequence(s, steps.front());
  if (!same) {
    std::vector<size_t> order(steps.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return steps[a].duration < steps[b].duration; });
    size_t m = order[order.size() / 2];
    how = fmt::format("the median step (the {} steps' op sequences differ)", steps.size());
    return steps[m];
  }
  how = fmt::format("averaged over {} steps, op by op", steps.size());
  StepRecs out = steps.front();
  double k = 1.0 / static_cast<double>(steps.size());
  for (size_t i = 0; i < out.recs.size(); ++i) {
    out.recs[i].op.duration = Seconds(0.0);
    out.recs[i].idle_before = Seconds(0.0);
    for (const auto& s : steps) {
      out.recs[i].op.duration += s.recs[i].op.duration * k;
      out.recs[i].idle_before += s.recs[i].idle_before * k;
    }
  }
  out.trailing_idle = Seconds(0.0);
  out.input = out.batch_copy = Seconds(0.0);
  out.duration = 0;
  for (auto& b : out.buckets)
    b.measured = Seconds(0.0);
  for (const auto& s : steps) {
    out.trailing_idle += s.trailing_idle * k;
    out.input += s.input * k;
    out.batch_copy += s.batch_copy * k;
    out.duration += s.duration * k;
    for (size_t j = 0; j < out.buckets.size(); ++j)
      out.buckets[j].measured += s.buckets[j].measured * k;
  }
  return out;
}

MeasuredOp idle_op(Seconds d) {
  MeasuredOp op;
  op.name = "idle (waiting for the host)";
  op.kind = MeasuredKind::idle;
  op.duration = d;
  return op;
}

} // namespace

MeasuredStep measure_step(const TraceFile& t, const StepSelection& sel) {
  std::vector<Step> steps = find_steps(t, sel);
  Devices dev = find_devices(t);
  MeasuredStep m;
  m.events = t.total_events;
  m.cpu_only = dev.count == 0;
  m.format = dev.tensorflow ? "tensorflow" : m.cpu_only ? "kineto (CPU only)" : "kineto";
  m.batch = infer_batch(t, steps);
  for (const auto& e : t.events)
    m.shapes = m.shapes || e.leading_dim >= 0;
  if (!t.device_names.empty())
    m.device_name = t.device_names.front();
  else if (auto p = t.process_names.find(dev.pid); !m.cpu_only && p != t.process_names.end())
    m.device_name = p->second;
  StepBuilder builder(t, dev, m.batch);
  std::vector<StepRecs> per_step;
  for (const auto& s : steps) {
    per_step.push_back(m.cpu_only ? builder.cpu_only(s) : builder.build(s));
    m.steps.push_back(s.number);
  }
  StepRecs r = combine(std::move(per_step), m.selection);
  std::vector<size_t> op_of_rec;
  for (auto& rec : r.recs) {
    if (rec.idle_before.value() > 0)
      m.ops.push_back(idle_op(rec.idle_before));
    op_of_rec.push_back(m.ops.size());
    m.ops.push_back(rec.op);
    m.ops.back().name = t.str(rec.name);
  }
  if (r.trailing_idle.value() > 0)
    m.ops.push_back(idle_op(r.trailing_idle));
  for (auto b : r.buckets) {
    b.ready_after_op = op_of_rec.empty() ? 0 : op_of_rec[std::min(b.ready_after_op, op_of_rec.size() - 1)];
    m.buckets.push_back(b);
  }
  m.optimizer_begin = r.optimizer_begin < op_of_rec.size() ? op_of_rec[r.optimizer_begin] : m.ops.size();
  m.step_time = Seconds(r.duration);
  m.input_wait = r.input;
  m.batch_copy = r.batch_copy;
  m.batch_copy_bytes = r.batch_bytes;
  m.batch_copy_pinned = !r.pageable;
  return m;
}

Seconds device_timeline(const MeasuredStep& m) {
  Seconds total{0.0};
  for (const auto& op : m.ops)
    total += op.duration;
  return total;
}

} // namespace mlsim
