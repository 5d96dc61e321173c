// CPU of one node: cores shared by concurrent work, slowed by co-running.
//
//   n of the node's c cores busy: each runs at  v * e(n),
//   e(n) = 1 - (1 - E) * (n - 1) / (c - 1)   for 1 <= n <= c   (e(1) = 1, e(c) = E),
//   the host's capacity is  min(n, c) * v * e(min(n, c)),  shared fairly among the n execs,
//   each exec capped at one core (v).
// with v = core_speed and E = all_cores_efficiency (default 1: no slowdown).
// Which execs share which core: `scheduler` (cpu_scheduler.hpp): per_core run
// queues as Linux keeps them (default), or one fair pool.
// Why: cores of one socket share the last-level cache and the memory bandwidth,
// and the turbo frequency falls as more cores are active, so a core does less
// work per second when its neighbours are busy. `mlsim calibrate` measures E as
// a stage's per-core speed with every core running it at once, relative to one
// core alone. Linear in n is the simplest curve through the two measured ends;
// the real curve depends on the workload (memory-bound stages saturate early,
// compute-bound ones stay near 1 until the frequency steps) and is not measured.
// One E per CPU: all work on the host slows alike, whatever mix of stages runs.
// Implemented with SimGrid's non-linear host sharing policy (platform.cpp).
//
// Work is measured in core-seconds on the reference machine (the one the
// stage costs were calibrated on); a core of this CPU does `core_speed`
// reference core-seconds per second. SimGrid's multi-core host shares cores
// fairly: k busy workers on c cores each progress at min(1, c/k) of a core
// (times e(min(k, c)) above).
// Host fp16 arithmetic is emulated in software on most CPUs: work that
// produces float16 costs `fp16_emulation_factor` times its fp32 cost.
// A core switching among n >= 2 threads gets shared_core_efficiency(n) of its work done
// (cpu_scheduler.hpp): each thread's data evict the others' from the core's caches.
// Ignores: SMT, NUMA, per-stage differences in co-running slowdown, a slow-down
// from other tenants' threads (only this node's simulated execs count as busy
// cores); memory bandwidth as a transfer limit is the RAM model's.
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"

#include <map>
#include <string>
#include <vector>

namespace mlsim {

// How the node's cores are shared among runnable work (cpu_scheduler.hpp).
enum class CpuScheduling {
  per_core, // Linux-like: a run queue per core, threads balanced by count, not rotated (default)
  fair,     // one pool: n runnable pieces on c cores get min(1, c/n) of a core each
};
template <> struct EnumNames<CpuScheduling> {
  static constexpr std::array<std::pair<CpuScheduling, std::string_view>, 2> table{{
      {CpuScheduling::per_core, "per_core"}, {CpuScheduling::fair, "fair"}}};
};

// A calibrated per-sample cost: per_sample + per_byte * bytes + per_pixel * pixels (core-seconds).
struct StageCost {
  Seconds per_sample{0.0};
  Seconds per_byte{0.0};
  Seconds per_pixel{0.0};

  Seconds for_sample(double bytes, double pixels) const {
    return per_sample + per_byte * bytes + per_pixel * pixels;
  }
};

struct CpuSpec {
  std::string name = "cpu";
  int cores = 1;
  double core_speed = 1.0;
  double fp16_emulation_factor = 1.0;
  // Per-core speed with all cores busy / with one busy, in (0, 1] (see the formula above).
  double all_cores_efficiency = 1.0;
  // One reference core's dense fp32 matmul rate, for host-placed ops. The default is of the order a
  // single-thread Eigen GEMM reaches on a current x86 core (mlsim calibrate measures it: host_gemm_fp32).
  FlopsPerSec core_flops{32e9};
  std::map<std::string, StageCost> stage_costs; // from calibration profiles
  CpuScheduling scheduling = CpuScheduling::per_core; // `scheduler: per_core | fair`
  // per_core: how long after running dry a core takes queued work from a busier one (cpu_scheduler.hpp;
  // mlsim calibrate measures it). 0: at once.
  Seconds balance_delay{4e-3};
  // per_core: how long a thread that wakes while every core runs work waits before it shares a core
  // (cpu_scheduler.hpp; mlsim calibrate measures it). 0 (default): it shares at once.
  Seconds busy_wake_delay{0.0};
  // per_core: the work a core gets done while it switches among n >= 2 threads, relative to one thread
  // alone (their data evict each other from the core's caches): entry n - 2 for n threads, the last
  // entry for more (cpu_scheduler.hpp; mlsim calibrate --client pytorch measures it). Empty: 1.
  std::vector<double> shared_core_efficiency;
};

// The factor above for n threads on one core (1 for n <= 1 or when not set).
double shared_core_factor(const CpuSpec& cpu, size_t threads);

// e(n) above: the per-core speed factor with n of the CPU's cores busy (n clamped to [1, cores]).
double corunning_efficiency(const CpuSpec& cpu, int busy);

} // namespace mlsim
