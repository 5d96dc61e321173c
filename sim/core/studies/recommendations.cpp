#include "sim/core/studies/recommendations.hpp"

#include "sim/core/studies/child_pool.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/studies/sweep_simulate.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace mlsim {
namespace {

struct Candidate {
  std::string change;
  std::vector<std::string> overrides;
};

constexpr double kHostCorePeak = 32e9; // FLOP/s of one host core, as in StepContext

std::string flow_yaml(const YAML::Node& n) {
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

size_t node_index(const Scenario& s, const std::string& name) {
  for (size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].name == name)
      return i;
  return 0;
}

void input_candidates(const Scenario& s, const ConfigNode& root, std::vector<Candidate>& out) {
  const PipelineSpec& p = s.pipeline;
  // The CPUs that run the pipeline: the data service's, or every trainer group's (each doubled).
  std::vector<const NodeSpec*> cpu_nodes = s.trainer_groups();
  if (p.placement == PipelinePlacement::service)
    cpu_nodes = {&s.nodes[node_index(s, p.service_node)]};
  Candidate more_cores;
  for (const NodeSpec* n : cpu_nodes) {
    int cores = n->cpu.cores;
    more_cores.change += fmt::format("{}+{} cores per node ({} -> {})", more_cores.change.empty() ? "" : ", ", cores,
                                     cores, 2 * cores) +
                         (cpu_nodes.size() > 1 ? " on '" + n->name + "'" : "");
    more_cores.overrides.push_back(fmt::format("hardware.nodes.{}.cpu.cores={}", node_index(s, n->name), 2 * cores));
  }
  out.push_back(more_cores);
  if (p.workers > 0)
    out.push_back({fmt::format("pipeline workers {} -> {}", p.workers, 2 * p.workers),
                   {fmt::format("pipeline.workers={}", 2 * p.workers)}});
  int deeper = std::max(2 * p.prefetch, p.prefetch + 2);
  out.push_back({fmt::format("prefetch {} -> {} batches", p.prefetch, deeper), {fmt::format("pipeline.prefetch={}", deeper)}});

  auto stage_nodes = root.child("pipeline").child("stages");
  std::vector<ConfigNode> items = stage_nodes.defined() ? stage_nodes.items() : std::vector<ConfigNode>{};
  for (size_t k = 0; k < p.stages.size() && k < items.size(); ++k) {
    if (p.stages[k].kind != StageKind::read)
      continue;
    int par = p.stages[k].parallelism, more = par == 0 ? 32 : 2 * par;
    YAML::Node stage = items[k].is_scalar() ? YAML::Node(YAML::NodeType::Map) : YAML::Clone(items[k].yaml());
    if (items[k].is_scalar()) {
      stage["name"] = p.stages[k].name;
      stage["kind"] = "read";
    }
    stage["parallelism"] = more;
    out.push_back({fmt::format("parallel reads {} -> {} (stage '{}')", par == 0 ? "inline" : std::to_string(par), more,
                               p.stages[k].name),
                   {fmt::format("pipeline.stages.{}={}", k, flow_yaml(stage))}});
  }

  // Augmentation to the accelerator: the trailing map stages after the first one (the decode).
  size_t first_map = p.stages.size();
  for (size_t k = 0; k < p.stages.size(); ++k)
    if (p.stages[k].kind == StageKind::map) {
      first_map = k;
      break;
    }
  size_t cut = p.stages.size();
  while (cut > first_map + 1 && p.stages[cut - 1].kind == StageKind::map)
    --cut;
  if (!p.device_stage.present && cut < p.stages.size() && items.size() == p.stages.size()) {
    const AcceleratorSpec& acc = s.trainer_node().accelerator;
    double speedup = acc.vector_peak_for(DType::fp32).value() / kHostCorePeak;
    StageCost sum;
    std::string names;
    YAML::Node kept(YAML::NodeType::Sequence);
    for (size_t k = 0; k < cut; ++k)
      kept.push_back(YAML::Clone(items[k].yaml()));
    for (size_t k = cut; k < p.stages.size(); ++k) {
      const StageCost& c = p.stages[k].cost;
      sum.per_sample = sum.per_sample + c.per_sample;
      sum.per_byte = sum.per_byte + c.per_byte;
      sum.per_pixel = sum.per_pixel + c.per_pixel;
      names += (names.empty() ? "" : ", ") + p.stages[k].name;
    }
    if (speedup > 1) {
      std::string device = fmt::format(
          "{{name: augment_on_device, cost: {{per_sample: {} s, per_byte: {} s, per_pixel: {} s}}}}",
          sum.per_sample.value() / speedup, sum.per_byte.value() / speedup, sum.per_pixel.value() / speedup);
      out.push_back({fmt::format("augmentation ({}) on the accelerator at 1/{:.0f} of its host cost", names, speedup),
                     {"pipeline.stages=" + flow_yaml(kept), "pipeline.device_stage=" + device}});
    }
  }

  const DatasetSpec& d = s.dataset;
  double dataset_bytes = static_cast<double>(d.samples) * d.sample_size.mean().value();
  double cache = 1e300; // every trainer node caches its copy
  for (const NodeSpec* t : s.trainer_groups())
    cache = std::min(cache, t->ram.page_cache_capacity().value());
  if (d.location != DataLocation::ram && dataset_bytes <= cache)
    out.push_back({fmt::format("dataset cached in RAM ({} fits the page cache)", format_bytes(Bytes(dataset_bytes))),
                   {"dataset.location=ram"}});
  if (d.location == DataLocation::local) {
    for (const NodeSpec* g : s.trainer_groups()) { // each trainer group's disk, a candidate of its own
      size_t t = node_index(s, g->name);
      const auto& disks = g->disks;
      for (size_t k = 0; k < disks.size(); ++k)
        if (disks[k].name == d.disk && disks[k].kind != DiskKind::nvme)
          out.push_back({fmt::format("faster storage: disk '{}' {} -> nvme", d.disk, to_string(disks[k].kind)) +
                             (s.trainer_groups().size() > 1 ? " on '" + g->name + "'" : ""),
                         {fmt::format("hardware.nodes.{}.disks.{}={{name: {}, preset: nvme}}", t, k, d.disk)}});
    }
  } else if (d.location == DataLocation::remote) {
    out.push_back({fmt::format("storage bandwidth x2 ({} -> {})", format_rate(s.storage.bandwidth),
                               format_rate(s.storage.bandwidth * 2.0)),
                   {fmt::format("hardware.storage.bandwidth={} B/s", s.storage.bandwidth.value() * 2)}});
  }
}

void device_candidates(const Scenario& s, const ConfigNode& root, std::vector<Candidate>& out) {
  ConfigNode model = root.child("model");
  if (model.has("forward_flops_per_sample")) {
    if (!is_16bit(s.model.dtype))
      out.push_back({fmt::format("mixed precision (model.dtype {} -> fp16)", to_string(s.model.dtype)), {"model.dtype=fp16"}});
  } else if (s.model.graph) {
    auto pol = s.model.graph->precision;
    if (pol == PrecisionPolicy::fp32 || pol == PrecisionPolicy::tf32)
      out.push_back({fmt::format("mixed precision (model.precision {} -> mixed_fp16)", to_string(pol)),
                     {"model.precision=mixed_fp16"}});
  }
  long b = s.pipeline.batch_size;
  out.push_back({fmt::format("batch per device {} -> {}", b, 2 * b), {fmt::format("pipeline.batch_size={}", 2 * b)}});
}

// Simulates the candidates (each on top of the run's own overrides) and keeps those that help.
std::vector<Recommendation> try_candidates(const std::string& file, const std::vector<std::string>& overrides,
                                          const RunMetrics& base, const std::vector<Candidate>& cands) {
  // A candidate that does not even load (a key another form of the scenario lacks) is not a recommendation.
  std::vector<Candidate> valid;
  std::vector<std::vector<std::string>> variants;
  for (const auto& c : cands) {
    std::vector<std::string> v = overrides;
    v.insert(v.end(), c.overrides.begin(), c.overrides.end());
    try {
      validate_variants(file, {v});
    } catch (const InputError&) {
      continue;
    }
    valid.push_back(c);
    variants.push_back(v);
  }
  auto results = simulate_variants(file, variants, available_cpus());
  std::vector<Recommendation> recs;
  for (size_t i = 0; i < valid.size(); ++i) {
    if (!results[i].ok)
      continue; // a change that breaks the run (memory) helps nobody
    const RunMetrics& a = results[i].metrics;
    Recommendation r;
    r.change = valid[i].change;
    r.overrides = valid[i].overrides;
    r.step_before = base.step_mean;
    r.step_after = a.step_mean;
    r.stall_before = base.breakdown.input;
    r.stall_after = a.breakdown.input;
    r.throughput_before = base.throughput;
    r.throughput_after = a.throughput;
    r.cost_per_million_before = base.cost_per_million();
    r.cost_per_million_after = a.cost_per_million();
    bool price_changed = a.cost_per_hour != base.cost_per_hour;
    r.gain = price_changed && r.cost_per_million_after > 0 ? r.cost_per_million_before / r.cost_per_million_after
             : r.throughput_before > 0                   ? r.throughput_after / r.throughput_before
                                                         : 0.0;
    if (r.gain >= 1.01)
      recs.push_back(r);
  }
  return recs;
}

bool by_gain(const Recommendation& x, const Recommendation& y) { return x.gain > y.gain; }

} // namespace

std::vector<Recommendation> simulate_recommendations(const std::string& file, const std::vector<std::string>& overrides,
                                                     const Scenario& scenario, const RunMetrics& base,
                                                     size_t max) {
  ConfigNode root = ConfigNode::load_file(file);
  if (!overrides.empty())
    root = ConfigNode::with_overrides(root, overrides);
  std::vector<Candidate> cands;
  if (base.pacing_stall() >= 0.02)
    input_candidates(scenario, root, cands);
  if (base.breakdown.device_compute >= 0.2)
    device_candidates(scenario, root, cands);
  std::vector<Recommendation> recs = try_candidates(file, overrides, base, cands);
  std::stable_sort(recs.begin(), recs.end(), by_gain);

  // Fixing one bottleneck exposes the next: the best change combined with each other candidate,
  // kept when the pair beats the best change alone by 1 %.
  if (!recs.empty()) {
    const Recommendation best = recs.front();
    std::vector<Candidate> pairs;
    for (const auto& c : cands) {
      if (c.overrides == best.overrides)
        continue;
      Candidate pair{best.change + " and " + c.change, best.overrides};
      pair.overrides.insert(pair.overrides.end(), c.overrides.begin(), c.overrides.end());
      pairs.push_back(pair);
    }
    for (auto& r : try_candidates(file, overrides, base, pairs))
      if (r.gain >= 1.01 * best.gain)
        recs.push_back(r);
    std::stable_sort(recs.begin(), recs.end(), by_gain);
  }
  if (recs.size() > max)
    recs.resize(max);
  return recs;
}

nlohmann::ordered_json recommendations_to_json(const std::vector<Recommendation>& recs) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& r : recs)
    out.push_back({{"change", r.change},
                   {"overrides", r.overrides},
                   {"gain", r.gain},
                   {"step_time_s", {{"before", r.step_before}, {"after", r.step_after}}},
                   {"stall", {{"before", r.stall_before}, {"after", r.stall_after}}},
                   {"throughput_samples_per_s", {{"before", r.throughput_before}, {"after", r.throughput_after}}},
                   {"cost_per_million_samples_usd",
                    {{"before", r.cost_per_million_before}, {"after", r.cost_per_million_after}}}});
  return out;
}

} // namespace mlsim
