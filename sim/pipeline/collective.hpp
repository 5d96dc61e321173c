// Gradient all-reduce across the data-parallel ranks, as real flows.
//
// Ring all-reduce of S bytes over n ranks: 2(n-1) steps, each moving S/n
// bytes to the next rank, so
//     T = 2(n-1) alpha + 2(n-1)/n * S / beta
// with alpha the slowest neighbour route's latency and beta its bandwidth.
// Modelled as one flow per rank to its ring successor carrying 2(n-1)/n * S
// (SimGrid charges its route latency once and shares every link it crosses
// with other traffic: input data on the NIC, other buckets), then the
// remaining 2(n-1)-1 latency terms. A bucket starts when every rank has
// submitted it (a barrier: synchronous training waits for the slowest rank)
// and buckets run one after another, like NCCL on one stream.
// Ignores: chunk pipelining effects below ~1 MB, protocol choice (LL/Simple),
// in-network reduction.
#pragma once

#include "sim/core/recorder.hpp"
#include "sim/hardware/platform.hpp"

#include <simgrid/forward.h>

#include <deque>
#include <vector>

namespace mlsim {

struct CollectiveGroup {
  Platform* platform = nullptr;
  Recorder* recorder = nullptr;
  std::vector<simgrid::s4u::Host*> ranks; // ring order
  simgrid::s4u::BarrierPtr barrier;
  double alpha = 0.0; // slowest neighbour route latency

  void finalize(); // computes alpha, creates the barrier
  // Closed-form time of one ring all-reduce of `bytes` without contention.
  double ring_time(double bytes) const;
};

class Communicator {
public:
  Communicator(CollectiveGroup* group, int rank);

  void start();               // creates the actor that runs buckets (a daemon)
  void submit(double bytes);  // trainer: this bucket's gradients are ready
  void wait_all();            // trainer: blocks until every submitted bucket is reduced

private:
  void run();

  CollectiveGroup* group_;
  int rank_;
  std::deque<double> buckets_;
  simgrid::s4u::SemaphorePtr ready_;
  simgrid::s4u::SemaphorePtr done_;
  long submitted_ = 0;
  long waited_ = 0;
};

} // namespace mlsim
