// The real end-to-end job of `mlsim validate`: real files, real decode and
// augmentation on loader threads, a bounded prefetch queue, a real consumer.
//
// Measures, over `measured` steps after `warmup` steps:
//   throughput  = samples consumed / window (window: from the end of the last
//                 warm-up step to the end of the last measured step),
//   stall share = time the consumer waited on the queue / window,
//   step time   = interval between the ends of consecutive steps (mean, p50),
// and the CPU time other processes used meanwhile (from /proc/stat minus this
// process), so a run disturbed by other tenants can be recognised.
// Ignores: file order effects (inputs cycle in a fixed stride), epoch boundaries.
#pragma once

#include "sim/validate/gpu/gpu_bench.hpp"
#include "sim/validate/job_config.hpp"

namespace mlsim::validate {

struct Measured {
  double throughput = 0.0;          // samples/s
  double stall = 0.0;               // consumer wait / window
  double step_time_s = 0.0;         // mean
  double step_p50_s = 0.0;
  double consumer_compute_s = 0.0;  // mean wall time of one consumer step (without the wait)
  double other_cpu_cores = 0.0;     // cores' worth of CPU used by other processes in the window
  double self_cpu_cores = 0.0;      // cores' worth of CPU this job used in the window
  // Minor page faults of the job's processes in the window per sample loaded (-1: not measured): on a host
  // whose faults are costly, what makes the same configuration run at another speed from one run to the
  // next (cpu.hpp FreshPages).
  double faults_per_sample = -1.0;
  double window_s = 0.0;
  int steps = 0;
};

struct RunLength {
  int warmup = 3;
  int measured = 12;
};

// Runs the job; `gpu` (may be null) is the GPU consumer when cfg.gpu is set.
Measured run_loader_job(const JobConfig& cfg, const JobInputs& in, const RunLength& len, GpuGemmStack* gpu);

// Cores' worth of busy CPU time on the whole machine since the last call's snapshot.
struct CpuSnapshot {
  double busy_s = 0.0, self_s = 0.0, wall_s = 0.0, minor_faults = 0.0;
};
CpuSnapshot cpu_snapshot();

// Whether the kernel schedules by session groups (/proc/sys/kernel/sched_autogroup_enabled = 1).
bool autogroup_scheduling();

} // namespace mlsim::validate
