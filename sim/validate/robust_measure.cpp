#include "sim/validate/robust_measure.hpp"

#include "sim/validate/file_io.hpp"
#include "sim/validate/host_bench.hpp"
#include "sim/validate/image_ops.hpp"
#include "sim/validate/stats.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sched.h>
#include <sys/mman.h>

namespace mlsim::validate {

namespace {
double spin_here_s() {
  return time_reps(5, [] {
           volatile std::uint64_t sink = 0;
           std::uint64_t x = 88172645463325252ull;
           for (int i = 0; i < 2'000'000; ++i) { // xorshift: integer work, no memory traffic
             x ^= x << 13;
             x ^= x >> 7;
             x ^= x << 17;
           }
           sink = x;
           (void)sink;
         }).median_s;
}
// `here()` on each core this thread may use in turn (pinned there; the affinity is put back), the mean.
double on_each_core(const std::function<double()>& here) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return here();
  double sum = 0.0;
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed))
      continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0) {
      sum += here();
      ++n;
    }
  }
  sched_setaffinity(0, sizeof allowed, &allowed);
  return n > 0 ? sum / n : here();
}
} // namespace

double reference_spin_s() { return on_each_core(spin_here_s); }

double reference_page_fault_s() {
  return on_each_core([] {
    constexpr size_t kBytes = size_t(16) << 20, kPage = 4096, kPages = kBytes / kPage;
    std::vector<double> per;
    for (int rep = 0; rep < 5; ++rep) {
      void* m = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED)
        return 0.0;
      auto* p = static_cast<volatile char*>(m);
      const double t0 = thread_cpu_s();
      for (size_t i = 0; i < kBytes; i += kPage)
        p[i] = 1;
      const double t1 = thread_cpu_s();
      for (size_t i = 0; i < kBytes; i += kPage)
        p[i] = 2;
      const double t2 = thread_cpu_s();
      ::munmap(m, kBytes);
      per.push_back(std::max(0.0, (t1 - t0) - (t2 - t1)) / kPages);
    }
    return median(per);
  });
}

double reference_decode_s(const std::vector<unsigned char>& jpeg) {
  return on_each_core([&jpeg] {
    thread_local Image out;
    decode_jpeg_into(jpeg.data(), jpeg.size(), out); // this thread's handle and buffer, outside the timing
    return time_reps(5, [&jpeg] { decode_jpeg_into(jpeg.data(), jpeg.size(), out); }).median_s;
  });
}

DecodeReference::DecodeReference(const std::vector<CalibImage>& set) {
  if (const CalibImage* ref = reference_decode_image(set)) {
    image = std::filesystem::path(ref->path).filename().string();
    jpeg = read_file(ref->path);
  }
}

double reference_gemm_s(int n) {
  return on_each_core([n] {
    volatile float warm = host_gemm_once(n); // this thread's inputs built once, outside the timing
    (void)warm;
    return time_reps(5, [n] {
             volatile float sink = host_gemm_once(n);
             (void)sink;
           }).median_s;
  });
}

namespace {
// (max - min) / 2 of a figure over the kept runs, relative to the median when `relative`.
double half_range(const std::vector<double>& v, bool relative) {
  if (v.size() < 2)
    return 0.0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double m = median(v);
  return relative ? (m > 0 ? (*hi - *lo) / (2 * m) : 0.0) : (*hi - *lo) / 2;
}
} // namespace

RobustMeasured aggregate_runs(const std::vector<Measured>& runs, const std::vector<double>& before,
                              const std::vector<double>& after, double session_ref_s, double drift_threshold) {
  RobustMeasured r;
  r.runs = static_cast<int>(runs.size());
  std::vector<size_t> kept;
  std::vector<double> speeds, refs;
  for (size_t i = 0; i < runs.size(); ++i) {
    const double d = drift(before[i], after[i]);
    r.drifts.push_back(d);
    r.max_abs_drift = std::max(r.max_abs_drift, std::fabs(d));
    refs.push_back(0.5 * (before[i] + after[i]));
    speeds.push_back(session_ref_s / refs.back());
    if (std::fabs(d) <= drift_threshold)
      kept.push_back(i);
  }
  r.rejected = static_cast<int>(runs.size() - kept.size());
  if (kept.empty()) // every run drifted: keep them all rather than report nothing (said in the output)
    for (size_t i = 0; i < runs.size(); ++i)
      kept.push_back(i);
  r.speed = median(speeds);
  r.reference_s = refs.empty() ? 0.0 : median(refs);
  auto figure = [&](double Measured::*field) {
    std::vector<double> v;
    for (size_t i : kept)
      v.push_back(runs[i].*field);
    return v;
  };
  const auto tp = figure(&Measured::throughput), st = figure(&Measured::stall), step = figure(&Measured::step_time_s);
  r.throughput_spread = half_range(tp, true);
  r.step_spread = half_range(step, true);
  r.stall_spread = half_range(st, false);
  for (double Measured::*f : {&Measured::throughput, &Measured::stall, &Measured::step_time_s, &Measured::step_p50_s,
                              &Measured::consumer_compute_s, &Measured::other_cpu_cores, &Measured::self_cpu_cores,
                              &Measured::faults_per_sample, &Measured::window_s})
    r.median.*f = median(figure(f));
  r.median.steps = runs.empty() ? 0 : runs.front().steps;
  return r;
}

std::vector<RobustMeasured> measure_interleaved(size_t count, const RobustOptions& opt,
                                                const std::function<Measured(size_t)>& run,
                                                const std::function<std::string(size_t)>& label, std::ostream& log) {
  std::vector<std::vector<Measured>> runs(count);
  std::vector<std::vector<double>> before(count), after(count), consumer_refs(count), stage_refs(count),
      fault_refs(count);
  const double session_ref = reference_spin_s();
  const int repeats = std::max(1, opt.repeats);
  std::vector<size_t> all(count);
  for (size_t i = 0; i < count; ++i)
    all[i] = i;
  // Round r: the configurations in `which`, rotated by r (no configuration always follows the same one).
  auto round = [&](int r, const std::vector<size_t>& which, const std::string& tag) {
    for (size_t j = 0; j < which.size(); ++j) {
      const size_t i = which[(j + static_cast<size_t>(r)) % which.size()];
      auto time = [](const std::function<double()>& ref) { return ref ? ref() : 0.0; };
      const double cb = time(opt.consumer_reference), sb = time(opt.stage_reference), fb = time(opt.fault_reference);
      const double b = reference_spin_s();
      Measured m = run(i);
      const double a = reference_spin_s();
      const double ca = time(opt.consumer_reference), sa = time(opt.stage_reference), fa = time(opt.fault_reference);
      consumer_refs[i].push_back(0.5 * (cb + ca));
      stage_refs[i].push_back(0.5 * (sb + sa));
      fault_refs[i].push_back(0.5 * (fb + fa));
      runs[i].push_back(m);
      before[i].push_back(b);
      after[i].push_back(a);
      const double d = drift(b, a);
      fmt::print(log, "  [{}] {:<28} {:7.1f} samples/s, stall {:5.1f} %, step {:6.1f} ms, cpu: self {:.2f}, "
                      "others {:.2f} cores,{}{}{}{} speed drift {:+.1f} %{}\n",
                 tag, label(i), m.throughput, 100 * m.stall, 1e3 * m.step_time_s, m.self_cpu_cores,
                 m.other_cpu_cores,
                 m.faults_per_sample >= 0 ? fmt::format(" {:.0f} page faults/sample,", m.faults_per_sample) : "",
                 opt.stage_reference ? fmt::format(" stage reference {:.3f} ms,", 1e3 * stage_refs[i].back()) : "",
                 opt.consumer_reference ? fmt::format(" consumer reference {:.3f} ms,", 1e3 * consumer_refs[i].back()) : "",
                 opt.fault_reference ? fmt::format(" page fault {:.2f} us,", 1e6 * fault_refs[i].back()) : "",
                 100 * d,
                 std::fabs(d) > opt.drift_threshold ? fmt::format(" (rejected: over {:.0f} %)", 100 * opt.drift_threshold)
                                                    : "");
      log.flush();
    }
  };
  for (int r = 0; r < repeats; ++r)
    round(r, all, fmt::format("{}/{}", r + 1, repeats));
  for (int r = repeats; r < opt.max_repeats; ++r) {
    std::vector<size_t> spread;
    for (size_t i = 0; i < count; ++i)
      if (runs[i].size() < static_cast<size_t>(opt.max_repeats) &&
          aggregate_runs(runs[i], before[i], after[i], session_ref, opt.drift_threshold).throughput_spread >
              opt.spread_threshold)
        spread.push_back(i);
    if (spread.empty())
      break;
    round(r, spread, fmt::format("{}/{} spread", r + 1, opt.max_repeats));
  }
  std::vector<RobustMeasured> out;
  for (size_t i = 0; i < count; ++i) {
    out.push_back(aggregate_runs(runs[i], before[i], after[i], session_ref, opt.drift_threshold));
    if (opt.consumer_reference && !consumer_refs[i].empty())
      out.back().consumer_reference_s = median(consumer_refs[i]);
    if (opt.stage_reference && !stage_refs[i].empty())
      out.back().stage_reference_s = median(stage_refs[i]);
    if (opt.fault_reference && !fault_refs[i].empty())
      out.back().fault_reference_s = median(fault_refs[i]);
  }
  return out;
}

} // namespace mlsim::validate
