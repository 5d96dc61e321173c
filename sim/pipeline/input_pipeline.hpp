// The input pipeline at run time: SimGrid actors that turn samples into
// batches for the accelerators of one trainer node.
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
//   workers     run the map stages of a chunk as one exec on one core of their
//               host (the node's CPU, or a data-service node's); a completed
//               batch becomes a collate task at the head of the queue, taken by
//               the next free worker, which pushes the batch into the buffer
//               (over the network first when the workers are remote)
// Throughput of W workers on c cores of speed v with a per-sample cost x is
// min(W, c) v / x; the chunk size changes only how work is split, not the rate.
// Ignores: Python's GIL beyond what the framework preset implies, OS
// scheduling noise, memory allocation.
#pragma once

#include "sim/core/base/recorder.hpp"
#include "sim/pipeline/job_spec.hpp"
#include "sim/hardware/platform.hpp"
#include "sim/pipeline/batch_queue.hpp"
#include "sim/pipeline/sample_flow.hpp"

#include <deque>
#include <map>
#include <memory>
#include <random>
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
    std::vector<double> stored_bytes;
    bool from_ram = false;       // page cache or cache stage hit
    size_t first_stage = 0;      // stages before it were cached
    size_t end_stage = static_cast<size_t>(-1); // stages from here on are not run (shuffle-buffer fill)
    bool collate = false;        // a task: collate the completed batch and hand it over
    long epoch = 0;              // of the node's shard (worker start-up, framework_costs.hpp)
  };
  struct Pending {
    std::vector<int> gpus; // accelerators that receive a share of this batch
    long index = 0;
    int chunks_left = 0;
    double samples = 0, bytes = 0, max_bytes = 0;
    std::vector<double> stage_cost; // core-seconds per stage, accounted when the batch is delivered
  };
  struct WorkQueue {
    std::deque<Chunk> items;
    simgrid::s4u::SemaphorePtr available;
  };

  // A read stage's slot: its trace track, and for reads that wait on SimGrid activities (RAM, remote
  // storage) an actor of its own and the chunk handed to it.
  struct ReadSlot {
    uint32_t track = 0;
    simgrid::s4u::SemaphorePtr handed; // null: no actor yet
    Chunk chunk;
    double start = 0;
  };

  void dispatch();
  void fill_shuffle_buffer(); // the first batch waits until the shuffle buffer holds its samples
  void to_read(Chunk c);      // read stage: into a free slot, else wait for one
  void start_read(int slot, Chunk c);
  void end_read(int slot, Chunk c, double start, double bytes); // `slot` read `c`: map it, take the next
  void slot_loop(int slot);   // a slot's actor: reads from RAM or remote storage
  void work_loop(int worker);
  void start_worker(long& started_epoch, const Chunk& c, uint32_t track); // non-persistent workers, each epoch
  double read_bytes(const Chunk& c) const; // the bytes read: what the cached stages left, or the stored ones
  bool reads_local_disk(const Chunk& c) const { return !c.from_ram && s_.job->dataset->location == DataLocation::local; }
  DiskServer& dataset_disk() const;
  void read_from(const Chunk& c, double bytes, simgrid::s4u::Host* where); // blocks the calling actor
  void record_read(const Chunk& c, double bytes, uint32_t track, double start);
  void read_chunk(const Chunk& c, simgrid::s4u::Host* where, uint32_t track); // a worker's own read
  void process_chunk(const Chunk& c, uint32_t track);
  void collate_and_deliver(long batch_id, uint32_t track);
  Chunk take(WorkQueue& q);
  void put(WorkQueue& q, Chunk c);
  std::vector<double> draw_batch(int gpu, long index);
  bool read_from_ram(long node_batch) const;
  bool cache_hit(long node_batch) const;

  Setup s_;
  SampleFlow flow_;
  int workers_ = 1;
  int readers_ = 0;
  int chunks_per_batch_ = 1;
  std::vector<simgrid::s4u::Host*> worker_hosts_;
  std::map<const simgrid::s4u::Host*, simgrid::s4u::Host*> ram_of_; // worker host -> its node's RAM bus
  WorkQueue to_map_;
  std::vector<ReadSlot> slots_;
  std::deque<int> free_slots_;   // in the order they became free (as readers waiting on a queue)
  std::deque<Chunk> waiting_reads_;
  DiskServer* disk_ = nullptr;   // the dataset's disk, when it is local
  simgrid::s4u::MutexPtr startup_lock_; // the training process starts its workers one after another
  long startup_done_epoch_ = -1;          // the last epoch whose workers have started
  std::map<long, Pending> pending_;
  long next_batch_id_ = 0;
  double shard_samples_ = 0, shard_bytes_ = 0;
  std::vector<size_t> stage_names_;
};

} // namespace mlsim
