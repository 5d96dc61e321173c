// Gradient all-reduce across the data-parallel ranks, as real SimGrid flows
// that share links with every other transfer (input data on the NICs and
// PCIe, other buckets). `distribution.algorithm` chooses how.
//
// S = bucket bytes, n ranks, alpha = route latency, beta = route bandwidth.
//
// ring (NCCL ring; Patarasuk & Yuan, JPDC 69(2), 2009):
//     T = 2(n-1) alpha + 2(n-1)/n * S / beta
//   one flow per rank to its ring successor carrying 2(n-1)/n S (SimGrid
//   charges the route latency once), then the other 2(n-1)-1 latency terms.
// hierarchical (Horovod / NCCL "2D": g ranks per node, m nodes):
//     reduce-scatter in the node over NVLink, ring all-reduce of S/g across the
//     nodes between the ranks of the same local index (the g rings of a node
//     share its NIC), all-gather in the node:
//     T = 2(g-1) a_in + 2(g-1)/g S / b_in + 2(m-1) a_out + 2(m-1)/m S / B_nic
//   (g flows of 2(m-1)/m S/g each on one NIC of bandwidth B_nic).
// tree (NCCL 2.4 double binary tree; Sanders, Speck & Traeff, "Two-tree
//   algorithms for full bandwidth broadcast, reduction and scan", Parallel
//   Computing 35(12), 2009; Jeaugey, "Massively scale your deep learning
//   training with NCCL 2.4", NVIDIA blog, 2019): two binary trees (the second
//   mirrors the first), each reducing then broadcasting S/2, pipelined so that
//   every tree edge carries S/2 up and S/2 down concurrently:
//     T = 2 D alpha + deg_max * (S/2) / beta      (= 2 log2(n) alpha + 2 S / beta)
//   D = tree depth (log2 n), deg_max = most tree neighbours of one rank over
//   both trees (4: interior in one tree, leaf in the other).
// parameter_server (Li et al., OSDI 2014; one server: the CPU of the first
//   trainer node): every rank pushes S to the server, the server sums the n
//   gradients in RAM (reads n S, writes S at the RAM bandwidth), every rank
//   pulls S:
//     T = 2 (alpha + S / beta_pcie) + (n+1) S / B_ram
//
// Every algorithm starts a bucket when all ranks have submitted it (a barrier:
// synchronous training waits for the slowest rank), phases are separated by
// barriers, and buckets run one after another, like NCCL on one stream.
// Exposed communication is what the trainer waits for after its backward pass.
// Ignores: chunk pipelining below ~1 MB, protocol choice (LL/Simple), in-network
// reduction, the server applying the update itself (the device still runs the
// optimizer ops). tree and parameter_server need routes between the ranks they
// pair: the platform builds them for jobs of up to kAllPairsLimit accelerators
// (platform.hpp); beyond that finalize() says so with an InputError.
#pragma once

#include "sim/core/base/recorder.hpp"
#include "sim/pipeline/collective_algorithm.hpp"
#include "sim/hardware/platform.hpp"

#include <simgrid/forward.h>

#include <array>
#include <deque>
#include <string>
#include <vector>

namespace mlsim {

// One rank's neighbours in one binary tree (-1: none).
struct TreeNode {
  int parent = -1;
  std::array<int, 2> children{-1, -1};
};
// NCCL's double binary tree over n ranks (ncclGetBtree / ncclGetDtree):
// tree 0 in-order by the rank's lowest set bit, tree 1 its mirror (n even) or
// shifted by one (n odd).
std::array<std::vector<TreeNode>, 2> double_binary_tree(int n);

struct CollectiveGroup {
  Platform* platform = nullptr;
  Recorder* recorder = nullptr;
  std::vector<simgrid::s4u::Host*> ranks; // ring order: node by node
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  simgrid::s4u::BarrierPtr barrier;
  double alpha = 0.0; // slowest ring-neighbour route latency
  // Replica folding (see simulation.hpp): the job has more identical nodes than are simulated. The
  // simulated ranks' flows load their links as in the whole job; the formulas use the job's counts.
  int job_ranks = 0;  // 0: the simulated ranks are the whole job
  int job_nodes = 0;
  double ring_size() const { return job_ranks > 0 ? job_ranks : static_cast<double>(ranks.size()); }
  double node_count() const { return job_nodes > 0 ? job_nodes : nodes; }

  // Computed by finalize():
  int nodes = 1, per_node = 1;              // hierarchical layout (m x g)
  std::vector<int> local_next, remote_next; // hierarchical neighbours (rank indices)
  double alpha_intra = 0.0, beta_intra = 0.0, alpha_inter = 0.0, beta_inter = 0.0;
  std::array<std::vector<TreeNode>, 2> trees;
  int tree_depth = 0, tree_degree = 0;
  double alpha_tree = 0.0, beta_tree = 0.0;
  simgrid::s4u::Host* server = nullptr;     // parameter server (first node's CPU)
  simgrid::s4u::Host* server_ram = nullptr; // its RAM bus
  double alpha_ps = 0.0, beta_ps = 0.0, ram_bandwidth = 0.0;

  // Computes latencies and bandwidths, creates the barrier; throws InputError
  // when the algorithm needs a route the platform does not have.
  void finalize();
  // Closed-form time of one ring all-reduce of `bytes` without contention.
  double ring_time(double bytes) const;
  // Closed-form time of one all-reduce of `bytes` with the chosen algorithm, without contention.
  double closed_form_time(double bytes) const;
};

// One rank's NCCL-like communicator. Buckets are reduced one after another, in submission order, by
// the rank's communicator actor while the trainer computes; a bucket submitted just before the trainer
// waits, with the actor idle, has nothing to overlap with and is reduced by the waiting trainer itself
// (the same flows at the same times, without handing it to the actor and back).
class Communicator {
public:
  Communicator(CollectiveGroup* group, int rank);

  void start();               // creates the actor that runs buckets (a daemon)
  void submit(double bytes);  // trainer: this bucket's gradients are ready (held until hand_over())
  void hand_over();           // trainer: about to compute or block: the actor reduces the held buckets
  void wait_all();            // trainer: blocks until every submitted bucket is reduced

private:
  void run();
  void reduce(double bytes); // one bucket, in the calling actor; records its span
  void ring(double bytes);
  void hierarchical(double bytes);
  void tree(double bytes);
  void parameter_server(double bytes);
  // Sends `bytes` to rank `to`, waits for every rank, then sleeps `extra_latency`.
  void step(int to, double bytes, double extra_latency);

  CollectiveGroup* group_;
  int rank_;
  std::vector<double> held_;   // submitted, not yet handed to the actor
  std::deque<double> buckets_; // handed to the actor
  simgrid::s4u::SemaphorePtr ready_;
  simgrid::s4u::SemaphorePtr done_;
  long handed_ = 0;   // buckets handed to the actor
  long finished_ = 0; // of those, reduced
  long waited_ = 0;   // of those, waited for by the trainer
  uint32_t track_ = 0, span_name_ = 0, category_ = 0;
};

} // namespace mlsim
