#include "sim/pipeline/input_pipeline.hpp"

#include "sim/core/base/engine.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/hardware/disk_server.hpp"
#include "sim/pipeline/pipeline_counters.hpp"
#include "sim/pipeline/draw_seed.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace mlsim {

InputPipeline::InputPipeline(Setup setup)
    : s_(std::move(setup)), flow_(*s_.job->pipeline, *s_.job->dataset, s_.node->spec->cpu),
      read_queue_([this](int slot, Chunk c) { start_read(slot, std::move(c)); }),
      map_queue_([this](int worker, Chunk c) { begin_work(worker, std::move(c)); }),
      counters_(*s_.recorder, *s_.job->pipeline) {
  const JobContext& job = *s_.job;
  const PipelineSpec& p = *job.pipeline;
  int cores = 0;
  if (p.placement == PipelinePlacement::service) {
    for (auto& svc : s_.platform->service_nodes())
      if (svc.spec->name == p.service_node) {
        worker_hosts_.push_back(svc.cpu);
        ram_of_[svc.cpu] = svc.ram_bus;
        cores += svc.spec->cpu.cores;
      }
  } else {
    worker_hosts_.push_back(s_.node->cpu);
    ram_of_[s_.node->cpu] = s_.node->ram_bus;
    cores = s_.node->spec->cpu.cores;
  }
  workers_ = p.effective_workers(cores);
  if (p.framework == Framework::pytorch) // DataLoader workers are per accelerator process
    workers_ *= static_cast<int>(s_.queues.size());
  for (const auto& st : p.stages)
    if (st.kind == StageKind::read) {
      readers_ = st.parallelism > 0 ? st.parallelism : (p.whole_batch_workers ? 0 : workers_);
    }
  chunks_per_batch_ = p.whole_batch_workers ? 1 : p.chunks_per_batch > 0 ? p.chunks_per_batch : workers_;
  round_robin_ = p.whole_batch_workers && p.assignment == WorkerAssignment::round_robin;
  loader_workers_ = p.framework == Framework::pytorch ? std::max(1, workers_ / static_cast<int>(s_.queues.size()))
                                                      : workers_;
  for (size_t k : s_.node->spec->cpu.worker_launches) { // each worker process's own page faults (cpu.hpp)
    auto spec = std::make_unique<PipelineSpec>(p);
    for (auto& st : spec->stages)
      if (k < st.cost.fresh_pages.launches.size())
        st.cost.fresh_pages = st.cost.fresh_pages.of_launch(k);
    launch_flows_.push_back(std::make_unique<SampleFlow>(*spec, *job.dataset, s_.node->spec->cpu));
    launch_pipelines_.push_back(std::move(spec));
  }
  for (const auto& nd : s_.node->disks)
    if (nd.spec->name == job.dataset->disk)
      disk_ = nd.server.get();
  startup_lock_ = sg4::Mutex::create();
  shard_samples_ = static_cast<double>(job.dataset->samples) / job.job_trainer_nodes;
  shard_bytes_ = shard_samples_ * job.dataset->sample_size.mean().value();
  for (const auto& st : p.stages)
    stage_names_.push_back(s_.recorder->intern(st.name));
  input_category_ = s_.recorder->intern("input");
  read_span_ = s_.recorder->intern(pipeline_spans::read());
  collate_span_ = s_.recorder->intern("collate");
  reading_ = s_.recorder->busy(pipeline_busy::reads(s_.node->name));
}

InputPipeline::Counters::Counters(Recorder& rec, const PipelineSpec& p)
    : read_ram_bytes(rec, pipeline_counters::read_ram_bytes()),
      read_storage_bytes(rec, pipeline_counters::read_storage_bytes()),
      read_samples(rec, pipeline_counters::read_samples()),
      read_busy_seconds(rec, pipeline_counters::read_busy_seconds()),
      collate_core_seconds(rec, pipeline_counters::collate_core_seconds()),
      batches(rec, pipeline_counters::batches()) {
  for (const auto& st : p.stages) {
    stage_core_seconds.emplace_back(rec, pipeline_counters::stage_core_seconds(st.name));
    stage_samples.emplace_back(rec, pipeline_counters::stage_samples(st.name));
  }
}

void InputPipeline::start() {
  auto* rec = s_.recorder;
  spawn_actor(s_.node->name + ".dispatch", s_.node->cpu, [this] { dispatch(); })->daemonize();
  slots_.resize(static_cast<size_t>(readers_)); // never resized again: slot actors hold references
  for (int r = 0; r < readers_; ++r) {
    slots_[static_cast<size_t>(r)].track = rec->intern(s_.node->name + "/reader" + std::to_string(r));
    read_queue_.add_free(r);
  }
  start_workers();
  rec->add(pipeline_counters::workers(), workers_);
}

const SampleFlow& InputPipeline::flow_of(int worker) const {
  if (launch_flows_.empty())
    return flow_;
  return *launch_flows_[static_cast<size_t>(worker % loader_workers_) % launch_flows_.size()];
}

int InputPipeline::round_robin_worker(int gpu, long index, long node_batch) const {
  if (s_.job->pipeline->framework == Framework::pytorch) // each accelerator's loader cycles over its own
    return gpu * loader_workers_ + static_cast<int>(index % loader_workers_);
  return static_cast<int>(node_batch % workers_); // one pool for the node's accelerators: it cycles over all
}

void InputPipeline::draw_batch(int gpu, long index, std::span<double> sizes) const {
  const JobContext& job = *s_.job;
  const int rank = s_.first_rank + gpu;
  // Coordinated reads: every trainer of a round gets a batch drawn from the same sizes.
  const std::uint64_t stream = job.pipeline->coordinated_reads ? 0x9e37u : static_cast<std::uint64_t>(rank + 1);
  std::mt19937_64 rng = draw_engine(static_cast<std::uint64_t>(job.run->seed), stream, static_cast<std::uint64_t>(index));
  job.dataset->sample_size.draw(rng, sizes);
}

void InputPipeline::add_samples(Chunk& c, std::span<const double> sizes) {
  for (double s : sizes) {
    c.stored_bytes += s;
    c.largest = std::max(c.largest, s);
  }
  c.samples += static_cast<double>(sizes.size());
}

// The node's samples read so far decide the epoch: epoch 1 reads storage.
bool InputPipeline::read_from_ram(long node_batch) const {
  const DatasetSpec& d = (*s_.job->dataset);
  if (d.location == DataLocation::ram)
    return true;
  double offset = static_cast<double>(node_batch) * static_cast<double>(s_.job->pipeline->batch_size);
  bool later_epoch = offset >= shard_samples_;
  return later_epoch && d.page_cache && shard_bytes_ <= s_.node->spec->ram.page_cache_capacity().value();
}

bool InputPipeline::cache_hit(long node_batch) const {
  double offset = static_cast<double>(node_batch) * static_cast<double>(s_.job->pipeline->batch_size);
  return flow_.has_cache() && offset >= shard_samples_;
}

void InputPipeline::fill_shuffle_buffer() {
  const PipelineSpec& p = (*s_.job->pipeline);
  for (size_t k = 0; k < p.stages.size(); ++k) {
    if (p.stages[k].kind != StageKind::shuffle)
      continue;
    std::mt19937_64 rng = draw_engine(static_cast<std::uint64_t>(s_.job->run->seed), 0x5u,
                                      static_cast<std::uint64_t>(s_.node_id));
    long id = next_batch_id_++;
    Pending& pend = pending_[id]; // no accelerator receives it
    const long chunk = std::max(1L, p.batch_size / chunks_per_batch_);
    long left = p.stages[k].buffer_samples;
    pend.chunks_left = static_cast<int>((left + chunk - 1) / chunk);
    std::vector<double> sizes(static_cast<size_t>(std::max(0L, left)));
    s_.job->dataset->sample_size.draw(rng, sizes);
    for (long lo = 0; lo < static_cast<long>(sizes.size()); lo += chunk) {
      Chunk c;
      c.batch_id = id;
      c.end_stage = k;
      c.from_ram = read_from_ram(0); // the fill reads where the first epoch reads (a dataset in RAM too)
      add_samples(c, std::span<const double>(sizes).subspan(static_cast<size_t>(lo),
                                                             static_cast<size_t>(std::min(chunk, left - lo))));
      readers_ > 0 ? to_read(std::move(c)) : to_map(std::move(c));
    }
    return;
  }
}

void InputPipeline::dispatch() {
  fill_shuffle_buffer();
  int gpus = static_cast<int>(s_.queues.size());
  // Per-accelerator loaders (pytorch, keras) build one batch per accelerator;
  // element-parallel pipelines (tf.data) build the node's global batch and split it.
  bool per_accelerator = s_.job->pipeline->whole_batch_workers;
  const double p_batch = static_cast<double>(s_.job->pipeline->batch_size);
  std::vector<std::vector<int>> groups;
  if (per_accelerator)
    for (int g = 0; g < gpus; ++g)
      groups.push_back({g});
  else {
    groups.emplace_back();
    for (int g = 0; g < gpus; ++g)
      groups.back().push_back(g);
  }
  const size_t per_gpu = static_cast<size_t>(s_.job->pipeline->batch_size);
  std::vector<double> sizes; // of the batch being dispatched
  long node_batch = 0;
  for (long index = 0; s_.batches_per_queue < 0 || index < s_.batches_per_queue; ++index) {
    for (const auto& group : groups) {
      const size_t n = per_gpu * group.size();
      sizes.resize(n);
      for (size_t k = 0; k < group.size(); ++k) {
        s_.queues[static_cast<size_t>(group[k])]->acquire_token();
        draw_batch(group[k], index, std::span<double>(sizes).subspan(k * per_gpu, per_gpu));
      }
      long id = next_batch_id_++;
      Pending& pend = pending_[id];
      pend.gpus = group;
      pend.index = index;
      // Element-parallel: the node's batch is split among the workers (one chunk each).
      int chunks = static_cast<int>(std::min<size_t>(static_cast<size_t>(chunks_per_batch_), n));
      pend.chunks_left = chunks;
      bool hit = cache_hit(node_batch);
      bool ram = hit || read_from_ram(node_batch);
      const long epoch = static_cast<long>(static_cast<double>(node_batch) * p_batch / shard_samples_);
      const int turn = round_robin_ ? round_robin_worker(group.front(), index, node_batch) : -1;
      node_batch += static_cast<long>(group.size());
      for (int c = 0; c < chunks; ++c) {
        Chunk chunk;
        chunk.batch_id = id;
        size_t lo = n * static_cast<size_t>(c) / static_cast<size_t>(chunks);
        size_t hi = n * static_cast<size_t>(c + 1) / static_cast<size_t>(chunks);
        add_samples(chunk, std::span<const double>(sizes).subspan(lo, hi - lo));
        chunk.from_ram = ram;
        chunk.epoch = epoch;
        chunk.first_stage = hit ? flow_.after_cache() : 0;
        chunk.worker = turn;
        readers_ > 0 ? to_read(std::move(chunk)) : to_map(std::move(chunk));
      }
    }
  }
}

double InputPipeline::read_bytes(const Chunk& c) const {
  return c.first_stage > 0 ? flow_.bytes_after(c.first_stage - 1, c.samples, c.stored_bytes) : c.stored_bytes;
}

DiskServer& InputPipeline::dataset_disk() const {
  if (!disk_)
    throw InternalError("dataset.disk '" + s_.job->dataset->disk + "' is not a disk of node " + s_.node->name);
  return *disk_;
}

void InputPipeline::read_from(const Chunk& c, double bytes, sg4::Host* where) {
  const double n = c.samples;
  if (c.from_ram) {
    sg4::this_actor::exec_init(bytes)->set_host(ram_of_.at(where))->wait(); // the reader's own RAM
  } else if (s_.job->dataset->location == DataLocation::remote) {
    // Accesses and transfers of a chunk's files overlap (queued requests), each on its own resource.
    sg4::ExecPtr ops = sg4::this_actor::exec_init(n); // keep the pointer: start() returns a raw one
    ops->set_host(s_.platform->storage_ops())->start();
    s_.platform->transfer(s_.platform->storage_host(), where, Bytes(bytes))->wait();
    ops->wait();
    sg4::this_actor::sleep_for(n * s_.job->storage->latency.value());
  } else {
    dataset_disk().read(n, Bytes(bytes));
  }
}

double InputPipeline::begin_read() {
  const double now = sg4::Engine::get_clock();
  if (reading_)
    reading_->begin(now);
  return now;
}

void InputPipeline::record_read(const Chunk& c, double bytes, uint32_t track, double start) {
  const double end = sg4::Engine::get_clock();
  if (reading_)
    reading_->end(end);
  s_.recorder->span(track, read_span_, input_category_, start, end);
  (c.from_ram ? counters_.read_ram_bytes : counters_.read_storage_bytes).add(bytes);
  counters_.read_samples.add(c.samples);
  counters_.read_busy_seconds.add(end - start);
}

void InputPipeline::to_read(Chunk c) {
  read_queue_.offer(std::move(c));
}

void InputPipeline::read_local_disk(Chunk c, ReadDone then) {
  const double start = begin_read(), bytes = read_bytes(c);
  const double n = c.samples;
  dataset_disk().submit(n, Bytes(bytes), [start, bytes, c = std::move(c), then = std::move(then)]() mutable {
    then(std::move(c), start, bytes);
  });
}

void InputPipeline::start_read(int slot, Chunk c) {
  if (reads_local_disk(c)) { // no actor: the disk server ends the read
    read_local_disk(std::move(c), [this, slot](Chunk read, double start, double bytes) {
      end_read(slot, std::move(read), start, bytes);
    });
    return;
  }
  ReadSlot& r = slots_[static_cast<size_t>(slot)];
  if (!r.handed) {
    r.handed = sg4::Semaphore::create(0);
    sg4::Host* h = worker_hosts_[static_cast<size_t>(slot) % worker_hosts_.size()];
    spawn_actor(s_.node->name + ".reader" + std::to_string(slot), h, [this, slot] { slot_loop(slot); })->daemonize();
  }
  r.chunk = std::move(c);
  r.handed->release();
}

void InputPipeline::end_read(int slot, Chunk c, double start, double bytes) {
  record_read(c, bytes, slots_[static_cast<size_t>(slot)].track, start);
  to_map(std::move(c));
  read_queue_.release(slot);
}

void InputPipeline::slot_loop(int slot) {
  ReadSlot& r = slots_[static_cast<size_t>(slot)];
  sg4::Host* here = sg4::this_actor::get_host();
  for (;;) {
    r.handed->acquire();
    Chunk c = std::move(r.chunk);
    const double start = begin_read(), bytes = read_bytes(c);
    read_from(c, bytes, here);
    end_read(slot, std::move(c), start, bytes);
  }
}

} // namespace mlsim
