#include "sim/validate/host_bench.hpp"

#include "sim/validate/file_io.hpp"
#include "sim/validate/stage_bench.hpp"
#include "sim/validate/stats.hpp"

#include <Eigen/Dense>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace mlsim::validate {

RamProfile measure_ram(int reps, int cores) {
  RamProfile r;
  r.size_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  const size_t n = size_t(64) << 20;
  std::vector<char> a(n, 1), b(n, 2);
  Timing t = time_reps(reps, [&] {
    std::memcpy(b.data(), a.data(), n);
    keep(b.data());
  });
  r.bandwidth_Bps = static_cast<double>(n) / t.median_s;
  r.spread = t.spread;
  if (cores > 1) {
    const size_t per = n / static_cast<size_t>(cores);
    Timing ta = time_reps(reps, [&] {
      std::vector<std::thread> th;
      for (int k = 0; k < cores; ++k)
        th.emplace_back([&, k] { std::memcpy(b.data() + k * per, a.data() + k * per, per); });
      for (auto& x : th)
        x.join();
      keep(b.data());
    }, true);
    r.bandwidth_all_cores_Bps = static_cast<double>(per * static_cast<size_t>(cores)) / ta.median_s;
  } else {
    r.bandwidth_all_cores_Bps = r.bandwidth_Bps;
  }
  return r;
}

DiskProfile measure_disk(const std::string& dir, int reps, bool quick) {
  DiskProfile d;
  d.measured_path = dir;
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / "disk-probe.bin").string();
  const size_t size = (quick ? size_t(32) : size_t(128)) << 20;
  if (file_size(path) != size) {
    std::vector<uint8_t> data(size);
    std::mt19937_64 rng(42);
    for (size_t i = 0; i + 8 <= size; i += 8) {
      uint64_t v = rng();
      std::memcpy(data.data() + i, &v, 8);
    }
    write_file(path, data);
  }
  std::vector<uint8_t> buf(1 << 20);
  std::vector<double> seq, rnd;
  for (int r = 0; r < reps; ++r) {
    evict_page_cache(path);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    double t0 = now_s();
    size_t total = 0;
    for (ssize_t got; (got = ::read(fd, buf.data(), buf.size())) > 0;)
      total += static_cast<size_t>(got);
    seq.push_back(static_cast<double>(total) / (now_s() - t0));
    ::close(fd);

    evict_page_cache(path);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM); // no read-ahead: one 4 KiB request per pread
    const int n = quick ? 128 : 512;
    std::mt19937 rng(static_cast<unsigned>(r + 1));
    std::uniform_int_distribution<size_t> block(0, size / 4096 - 1);
    t0 = now_s();
    for (int i = 0; i < n; ++i)
      if (::pread(fd, buf.data(), 4096, static_cast<off_t>(block(rng) * 4096)) != 4096)
        break;
    rnd.push_back(static_cast<double>(n) / (now_s() - t0));
    ::close(fd);
  }
  d.sequential_read_Bps = median(seq);
  d.random_read_iops = median(rnd);
  d.latency_s = 1.0 / d.random_read_iops;
  d.spread = std::max(relative_spread(seq), relative_spread(rnd));
  return d;
}

float host_gemm_once(int n) {
  // Fixed inputs per size and thread, so repeated calls measure the product only.
  thread_local std::map<int, std::pair<Eigen::MatrixXf, Eigen::MatrixXf>> cache;
  auto it = cache.find(n);
  if (it == cache.end())
    it = cache.emplace(n, std::make_pair(Eigen::MatrixXf::Random(n, n), Eigen::MatrixXf::Random(n, n))).first;
  thread_local Eigen::MatrixXf c;
  c.noalias() = it->second.first * it->second.second;
  return c(0, 0);
}

StageCost measure_host_gemm(int reps, int cores, bool quick) {
  std::vector<int> sizes = quick ? std::vector<int>{64, 128, 192, 256} : std::vector<int>{64, 96, 128, 192, 256, 384, 512};
  StageSpec spec;
  spec.name = "host_gemm_fp32";
  spec.regressor = "flops";
  for (int n : sizes)
    spec.x.push_back({2.0 * n * n * n});
  spec.work = [sizes](size_t i) {
    volatile float sink = host_gemm_once(sizes[i]);
    (void)sink;
  };
  return measure_stage(spec, {reps, cores});
}

CpuProfile::DelayStats summarise_balance_delay(const std::vector<double>& delays, double hold_s) {
  CpuProfile::DelayStats s;
  s.trials = static_cast<int>(delays.size());
  if (delays.empty())
    return s;
  for (double d : delays)
    s.capped += d >= hold_s;
  s.median_s = median(delays);
  s.p10_s = quantile(delays, 0.1);
  s.p90_s = quantile(delays, 0.9);
  s.spread = relative_spread(delays);
  return s;
}

CpuProfile::DelayStats measure_balance_delay(int trials, int cores) {
  if (cores < 2)
    return {};
  // cores + 1 spinning threads: one core runs two of them, the others one each. A thread alone on its
  // core, when asked, sleeps `hold`; the time until one of the others appears on that core is a trial.
  constexpr double hold = 0.040;
  const int n = cores + 1;
  std::vector<std::atomic<int>> cpu_of(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    cpu_of[static_cast<size_t>(i)] = -2 - i;
  std::atomic<bool> stop{false}, trial{false};
  std::atomic<int> idle_cpu{-1}, done{0};
  std::atomic<double> slept_at{0.0}, moved_at{0.0};
  std::vector<double> delays;
  std::mutex m;
  auto spin = [&](int id) {
    int last = -1;
    while (!stop) {
      const int c = sched_getcpu();
      cpu_of[static_cast<size_t>(id)] = c;
      if (c != last) {
        if (c == idle_cpu.load() && slept_at.load() > 0 && moved_at.load() == 0)
          moved_at = now_s();
        last = c;
      }
      bool alone = true;
      for (int j = 0; j < n; ++j)
        alone = alone && (j == id || cpu_of[static_cast<size_t>(j)].load() != c);
      bool expected = true;
      if (alone && trial.compare_exchange_strong(expected, false)) {
        moved_at = 0.0;
        idle_cpu = c;
        slept_at = now_s();
        std::this_thread::sleep_for(std::chrono::duration<double>(hold));
        const double moved = moved_at.load(), slept = slept_at.load();
        {
          std::lock_guard lock(m);
          delays.push_back(moved > 0 ? std::min(hold, moved - slept) : hold);
        }
        slept_at = 0.0;
        idle_cpu = -1;
        ++done;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back(spin, i);
  const double start = now_s();
  while (done < trials && now_s() - start < trials * 0.2) {
    std::this_thread::sleep_for(std::chrono::duration<double>(hold + 0.03));
    trial = true;
  }
  stop = true;
  for (auto& th : threads)
    th.join();
  return summarise_balance_delay(delays, hold);
}

CpuProfile::DelayStats summarise_wake_delay(const std::vector<double>& busy, const std::vector<double>& idle) {
  CpuProfile::DelayStats s;
  if (busy.empty() || idle.empty())
    return s;
  const double base = median(idle);
  std::vector<double> delays;
  delays.reserve(busy.size());
  for (double b : busy)
    delays.push_back(std::max(0.0, b - base));
  s.trials = static_cast<int>(delays.size());
  s.median_s = median(delays);
  s.p10_s = quantile(delays, 0.1);
  s.p90_s = quantile(delays, 0.9);
  s.spread = relative_spread(delays);
  return s;
}

CpuProfile::DelayStats measure_busy_wake_delay(int trials) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
    return {};
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed))
      cpu = c; // the last allowed core: the first one is where other work of this process started
  if (cpu < 0)
    return {};
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  constexpr double sleep_s = 0.004;
  constexpr int blocks = 4; // idle and busy alternate, so a drift of the host shows in both
  std::vector<double> idle, busy;
  bool pinned = true;
  std::thread sleeper([&] {
    pinned = pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
    if (!pinned)
      return;
    for (int b = 0; b < 2 * blocks; ++b) {
      const bool with_spinner = b % 2 == 1;
      std::atomic<bool> stop{false};
      std::thread spinner;
      if (with_spinner) {
        spinner = std::thread([&] {
          pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
          while (!stop.load(std::memory_order_relaxed)) {
          }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the spinner runs on the core
      }
      for (int i = 0; i < std::max(1, trials / blocks); ++i) {
        const double t0 = now_s();
        std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
        (with_spinner ? busy : idle).push_back(now_s() - t0 - sleep_s);
      }
      stop = true;
      if (spinner.joinable())
        spinner.join();
    }
  });
  sleeper.join();
  if (!pinned)
    return {};
  return summarise_wake_delay(busy, idle);
}

} // namespace mlsim::validate
