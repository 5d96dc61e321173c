#include "sim/pipeline/collective.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace mlsim {

void CollectiveGroup::finalize() {
  size_t n = ranks.size();
  alpha = 0.0;
  for (size_t i = 0; n > 1 && i < n; ++i)
    alpha = std::max(alpha, platform->route_capacity(ranks[i], ranks[(i + 1) % n]).second);
  barrier = sg4::Barrier::create(static_cast<unsigned>(n));
}

double CollectiveGroup::ring_time(double bytes) const {
  size_t n = ranks.size();
  if (n < 2)
    return 0.0;
  double beta = 1e300;
  for (size_t i = 0; i < n; ++i)
    beta = std::min(beta, platform->route_capacity(ranks[i], ranks[(i + 1) % n]).first);
  double k = static_cast<double>(n);
  return 2.0 * (k - 1.0) * alpha + 2.0 * (k - 1.0) / k * bytes / beta;
}

Communicator::Communicator(CollectiveGroup* group, int rank)
    : group_(group), rank_(rank), ready_(sg4::Semaphore::create(0)), done_(sg4::Semaphore::create(0)) {}

void Communicator::start() {
  if (group_->ranks.size() < 2)
    return;
  sg4::Host* host = group_->ranks[static_cast<size_t>(rank_)];
  sg4::Actor::create(host->get_name() + ".nccl", host, [this] { run(); })->daemonize();
}

void Communicator::submit(double bytes) {
  ++submitted_;
  if (group_->ranks.size() < 2) {
    done_->release();
    return;
  }
  buckets_.push_back(bytes);
  ready_->release();
}

void Communicator::wait_all() {
  for (; waited_ < submitted_; ++waited_)
    done_->acquire();
}

void Communicator::run() {
  size_t n = group_->ranks.size();
  double k = static_cast<double>(n);
  auto* rec = group_->recorder;
  uint32_t track = rec->intern(group_->ranks[static_cast<size_t>(rank_)]->get_name() + "/allreduce");
  uint32_t name = rec->intern("ring all-reduce");
  uint32_t cat = rec->intern("collective");
  sg4::Host* self = group_->ranks[static_cast<size_t>(rank_)];
  sg4::Host* next = group_->ranks[(static_cast<size_t>(rank_) + 1) % n];
  for (;;) {
    ready_->acquire();
    double bytes = buckets_.front();
    buckets_.pop_front();
    group_->barrier->wait();
    double t0 = sg4::Engine::get_clock();
    group_->platform->transfer(self, next, 2.0 * (k - 1.0) / k * bytes)->wait();
    group_->barrier->wait();
    sg4::this_actor::sleep_for((2.0 * (k - 1.0) - 1.0) * group_->alpha);
    rec->span(track, name, cat, t0, sg4::Engine::get_clock());
    done_->release();
  }
}

} // namespace mlsim
