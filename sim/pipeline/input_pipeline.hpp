// The input pipeline at run time: a dispatcher actor, read slots and worker
// slots that turn samples into batches for the accelerators of one trainer
// node.
//
//   dispatcher  takes a token from an accelerator's prefetch buffer, draws the
//               batch's sample sizes, splits it into chunks (tf.data: the
//               node's global batch, one share per accelerator, built by
//               `workers` in parallel and handed to all accelerators at once,
//               as a distribution strategy does; pytorch / keras: one loader
//               per accelerator, one worker per batch)
//   shuffle     a shuffle buffer of N samples must fill before the first batch
//               leaves it: N extra samples go through the stages before it
//               at the start (later, each sample in displaces one out)
//   readers     (tf.data: `parallelism` of the read stage, default the workers,
//               like interleave(num_parallel_calls); pytorch and keras
//               workers read inline before mapping) read chunks: random
//               accesses on the disk's operations resource, bytes on the disk
//               (or over the NIC from remote storage, or from RAM when cached).
//               A reader is a slot, not an actor: up to `parallelism` reads
//               are in flight, a chunk waits for a free slot, and a read's end
//               hands its chunk to the workers and starts the next waiting
//               one. Local-disk reads are submitted to the disk server, which
//               runs that end in its own actor; reads from RAM or remote
//               storage wait on SimGrid activities, in an actor per slot
//               started the first time the slot reads from there.
//   workers     run the map stages of a chunk as one piece of work on one core
//               of their host (the node's CPU, or a data-service node's); a
//               completed batch becomes a collate task at the head of the
//               queue, taken by the next free worker, which pushes the batch
//               into the buffer (over the network first when the workers are
//               remote). A worker is a slot, not an actor: an item goes to
//               the worker free the longest, which submits its CPU work to
//               the node's cores; the work's end, run by the core server,
//               records the chunk and takes the worker's next item.
//               PyTorch hands its batches round robin instead: accelerator g's
//               batch i goes to worker i mod W of its loader, which builds and
//               collates it while later ones wait in that worker's own queue
//               (DataLoader's `_worker_queue_idx_cycle`), and the trainer takes
//               them in order (batch_queue.hpp). So one slow worker sets the
//               pace: W batches per its batch time, the others idle meanwhile. Steps
//               that wait on SimGrid activities (an epoch's start-up, a
//               worker's own read from RAM or remote storage, sending a
//               batch, CPU work under the fair policy) run in an actor per
//               worker, started the first time the worker needs one.
// Throughput of W workers on c cores of speed v with a per-sample cost x is
// min(W, c) v / x; the chunk size changes only how work is split, not the rate.
// Round robin with per-worker costs x_k (their own page faults, cpu.launch as a
// list, cpu.hpp): W / max_k(x_k) while the cores are not the limit, where a
// shared queue gets sum_k 1 / x_k.
// Ignores: Python's GIL beyond what the framework preset implies, OS
// scheduling noise, memory allocation.
#pragma once

#include "sim/core/base/recorder.hpp"
#include "sim/pipeline/job_spec.hpp"
#include "sim/hardware/platform.hpp"
#include "sim/pipeline/batch_queue.hpp"
#include "sim/pipeline/sample_flow.hpp"
#include "sim/pipeline/slot_queue.hpp"

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <vector>

namespace mlsim {

class InputPipeline {
public:
  struct Setup {
    const JobContext* job = nullptr;
    Platform* platform = nullptr;
    Recorder* recorder = nullptr;
    NodeInstance* node = nullptr;          // the trainer node fed
    int node_id = 0;                       // index among trainer node instances
    int first_rank = 0;                    // global rank of the node's first accelerator
    std::vector<BatchQueue*> queues;       // one per accelerator of the node
    long batches_per_queue = -1; // -1: until the simulation ends
  };

  explicit InputPipeline(Setup setup);
  void start(); // creates the actors (daemons: they end with the trainers)

  int worker_count() const { return workers_; }

private:
  struct Chunk {
    long batch_id = 0;
    double samples = 0;      // how many
    double stored_bytes = 0; // their sizes in storage, summed
    double largest = 0;      // the largest one's stored size (padding to the longest)
    bool from_ram = false;       // page cache or cache stage hit
    size_t first_stage = 0;      // stages before it were cached
    size_t end_stage = static_cast<size_t>(-1); // stages from here on are not run (shuffle-buffer fill)
    bool collate = false;        // a task: collate the completed batch and hand it over
    long epoch = 0;              // of the node's shard (worker start-up, framework_costs.hpp)
    int worker = -1;             // the worker it is for (round robin), else -1: the first free one
  };
  struct Pending {
    std::vector<int> gpus; // accelerators that receive a share of this batch
    long index = 0;
    int chunks_left = 0;
    double samples = 0, bytes = 0, max_bytes = 0;
    std::vector<double> stage_cost; // core-seconds per stage, accounted when the batch is delivered
  };

  // A read stage's slot: its trace track, and for reads that wait on SimGrid activities (RAM, remote
  // storage) an actor of its own and the chunk handed to it.
  struct ReadSlot {
    uint32_t track = 0;
    simgrid::s4u::SemaphorePtr handed; // null: no actor yet
    Chunk chunk;
    double start = 0;
  };

  // A worker: a slot of a pool, not an actor (input_pipeline_workers.cpp). Its CPU work is submitted
  // to its node's cores with a completion; a step that waits on SimGrid activities (start-up, its own
  // read from RAM or remote storage, sending a batch, any CPU work under the fair policy) runs in an
  // actor of its own, started the first time the slot needs one.
  // A chunk being mapped: its stage costs and what it adds to its batch once done.
  struct Mapping {
    std::vector<double> cost; // core-seconds per stage
    double total = 0, samples = 0, out_bytes = 0, max_bytes = 0;
    double start = 0;
    long batch_id = 0;
    size_t first_stage = 0;
  };

  struct WorkerSlot {
    uint32_t track = 0;
    simgrid::s4u::Host* host = nullptr;
    CpuScheduler* cpu = nullptr;
    long thread = 0;                     // its key in `cpu` (its last core, whether it woke)
    long started_epoch = -1;             // the last epoch whose start-up it waited for
    simgrid::s4u::SemaphorePtr handed;   // null: no actor yet
    std::function<void()> blocking_step; // handed to its actor
    bool starting = false;               // begin_work() runs for it
    bool has_next = false;               // `next` came while it did
    Chunk next;
    Mapping mapping;                     // the chunk it maps
  };

  void dispatch();
  void fill_shuffle_buffer(); // the first batch waits until the shuffle buffer holds its samples
  void to_read(Chunk c);      // read stage: into a free slot, else wait for one
  void start_read(int slot, Chunk c);
  void end_read(int slot, Chunk c, double start, double bytes); // `slot` read `c`: map it, take the next
  void slot_loop(int slot);   // a slot's actor: reads from RAM or remote storage
  double read_bytes(const Chunk& c) const; // the bytes read: what the cached stages left, or the stored ones
  bool reads_local_disk(const Chunk& c) const { return !c.from_ram && s_.job->dataset->location == DataLocation::local; }
  DiskServer& dataset_disk() const;
  void read_from(const Chunk& c, double bytes, simgrid::s4u::Host* where); // blocks the calling actor
  // Reads `c` from the dataset's local disk; `then(c, start, bytes)` runs in the disk server when done.
  using ReadDone = std::function<void(Chunk c, double start, double bytes)>;
  void read_local_disk(Chunk c, ReadDone then);
  double begin_read();  // now, when a read starts
  void record_read(const Chunk& c, double bytes, uint32_t track, double start); // when it has ended

  // The workers (input_pipeline_workers.cpp).
  void start_workers();
  void to_map(Chunk c);                 // the first free worker takes it, else it waits
  void begin_work(int worker, Chunk c); // the worker takes `c`
  void start_step(int worker, Chunk c); // its first step: CPU work, its own read, or a blocking step
  void worker_done(int worker);         // takes the next waiting item, else becomes free
  bool must_block(const WorkerSlot& w, const Chunk& c) const; // a chunk's first steps wait on activities
  void in_actor(int worker, std::function<void()> step);     // runs `step` in the worker's actor
  void worker_actor(int worker);
  void start_worker(WorkerSlot& w, const Chunk& c); // non-persistent workers, each epoch; blocks
  void read_chunk(const Chunk& c, const WorkerSlot& w); // a worker's own read; blocks
  double startup_cost() const;
  bool needs_startup(const WorkerSlot& w, const Chunk& c) const;
  void map_chunk(int worker, const Chunk& c);
  void end_map(int worker); // its chunk's CPU work is done: record it, count it in its batch
  void collate(int worker, long batch_id);
  void hand_over(int worker, const Batch& b, const std::vector<int>& gpus); // sends it first if remote
  void push_batch(const Batch& b, const std::vector<int>& gpus);
  void cpu_work(int worker, double core_seconds, CpuScheduler::Completion then); // `then` once done
  void draw_batch(int gpu, long index, std::span<double> sizes) const; // the batch's sample sizes
  static void add_samples(Chunk& c, std::span<const double> sizes);
  bool read_from_ram(long node_batch) const;
  bool cache_hit(long node_batch) const;

  const SampleFlow& flow_of(int worker) const; // its own page faults' costs (cpu.launch as a list)
  // Round robin: the worker of accelerator `gpu`'s batch `index`, the node's batch `node_batch`.
  int round_robin_worker(int gpu, long index, long node_batch) const;

  Setup s_;
  SampleFlow flow_;
  // Per worker process, when each draws its own page faults (cpu.launch as a list): the pipeline with
  // that launch's tables, and its flow. Empty: every worker uses flow_.
  std::vector<std::unique_ptr<PipelineSpec>> launch_pipelines_;
  std::vector<std::unique_ptr<SampleFlow>> launch_flows_; // by launch list position
  bool round_robin_ = false; // pytorch: batch i of a loader to its worker i mod W
  int loader_workers_ = 1;   // workers of one loader: each accelerator's (pytorch), else the node's pool
  int workers_ = 1;
  int readers_ = 0;
  int chunks_per_batch_ = 1;
  std::vector<simgrid::s4u::Host*> worker_hosts_;
  std::map<const simgrid::s4u::Host*, simgrid::s4u::Host*> ram_of_; // worker host -> its node's RAM bus
  std::vector<ReadSlot> slots_;
  SlotQueue<Chunk> read_queue_;
  std::vector<WorkerSlot> worker_slots_;
  SlotQueue<Chunk> map_queue_;    // chunks and collate tasks for the workers
  DiskServer* disk_ = nullptr;   // the dataset's disk, when it is local
  simgrid::s4u::MutexPtr startup_lock_; // the training process starts its workers one after another
  long startup_done_epoch_ = -1;          // the last epoch whose workers have started
  std::map<long, Pending> pending_;
  long next_batch_id_ = 0;
  double shard_samples_ = 0, shard_bytes_ = 0;
  // Interned once: names of the spans recorded per chunk and their category.
  std::vector<uint32_t> stage_names_;
  uint32_t input_category_ = 0, read_span_ = 0, collate_span_ = 0;
  BusyPeriods* reading_ = nullptr; // while any read is in progress; null: not recorded
  // The counters added to per chunk and per batch (pipeline_counters.hpp).
  struct Counters {
    Counters(Recorder& rec, const PipelineSpec& p);
    CounterSlot read_ram_bytes, read_storage_bytes, read_samples, read_busy_seconds, collate_core_seconds, batches;
    std::vector<CounterSlot> stage_core_seconds, stage_samples; // by stage
  } counters_;
};

} // namespace mlsim
