#include "sim/validate/shared_core_bench.hpp"

#include "sim/validate/loader_batch.hpp"
#include "sim/validate/stage_bench.hpp"
#include "sim/validate/stats.hpp"

#include <fmt/format.h>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <numeric>
#include <thread>

namespace mlsim::validate {

namespace {

int first_allowed_core() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set))
        return c;
  return 0;
}

struct ThreadCount {
  long samples = 0;
  double cpu_s = 0.0;
};

// One loader thread on `core` until `end` (wall clock): batches of the sweep's files, one after another.
ThreadCount run_on_core(const std::vector<const std::string*>& files, int core, double end, unsigned seed) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  constexpr size_t kBatch = 8;
  std::mt19937 rng(seed);
  ThreadCount out;
  const double c0 = thread_cpu_s();
  for (size_t i = 0; now_s() < end; i += kBatch) {
    std::vector<const std::string*> batch;
    for (size_t j = 0; j < kBatch; ++j)
      batch.push_back(files[(i + j) % files.size()]);
    LoaderBatch b = build_loader_batch(batch, 224, rng, FlipPolicy::half, nullptr);
    keep(b.data.get());
    out.samples += static_cast<long>(kBatch);
  }
  out.cpu_s = thread_cpu_s() - c0;
  return out;
}

} // namespace

SharedCoreRates measure_shared_core(const std::vector<CalibImage>& images, double seconds) {
  const std::vector<CalibImage> sweep = select_set(images, "sweep");
  std::vector<const std::string*> files;
  for (const auto& c : sweep)
    files.push_back(&c.path);
  SharedCoreRates rates;
  if (files.empty())
    return rates;
  const int core = first_allowed_core();
  const std::vector<int> rounds{1, 1, 2, 3, 3, 2, 1}; // the first untimed: files and code not yet cached
  for (size_t round = 0; round < rounds.size(); ++round) {
    const int k = rounds[round];
    std::vector<ThreadCount> counts(static_cast<size_t>(k));
    std::vector<std::thread> threads;
    const double end = now_s() + seconds;
    for (int t = 0; t < k; ++t)
      threads.emplace_back([&, t] {
        // Each thread starts at its own place in the sweep, as loader workers take different samples.
        std::vector<const std::string*> mine(files.begin() + static_cast<long>(t * files.size() / 3), files.end());
        mine.insert(mine.end(), files.begin(), files.begin() + static_cast<long>(t * files.size() / 3));
        counts[static_cast<size_t>(t)] = run_on_core(mine, core, end, static_cast<unsigned>(k * 10 + t));
      });
    for (auto& th : threads)
      th.join();
    long samples = 0;
    double cpu = 0.0;
    for (const auto& c : counts) {
      samples += c.samples;
      cpu += c.cpu_s;
    }
    if (round > 0 && cpu > 0)
      rates[k].push_back(static_cast<double>(samples) / cpu);
  }
  return rates;
}

std::vector<double> fit_shared_core(const SharedCoreRates& rates) {
  std::map<int, double> mean;
  for (const auto& [k, r] : rates)
    if (!r.empty())
      mean[k] = std::accumulate(r.begin(), r.end(), 0.0) / static_cast<double>(r.size());
  std::vector<double> out;
  if (!(mean[1] > 0))
    return out;
  for (int k = 2; mean.count(k) && mean[k] > 0; ++k)
    out.push_back(std::min(1.0, mean[k] / mean[1]));
  return out;
}

std::string describe_shared_core(const std::vector<double>& efficiency, const std::string& unit) {
  std::string out;
  for (size_t i = 0; i < efficiency.size(); ++i)
    out += fmt::format("{}{} {} {:.3f}", i ? ", " : "", i + 2, unit, efficiency[i]);
  return out.empty() ? "not measured" : out;
}

} // namespace mlsim::validate
