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

// The pages a stage maps fresh per sample, and so faults one by one, against its input's pixels and the
// loader's batch size: measured at a few of each (`mlsim calibrate --client pytorch`, inside a DataLoader
// worker). In pixels piecewise linear between the measured sizes, the first size's count below them and
// proportional to the pixels above the last (a buffer's pages grow with its pixels); in batch size linear
// in log2(batch) between the measured batches, the nearest one outside them. Why a table and not a slope:
// an image buffer that the C allocator maps for each image (above its mmap threshold) or takes back from
// the kernel after the heap's free top was returned (past the trim threshold) is faulted in afresh, one
// reused from the heap is not; both thresholds move with what the process allocated and freed before,
// and the worker's live samples (a batch of them until the collate) keep the heap's top in use. The count
// steps with the size and the batch, and moves between processes: on the 2-core development VM a worker
// loading 1024x768 JPEGs faulted ~1,500 / ~340 / ~390 / 0 pages per sample at batch 4 / 8 / 16 / 32, and
// 340-730 at batch 8 in three processes. The table is a central figure, not an exact one.
// Launches: the same table as each calibration process measured it (`pages`: over all their points). The
// counts move from run to run and, as much, between the worker processes of one run (each forked worker's
// allocator follows what it allocated and freed), so a job's speed moves from launch to launch
// (`cpu.launch: k` simulates launch k's counts for every worker, `cpu.launch: [k0, k1, ...]` one per worker
// process; `mlsim validate --client pytorch` predicts every multiset of launches for its workers and takes
// the weighted mean, which is not the run at the mean counts where a job sits near its balance point:
// throughput is min(device rate, loader rate), concave in the loader's cost, and a round-robin loader goes
// at its slowest worker's pace).
// Keyed by the source image (`pixels_of: source`): the table's pixels are the sample's stored image
// (the dataset's width x height, decode's input), not the stage's own input. Why: after a crop every
// stage sees 224x224, but whether its output buffer is faulted in afresh depends on what the worker
// allocated and freed before it in the same sample, and the largest of those is the decoded image. In
// one worker at batch 8 on the development VM, ToTensor faulted 0 pages a sample after 500x375 images
// and 35-82 after 960x720 to 2048x1536 ones; keyed by its own input, every size got their mean (43).
struct FreshPages {
  using Table = std::vector<std::vector<double>>; // a row per batch, an entry per pixel count
  std::vector<double> pixels;             // ascending
  std::vector<double> batches;            // ascending; empty: one row, whatever the batch
  Table pages;                            // per sample, the mean over every process's points
  std::vector<Table> launches;            // per launch, the same shape as pages (empty: one table)
  bool by_source = false;                 // pixels are the source image's (above), else the stage input's
  bool empty() const { return pixels.empty(); }
  double at(double px, double batch) const;
  // A sample's count: at its source image's pixels where the table is keyed so, else at the stage input's.
  double at_sample(double input_px, double source_px, double batch) const {
    return at(by_source ? source_px : input_px, batch);
  }
  // The one-row table of a loader whose batch is `batch` (its launches reduced alike).
  FreshPages for_batch(double batch) const;
  // The table of launch k alone (k < launches.size()).
  FreshPages of_launch(size_t k) const { return {pixels, batches, launches.at(k), {}, by_source}; }
};

// A stage's work (its cost less its page faults) after a source image of `pixels`, over its work as fitted:
// measured inside a DataLoader worker, one source size after another (`mlsim calibrate --client pytorch`),
// for a stage that sees one input size there (every transform after the crop: 224x224 whatever the
// file). Piecewise linear in the source's pixels between the measured sizes, flat outside them; x1 where
// the source is not known (a dataset without `image` dimensions), the single factor's mean.
// Why: such a stage's work in the loop grows with the image decoded before it in the same sample although
// its own input does not change. In one worker at batch 16 on the 2-core development VM (two processes):
// RandomHorizontalFlip 80-113 us a sample after 500x375 files, 146-184 after 1024x768, 258-307 after
// 1600x1200, 331-481 after 2048x1536 (~31 us timed alone); ToTensor 288-292 / 353-587 / 710-729 / 598-750;
// Normalize 206-340 (but x0.71-1.36 of its mean over one calibration's sweep). A single in-loop factor over
// the sweep's sizes (flip: 6.05) priced every file at the sweep's mean and overpriced small ones. The cause
// is not measured apart (candidates: the decoded frame's dirty cache lines written back as the later
// stages' writes evict them; TLB and allocator state after a frame of megabytes).
struct SourceScale {
  std::vector<double> pixels; // ascending: source images' pixels
  std::vector<double> scale;  // the work there over the fitted work (> 0)
  bool empty() const { return pixels.empty(); }
  double at(double source_px) const;
};

// A calibrated per-sample cost (core-seconds):
//   (per_sample + per_byte * bytes + per_pixel * pixels) * work_by_source(source pixels)
//     + page_fault * fresh_pages(pixels or source pixels)
// work_by_source: 1 without a table. page_fault: the host's time for one minor page fault
// (CpuSpec::page_fault); 0 without a table. The scenario loader reduces fresh_pages to its pipeline's batch
// size (FreshPages::for_batch).
struct StageCost {
  Seconds per_sample{0.0};
  Seconds per_byte{0.0};
  Seconds per_pixel{0.0};
  FreshPages fresh_pages;
  Seconds page_fault{0.0};
  SourceScale work_by_source;

  // `source_pixels`: the sample's stored image (FreshPages::by_source, work_by_source); the stage's input
  // where unknown.
  Seconds for_sample(double bytes, double pixels, double source_pixels) const {
    Seconds work = per_sample + per_byte * bytes + per_pixel * pixels;
    if (!work_by_source.empty() && source_pixels > 0) // unknown (no dataset image): the sweep's mean, x1
      work = work * work_by_source.at(source_pixels);
    if (fresh_pages.empty())
      return work;
    return work + page_fault * fresh_pages.at_sample(pixels, source_pixels, 0.0);
  }
  Seconds for_sample(double bytes, double pixels) const { return for_sample(bytes, pixels, pixels); }
  StageCost scaled(double k) const {
    return {per_sample * k, per_byte * k, per_pixel * k, fresh_pages, page_fault * k, work_by_source};
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
  // One minor page fault (a fresh page touched for the first time), the price of a stage cost's
  // fresh_pages (mlsim calibrate --client pytorch measures it). 0: not measured.
  Seconds page_fault{0.0};
  // `launch: [k0, k1, ...]`: worker processes draw their page faults apart (each forked worker's C
  // allocator moves its thresholds with what that worker freed: in a 2-worker DataLoader on the
  // development VM, 263 vs 424 and 306 vs 598 fresh pages a 1024x768 sample in one run). Worker j of a
  // loader (of each accelerator's loader, pytorch) gets launch k_(j mod n); the stage costs keep every
  // launch's table. Empty: one table for every worker (`launch: k`, or the mean without the key).
  std::vector<size_t> worker_launches;
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
