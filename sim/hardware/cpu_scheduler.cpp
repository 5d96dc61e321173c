#include "sim/hardware/cpu_scheduler.hpp"

#include "sim/hardware/platform.hpp"

#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace mlsim {

CpuScheduler::CpuScheduler(sg4::Host* pool, const CpuSpec& spec) : pool_(pool) {
  if (spec.scheduling == CpuScheduling::per_core)
    cores_ = std::make_unique<CoreServer>(spec, pool);
}

void CpuScheduler::run(Seconds core_seconds) {
  if (!(core_seconds.value() > 0))
    return;
  if (cores_) {
    cores_->run(core_seconds);
    return;
  }
  // fair: one pool of cores, SimGrid's multi-core sharing (platform.cpp sets its co-running slowdown)
  sg4::ExecPtr exec = sg4::Exec::init();
  exec->set_flops_amount(core_seconds.value() * kWorkPerSecond);
  exec->set_host(pool_)->start();
  exec->wait();
}

} // namespace mlsim
