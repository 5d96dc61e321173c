// A disk at run time: the reads in flight share its operations and its bandwidth (disk.hpp).
//
//   A read of k accesses and s bytes joins two processor-sharing resources at once
//   (processor_sharing.hpp): the operations, of capacity random_read_iops, with amount k, and the
//   bandwidth, of capacity sequential_read, with amount s. It ends
//       max(end of its accesses, end of its bytes) + k * latency.
// The same times as an exec of k on a host of speed IOPS and an exec of s on a host of speed
// bandwidth, waited for both, then a sleep of k * latency (the form this replaces), up to rounding.
// Why not those execs: with ~128 reads in flight on one disk, SimGrid re-solved the sharing of all
// of them at every arrival and every end (its solver was most of a 1x8 run's time). Here the server
// keeps the reads, computes their ends in closed form, and plans its next step at the next read's
// end or at the instant a new one arrives; the engine sees one planned step per disk and no variable
// per read.
// Finding the next read done walks the two resources' ends in time order (processor sharing keeps
// their order as reads arrive) and stops once no read left can be done sooner: a few steps per
// event, not one per read in flight.
// A read needs no actor of its own: submit() hands the server a completion, which the server runs
// when the read is done (so a node's read stage of R reads in flight costs no R actors); read() is
// submit() for an actor that waits. The server needs no actor either: its steps run on the engine's
// timers (server_wakeup.hpp), one at the next read's end, one at the instant reads arrive. Ignores:
// what disk.hpp ignores.
#pragma once

#include "sim/hardware/disk.hpp"
#include "sim/hardware/processor_sharing.hpp"
#include "sim/hardware/server_wakeup.hpp"

#include <simgrid/forward.h>

#include <functional>
#include <set>
#include <vector>

namespace mlsim {

class DiskServer {
public:
  // Runs when a read is done (in the engine, not in an actor), once every read done at that instant has
  // left the disk, in the order they were done (ties: arrival order). It must not block; it may submit
  // reads.
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
    long walked = -1;       // the walk (next_due) that last forecast a part of this read
    double walk_end = -1.0; // the end of the part that walk forecast
  };
  struct Due {
    double at;
    long order, id;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  void step(double reached);   // completes the reads done by then and plans the next step
  Due next_due();              // the read done first if no other arrives (id -1: none in flight)
  // Completes the reads done by `now`, in the order they were done; returns the next one to be done as
  // it was before the completions ran (they may submit reads).
  Due finish_due(double now);
  void end_accesses(long id, double at);
  void end_bytes(long id, double at);
  void settle(long id); // both parts of a read have ended: its end is fixed

  DiskSpec spec_;
  ProcessorSharing accesses_, bytes_;
  std::vector<Read> reads_;     // by id (a slot, reused once its read is done)
  std::vector<long> free_ids_;
  long arrivals_ = 0, walks_ = 0;
  std::vector<Due> settled_;      // reads whose parts have both ended (a min-heap; done ones are skipped)
  std::multiset<double> delays_;  // of the reads in flight: the least bounds next_due's walk
  std::vector<Completion> finished_; // finish_due's scratch
  bool arrived_ = false;             // a read arrived since the last finish_due
  bool stepping_ = false;            // in step(): its loop takes the reads its completions submit
  ServerWakeup wakeup_;
};

} // namespace mlsim
