// Host memory, storage and host-compute measurements.
//
// memcpy bandwidth: bytes copied per second for 64 MiB buffers (far beyond
//   the L2), one thread and one thread per core at once.
// Disk: a file of incompressible data in the calibration cache directory,
//   page cache dropped before each pass; sequential = 1 MiB read() calls,
//   random = 4 KiB pread() at random aligned offsets, queue depth 1, so
//   latency = 1 / IOPS.
// Host GEMM: Eigen float n x n x n products on one thread (the CPU validate
//   consumer), fitted to time = a + b * FLOP.
// Balance delay (cpu.balance_delay, sim/hardware/cpu_scheduler.hpp): cores + 1
//   CPU-bound threads, so one core runs two; a thread alone on its core
//   sleeps 40 ms and the time until the kernel moves one of the two waiting
//   threads onto the idle core is one trial, capped at 40 ms when none moves
//   (on a shared host another tenant's thread took the core: the job's
//   threads wait that out too, so the trial counts at the cap). The median is
//   robust to a minority of such trials; p10, p90, the spread and the number
//   capped are reported with it (with most trials capped the median is the
//   cap: a busy host, not the kernel's delay). On the 2-core development VM (kernel 6.18, HZ 250):
//   p10 ~1 ms, median ~10 ms, p90 ~12 ms.
// Busy wake delay (cpu.busy_wake_delay, cpu_scheduler.hpp): a thread pinned to one core sleeps 4 ms again
//   and again, in blocks that alternate between the core idle and the core running a spinning thread
//   (pinned there too, same priority). Each busy trial's oversleep less the median idle oversleep is
//   one trial: how long a waking thread waits for a core that another thread is running. The median is
//   the figure (p10, p90 and the spread reported with it). On the 2-core development VM (kernel 6.18,
//   EEVDF, HZ 250), quiet: 0 ms (p90 0 as well: the woken thread preempts the spinner at once); with
//   other tenants at a load average of 8, a Python probe of the same saw ~3 ms (p90 ~5.5 ms).
// Ignores: NUMA, transparent huge pages, queue depths > 1, write bandwidth.
#pragma once

#include "sim/validate/profile.hpp"
#include "sim/validate/stats.hpp"

#include <string>

namespace mlsim::validate {

RamProfile measure_ram(int reps, int cores);
DiskProfile measure_disk(const std::string& dir, int reps, bool quick);
StageCost measure_host_gemm(int reps, int cores, bool quick);
// The kernel's delay in moving a queued thread to a core that went idle; nothing on one core.
CpuProfile::DelayStats measure_balance_delay(int trials, int cores);
// The trials' summary (see above): `delays` in seconds, a trial at `hold_s` or more is capped.
CpuProfile::DelayStats summarise_balance_delay(const std::vector<double>& delays, double hold_s);
// The delay of a thread waking on a core that another thread runs (see above); nothing where the
// process may not pin threads.
CpuProfile::DelayStats measure_busy_wake_delay(int trials);
// The trials' summary: each busy oversleep less the median idle oversleep, at least 0 (seconds).
CpuProfile::DelayStats summarise_wake_delay(const std::vector<double>& busy, const std::vector<double>& idle);
// Runs one Eigen n x n x n float product; returns a value so the work is kept.
float host_gemm_once(int n);

} // namespace mlsim::validate
