// Shared-core efficiency of the C++ loader (cpu.shared_core_efficiency, sim/hardware/cpu.hpp).
//
//   s(k) = R_k / R_1,   R_k = samples / thread CPU seconds of k loader threads pinned to one core
//   (mean over rounds), at most 1 (a ratio above 1 is noise).
// A core that switches among k threads gets less done than one running one: each thread's decoded
// frames and sample buffers evict the others' from the core's caches at every switch. The threads
// run the loader's own batch builder (loader_batch.hpp, the code `mlsim validate`'s loader threads
// run) over the calibration sweep, k in the order 1 2 3 3 2 1 (a drift of the host cancels in the
// pairs) after an untimed round of one. CPU time, not wall time: time other tenants take from the core does not count. The PyTorch
// client measures the same with processes (pytorch_loader_bench.py, measure_shared_core); both fit
// here.
// Ignores: k > 3 (the scheduler uses the last entry beyond), SMT siblings, which core is used (the
// first of the process's affinity set).
#pragma once

#include "sim/validate/calib_dataset.hpp"

#include <map>
#include <string>
#include <vector>

namespace mlsim::validate {

// Samples per CPU-second of each round, by the number of threads (or processes) sharing the core.
using SharedCoreRates = std::map<int, std::vector<double>>;

// Rounds of `seconds` each over the sweep images of `images`.
SharedCoreRates measure_shared_core(const std::vector<CalibImage>& images, double seconds);

// s(k) for k = 2, 3, ... while measured; empty when k = 1 was not.
std::vector<double> fit_shared_core(const SharedCoreRates& rates);

// "2 threads 0.982, 3 threads 0.969" (`unit`: threads or processes), or "not measured".
std::string describe_shared_core(const std::vector<double>& efficiency, const std::string& unit);

} // namespace mlsim::validate
