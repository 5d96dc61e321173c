// Load time and peak memory of a large profiler trace.
//
//   build/bench/trace_load_bench [MB=300] [path=/tmp/mlsim-bench.pt.trace.json]
// Writes a synthetic Kineto-shaped trace of about MB megabytes (steps of CPU ops with input shapes,
// cudaLaunchKernel runtime events and kernels linked by correlation ids, plus Python-stack events that
// the reader drops), then reads it as `model: {trace: ...}` does and prints the file size, the events,
// the load time and the process's peak RSS (before and after the load).
#include "sim/pipeline/trace/measured_step.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

void write_trace(const std::string& path, double megabytes) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fputs("{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-40GB\"}],\n"
             "\"traceEvents\": [\n",
             f);
  const long kernels_per_step = 2000;
  long id = 1, step = 0;
  double ts = 1000;
  bool first = true;
  while (std::ftell(f) < static_cast<long>(megabytes * 1e6)) {
    double step_start = ts;
    for (long k = 0; k < kernels_per_step; ++k, ++id) {
      std::fprintf(f,
                   "%s{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"torch/nn/modules/module.py(1501): "
                   "_call_impl\", \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"dur\": 9, \"args\": {\"Python id\": %ld}},\n"
                   "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::conv2d\", \"pid\": 1, \"tid\": 1, "
                   "\"ts\": %.3f, \"dur\": 8, \"args\": {\"External id\": %ld, \"Input Dims\": [[64, 64, 56, 56], "
                   "[64, 64, 3, 3], [], [], [], [], []], \"Input type\": [\"float\", \"float\", \"\", \"\"]}},\n"
                   "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, "
                   "\"ts\": %.3f, \"dur\": 4, \"args\": {\"External id\": %ld, \"correlation\": %ld}},\n"
                   "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_"
                   "nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel\", \"pid\": 0, "
                   "\"tid\": 7, \"ts\": %.3f, \"dur\": 40, \"args\": {\"External id\": %ld, \"device\": 0, "
                   "\"stream\": 7, \"correlation\": %ld, \"grid\": [196, 1, 1], \"block\": [128, 1, 1]}}",
                   first ? "" : ",\n", ts, id, ts + 1, id, ts + 2, id, id, ts + 10, id, id);
      first = false;
      ts += 45;
    }
    std::fprintf(f, ",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%ld\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": %.3f, \"dur\": %.3f, \"args\": {}}",
                 step++, step_start, ts - step_start + 10);
    ts += 20;
  }
  std::fputs("\n]}\n", f);
  std::fclose(f);
}

} // namespace

int main(int argc, char** argv) {
  double mb = argc > 1 ? std::atof(argv[1]) : 300;
  std::string path = argc > 2 ? argv[2] : "/tmp/mlsim-bench.pt.trace.json";
  write_trace(path, mb);
  long before = peak_rss_kb();
  auto t0 = std::chrono::steady_clock::now();
  mlsim::TraceFile trace = mlsim::read_trace(path);
  auto t1 = std::chrono::steady_clock::now();
  long after_read = peak_rss_kb();
  mlsim::MeasuredStep step = mlsim::measure_step(trace, {});
  auto t2 = std::chrono::steady_clock::now();
  double read_s = std::chrono::duration<double>(t1 - t0).count();
  double build_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("trace %s: %.1f MB, %llu events (%zu kept), %zu steps\n", path.c_str(), trace.bytes_read / 1e6,
              static_cast<unsigned long long>(trace.total_events), trace.events.size(), step.steps.size());
  std::printf("read %.2f s (%.0f MB/s), step build %.2f s, total %.2f s\n", read_s, trace.bytes_read / 1e6 / read_s,
              build_s, read_s + build_s);
  std::printf("peak RSS %.0f MB (%.0f MB before the load, %.0f MB after reading the events)\n",
              peak_rss_kb() / 1024.0, before / 1024.0, after_read / 1024.0);
  return 0;
}
