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
// Scheduler tick: 1 / CONFIG_HZ of the running kernel, read from its build
//   configuration (/proc/config.gz, else /boot/config-<release>): the CPU's
//   balance_interval (sim/hardware/cpu_scheduler.hpp).
// Ignores: NUMA, transparent huge pages, queue depths > 1, write bandwidth.
#pragma once

#include "sim/validate/profile.hpp"

#include <string>

namespace mlsim::validate {

RamProfile measure_ram(int reps, int cores);
DiskProfile measure_disk(const std::string& dir, int reps, bool quick);
StageCost measure_host_gemm(int reps, int cores, bool quick);
// 1 / CONFIG_HZ in seconds; 0 when the kernel's configuration cannot be read.
double kernel_tick_s();
// Runs one Eigen n x n x n float product; returns a value so the work is kept.
float host_gemm_once(int n);

} // namespace mlsim::validate
