#include "sim/core/studies/cores_needed.hpp"

#include "sim/core/run/isolated.hpp"
#include "sim/core/run/report_json.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>

namespace mlsim {

PipelineCores pipeline_cores(const Scenario& sc) {
  PipelineCores p;
  p.service = sc.pipeline.placement == PipelinePlacement::service;
  // Trainer nodes: the group with the fewest cores per node (the first of equals), the one whose cores
  // limit a job of several trainer groups.
  bool found = false;
  for (size_t i = 0; i < sc.nodes.size(); ++i)
    if (p.service ? sc.nodes[i].name == sc.pipeline.service_node
                  : sc.nodes[i].trains() && (!found || sc.nodes[i].cpu.cores < sc.nodes[p.group].cpu.cores)) {
      p.group = i;
      found = true;
    }
  const NodeSpec& node = sc.nodes[p.group];
  p.key = "hardware.nodes." + std::to_string(p.group) + (p.service ? ".count" : ".cpu.cores");
  p.current = p.service ? node.count : node.cpu.cores;
  return p;
}

namespace {

// The smallest v in (lo, hi] with passes(v), given passes(hi) and not passes(lo) (or lo = 0).
int bisect(int lo, int hi, const std::function<bool(int)>& passes) {
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    (passes(mid) ? hi : lo) = mid;
  }
  return hi;
}

} // namespace

CoresNeeded find_cores_needed(const std::string& file, const std::vector<std::string>& overrides,
                              const Scenario& sc, const RunMetrics& base, int max_factor) {
  CoresNeeded r;
  const PipelineCores pc = pipeline_cores(sc);
  r.varied = pc.key;
  const NodeSpec& trainer = sc.trainer_node();
  double accelerators = pc.service ? sc.total_accelerators() : trainer.accelerator_count;
  auto per_accelerator = [&](int v) {
    return pc.service ? static_cast<double>(v) * sc.nodes[pc.group].cpu.cores / accelerators
                      : static_cast<double>(v) / accelerators;
  };

  // Loader settings of a phase: workers following the cores, a prefetch depth (-1: as written).
  struct Settings {
    bool workers_follow = false;
    int prefetch = -1;
  } now;
  auto point = [&](int v, const Settings& s) {
    auto o = overrides;
    o.push_back(pc.key + "=" + std::to_string(v));
    if (s.workers_follow) // pytorch's workers are per accelerator
      o.push_back("pipeline.workers=" +
                  std::to_string(sc.pipeline.framework == Framework::pytorch ? std::max(1, v / trainer.accelerator_count) : v));
    if (s.prefetch >= 0)
      o.push_back("pipeline.prefetch=" + std::to_string(s.prefetch));
    return o;
  };
  std::map<std::vector<std::string>, RunMetrics> seen{{point(pc.current, now), base}};
  auto metrics_at = [&](int v, const Settings& s) -> const RunMetrics& {
    auto o = point(v, s);
    auto it = seen.find(o);
    if (it == seen.end()) {
      it = seen.emplace(o, metrics_from_json(simulate_file_in_child(file, o))).first;
      ++r.simulations;
    }
    return it->second;
  };
  auto metrics = [&](int v) -> const RunMetrics& { return metrics_at(v, now); };
  auto passes = [&](int v) { return metrics(v).pacing_stall() < kStallTarget; };
  auto answer = [&](int v) {
    r.found = true;
    r.per_node = v;
    r.per_accelerator = per_accelerator(v);
    r.stall_at_answer = metrics(v).pacing_stall();
    if (now.workers_follow)
      r.with.emplace_back("pipeline.workers", sc.pipeline.framework == Framework::pytorch ? "cores / accelerators" : "cores");
    if (now.prefetch >= 0)
      r.with.emplace_back("pipeline.prefetch", std::to_string(now.prefetch));
    return r;
  };

  const int top = std::min(pc.current * max_factor, pc.service ? 512 : 4096);
  if (passes(pc.current))
    return answer(bisect(0, pc.current, passes));
  if (passes(top))
    return answer(bisect(pc.current, top, passes));

  // Cores alone do not do it: what binds at the most cores, and the settings that lift it.
  r.limiter = find_limiter(sc, metrics(top), kStallTarget);
  r.note = fmt::format("cores alone do not remove the stall: with {} ({:g} per accelerator) it is still {:.1f} %; {}",
                       top, per_accelerator(top), 100.0 * metrics(top).pacing_stall(), r.limiter->text);
  if (pc.service || (r.limiter->kind != "workers" && r.limiter->kind != "prefetch"))
    return r;
  // Workers follow the cores only where they are fewer than the cores; a `prefetch` limiter is tried
  // first with the workers as written (the smaller change), then with them following the cores.
  const bool fewer_workers = metrics(top).workers_per_node < metrics(top).worker_cores;
  now.workers_follow = r.limiter->kind == "workers";
  if (r.limiter->kind == "prefetch") {
    for (bool follow : {false, true}) {
      if (follow && !fewer_workers)
        break;
      now.workers_follow = follow;
      // The smallest depth above the written one that removes the stall at the most cores, if any does.
      auto passes_with = [&](int p) {
        Settings s = now;
        s.prefetch = p;
        return metrics_at(top, s).pacing_stall() < kStallTarget;
      };
      now.prefetch = -1;
      if (passes(top))
        break;
      now.prefetch = kMaxPrefetch;
      if (passes_with(kMaxPrefetch)) {
        now.prefetch = bisect(sc.pipeline.prefetch, kMaxPrefetch, passes_with);
        break;
      }
    }
  }
  if (passes(top))
    return answer(bisect(0, top, passes));
  Limiter after = find_limiter(sc, metrics(top), kStallTarget);
  r.note += fmt::format("; with {}{}: still {:.1f} %, {}", now.workers_follow ? "workers = cores" : "",
                        now.prefetch >= 0 ? fmt::format("{}prefetch {}", now.workers_follow ? ", " : "", now.prefetch)
                                          : "",
                        100.0 * metrics(top).pacing_stall(), after.text);
  r.limiter = after;
  return r;
}

nlohmann::ordered_json cores_needed_to_json(const CoresNeeded& c) {
  nlohmann::ordered_json j;
  j["found"] = c.found;
  j["varied"] = c.varied;
  j["per_node"] = c.found ? nlohmann::ordered_json(c.per_node) : nlohmann::ordered_json(nullptr);
  j["per_accelerator"] = c.found ? nlohmann::ordered_json(c.per_accelerator) : nlohmann::ordered_json(nullptr);
  j["stall_target"] = kStallTarget;
  j["stall_at_answer"] = c.found ? nlohmann::ordered_json(c.stall_at_answer) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json with = nlohmann::ordered_json::object();
  for (const auto& [k, v] : c.with)
    with[k] = v;
  j["with"] = with;
  if (c.limiter)
    j["limiter"] = {{"kind", c.limiter->kind}, {"name", c.limiter->name}, {"utilization", c.limiter->utilization},
                    {"text", c.limiter->text}};
  j["simulations"] = c.simulations;
  if (!c.note.empty())
    j["note"] = c.note;
  return j;
}

} // namespace mlsim
