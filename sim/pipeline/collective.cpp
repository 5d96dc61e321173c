#include "sim/pipeline/collective.hpp"

#include "sim/core/base/engine.hpp"

#include "sim/core/base/errors.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace sg4 = simgrid::s4u;

namespace mlsim {

namespace {

// ncclGetBtree: the parent and children of `rank` in the binary tree built on the lowest set bit.
TreeNode btree(int n, int rank) {
  TreeNode t;
  int bit = 1;
  while (bit < n && !(bit & rank))
    bit <<= 1;
  if (rank == 0) {
    if (n > 1)
      t.children[1] = bit >> 1;
    return t;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n)
    up = rank ^ bit;
  t.parent = up;
  int low = bit >> 1;
  if (low > 0) {
    t.children[0] = rank - low;
    int down = rank + low;
    while (low > 0 && down >= n) {
      low >>= 1;
      down = rank + low;
    }
    t.children[1] = low > 0 ? down : -1;
  }
  return t;
}

int depth_of(const std::vector<TreeNode>& tree, int rank) {
  int d = 0;
  for (int r = rank; tree[static_cast<size_t>(r)].parent >= 0; r = tree[static_cast<size_t>(r)].parent)
    ++d;
  return d;
}

// Route latency and bottleneck bandwidth; an InputError when the platform has no route for this pair.
std::pair<double, double> route(const CollectiveGroup& g, sg4::Host* a, sg4::Host* b) {
  try {
    auto [bw, lat] = g.platform->route_capacity(a, b);
    return {lat, bw};
  } catch (const std::out_of_range&) {
    throw InputError("", "distribution.algorithm", "an algorithm whose rank pairs the platform connects",
                     "'" + to_string(g.algorithm) + "', which needs a route " + a->get_name() + " -> " +
                         b->get_name() + " (across nodes the platform routes GPUs only between ring neighbours and equal local indices, and no "
                         "GPU to another node's CPU)");
  }
}

} // namespace

std::array<std::vector<TreeNode>, 2> double_binary_tree(int n) {
  std::array<std::vector<TreeNode>, 2> t;
  t[0].resize(static_cast<size_t>(n));
  t[1].resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    t[0][static_cast<size_t>(r)] = btree(n, r);
  // The second tree: mirrored (n even) or shifted by one (n odd), so a leaf of one is interior in the other.
  auto map = [n](int r) { return n % 2 == 0 ? n - 1 - r : (r + 1) % n; };
  for (int r = 0; r < n; ++r) {
    int src = n % 2 == 0 ? n - 1 - r : (r - 1 + n) % n;
    TreeNode b = btree(n, src);
    TreeNode& out = t[1][static_cast<size_t>(r)];
    out.parent = b.parent < 0 ? -1 : map(b.parent);
    for (int c = 0; c < 2; ++c)
      out.children[static_cast<size_t>(c)] = b.children[static_cast<size_t>(c)] < 0 ? -1 : map(b.children[static_cast<size_t>(c)]);
  }
  return t;
}

void CollectiveGroup::finalize() {
  size_t n = ranks.size();
  alpha = 0.0;
  barrier = sg4::Barrier::create(static_cast<unsigned>(std::max<size_t>(n, 1)));
  if (n < 2)
    return;
  if (algorithm == CollectiveAlgorithm::ring)
    for (size_t i = 0; i < n; ++i)
      alpha = std::max(alpha, route(*this, ranks[i], ranks[(i + 1) % n]).first);

  if (algorithm == CollectiveAlgorithm::hierarchical) {
    // Node and local index of every rank, from the platform's trainer nodes.
    std::map<const sg4::Host*, std::pair<int, int>> where;
    std::map<int, const NodeInstance*> node_of;
    auto& trainers = platform->trainers();
    for (size_t ni = 0; ni < trainers.size(); ++ni)
      for (size_t k = 0; k < trainers[ni].accelerators.size(); ++k) {
        where[trainers[ni].accelerators[k]] = {static_cast<int>(ni), static_cast<int>(k)};
        node_of[static_cast<int>(ni)] = &trainers[ni];
      }
    std::map<int, std::map<int, int>> by_node; // node -> local index -> rank
    for (size_t r = 0; r < n; ++r) {
      auto [node, local] = where.at(ranks[r]);
      by_node[node][local] = static_cast<int>(r);
    }
    nodes = static_cast<int>(by_node.size());
    per_node = static_cast<int>(by_node.begin()->second.size());
    for (const auto& [node, locals] : by_node)
      if (static_cast<int>(locals.size()) != per_node)
        throw InputError("", "distribution.algorithm", "the same number of ranks on every node for 'hierarchical'",
                         "nodes with " + std::to_string(per_node) + " and " + std::to_string(locals.size()));
    std::vector<int> node_ids;
    for (const auto& kv : by_node)
      node_ids.push_back(kv.first);
    local_next.assign(n, 0);
    remote_next.assign(n, 0);
    beta_intra = beta_inter = 1e300;
    for (size_t ni = 0; ni < node_ids.size(); ++ni) {
      const auto& locals = by_node[node_ids[ni]];
      const auto& next_node = by_node[node_ids[(ni + 1) % node_ids.size()]];
      std::vector<int> ordered;
      for (const auto& kv : locals)
        ordered.push_back(kv.second);
      for (size_t k = 0; k < ordered.size(); ++k) {
        int r = ordered[k];
        local_next[static_cast<size_t>(r)] = ordered[(k + 1) % ordered.size()];
        remote_next[static_cast<size_t>(r)] = std::next(next_node.begin(), static_cast<long>(k))->second;
        if (per_node > 1) {
          auto [lat, bw] = route(*this, ranks[static_cast<size_t>(r)], ranks[static_cast<size_t>(local_next[static_cast<size_t>(r)])]);
          alpha_intra = std::max(alpha_intra, lat);
          beta_intra = std::min(beta_intra, bw);
        }
        if (nodes > 1) {
          auto [lat, bw] = route(*this, ranks[static_cast<size_t>(r)], ranks[static_cast<size_t>(remote_next[static_cast<size_t>(r)])]);
          alpha_inter = std::max(alpha_inter, lat);
          beta_inter = std::min(beta_inter, bw);
        }
      }
      // The node's g cross-node flows share its NIC.
      if (nodes > 1)
        if (const LinkInfo* nic = platform->find_link(node_of.at(node_ids[ni])->name + ".nic"))
          beta_inter = std::min(beta_inter, nic->capacity / per_node);
    }
  }

  if (algorithm == CollectiveAlgorithm::tree) {
    trees = double_binary_tree(static_cast<int>(n));
    beta_tree = 1e300;
    tree_depth = tree_degree = 0;
    for (int r = 0; r < static_cast<int>(n); ++r) {
      int degree = 0;
      for (const auto& tree : trees) {
        const TreeNode& t = tree[static_cast<size_t>(r)];
        tree_depth = std::max(tree_depth, depth_of(tree, r));
        for (int peer : {t.parent, t.children[0], t.children[1]}) {
          if (peer < 0)
            continue;
          ++degree;
          auto [lat, bw] = route(*this, ranks[static_cast<size_t>(r)], ranks[static_cast<size_t>(peer)]);
          alpha_tree = std::max(alpha_tree, lat);
          beta_tree = std::min(beta_tree, bw);
        }
      }
      tree_degree = std::max(tree_degree, degree);
    }
  }

  if (algorithm == CollectiveAlgorithm::parameter_server) {
    NodeInstance& first = platform->trainers().front();
    server = first.cpu;
    server_ram = first.ram_bus;
    ram_bandwidth = server_ram->get_speed();
    beta_ps = 1e300;
    for (auto* h : ranks) {
      auto [lat, bw] = route(*this, h, server);
      alpha_ps = std::max(alpha_ps, lat);
      beta_ps = std::min(beta_ps, bw);
      route(*this, server, h);
    }
  }
}

double CollectiveGroup::ring_time(double bytes) const {
  size_t n = ranks.size();
  if (n < 2)
    return 0.0;
  double a = 0.0, beta = 1e300;
  for (size_t i = 0; i < n; ++i) {
    auto [lat, bw] = route(*this, ranks[i], ranks[(i + 1) % n]);
    a = std::max(a, lat);
    beta = std::min(beta, bw);
  }
  double k = ring_size();
  return 2.0 * (k - 1.0) * a + 2.0 * (k - 1.0) / k * bytes / beta;
}

double CollectiveGroup::closed_form_time(double bytes) const {
  double n = static_cast<double>(ranks.size());
  if (ranks.size() < 2)
    return 0.0;
  switch (algorithm) {
  case CollectiveAlgorithm::ring: return ring_time(bytes);
  case CollectiveAlgorithm::hierarchical: {
    double g = per_node, m = node_count(), t = 0.0;
    if (per_node > 1)
      t += 2.0 * (g - 1.0) * alpha_intra + 2.0 * (g - 1.0) / g * bytes / beta_intra;
    if (m > 1)
      t += 2.0 * (m - 1.0) * alpha_inter + 2.0 * (m - 1.0) / m * (bytes / g) / beta_inter;
    return t;
  }
  case CollectiveAlgorithm::tree:
    return 2.0 * tree_depth * alpha_tree + tree_degree * (bytes / 2.0) / beta_tree;
  case CollectiveAlgorithm::parameter_server:
    return 2.0 * (alpha_ps + bytes / beta_ps) + (n + 1.0) * bytes / ram_bandwidth;
  }
  return 0.0;
}

Communicator::Communicator(CollectiveGroup* group, int rank)
    : group_(group), rank_(rank), ready_(sg4::Semaphore::create(0)), done_(sg4::Semaphore::create(0)) {}

void Communicator::start() {
  if (group_->ranks.size() < 2)
    return;
  sg4::Host* host = group_->ranks[static_cast<size_t>(rank_)];
  auto* rec = group_->recorder;
  track_ = rec->intern(host->get_name() + "/allreduce");
  span_name_ = rec->intern(to_string(group_->algorithm) + " all-reduce");
  category_ = rec->intern("collective");
  spawn_actor(host->get_name() + ".nccl", host, [this] { run(); })->daemonize();
}

void Communicator::submit(double bytes) {
  if (group_->ranks.size() >= 2) // alone: nothing to reduce
    held_.push_back(bytes);
}

void Communicator::hand_over() {
  for (double bytes : held_) {
    buckets_.push_back(bytes);
    ++handed_;
    ready_->release();
  }
  held_.clear();
}

void Communicator::wait_all() {
  if (!held_.empty() && finished_ == handed_) { // the actor is idle: reduce them here
    for (double bytes : held_)
      reduce(bytes);
    held_.clear();
  }
  hand_over();
  for (; waited_ < handed_; ++waited_)
    done_->acquire();
}

void Communicator::step(int to, double bytes, double extra_latency) {
  const auto& ranks = group_->ranks;
  if (bytes > 0)
    group_->platform->transfer(ranks[static_cast<size_t>(rank_)], ranks[static_cast<size_t>(to)], Bytes(bytes))->wait();
  group_->barrier->wait();
  if (extra_latency > 0)
    sg4::this_actor::sleep_for(extra_latency);
}

void Communicator::ring(double bytes) {
  double k = group_->ring_size();
  int next = (rank_ + 1) % static_cast<int>(group_->ranks.size());
  step(next, 2.0 * (k - 1.0) / k * bytes, (2.0 * (k - 1.0) - 1.0) * group_->alpha);
}

void Communicator::hierarchical(double bytes) {
  const CollectiveGroup& g = *group_;
  double local = g.per_node, m = g.node_count();
  size_t r = static_cast<size_t>(rank_);
  if (g.per_node > 1) // reduce-scatter inside the node: each rank ends with 1/g of the sum
    step(g.local_next[r], (local - 1.0) / local * bytes, (local - 2.0) * g.alpha_intra);
  if (m > 1) // ring all-reduce of that 1/g across the nodes
    step(g.remote_next[r], 2.0 * (m - 1.0) / m * bytes / local, (2.0 * (m - 1.0) - 1.0) * g.alpha_inter);
  if (g.per_node > 1) // all-gather inside the node
    step(g.local_next[r], (local - 1.0) / local * bytes, (local - 2.0) * g.alpha_intra);
}

void Communicator::tree(double bytes) {
  const CollectiveGroup& g = *group_;
  sg4::Host* self = g.ranks[static_cast<size_t>(rank_)];
  // Pipelined reduce (to the parent) and broadcast (to the children) of S/2 in each tree, all at once.
  std::vector<sg4::CommPtr> flows;
  for (const auto& tree : g.trees) {
    const TreeNode& t = tree[static_cast<size_t>(rank_)];
    for (int peer : {t.parent, t.children[0], t.children[1]})
      if (peer >= 0)
        flows.push_back(g.platform->transfer(self, g.ranks[static_cast<size_t>(peer)], Bytes(bytes / 2.0)));
  }
  for (auto& f : flows)
    f->wait();
  g.barrier->wait();
  sg4::this_actor::sleep_for((2.0 * g.tree_depth - 1.0) * g.alpha_tree);
}

void Communicator::parameter_server(double bytes) {
  const CollectiveGroup& g = *group_;
  sg4::Host* self = g.ranks[static_cast<size_t>(rank_)];
  double n = static_cast<double>(g.ranks.size());
  g.platform->transfer(self, g.server, Bytes(bytes))->wait(); // push gradients
  g.barrier->wait();
  if (rank_ == 0) // the server sums n gradients: a memory-bound pass over them
    sg4::this_actor::exec_init((n + 1.0) * bytes)->set_host(g.server_ram)->wait();
  g.barrier->wait();
  g.platform->transfer(g.server, self, Bytes(bytes))->wait(); // pull the result
  g.barrier->wait();
}

void Communicator::reduce(double bytes) {
  group_->barrier->wait();
  double t0 = sg4::Engine::get_clock();
  switch (group_->algorithm) {
  case CollectiveAlgorithm::ring: ring(bytes); break;
  case CollectiveAlgorithm::hierarchical: hierarchical(bytes); break;
  case CollectiveAlgorithm::tree: tree(bytes); break;
  case CollectiveAlgorithm::parameter_server: parameter_server(bytes); break;
  }
  group_->recorder->span(track_, span_name_, category_, t0, sg4::Engine::get_clock());
}

void Communicator::run() {
  for (;;) {
    ready_->acquire();
    double bytes = buckets_.front();
    buckets_.pop_front();
    reduce(bytes);
    ++finished_;
    done_->release();
  }
}

} // namespace mlsim
