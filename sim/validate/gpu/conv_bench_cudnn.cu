// cuDNN convolution sweep; see gpu_bench.hpp for what and why.
#include "sim/validate/gpu/gpu_bench.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "sim/validate/gpu/cuda_util.cuh"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlsim::validate {

namespace {

using namespace cuda_util;
using cuda_util::check; // overloaded below for the library's status type

void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(s));
}

struct Shape {
  int c, hw, k, rs, stride, pad, groups = 1;
};
// ResNet-50 v1.5's distinct convolution kinds: the stem, 3x3 and 1x1 convolutions of each stage; then
// ResNeXt-101 32x4d's grouped 3x3 of each stage (32 groups of 4, 8, 16, 32 channels); then EfficientNet-B0's
// depthwise convolutions (groups = channels: 3x3 stride 2 at 112 px, 3x3 at 56, 5x5 at 28 and 14, 3x3 at 7).
const Shape kShapes[] = {{3, 224, 64, 7, 2, 3},          {64, 56, 64, 3, 1, 1},          {256, 56, 64, 1, 1, 0},
                         {128, 28, 128, 3, 1, 1},        {256, 14, 256, 3, 1, 1},        {1024, 14, 256, 1, 1, 0},
                         {512, 7, 512, 3, 1, 1},         {128, 56, 128, 3, 1, 1, 32},    {256, 28, 256, 3, 1, 1, 32},
                         {512, 14, 512, 3, 1, 1, 32},    {1024, 7, 1024, 3, 1, 1, 32},   {96, 112, 96, 3, 2, 1, 96},
                         {144, 56, 144, 3, 1, 1, 144},   {240, 28, 240, 5, 1, 2, 240},   {672, 14, 672, 5, 1, 2, 672},
                         {1152, 7, 1152, 3, 1, 1, 1152}};

struct Dtype {
  const char* name;
  cudnnDataType_t data;
  cudnnMathType_t math;
  cudnnTensorFormat_t format;
  const char* layout;
};
// As PyTorch runs them: fp32 on CUDA cores only (FMA math) in NCHW, its default layout; tf32 on tensor cores
// (default math allows it on Ampere and later) and fp16 on tensor cores in NHWC, the layout their kernels compute
// in (an NCHW model pays cuDNN's transposes on top: op_cost.cpp); accumulation in fp32 throughout.
const Dtype kDtypes[] = {{"fp32", CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, CUDNN_TENSOR_NCHW, "nchw"},
                         {"tf32", CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, CUDNN_TENSOR_NHWC, "nhwc"},
                         {"fp16", CUDNN_DATA_HALF, CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_NHWC, "nhwc"}};

// The first algorithm in `perf` (the heuristics' ranking, or cudnnFind*'s by measured time) that succeeds within
// the workspace.
template <typename Perf> int pick(const Perf* perf, int count, size_t workspace, size_t& need) {
  for (int i = 0; i < count; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspace) {
      need = perf[i].memory;
      return static_cast<int>(perf[i].algo);
    }
  throw std::runtime_error("no cuDNN algorithm fits the workspace");
}

// The largest activation of the shapes per sample (EfficientNet-B0's 96 x 112 x 112, above ResNet-50's stem
// output of 64 x 112 x 112 and stage 1's 256 x 56 x 56), in elements.
constexpr size_t kLargestActivation = size_t(96) * 112 * 112;

// Medians and spreads of `reps` event-timed runs of `iters` calls.
template <typename F> void time_into(double& seconds, double& spread, int reps, int iters, F&& call) {
  call(); // warm-up: kernel selection and module loading
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < reps; ++i)
    t.push_back(event_time(iters, call));
  std::sort(t.begin(), t.end());
  seconds = t[t.size() / 2];
  spread = t.size() > 1 ? (t[(3 * t.size()) / 4] - t[t.size() / 4]) / (2 * seconds) : 0.0;
}

size_t workspace_budget() {
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  return std::min(size_t(2) << 30, free_b / 8); // frameworks give cuDNN what is free; keep room for the tensors
}

} // namespace

std::vector<ConvPoint> run_conv_bench(int reps, bool quick, std::string& note) {
  std::vector<ConvPoint> out;
  cudnnHandle_t h;
  if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
    note = "cuDNN could not start (cudnnCreate failed): convolutions not measured";
    return out;
  }
  const std::vector<int> batches = quick ? std::vector<int>{32} : std::vector<int>{64, 256};
  const size_t max_elems = size_t(batches.back()) * kLargestActivation;
  void *x, *w, *y, *ws;
  CK(cudaMalloc(&x, max_elems * 4));
  CK(cudaMalloc(&w, size_t(1024) * 1024 * 9 * 4));
  CK(cudaMalloc(&y, max_elems * 4));
  const size_t workspace_bytes = workspace_budget();
  CK(cudaMalloc(&ws, workspace_bytes));
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  CK(cudnnCreateTensorDescriptor(&xd));
  CK(cudnnCreateTensorDescriptor(&yd));
  CK(cudnnCreateFilterDescriptor(&wd));
  CK(cudnnCreateConvolutionDescriptor(&cd));
  const float alpha = 1.f, beta = 0.f;
  // Dense shapes first (what conv_efficiency is fitted to), then grouped, then depthwise, each at every dtype; a
  // wall-clock budget ($MLSIM_GPU_CONV_SECONDS, default 150 s of device_check.sh's 240 s for the whole
  // measurement) skips what is left, and the note says so: the GEMMs, batch norms and copies still come back.
  const auto start = std::chrono::steady_clock::now();
  const char* budget_env = std::getenv("MLSIM_GPU_CONV_SECONDS");
  const double budget_s = budget_env ? std::atof(budget_env) : 150.0;
  int skipped_for_time = 0;
  auto tier = [](const Shape& s) { return s.groups == 1 ? 0 : s.groups == s.c && s.k == s.c ? 2 : 1; };
  for (int t : {0, 1, 2}) // tiers: dense, grouped, depthwise
    for (const Dtype& d : kDtypes) {
      const cudaDataType_t type = d.data == CUDNN_DATA_HALF ? CUDA_R_16F : CUDA_R_32F;
      fill_random(x, max_elems, type);
      fill_random(y, max_elems, type);
      fill_random(w, size_t(1024) * 1024 * 9, type);
      for (int batch : batches)
        for (const Shape& s : kShapes) {
          if (tier(s) != t)
            continue;
          if (s.groups > 1 && batch != batches.front())
            continue; // the grouped shapes at the first batch only: the sweep runs under the device check's timeout
          if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget_s) {
            ++skipped_for_time;
            continue;
          }
          ConvPoint base{"",     d.name, batch, s.c,      s.hw, s.hw, s.k,     s.rs,
                         s.rs,   s.stride, s.pad, s.groups, 0.0,  0.0,  d.layout, false};
          CK(cudnnSetTensor4dDescriptor(xd, d.format, d.data, batch, s.c, s.hw, s.hw));
          CK(cudnnSetFilter4dDescriptor(wd, d.data, d.format, s.k, s.c / s.groups, s.rs, s.rs));
          CK(cudnnSetConvolution2dDescriptor(cd, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                             CUDNN_DATA_FLOAT));
          CK(cudnnSetConvolutionGroupCount(cd, s.groups));
          CK(cudnnSetConvolutionMathType(cd, d.math));
          CK(cudnnSetTensor4dDescriptor(yd, d.format, d.data, batch, s.k, base.out_h(), base.out_w()));
          // ~20 GFLOP or ~4 GB of activations a timing, whichever comes first: a depthwise conv's few FLOPs would
          // otherwise call for 200 iterations of a memory-bound kernel.
          const double activation_bytes = base.activation_elements() * (d.data == CUDNN_DATA_HALF ? 2 : 4);
          const int iters =
              static_cast<int>(std::clamp(std::min(2e10 / base.flops(), 4e9 / activation_bytes), 1.0, 200.0));
          auto measure = [&](const char* op, bool autotuned, auto&& call) {
            ConvPoint p = base;
            p.op = op;
            p.autotuned = autotuned;
            time_into(p.seconds, p.spread, reps, iters, call);
            out.push_back(p);
          };
          int count = 0;
          size_t need = 0;
          // One direction twice: with the heuristics' first algorithm (`rank`), then with the fastest cudnnFind*
          // times (`find`); `run(algo)` launches the direction with an algorithm. A direction cuDNN cannot run for
          // this shape and dtype is skipped, and said so; the others still run.
          auto attempt = [&](const char* op, auto* perf, int n, auto&& rank, auto&& find, auto&& run) {
            try {
              decltype(perf->algo) algo{};
              auto call = [&] { CK(run(algo)); };
              CK(rank(n, perf));
              algo = static_cast<decltype(algo)>(pick(perf, count, workspace_bytes, need));
              measure(op, false, call);
              CK(find(n, perf));
              algo = static_cast<decltype(algo)>(pick(perf, count, workspace_bytes, need));
              measure(op, true, call);
            } catch (const std::runtime_error& e) {
              note += std::string(note.empty() ? "skipped: " : "; ") + op + " " + d.name + " N" +
                      std::to_string(batch) + " C" + std::to_string(s.c) + " " + std::to_string(s.hw) + "px K" +
                      std::to_string(s.k) + " " + std::to_string(s.rs) + "x" + std::to_string(s.rs) + " G" +
                      std::to_string(s.groups) + " (" + e.what() + ")";
            }
          };
          cudnnConvolutionFwdAlgoPerf_t fwd_perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
          attempt("fwd", fwd_perf, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                [&](int n, auto* p) { return cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, n, &count, p); },
                [&](int n, auto* p) {
                  return cudnnFindConvolutionForwardAlgorithmEx(h, xd, x, wd, w, cd, yd, y, n, &count, p, ws,
                                                                workspace_bytes);
                },
                [&](auto algo) {
                  return cudnnConvolutionForward(h, &alpha, xd, x, wd, w, cd, algo, ws, need, &beta, yd, y);
                });
          cudnnConvolutionBwdDataAlgoPerf_t bwd_data_perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
          attempt("bwd_data", bwd_data_perf, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                [&](int n, auto* p) {
                  return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, cd, xd, n, &count, p);
                },
                [&](int n, auto* p) {
                  return cudnnFindConvolutionBackwardDataAlgorithmEx(h, wd, w, yd, y, cd, xd, x, n, &count, p, ws,
                                                                     workspace_bytes);
                },
                [&](auto algo) {
                  return cudnnConvolutionBackwardData(h, &alpha, wd, w, yd, y, cd, algo, ws, need, &beta, xd, x);
                });
          cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter_perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
          attempt("bwd_filter", bwd_filter_perf, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                [&](int n, auto* p) {
                  return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, wd, n, &count, p);
                },
                [&](int n, auto* p) {
                  return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, xd, x, yd, y, cd, wd, w, n, &count, p, ws,
                                                                       workspace_bytes);
                },
                [&](auto algo) {
                  return cudnnConvolutionBackwardFilter(h, &alpha, xd, x, yd, y, cd, algo, ws, need, &beta, wd, w);
                });
        }
    }
  if (skipped_for_time > 0)
    note += std::string(note.empty() ? "" : "; ") + "time budget of " + std::to_string(int(budget_s)) +
            " s reached: " + std::to_string(skipped_for_time) + " shapes not measured (MLSIM_GPU_CONV_SECONDS)";
  cudnnDestroyConvolutionDescriptor(cd);
  cudnnDestroyFilterDescriptor(wd);
  cudnnDestroyTensorDescriptor(xd);
  cudnnDestroyTensorDescriptor(yd);
  cudnnDestroy(h);
  cudaFree(x);
  cudaFree(w);
  cudaFree(y);
  cudaFree(ws);
  return out;
}

std::vector<NormPoint> run_norm_bench(int reps, bool quick, std::string& note) {
  std::vector<NormPoint> out;
  cudnnHandle_t h;
  if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
    note = "cuDNN could not start (cudnnCreate failed): normalisations not measured";
    return out;
  }
  // ResNet-50's batch-normalised activations (channels, height = width) at the recipes' batch, then
  // EfficientNet-B0's narrow ones (16 to 96 channels at 112 down to 28 px: NCHW layers bound by their channels).
  const int batch = quick ? 32 : 256;
  const std::pair<int, int> shapes[] = {{64, 112}, {64, 56},  {256, 56}, {128, 28}, {512, 28}, {256, 14},
                                        {1024, 14}, {512, 7},  {2048, 7}, {16, 112}, {32, 112}, {96, 112},
                                        {24, 56},  {40, 28}};
  struct Config {
    const char *dtype, *layout;
    cudnnDataType_t data;
    cudnnTensorFormat_t format;
    cudnnBatchNormMode_t mode;
  };
  // PyTorch's choice (aten/src/ATen/native/cudnn/BatchNorm.cpp): the persistent spatial mode for channels_last
  // training, plain spatial otherwise; fp16 NCHW is AMP without channels_last (compared with the fp32 NCHW fit,
  // not fitted: kernel_fit.hpp).
  const Config configs[] = {
      {"fp16", "nhwc", CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT},
      {"fp32", "nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_SPATIAL},
      {"fp16", "nchw", CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_SPATIAL}};
  const size_t max_elems = size_t(batch) * kLargestActivation;
  void *x, *y, *dy, *dx, *params;
  CK(cudaMalloc(&x, max_elems * 4));
  CK(cudaMalloc(&y, max_elems * 4));
  CK(cudaMalloc(&dy, max_elems * 4));
  CK(cudaMalloc(&dx, max_elems * 4));
  const size_t max_c = 2048;
  CK(cudaMalloc(&params, max_c * 4 * 8));
  float* p = static_cast<float*>(params);
  float *scale = p, *bias = p + max_c, *run_mean = p + 2 * max_c, *run_var = p + 3 * max_c,
        *save_mean = p + 4 * max_c, *save_inv = p + 5 * max_c, *dscale = p + 6 * max_c, *dbias = p + 7 * max_c;
  fill_random(params, max_c * 8, CUDA_R_32F);
  cudnnTensorDescriptor_t xd, bnd;
  CK(cudnnCreateTensorDescriptor(&xd));
  CK(cudnnCreateTensorDescriptor(&bnd));
  const float one = 1.f, zero = 0.f;
  const double eps = 1e-5;
  for (const Config& c : configs) {
    const cudaDataType_t type = c.data == CUDNN_DATA_HALF ? CUDA_R_16F : CUDA_R_32F;
    fill_random(x, max_elems, type);
    fill_random(dy, max_elems, type);
    for (auto [ch, hw] : shapes) {
      NormPoint base{"", c.dtype, c.layout, batch, ch, hw, hw, 0.0, 0.0};
      try {
        CK(cudnnSetTensor4dDescriptor(xd, c.format, c.data, batch, ch, hw, hw));
        CK(cudnnDeriveBNTensorDescriptor(bnd, xd, c.mode));
        const double bytes = base.elements() * (c.data == CUDNN_DATA_HALF ? 2 : 4);
        const int iters = static_cast<int>(std::clamp(4e9 / bytes, 1.0, 200.0));
        // The Ex calls, with the workspace and reserve space cuDNN asks for, as PyTorch makes them: the
        // persistent NHWC kernels need them (without, the plain calls take a slow fallback).
        size_t fws = 0, bws = 0, reserve = 0;
        CK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, c.mode, CUDNN_BATCHNORM_OPS_BN, xd, nullptr,
                                                                    xd, bnd, nullptr, &fws));
        CK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, c.mode, CUDNN_BATCHNORM_OPS_BN, xd, xd, xd, nullptr,
                                                             xd, bnd, nullptr, &bws));
        CK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, c.mode, CUDNN_BATCHNORM_OPS_BN, nullptr, xd,
                                                                &reserve));
        void *work = nullptr, *res = nullptr;
        CK(cudaMalloc(&work, std::max<size_t>(std::max(fws, bws), 16)));
        CK(cudaMalloc(&res, std::max<size_t>(reserve, 16)));
        NormPoint f = base, b = base;
        f.op = "fwd";
        b.op = "bwd";
        try {
          time_into(f.seconds, f.spread, reps, iters, [&] {
            CK(cudnnBatchNormalizationForwardTrainingEx(h, c.mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, xd, x,
                                                        nullptr, nullptr, xd, y, bnd, scale, bias, 0.1, run_mean,
                                                        run_var, eps, save_mean, save_inv, nullptr, work, fws, res,
                                                        reserve));
          });
          time_into(b.seconds, b.spread, reps, iters, [&] {
            CK(cudnnBatchNormalizationBackwardEx(h, c.mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one, &zero, xd, x,
                                                 nullptr, nullptr, xd, dy, nullptr, nullptr, xd, dx, bnd, scale,
                                                 nullptr, dscale, dbias, eps, save_mean, save_inv, nullptr, work, bws,
                                                 res, reserve));
          });
        } catch (...) {
          cudaFree(work);
          cudaFree(res);
          throw;
        }
        cudaFree(work);
        cudaFree(res);
        out.push_back(f);
        out.push_back(b);
      } catch (const std::runtime_error& e) {
        note += std::string(note.empty() ? "skipped: " : "; ") + c.dtype + " " + c.layout + " C" +
                std::to_string(ch) + " " + std::to_string(hw) + "px (" + e.what() + ")";
      }
    }
  }
  cudnnDestroyTensorDescriptor(xd);
  cudnnDestroyTensorDescriptor(bnd);
  cudnnDestroy(h);
  for (void* b : {x, y, dy, dx, params})
    cudaFree(b);
  return out;
}

} // namespace mlsim::validate
