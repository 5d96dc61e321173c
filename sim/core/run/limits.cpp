#include "sim/core/run/limits.hpp"

#include "sim/core/base/recorder.hpp"
#include "sim/pipeline/sample_flow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace mlsim {
namespace {

// Resident bytes per actor: 13.3 kB for an actor blocked on a semaphore (bench/actor_cost: 10,000 and 100,000
// actors, unguarded stacks); 14.6 kB for the pipeline's actors (the bench job of 192 nodes with 128 and with 96
// workers: 12,288 actors fewer, 180 MB less peak RSS).
constexpr double kActorBytes = 15e3;
constexpr double kBytesPerBufferedSample = 48; // a drawn size in a batch, its chunk and pending copies
constexpr double kBytesPerRouteSlot = 8;       // a full zone: 4,000 hosts cost 33.3 kB each (bench/actor_cost)
constexpr double kBytesPerComputeHost = 1.2e3; // a host in a zone without routes: 1.13 kB (bench/actor_cost)

double machine_memory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 8e9;
}

// Mappings the process needs besides guarded actor stacks (libraries, heap arenas, SimGrid's own: ~230 in a
// 64-node run, bench/actor_cost and /proc/PID/maps).
constexpr long kOtherMappings = 8192;

long max_map_count() {
  long maps = 65530; // the kernel's default
  if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    long v = 0;
    if (std::fscanf(f, "%ld", &v) == 1 && v > 0)
      maps = v;
    std::fclose(f);
  }
  return maps;
}

// Hosts in the route table (platform.hpp): the node's CPU and its accelerators. Its RAM bus and disks
// only compute and are kept out of it.
double node_hosts(const NodeSpec& n) { return 1.0 + n.accelerator_count; }

// Whether a node's read slots may read from RAM or remote storage, each then in an actor of its own
// (input_pipeline.hpp); local-disk reads need none. Local data is read from RAM only in a later epoch
// (page cache, cache stage): counted when the samples a node draws in the run (its batches, those in
// flight, a shuffle buffer's fill) reach its shard.
bool reads_need_actors(const Scenario& s, const NodeSpec& trainer) {
  if (s.dataset.location != DataLocation::local)
    return true;
  const PipelineSpec& p = s.pipeline;
  double batches = static_cast<double>(s.run.steps * s.model.gradient_accumulation);
  double drawn = (batches + p.prefetch + 2.0) * trainer.accelerator_count *
                 static_cast<double>(p.batch_size);
  for (const auto& st : p.stages)
    if (st.kind == StageKind::shuffle)
      drawn += static_cast<double>(st.buffer_samples);
  return drawn >= static_cast<double>(s.dataset.samples) / std::max(1, s.trainer_nodes());
}

// The index of a node group in hardware.nodes, for its keys.
std::string node_key(const Scenario& s, const NodeSpec& n) {
  for (size_t i = 0; i < s.nodes.size(); ++i)
    if (&s.nodes[i] == &n)
      return "hardware.nodes." + std::to_string(i);
  return "hardware.nodes";
}

ConfigNode at_path(const ConfigNode& root, const std::string& dotted) {
  ConfigNode c = root;
  size_t from = 0;
  while (from <= dotted.size()) {
    size_t dot = dotted.find('.', from);
    std::string part = dotted.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    ConfigNode next;
    if (c.is_sequence()) {
      auto items = c.items();
      size_t k = std::stoul(part);
      if (k >= items.size())
        return c;
      next = items[k];
    } else {
      next = c.child(part);
    }
    if (!next.defined())
      return c; // a default: point at the mapping that would hold it
    c = next;
    if (dot == std::string::npos)
      break;
    from = dot + 1;
  }
  return c;
}

[[noreturn]] void fail_at(const ConfigNode& root, const std::string& key, const std::string& expected,
                          const std::string& got) {
  ConfigNode c = at_path(root, key);
  throw InputError(c.where(), key, expected, got);
}

} // namespace

long max_actors() { return static_cast<long>(machine_memory() / 2 / kActorBytes); }

long max_guarded_actors() { return std::max(0L, (max_map_count() - kOtherMappings) / 2); }

bool guarded_stacks_fit(const Scenario& s) { return estimate_size(s).actors <= static_cast<double>(max_guarded_actors()); }

SimulationSize estimate_size(const Scenario& s) {
  SimulationSize z;
  const PipelineSpec& p = s.pipeline;
  // Simulated instances of a node group: every one, or 2 of the one trainer group under folding.
  const bool folded = s.simulated_trainer_nodes() < s.trainer_nodes();
  auto instances = [&](const NodeSpec& n) {
    return n.trains() && folded ? static_cast<double>(s.simulated_trainer_nodes()) : n.count;
  };
  double nodes = 0, steps = 0, disk_servers = 0;
  for (const NodeSpec* t : s.trainer_groups()) {
    const double here = instances(*t);
    double worker_cores = t->cpu.cores;
    if (p.placement == PipelinePlacement::service)
      if (const NodeSpec* svc = s.find_node(p.service_node))
        worker_cores = static_cast<double>(svc->cpu.cores) * svc->count;
    double workers = p.workers > 0 ? p.workers : worker_cores;
    if (p.framework == Framework::pytorch)
      workers *= t->accelerator_count;
    double readers = p.whole_batch_workers ? 0 : workers;
    for (const auto& st : p.stages)
      if (st.kind == StageKind::read && st.parallelism > 0)
        readers = st.parallelism;
    if (!reads_need_actors(s, *t))
      readers = 0;
    nodes += here;
    disk_servers += s.dataset.location == DataLocation::local ? here : 0; // the dataset disk's server
    z.workers += here * workers;
    z.readers += here * readers;
    z.accelerator_actors += here * t->accelerator_count * 3.0; // trainer, communicator, copier
    z.batch_samples += here * t->accelerator_count * (p.prefetch + 1.0) * static_cast<double>(p.batch_size);
    steps += static_cast<double>(s.run.steps) * here * t->accelerator_count;
  }
  for (const auto& n : s.nodes) {
    z.hosts += instances(n) * node_hosts(n);
    z.compute_hosts += instances(n) * (1.0 + static_cast<double>(n.disks.size()));
    if (n.cpu.scheduling == CpuScheduling::per_core)
      z.core_actors += instances(n); // one core server per node (core_server.hpp)
  }
  z.hosts += s.storage.present ? 1 : 0;
  z.actors = nodes + disk_servers + z.workers + z.readers + z.accelerator_actors + z.core_actors;
  for (const auto& st : p.stages)
    if (st.kind == StageKind::shuffle)
      z.shuffle_samples = std::max(z.shuffle_samples, nodes * static_cast<double>(st.buffer_samples));
  z.memory_bytes = z.hosts * z.hosts * kBytesPerRouteSlot + z.compute_hosts * kBytesPerComputeHost + z.actors * kActorBytes +
                   (z.batch_samples + z.shuffle_samples) * kBytesPerBufferedSample +
                   steps * static_cast<double>(sizeof(StepRecord));
  return z;
}

std::vector<StepPlan> plan_trainer_steps(const Scenario& s) {
  std::vector<StepPlan> plans;
  for (const NodeSpec* g : s.trainer_groups()) {
    plans.push_back(plan_trainer_step(s, *g));
    // The all-reduce matches buckets across ranks: the step graph is the model's, whatever the device.
    const auto& first = plans.front().buckets;
    const auto& here = plans.back().buckets;
    bool same = first.size() == here.size();
    for (size_t k = 0; same && k < first.size(); ++k)
      same = first[k].bytes.value() == here[k].bytes.value();
    if (!same)
      throw InternalError("trainer group '" + g->name + "' plans other gradient buckets than the first group");
  }
  return plans;
}

StepPlan plan_trainer_step(const Scenario& s, const NodeSpec& trainer) {
  StepContext ctx;
  ctx.accelerator = &trainer.accelerator;
  ctx.batch_per_device = s.pipeline.batch_size;
  // Host-placed ops: a reference core's rate (the CPU host's speed applies when they run).
  ctx.host_core_peak = trainer.cpu.core_flops;
  ctx.host_sixteen_bit_slowdown = trainer.cpu.fp16_emulation_factor;
  try {
    return plan_step(s.model, ctx);
  } catch (const InputError& e) { // a batch that does not fit: point at the batch size
    std::string m = e.what();
    auto at = m.find("model: ");
    throw InputError(s.batch_size_where + ": pipeline.batch_size (with model '" + s.model.name +
                     "'): " + (at == std::string::npos ? m : m.substr(at + 7)));
  }
}

void check_simulable(const Scenario& s, const std::vector<StepPlan>& plans, const ConfigNode& root) {
  const SimulationSize z = estimate_size(s);
  const NodeSpec& t = s.trainer_node();
  const long actor_limit = max_actors();
  if (z.actors > static_cast<double>(actor_limit)) {
    // Name the largest contributor's key. Workers not set are one per core of the nodes that run them:
    // a data service's node count or the trainer's cores is then the key to change.
    std::string key = "pipeline.workers";
    if (s.pipeline.workers <= 0) {
      const NodeSpec* svc = s.pipeline.placement == PipelinePlacement::service ? s.find_node(s.pipeline.service_node) : nullptr;
      const NodeSpec& n = svc ? *svc : t;
      key = node_key(s, n) + (n.count > 1 ? ".count" : ".cpu.cores");
    }
    double biggest = z.workers;
    if (z.readers > biggest) {
      biggest = z.readers;
      key = "pipeline.stages";
      for (size_t i = 0; i < s.pipeline.stages.size(); ++i)
        if (s.pipeline.stages[i].kind == StageKind::read && s.pipeline.stages[i].parallelism > 0)
          key = "pipeline.stages." + std::to_string(i) + ".parallelism";
    }
    if (z.core_actors > biggest) { // one per node: the largest node count is the key
      biggest = z.core_actors;
      const NodeSpec* most = &t;
      for (const auto& n : s.nodes)
        if (n.count > most->count)
          most = &n;
      key = node_key(s, *most) + ".count";
    }
    if (z.accelerator_actors > biggest)
      key = node_key(s, t) + ".accelerators.count";
    fail_at(root, key,
            fmt::format("a scenario of at most {} simulated actors ({:.0f} kB each, in half of this machine's memory)",
                        actor_limit, kActorBytes / 1e3),
            fmt::format("{:.0f} actors ({:.0f} pipeline workers, {:.0f} readers, {:.0f} core servers, {:.0f} per "
                        "accelerator)", z.actors, z.workers, z.readers, z.core_actors, z.accelerator_actors));
  }
  if (z.hosts > kMaxHosts) {
    const NodeSpec* most = &s.nodes.front();
    for (const auto& n : s.nodes)
      if (node_hosts(n) * n.count > node_hosts(*most) * most->count)
        most = &n;
    fail_at(root, node_key(s, *most) + (most->count > 1 ? ".count" : ".cpu.cores"),
            fmt::format("a platform of at most {} hosts that communicate (one per node and per accelerator; "
                        "the route table grows with their square)", kMaxHosts),
            fmt::format("{:.0f} hosts", z.hosts));
  }
  if (z.compute_hosts > kMaxComputeHosts) {
    auto hosts_of = [](const NodeSpec& n) { return (1.0 + static_cast<double>(n.disks.size())) * n.count; };
    const NodeSpec* most = &s.nodes.front();
    for (const auto& n : s.nodes)
      if (hosts_of(n) > hosts_of(*most))
        most = &n;
    fail_at(root, node_key(s, *most) + (most->count > 1 ? ".count" : ".disks"),
            fmt::format("a platform of at most {} simulated RAM buses and disks", kMaxComputeHosts),
            fmt::format("{:.0f}", z.compute_hosts));
  }
  if (z.batch_samples > kMaxBufferedSamples) {
    bool prefetch = s.pipeline.prefetch + 1.0 > static_cast<double>(s.pipeline.batch_size);
    fail_at(root, prefetch ? "pipeline.prefetch" : "pipeline.batch_size",
            fmt::format("at most {:.0f} samples in flight ((prefetch + 1) x batch_size x {} simulated accelerators)",
                        kMaxBufferedSamples, s.simulated_trainer_nodes() * t.accelerator_count),
            fmt::format("{:.4g} (prefetch {}, batch_size {})", z.batch_samples, s.pipeline.prefetch,
                        s.pipeline.batch_size));
  }
  if (z.shuffle_samples > kMaxBufferedSamples) {
    for (size_t i = 0; i < s.pipeline.stages.size(); ++i)
      if (s.pipeline.stages[i].kind == StageKind::shuffle &&
          static_cast<double>(s.pipeline.stages[i].buffer_samples) * s.simulated_trainer_nodes() > kMaxBufferedSamples)
        fail_at(root, "pipeline.stages." + std::to_string(i) + ".buffer",
                fmt::format("a shuffle buffer of at most {:.0f} samples over the simulated nodes", kMaxBufferedSamples),
                std::to_string(s.pipeline.stages[i].buffer_samples));
  }
  const double memory = machine_memory() / 2;
  if (z.memory_bytes > memory)
    fail_at(root, "run.steps",
            fmt::format("a simulation that fits in half of this machine's memory ({:.3g} GB): fewer steps, nodes, "
                        "cores or workers", memory / 1e9),
            fmt::format("an estimated {:.3g} GB ({:.0f} hosts, {:.0f} actors, {} steps)", z.memory_bytes / 1e9, z.hosts,
                        z.actors, s.run.steps));

  // Finite work: a batch's CPU time and bytes through the pipeline, a step's device time.
  const double batch = static_cast<double>(s.pipeline.batch_size);
  for (const NodeSpec* g : s.trainer_groups()) { // the CPU's fp16 emulation scales the costs
    SampleTrace mean = SampleFlow(s.pipeline, s.dataset, g->cpu).trace(s.dataset.sample_size.mean().value());
    for (size_t i = 0; i < mean.stage_cost.size(); ++i) {
      double cost = mean.stage_cost[i] * batch;
      if (!(cost <= kMaxBatchCoreSeconds))
        fail_at(root, "pipeline.stages." + std::to_string(i) + ".cost",
                fmt::format("a stage cost of at most {:.0e} core-seconds per batch (what can be simulated)",
                            kMaxBatchCoreSeconds),
                fmt::format("{:.3g} core-seconds for a batch of {} mean-size samples", cost, s.pipeline.batch_size));
    }
  }
  SampleTrace mean = SampleFlow(s.pipeline, s.dataset, t.cpu).trace(s.dataset.sample_size.mean().value());
  double collate = s.pipeline.batching.collate.for_sample(mean.final_bytes * batch, 0).value();
  if (!(collate <= kMaxBatchCoreSeconds))
    fail_at(root, "pipeline.batch.collate",
            fmt::format("a collate cost of at most {:.0e} core-seconds per batch", kMaxBatchCoreSeconds),
            fmt::format("{:.3g} core-seconds", collate));
  double bytes = std::max(mean.stored_bytes, mean.final_bytes) * batch;
  if (!(bytes <= kMaxBatchBytes))
    fail_at(root, "dataset.sample_size",
            fmt::format("a batch of at most {:.0e} bytes (batch_size x sample size, at every stage)", kMaxBatchBytes),
            fmt::format("{:.3g} bytes", bytes));
  for (const StepPlan& plan : plans) {
    double step = 0;
    for (const auto& op : plan.ops)
      step += op.duration.value();
    if (!(step <= kMaxStepSeconds))
      fail_at(root, "model", fmt::format("a training step of at most {:.0e} s of device time", kMaxStepSeconds),
              fmt::format("{:.3g} s", step));
  }
}

} // namespace mlsim
