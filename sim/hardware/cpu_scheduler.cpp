#include "sim/hardware/cpu_scheduler.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/hardware/platform.hpp"

#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace mlsim {

CpuScheduler::CpuScheduler(sg4::Host* pool, const CpuSpec& spec) : pool_(pool) {
  if (spec.scheduling == CpuScheduling::per_core)
    cores_ = std::make_unique<CoreServer>(spec, pool);
}

void CpuScheduler::run(Seconds core_seconds) { run(core_seconds, sg4::this_actor::get_pid()); }

void CpuScheduler::run(Seconds core_seconds, long thread) {
  if (cores_) { // no work: at once (a core the thread held is given back)
    cores_->run(core_seconds, thread);
    return;
  }
  if (!(core_seconds.value() > 0))
    return;
  // fair: one pool of cores, SimGrid's multi-core sharing (platform.cpp sets its co-running slowdown)
  sg4::ExecPtr exec = sg4::Exec::init();
  exec->set_flops_amount(core_seconds.value() * kWorkPerSecond);
  exec->set_host(pool_)->start();
  exec->wait();
}

void CpuScheduler::submit(Seconds core_seconds, long thread, Completion done) {
  if (!cores_)
    throw InternalError("the fair CPU policy runs execs: its work needs an actor that waits (run())");
  cores_->submit(core_seconds, thread, std::move(done));
}

long CpuScheduler::new_thread() { return cores_ ? cores_->new_thread() : 0; }

void CpuScheduler::keeps_core(long thread) {
  if (cores_)
    cores_->keeps_core(thread);
}

} // namespace mlsim
