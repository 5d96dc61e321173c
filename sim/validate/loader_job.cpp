#include "sim/validate/loader_job.hpp"

#include "sim/validate/file_io.hpp"
#include "sim/validate/host_bench.hpp"
#include "sim/validate/loader_batch.hpp"
#include "sim/validate/prefetch_queue.hpp"
#include "sim/validate/stats.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <thread>

namespace mlsim::validate {

std::string JobConfig::label() const {
  if (client == "pytorch")
    return fmt::format("w{} b{} r{:.1f} {} {}", loader_threads, batch_size, step_ratio, image_set,
                       cores > 0 ? fmt::format("c{}", cores) : std::string("call"));
  return fmt::format("k{} d{} {} {}", loader_threads, prefetch_depth, consumer, image_set);
}

CpuSnapshot cpu_snapshot() {
  CpuSnapshot s;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  s.busy_s = (user + nice + system + irq + softirq) / tick;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  s.self_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  s.minor_faults = static_cast<double>(ru.ru_minflt);
  s.wall_s = now_s();
  return s;
}

bool autogroup_scheduling() {
  int enabled = 0;
  std::ifstream("/proc/sys/kernel/sched_autogroup_enabled") >> enabled;
  return enabled == 1;
}

namespace {
struct Batch {
  std::unique_ptr<float[]> data; // batch_size x 3 x side x side, collated
  size_t floats = 0;
  int index = 0;
};

// Batch `index`: files in a fixed stride through the set, a seed per batch (any loader thread may build it).
Batch build_batch(const JobConfig& cfg, const JobInputs& in, int index) {
  std::mt19937 rng(static_cast<unsigned>(index) * 2654435761u + 1);
  std::vector<const std::string*> files;
  for (int j = 0; j < cfg.batch_size; ++j)
    files.push_back(&in.files[(static_cast<size_t>(index) * cfg.batch_size + j) * 7 % in.files.size()]);
  LoaderBatch lb = build_loader_batch(files, cfg.out_side, rng, FlipPolicy::half, nullptr);
  return Batch{std::move(lb.data), lb.floats, index};
}
} // namespace

Measured run_loader_job(const JobConfig& cfg, const JobInputs& in, const RunLength& len, GpuGemmStack* gpu) {
  const int total = len.warmup + len.measured;
  PrefetchQueue<Batch> queue(static_cast<size_t>(cfg.prefetch_depth));
  std::atomic<int> next{0};
  std::vector<std::thread> loaders;
  for (int k = 0; k < cfg.loader_threads; ++k)
    loaders.emplace_back([&] {
      for (int id; (id = next.fetch_add(1)) < total + cfg.loader_threads * 2;)
        if (!queue.push(build_batch(cfg, in, id)))
          return;
    });

  std::vector<double> step_end(static_cast<size_t>(total)), waits(static_cast<size_t>(total)),
      computes(static_cast<size_t>(total));
  double window_start = 0.0;
  CpuSnapshot snap0, snap1;
  std::thread consumer([&] {
    volatile float sink = 0.f;
    for (int i = 0; i < total; ++i) {
      if (i == len.warmup) {
        snap0 = cpu_snapshot();
        window_start = now_s();
      }
      const double t0 = now_s();
      std::optional<Batch> b = queue.pop();
      const double t1 = now_s();
      if (!b)
        break;
      if (cfg.gpu && gpu) {
        gpu_gemm_stack_step(*gpu, b->data.get(), b->floats * sizeof(float));
      } else {
        float acc = b->data[0];
        for (int l = 0; l < cfg.consumer_layers; ++l)
          acc += host_gemm_once(cfg.gemm_n);
        sink = acc;
      }
      const double t2 = now_s();
      waits[static_cast<size_t>(i)] = t1 - t0;
      computes[static_cast<size_t>(i)] = t2 - t1;
      step_end[static_cast<size_t>(i)] = t2;
    }
    snap1 = cpu_snapshot();
    (void)sink;
    queue.close();
  });
  consumer.join();
  for (auto& t : loaders)
    t.join();

  Measured m;
  m.steps = len.measured;
  m.window_s = step_end[static_cast<size_t>(total - 1)] - window_start;
  m.throughput = static_cast<double>(len.measured) * cfg.batch_size / m.window_s;
  std::vector<double> steps;
  double wait = 0.0, compute = 0.0;
  for (int i = len.warmup; i < total; ++i) {
    const auto u = static_cast<size_t>(i);
    wait += waits[u];
    compute += computes[u];
    steps.push_back(step_end[u] - (i == len.warmup ? window_start : step_end[u - 1]));
  }
  m.stall = wait / m.window_s;
  m.step_time_s = std::accumulate(steps.begin(), steps.end(), 0.0) / static_cast<double>(steps.size());
  m.step_p50_s = median(steps);
  m.consumer_compute_s = compute / len.measured;
  const double wall = snap1.wall_s - snap0.wall_s;
  m.self_cpu_cores = wall > 0 ? (snap1.self_s - snap0.self_s) / wall : 0.0;
  m.other_cpu_cores = wall > 0 ? std::max(0.0, (snap1.busy_s - snap0.busy_s) - (snap1.self_s - snap0.self_s)) / wall : 0.0;
  m.faults_per_sample = (snap1.minor_faults - snap0.minor_faults) / (static_cast<double>(len.measured) * cfg.batch_size);
  return m;
}

} // namespace mlsim::validate
