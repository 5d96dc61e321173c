#include "sim/core/run/simulation.hpp"

#include "sim/core/base/engine.hpp"
#include "sim/core/base/run_watch.hpp"
#include "sim/core/run/limits.hpp"
#include "sim/core/run/metrics.hpp"

#include "sim/pipeline/collective.hpp"
#include "sim/pipeline/input_pipeline.hpp"
#include "sim/pipeline/trainer.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <memory>

namespace sg4 = simgrid::s4u;

namespace mlsim {

namespace {
long g_simulations_started = 0;
} // namespace

long simulations_started() { return g_simulations_started; }

SimulationOutput simulate(const Scenario& scenario, const SimulationOptions& options) {
  ++g_simulations_started;
  SimulationOutput out;
  auto engine = make_engine(guarded_stacks_fit(scenario) ? StackGuard::on : StackGuard::off);
  Platform platform(scenario.platform_spec());
  const JobContext job = scenario.job_context();
  Recorder& rec = out.recorder;
  if (!options.record_trace)
    rec.keep_only_spans({});
  rec.keep_only_busy(busy_periods_read_by_metrics(scenario));

  const NodeSpec& trainer_spec = scenario.trainer_node();
  const std::vector<const NodeSpec*> groups = scenario.trainer_groups();
  const std::vector<StepPlan> plans = plan_trainer_steps(scenario); // one per trainer group
  out.plan = plans.front();
  auto group_of = [&groups](const NodeSpec* spec) {
    return static_cast<size_t>(std::find(groups.begin(), groups.end(), spec) - groups.begin());
  };

  auto& nodes = platform.trainers();
  std::vector<std::unique_ptr<BatchQueue>> queues;
  std::vector<std::unique_ptr<InputPipeline>> pipelines;
  std::vector<std::unique_ptr<Communicator>> comms;
  std::vector<std::unique_ptr<Trainer>> trainers;
  CollectiveGroup group;
  group.platform = &platform;
  group.recorder = &rec;
  group.algorithm = scenario.distribution.algorithm;
  for (auto& node : nodes)
    for (auto* gpu : node.accelerators)
      group.ranks.push_back(gpu);
  const int job_nodes = scenario.trainer_nodes(), simulated_nodes = scenario.simulated_trainer_nodes();
  if (simulated_nodes < job_nodes) {
    group.job_ranks = job_nodes * trainer_spec.accelerator_count;
    group.job_nodes = job_nodes;
  }
  group.finalize();
  out.simulated_ranks = static_cast<int>(group.ranks.size());
  out.ranks = job_nodes * trainer_spec.accelerator_count;
  out.simulated_nodes = simulated_nodes;
  for (const auto& b : out.plan.buckets)
    out.collective_closed_form += group.closed_form_time(b.bytes.value());

  SteadyStateMonitor steady(out.simulated_ranks, scenario.run.warmup_steps, scenario.run.steps,
                            scenario.run.fast_forward && !scenario.run.pipeline_stops_after_last_batch);
  // What grows with time, for the steps a fast-forward skips: link bytes ("link:" + name) and counters.
  auto totals = [&platform, &rec] {
    SteadyStateMonitor::Totals t = rec.counters();
    for (const auto& l : platform.links())
      t["link:" + l.name] = l.bytes;
    return t;
  };
  steady.track_totals(totals);
  for (const NodeSpec* g : groups)
    out.groups.push_back({g->name, g->count, 0, 0, 0, 0});
  int rank = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    NodeInstance& node = nodes[n];
    const size_t gi = group_of(node.spec); // groups.size(): a trainer-role node without accelerators
    TrainerGroupRun* gr = gi < groups.size() ? &out.groups[gi] : nullptr;
    if (gr && gr->simulated_nodes++ == 0)
      gr->first_rank = rank;
    if (gr)
      gr->ranks += static_cast<int>(node.accelerators.size());
    InputPipeline::Setup ps;
    ps.job = &job;
    ps.platform = &platform;
    ps.recorder = &rec;
    ps.node = &node;
    ps.node_id = static_cast<int>(n);
    ps.first_rank = rank;
    // The pipeline keeps producing until the trainers stop (its actors are daemons), so the last steps
    // see the same contention as the others; tokens bound how far it runs ahead.
    ps.batches_per_queue = scenario.run.pipeline_stops_after_last_batch
                               ? scenario.run.steps * scenario.model.gradient_accumulation
                               : -1;
    for (size_t k = 0; k < node.accelerators.size(); ++k) {
      // Per-accelerator loaders (pytorch, keras) yield their batches in order (batch_queue.hpp).
      queues.push_back(std::make_unique<BatchQueue>(
          scenario.pipeline.prefetch, scenario.pipeline.whole_batch_workers && scenario.pipeline.order == BatchOrder::in_order));
      ps.queues.push_back(queues.back().get());
      comms.push_back(std::make_unique<Communicator>(&group, rank));
      Trainer::Setup ts;
      ts.job = &job;
      ts.platform = &platform;
      ts.recorder = &rec;
      ts.node = &node;
      ts.local_rank = static_cast<int>(k);
      ts.rank = rank;
      ts.plan = &plans[gi]; // a node with accelerators belongs to a trainer group
      ts.queue = queues.back().get();
      ts.communicator = comms.back().get();
      ts.trace_steps = options.trace_steps;
      ts.steady = &steady;
      trainers.push_back(std::make_unique<Trainer>(ts));
      ++rank;
    }
    pipelines.push_back(std::make_unique<InputPipeline>(ps));
    if (gr)
      gr->workers_per_node = pipelines.back()->worker_count();
  }
  out.workers_per_node = pipelines.empty() ? 0 : pipelines.front()->worker_count();
  for (auto& p : pipelines)
    p->start();
  for (auto& c : comms)
    c->start();
  for (auto& t : trainers)
    t->start();

  RunWatchOptions watch_options;
  watch_options.total_steps = scenario.run.steps;
  watch_options.steps_done = [&rec, &out] {
    return static_cast<long>(rec.steps().size()) / std::max(1, out.simulated_ranks);
  };
  watch_options.max_wall_seconds = scenario.run.max_wall.value();
  watch_options.max_wall_where = scenario.run.max_wall_where;
  {
    RunWatch watch(watch_options);
    engine->run();
  }
  rethrow_actor_failure(); // an actor's error, a wall-clock limit or a signal, with its own class
  out.end_time = sg4::Engine::get_clock();
  size_t expected = static_cast<size_t>(scenario.run.steps) * static_cast<size_t>(out.simulated_ranks);
  if (!steady.fast_forwarded() && rec.steps().size() != expected)
    throw InternalError("the simulation stopped after " + std::to_string(rec.steps().size()) + " of " +
                        std::to_string(expected) + " trainer steps (a deadlock between pipeline and trainers)");
  out.steps_simulated = steady.fast_forwarded() ? static_cast<long>(rec.steps().size()) / std::max(1, out.simulated_ranks)
                                                : scenario.run.steps;
  // Steps not simulated: their records, the time they take, and the bytes they move over each link.
  const double simulated_end = out.end_time;
  out.simulated_end_time = simulated_end;
  out.end_time = steady.extend(rec, simulated_end);
  out.links = platform.links();
  if (steady.fast_forwarded()) {
    SteadyStateMonitor::Totals grown = steady.extrapolate(totals(), simulated_end, out.end_time);
    for (auto& l : out.links)
      l.bytes = grown.at("link:" + l.name);
    std::map<std::string, double> counters;
    for (const auto& [name, v] : rec.counters())
      counters[name] = grown.at(name);
    rec.replace_counters(counters);
  }
  for (auto& q : queues) // buffer levels over the simulated time (steady after the warm-up)
    out.queues.push_back(q->stats_at(simulated_end));
  return out;
}

} // namespace mlsim
