#include "sim/core/run/scenario.hpp"

#include "sim/core/run/limits.hpp"
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/model_load.hpp"
#include "sim/core/run/load/pipeline_load.hpp"
#include "sim/pipeline/sample_flow.hpp"

#include <fmt/format.h>

#include <set>

namespace mlsim {
namespace {

DatasetSpec parse_dataset(const ConfigNode& node, const Scenario& s) {
  node.allow_only({"samples", "sample_size", "image", "location", "disk", "page_cache"});
  DatasetSpec d;
  d.samples = node.get_integer("samples", std::nullopt, 1);
  d.sample_size = parse_sample_size(node.required("sample_size"));
  if (ConfigNode img = node.child("image"); img.defined()) {
    img.allow_only({"width", "height", "channels"});
    d.width = img.get_number("width", std::nullopt, 1);
    d.height = img.get_number("height", std::nullopt, 1);
    d.channels = img.get_number("channels", 3.0, 1);
  }
  d.location = node.get_enum<DataLocation>("location", DataLocation::local);
  d.page_cache = node.get_bool("page_cache", true);
  if (d.location == DataLocation::local) {
    // Every trainer group reads its shard from its own disk of that name.
    for (const NodeSpec* trainer : s.trainer_groups())
      if (trainer->disks.empty())
        node.child("location").fail("a trainer node with a disk for a local dataset", "'local' but node '" +
                                                                                            trainer->name + "' has no disks");
    d.disk = node.get_string("disk", s.trainer_node().disks.front().name);
    for (const NodeSpec* trainer : s.trainer_groups()) {
      bool found = false;
      for (const auto& disk : trainer->disks)
        found = found || disk.name == d.disk;
      if (!found && node.has("disk"))
        node.child("disk").fail("the name of a disk of node '" + trainer->name + "'", node.child("disk").quoted());
      if (!found)
        node.child("location").fail("a disk named '" + d.disk + "' (the first trainer group's first disk) on node '" +
                                        trainer->name + "', or dataset.disk naming a disk of every trainer group",
                                    "'local' but node '" + trainer->name + "' has no disk '" + d.disk + "'");
    }
  } else if (d.location == DataLocation::remote && !s.storage.present) {
    node.child("location").fail("hardware.storage to be set for a remote dataset", "'remote' without it");
  }
  return d;
}

// Shuffle buffers and in-memory caches must fit in every trainer node's RAM (page-cache share).
void check_memory_stages(const ConfigNode& pipeline, const Scenario& s) {
  const auto groups = s.trainer_groups();
  for (const NodeSpec* node : groups) {
    SampleFlow flow(s.pipeline, s.dataset, node->cpu);
    SampleTrace mean = flow.trace(s.dataset.sample_size.mean().value());
    double ram = node->ram.page_cache_capacity().value();
    std::string whose = groups.size() > 1 ? "the RAM of node '" + node->name + "'" : "the node's RAM";
    auto stages = pipeline.child("stages");
    for (size_t i = 0; i < s.pipeline.stages.size(); ++i) {
      const StageSpec& st = s.pipeline.stages[i];
      double bytes_in = i == 0 ? mean.stored_bytes : mean.bytes_after[i - 1];
      double need = 0;
      if (st.kind == StageKind::shuffle)
        need = bytes_in * static_cast<double>(st.buffer_samples);
      else if (st.kind == StageKind::cache) // a node caches its shard
        need = bytes_in * static_cast<double>(s.dataset.samples) / s.trainer_nodes();
      if (need > ram)
        stages.items()[i].fail(fmt::format("a {} that fits in {} ({:.3g} GB usable of ram.size)",
                                           st.kind == StageKind::shuffle ? "shuffle buffer" : "cache", whose, ram / 1e9),
                               fmt::format("{:.3g} GB", need / 1e9));
    }
  }
}

// Trainer groups form one job: at least one, and the same accelerator count per node in each (the
// hierarchical all-reduce and the ring routes pair local rank k of every node).
void check_trainer_groups(const ConfigNode& hw, const std::vector<ConfigNode>& node_items, const Scenario& s) {
  const auto groups = s.trainer_groups();
  if (groups.empty())
    hw.child("nodes").fail("at least one node group with accelerators (role: trainer)", "0");
  const NodeSpec& first = *groups.front();
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeSpec& n = s.nodes[i];
    if (!n.trains() || n.accelerator_count == first.accelerator_count)
      continue;
    ConfigNode acc = node_items[i].child("accelerators");
    (acc.has("count") ? acc.child("count") : acc)
        .fail(fmt::format("{} accelerators per node, as in the first trainer group '{}' (trainer groups form one "
                          "job whose all-reduce pairs the local ranks of every node)",
                          first.accelerator_count, first.name),
              fmt::format("{} in node '{}'", n.accelerator_count, n.name));
  }
}

// A NIC is needed where traffic leaves a node: several nodes (gradients, a data service) or remote data.
void require_nics(const std::vector<ConfigNode>& node_items, const Scenario& s) {
  int nodes = 0;
  for (const auto& n : s.nodes)
    nodes += n.count;
  if (nodes <= 1 && s.dataset.location != DataLocation::remote)
    return;
  for (size_t i = 0; i < s.nodes.size(); ++i)
    if (!s.nodes[i].nic.present)
      node_items[i].missing("nic", nodes > 1 ? "a nic: the job spans several nodes" : "a nic: the dataset is remote");
}

} // namespace

std::vector<const NodeSpec*> Scenario::trainer_groups() const {
  std::vector<const NodeSpec*> groups;
  for (const auto& n : nodes)
    if (n.trains())
      groups.push_back(&n);
  return groups;
}

const NodeSpec& Scenario::trainer_node() const {
  for (const auto& n : nodes)
    if (n.trains())
      return n;
  throw InternalError("scenario without a trainer node");
}

int Scenario::trainer_nodes() const {
  int total = 0;
  for (const auto& n : nodes)
    total += n.trains() ? n.count : 0;
  return total;
}

PlatformSpec Scenario::platform_spec() const {
  PlatformSpec p;
  p.nodes = &nodes;
  p.network = network;
  p.storage = storage;
  p.simulated_trainer_nodes = simulated_trainer_nodes();
  p.job_trainer_nodes = trainer_nodes();
  return p;
}

JobContext Scenario::job_context() const {
  JobContext j;
  j.pipeline = &pipeline;
  j.dataset = &dataset;
  j.storage = &storage;
  j.run = &run;
  j.micro_batches = model.gradient_accumulation;
  j.reduce_every_micro_batch = model.reduce_every_micro_batch;
  j.job_trainer_nodes = trainer_nodes();
  return j;
}

int Scenario::total_accelerators() const {
  int total = 0;
  for (const auto& n : nodes)
    if (n.role == NodeRole::trainer)
      total += n.count * n.accelerator_count;
  return total;
}

int Scenario::simulated_trainer_nodes() const {
  const NodeSpec& t = trainer_node();
  bool foldable = run.replica_folding && trainer_groups().size() == 1 && t.count > kFoldAbove &&
                  pipeline.placement != PipelinePlacement::service &&
                  (distribution.algorithm == CollectiveAlgorithm::ring ||
                   distribution.algorithm == CollectiveAlgorithm::hierarchical);
  return foldable ? 2 : trainer_nodes();
}

const NodeSpec* Scenario::find_node(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.name == name)
      return &n;
  return nullptr;
}

Scenario parse_scenario(const ConfigNode& root) {
  root.allow_only({"name", "description", "hardware", "dataset", "pipeline", "model", "distribution", "run"});
  Scenario s;
  s.name = root.get_string("name", "scenario");
  ConfigNode hw = root.required("hardware");
  hw.allow_only({"nodes", "network", "storage"});
  std::set<std::string> names;
  auto node_items = hw.required("nodes").items();
  for (size_t i = 0; i < node_items.size(); ++i) {
    s.nodes.push_back(parse_node(node_items[i], i));
    if (!names.insert(s.nodes.back().name).second)
      node_items[i].fail("a unique node name", "a second node named '" + s.nodes.back().name + "'");
  }
  check_trainer_groups(hw, node_items, s);
  if (ConfigNode net = hw.child("network"); net.defined()) {
    net.allow_only({"switch_latency"});
    s.network.switch_latency = net.get_quantity<Seconds>("switch_latency", Seconds(1e-6), false);
  }
  s.storage = parse_storage(hw.child("storage"));
  s.dataset = parse_dataset(root.required("dataset"), s);
  // Calibrated stage costs are the first trainer group's CPU's; every node runs that work at its own speed.
  s.pipeline = parse_pipeline(root.required("pipeline"), s.trainer_node().cpu);
  if (s.pipeline.placement == PipelinePlacement::service) {
    const NodeSpec* svc = s.find_node(s.pipeline.service_node);
    if (!svc || svc->role != NodeRole::data_service)
      root.child("pipeline").child("service").child("node").fail("the name of a node with role: data_service",
                                                               "'" + s.pipeline.service_node + "'");
  }
  check_memory_stages(root.child("pipeline"), s);
  require_nics(node_items, s);
  if (s.pipeline.placement == PipelinePlacement::service && s.dataset.location == DataLocation::local)
    root.child("dataset").child("location").fail(
        "remote or ram when the pipeline runs in a data service (its workers cannot read a trainer's disk)",
        "'local'");
  // In double: batch_size x accelerators can exceed 64 bits.
  double global_batch = static_cast<double>(s.pipeline.batch_size) * s.total_accelerators();
  if (global_batch > static_cast<double>(s.dataset.samples))
    root.child("pipeline").child("batch_size").fail(
        "a global batch (batch_size x " + std::to_string(s.total_accelerators()) + " accelerators) no larger than "
        "dataset.samples = " + std::to_string(s.dataset.samples),
        std::to_string(s.pipeline.batch_size) + fmt::format(" (global {:.0f})", global_batch));
  s.model = parse_model(root.required("model"));
  if (s.model.trace) // what a trace cannot answer is refused at the key that asks for it
    for (const NodeSpec* trainer : s.trainer_groups())
      check_trace_what_ifs(*s.model.trace, trainer->accelerator,
                           node_items[static_cast<size_t>(trainer - s.nodes.data())].child("accelerators"),
                           s.pipeline.batch_size, root.child("pipeline").child("batch_size"));
  s.batch_size_where = root.child("pipeline").child("batch_size").where();
  if (ConfigNode dist = root.child("distribution"); dist.defined()) {
    dist.allow_only({"algorithm"});
    s.distribution.algorithm = dist.get_enum<CollectiveAlgorithm>("algorithm", CollectiveAlgorithm::ring);
  }
  ConfigNode run = root.required("run");
  run.allow_only({"steps", "warmup_steps", "seed", "replica_folding", "pipeline_stops_after_last_batch", "fast_forward",
                  "max_wall"});
  s.run.fast_forward = run.get_bool("fast_forward", true);
  // Wall-clock limit of one simulation (sim/core/base/run_watch.hpp): 0 or absent = none, at most 30 days.
  s.run.max_wall = run.get_quantity<Seconds>("max_wall", Seconds(0.0), false);
  if (s.run.max_wall.value() > 30 * 86400.0)
    run.child("max_wall").fail("a wall-clock limit of at most 30 d (0 for none)", run.child("max_wall").quoted());
  s.run.max_wall_where = run.has("max_wall") ? run.child("max_wall").where() : run.where();
  s.run.replica_folding = run.get_bool("replica_folding", true);
  s.run.pipeline_stops_after_last_batch = run.get_bool("pipeline_stops_after_last_batch", false);
  s.run.steps = run.get_integer("steps", std::nullopt, 1, 10000000);
  s.run.warmup_steps = run.get_integer("warmup_steps", std::nullopt, 0, 10000000);
  s.run.seed = static_cast<unsigned long long>(run.get_integer("seed", std::nullopt, 0));
  if (s.run.warmup_steps >= s.run.steps)
    run.child("warmup_steps").fail("fewer warm-up steps than run.steps = " + std::to_string(s.run.steps),
                                   std::to_string(s.run.warmup_steps));
  return s;
}

Scenario load_scenario(const ConfigNode& root) {
  Scenario s = parse_scenario(root);
  // Everything `run` would reject is rejected here: the step must fit in device memory, and the
  // simulation in this process (sim/core/run/limits.hpp).
  check_simulable(s, plan_trainer_steps(s), root);
  return s;
}

Scenario load_scenario_file(const std::string& file, const std::vector<std::string>& overrides) {
  ConfigNode root = ConfigNode::load_file(file);
  if (!overrides.empty())
    root = ConfigNode::with_overrides(root, overrides);
  Scenario s = load_scenario(root);
  s.file = file;
  return s;
}

} // namespace mlsim
