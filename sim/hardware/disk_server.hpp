// A disk at run time: the reads in flight share its operations and its bandwidth (disk.hpp).
//
//   A read of k accesses and s bytes joins two processor-sharing resources at once
//   (processor_sharing.hpp): the operations, of capacity random_read_iops, with amount k, and the
//   bandwidth, of capacity sequential_read, with amount s. It ends
//       max(end of its accesses, end of its bytes) + k * latency.
// The same times as an exec of k on a host of speed IOPS and an exec of s on a host of speed
// bandwidth, waited for both, then a sleep of k * latency (the form this replaces), up to rounding.
// Why not those execs: with ~128 reads in flight on one disk, SimGrid re-solved the sharing of all
// of them at every arrival and every end (its solver was most of a 1x8 run's time). Here one actor
// per disk keeps the reads, computes their ends in closed form, and sleeps until the next read is
// done or a new one arrives; the engine sees one timer per disk and no variable per read.
// A read needs no actor of its own: submit() hands the server a completion, which the server runs
// in its own actor when the read is done (so a node's read stage of R reads in flight costs no R
// actors); read() is submit() for an actor that waits. The server's actor starts with the first
// read and lives on the disk's own host (nothing else runs there, so its timers touch no other
// resource). Ignores: what disk.hpp ignores.
#pragma once

#include "sim/hardware/disk.hpp"
#include "sim/hardware/processor_sharing.hpp"

#include <simgrid/forward.h>

#include <functional>
#include <vector>

namespace mlsim {

class DiskServer {
public:
  // Runs in the server's actor when a read is done, once every read done at that instant has left the
  // disk, in the order they were done (ties: arrival order). It must not block; it may submit reads.
  using Completion = std::function<void()>;

  DiskServer(const DiskSpec& spec, simgrid::s4u::Host* home);

  // Starts a read of `accesses` random accesses and `bytes` now; `done` runs when it is done.
  void submit(double accesses, Bytes bytes, Completion done);

  // Blocks the calling actor until its read of `accesses` random accesses and `bytes` is done.
  void read(double accesses, Bytes bytes);

  const DiskSpec& spec() const { return spec_; }

private:
  struct Read {
    double accesses_end = -1.0; // < 0: still in the operations resource
    double bytes_end = -1.0;    // < 0: still in the bandwidth resource
    double delay = 0.0;
    long order = 0;  // arrival number: reads done at the same instant complete in this order
    Completion done; // empty: the slot is free
  };
  void serve();                  // the server's loop
  void plan();                   // after arrivals: when each read in flight is done if no other arrives
  void finish_due(double now);   // completes the reads done by `now`, in the order they were done
  void end_accesses(long id, double at) { reads_[static_cast<size_t>(id)].accesses_end = at; }
  void end_bytes(long id, double at) { reads_[static_cast<size_t>(id)].bytes_end = at; }

  DiskSpec spec_;
  simgrid::s4u::Host* home_;
  ProcessorSharing accesses_, bytes_;
  std::vector<Read> reads_;     // by id (a slot, reused once its read is done)
  std::vector<long> free_ids_;
  long arrivals_ = 0;
  std::vector<double> accesses_forecast_, bytes_forecast_; // by id: plan's scratch
  struct Due {
    double at;
    long order, id;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  std::vector<Due> due_; // the reads in flight by when they are done (a min-heap), from the last plan
  std::vector<Completion> finished_; // finish_due's scratch
  bool replan_ = false;  // a read arrived since the last plan
  simgrid::s4u::SemaphorePtr wake_; // released by an arrival while the server sleeps
  bool sleeping_ = false;
  bool started_ = false;
};

} // namespace mlsim
