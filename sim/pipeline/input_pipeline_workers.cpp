// The input pipeline's workers (input_pipeline.hpp) as slots of a pool. A chunk put into the map queue
// goes to the worker free the longest (slot_queue.hpp); the worker submits the chunk's CPU work to its
// node's cores (core_server.hpp) with a completion that records the stages' spans, updates the pending
// batch and, once the batch is complete, puts its collate task at the head of the queue; then the
// worker takes the next item. A collate task's completion hands the batch to the accelerators' buffers.
// Completions run in the core server's (or disk server's) actor: a chunk costs no actor's wake-up.
// A step that waits on SimGrid activities runs in the worker's own actor, started the first time the
// worker needs it: the start-up of an epoch's workers (a lock shared by the node), a worker's own read
// from RAM or remote storage, a data-service worker's transfer of the batch to the trainer node, and
// any CPU work under the fair policy (an exec per piece). The actor then goes back to the pool's path.
#include "sim/pipeline/input_pipeline.hpp"

#include "sim/core/base/engine.hpp"
#include "sim/hardware/cpu_scheduler.hpp"
#include "sim/pipeline/pipeline_counters.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <mutex>
#include <numeric>

namespace sg4 = simgrid::s4u;

namespace mlsim {

void InputPipeline::start_workers() {
  worker_slots_.resize(static_cast<size_t>(workers_)); // never resized again: the workers' actors hold references
  for (int i = 0; i < workers_; ++i) {
    WorkerSlot& w = worker_slots_[static_cast<size_t>(i)];
    w.track = s_.recorder->intern(s_.node->name + "/worker" + std::to_string(i));
    w.host = worker_hosts_[static_cast<size_t>(i) % worker_hosts_.size()];
    w.cpu = &s_.platform->scheduler_of(w.host);
    w.thread = w.cpu->new_thread();
    map_queue_.add_free(i);
  }
}

void InputPipeline::to_map(Chunk c) {
  if (c.worker >= 0)
    map_queue_.offer_to(c.worker, std::move(c));
  else
    map_queue_.offer(std::move(c));
}

void InputPipeline::worker_done(int worker) { map_queue_.release(worker); }

double InputPipeline::startup_cost() const {
  const PipelineSpec& p = *s_.job->pipeline;
  // pytorch: each accelerator's process starts its own workers (the start-ups of the processes are
  // serialised here too: one lock per node)
  const double per_process = p.framework == Framework::pytorch ? workers_ / static_cast<double>(s_.queues.size()) : workers_;
  return p.framework_costs.worker_startup.value() * per_process;
}

bool InputPipeline::needs_startup(const WorkerSlot& w, const Chunk& c) const {
  return !s_.job->pipeline->persistent_workers && c.epoch > w.started_epoch && startup_cost() > 0;
}

bool InputPipeline::must_block(const WorkerSlot& w, const Chunk& c) const {
  if (!w.cpu->serves_completions()) // fair: every piece of CPU work is an exec that an actor waits for
    return true;
  return !c.collate && (needs_startup(w, c) || (readers_ == 0 && !reads_local_disk(c)));
}

// A step that ends at once (work of nothing) takes the worker's next item while its own start is still
// running: that item waits in the slot and starts once the current start returns, so a run of such
// items keeps the stack flat.
void InputPipeline::begin_work(int worker, Chunk c) {
  WorkerSlot& w = worker_slots_[static_cast<size_t>(worker)];
  if (w.starting) {
    w.next = std::move(c);
    w.has_next = true;
    return;
  }
  w.starting = true;
  for (;;) {
    start_step(worker, std::move(c));
    if (!w.has_next)
      break;
    c = std::move(w.next);
    w.has_next = false;
  }
  w.starting = false;
}

void InputPipeline::start_step(int worker, Chunk c) {
  WorkerSlot& w = worker_slots_[static_cast<size_t>(worker)];
  if (must_block(w, c)) {
    in_actor(worker, [this, worker, c = std::move(c)] {
      if (c.collate) { // fair
        collate(worker, c.batch_id);
        return;
      }
      WorkerSlot& self = worker_slots_[static_cast<size_t>(worker)];
      start_worker(self, c);
      if (readers_ == 0) // every sample is read from the dataset's location, read stage or not
        read_chunk(c, self);
      map_chunk(worker, c);
    });
    return;
  }
  if (c.collate)
    collate(worker, c.batch_id);
  else if (readers_ == 0) // a worker's own read from the local disk: the disk server ends it
    read_local_disk(std::move(c), [this, worker](Chunk read, double start, double bytes) {
      record_read(read, bytes, worker_slots_[static_cast<size_t>(worker)].track, start);
      map_chunk(worker, read);
    });
  else
    map_chunk(worker, c);
}

void InputPipeline::in_actor(int worker, std::function<void()> step) {
  WorkerSlot& w = worker_slots_[static_cast<size_t>(worker)];
  w.blocking_step = std::move(step);
  if (!w.handed) {
    w.handed = sg4::Semaphore::create(0);
    spawn_actor(s_.node->name + ".worker" + std::to_string(worker), w.host, [this, worker] { worker_actor(worker); })
        ->daemonize();
  }
  w.handed->release();
}

void InputPipeline::worker_actor(int worker) {
  WorkerSlot& w = worker_slots_[static_cast<size_t>(worker)];
  for (;;) {
    w.handed->acquire();
    const std::function<void()> step = std::move(w.blocking_step); // the step may hand the next one
    step();
  }
}

// A worker's first chunk of an epoch waits until the epoch's workers have started (framework_costs.hpp):
// the first worker to ask runs the W start-ups, the others wait for it.
void InputPipeline::start_worker(WorkerSlot& w, const Chunk& c) {
  if (!needs_startup(w, c))
    return;
  w.started_epoch = c.epoch;
  const std::unique_lock<sg4::Mutex> lock(*startup_lock_);
  if (c.epoch <= startup_done_epoch_)
    return;
  startup_done_epoch_ = c.epoch;
  const double t0 = sg4::Engine::get_clock();
  w.cpu->run(Seconds(startup_cost()), w.thread);
  s_.recorder->span(w.track, s_.recorder->intern("worker start-up"), s_.recorder->intern("input"), t0,
                    sg4::Engine::get_clock());
}

void InputPipeline::read_chunk(const Chunk& c, const WorkerSlot& w) {
  const double start = begin_read(), bytes = read_bytes(c);
  if (c.from_ram) // read() out of the page cache is the worker's own memcpy: it runs on its core meanwhile
    w.cpu->keeps_core(w.thread);
  read_from(c, bytes, w.host);
  record_read(c, bytes, w.track, start);
}

void InputPipeline::cpu_work(int worker, double core_seconds, CpuScheduler::Completion then) {
  WorkerSlot& w = worker_slots_[static_cast<size_t>(worker)];
  if (w.cpu->serves_completions()) { // no work: done at once, the core its read held given back
    w.cpu->submit(Seconds(core_seconds), w.thread, std::move(then));
  } else if (!(core_seconds > 0)) {
    then();
  } else { // fair: in the worker's actor (must_block)
    w.cpu->run(Seconds(core_seconds), w.thread);
    then();
  }
}

void InputPipeline::map_chunk(int worker, const Chunk& c) {
  const size_t stages = s_.job->pipeline->stages.size();
  WorkerSlot& w = worker_slots_[static_cast<size_t>(worker)];
  Mapping& m = w.mapping; // until its completion, below: a worker maps one chunk at a time
  m.cost.assign(stages, 0.0);
  const SampleFlow& flow = flow_of(worker);
  for (size_t i = c.first_stage; i < std::min(stages, c.end_stage); ++i)
    m.cost[i] = flow.stage_cost(i, c.samples, c.stored_bytes);
  m.total = std::accumulate(m.cost.begin(), m.cost.end(), 0.0);
  m.samples = c.samples;
  m.out_bytes = flow_.final_bytes(c.samples, c.stored_bytes);
  m.max_bytes = flow_.final_bytes(1, c.largest);
  m.start = sg4::Engine::get_clock();
  m.batch_id = c.batch_id;
  m.first_stage = c.first_stage;
  cpu_work(worker, m.total, [this, worker] { end_map(worker); });
}

void InputPipeline::end_map(int worker) {
  const Mapping& m = worker_slots_[static_cast<size_t>(worker)].mapping;
  const size_t stages = m.cost.size();
  const double t1 = sg4::Engine::get_clock();
  const uint32_t track = worker_slots_[static_cast<size_t>(worker)].track;
  // The chunk ran as one piece of work; its span is split among the stages by their cost.
  double at = m.start;
  for (size_t i = m.first_stage; i < stages; ++i) {
    if (m.cost[i] <= 0)
      continue;
    double end = at + (t1 - m.start) * m.cost[i] / m.total;
    s_.recorder->span(track, stage_names_[i], input_category_, at, end);
    at = end;
  }
  Pending& pend = pending_.at(m.batch_id);
  pend.stage_cost.resize(stages, 0.0);
  for (size_t i = 0; i < stages; ++i)
    pend.stage_cost[i] += m.cost[i];
  pend.samples += m.samples;
  pend.bytes += m.out_bytes;
  pend.max_bytes = std::max(pend.max_bytes, m.max_bytes);
  if (--pend.chunks_left == 0) { // any free worker collates (round robin: this one): the task goes first
    Chunk task;
    task.batch_id = m.batch_id;
    task.collate = true;
    if (round_robin_)
      map_queue_.offer_to(worker, std::move(task), /*ahead=*/true);
    else
      map_queue_.offer(std::move(task), /*ahead=*/true);
  }
  worker_done(worker);
}

void InputPipeline::collate(int worker, long batch_id) {
  const PipelineSpec& p = (*s_.job->pipeline);
  Pending& pend = pending_.at(batch_id);
  if (pend.gpus.empty()) { // the shuffle buffer is full: nothing to deliver
    pending_.erase(batch_id);
    worker_done(worker);
    return;
  }
  const double shares = static_cast<double>(pend.gpus.size());
  Batch b;
  b.index = pend.index;
  b.samples = pend.samples / shares;
  b.bytes = pend.bytes / shares;
  if (p.batching.padding == BatchPadding::longest) {
    b.bytes = pend.max_bytes * b.samples;
    b.padded_fraction = b.bytes > 0 ? 1.0 - pend.bytes / shares / b.bytes : 0.0;
    double nominal = flow_.final_bytes(1, s_.job->dataset->sample_size.mean().value());
    b.compute_scale = nominal > 0 ? pend.max_bytes / nominal : 1.0;
  }
  const std::vector<int> gpus = pend.gpus;
  // Stage work counts for delivered batches only (the run ends with some in flight).
  for (size_t i = 0; i < pend.stage_cost.size(); ++i)
    if (pend.stage_cost[i] > 0) {
      counters_.stage_core_seconds[i].add(pend.stage_cost[i]);
      counters_.stage_samples[i].add(pend.samples);
    }
  pending_.erase(batch_id);
  // The framework's own per-batch worker cost (collate into shared memory, pickling) adds to the collation.
  const double collate = (p.batching.collate.for_sample(b.bytes, 0).value() +
                          p.batching.collate.per_sample.value() * (b.samples - 1) +
                          p.framework_costs.worker(b.bytes).value()) * shares;
  const double c0 = sg4::Engine::get_clock();
  cpu_work(worker, collate, [this, worker, b, gpus, collate, c0] {
    if (collate > 0) {
      s_.recorder->span(worker_slots_[static_cast<size_t>(worker)].track, collate_span_, input_category_, c0,
              sg4::Engine::get_clock());
      counters_.collate_core_seconds.add(collate);
    }
    hand_over(worker, b, gpus);
  });
}

void InputPipeline::hand_over(int worker, const Batch& b, const std::vector<int>& gpus) {
  const WorkerSlot& w = worker_slots_[static_cast<size_t>(worker)];
  if (w.host == s_.node->cpu) {
    push_batch(b, gpus);
    worker_done(worker);
    return;
  }
  in_actor(worker, [this, worker, b, gpus] { // a data-service worker sends the batch to the trainer node
    const WorkerSlot& self = worker_slots_[static_cast<size_t>(worker)];
    auto* rec = s_.recorder;
    const double n0 = sg4::Engine::get_clock();
    s_.platform->transfer(self.host, s_.node->cpu, Bytes(b.bytes * static_cast<double>(gpus.size())))->wait();
    rec->span(self.track, rec->intern("send batch"), rec->intern("input"), n0, sg4::Engine::get_clock());
    push_batch(b, gpus);
    worker_done(worker);
  });
}

void InputPipeline::push_batch(const Batch& b, const std::vector<int>& gpus) {
  for (int g : gpus)
    s_.queues[static_cast<size_t>(g)]->push(b);
  counters_.batches.add(static_cast<double>(gpus.size()));
}

} // namespace mlsim
