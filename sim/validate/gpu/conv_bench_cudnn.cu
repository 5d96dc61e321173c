// cuDNN convolution sweep; see gpu_bench.hpp for what and why.
#include "sim/validate/gpu/gpu_bench.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "sim/validate/gpu/cuda_util.cuh"

#include <algorithm>
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
  int c, hw, k, rs, stride, pad;
};
// ResNet-50 v1.5's distinct convolution kinds: the stem, 3x3 and 1x1 convolutions of each stage.
const Shape kShapes[] = {{3, 224, 64, 7, 2, 3},    {64, 56, 64, 3, 1, 1},   {256, 56, 64, 1, 1, 0},
                         {128, 28, 128, 3, 1, 1},  {256, 14, 256, 3, 1, 1}, {1024, 14, 256, 1, 1, 0},
                         {512, 7, 512, 3, 1, 1}};

struct Dtype {
  const char* name;
  cudnnDataType_t data;
  cudnnMathType_t math;
};
// fp32 on CUDA cores only (FMA math), tf32 on tensor cores (default math allows it on Ampere and later),
// fp16 on tensor cores; accumulation in fp32 throughout.
const Dtype kDtypes[] = {{"fp32", CUDNN_DATA_FLOAT, CUDNN_FMA_MATH},
                         {"tf32", CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH},
                         {"fp16", CUDNN_DATA_HALF, CUDNN_TENSOR_OP_MATH}};

// The first algorithm the heuristics rank that succeeds within the workspace.
template <typename Perf> int pick(const Perf* perf, int count, size_t workspace, size_t& need) {
  for (int i = 0; i < count; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspace) {
      need = perf[i].memory;
      return static_cast<int>(perf[i].algo);
    }
  throw std::runtime_error("no cuDNN algorithm fits the workspace");
}

} // namespace

std::vector<ConvPoint> run_conv_bench(int reps, bool quick, std::string& note) {
  std::vector<ConvPoint> out;
  cudnnHandle_t h;
  if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
    note = "cuDNN could not start (cudnnCreate failed): convolutions not measured";
    return out;
  }
  const int batch = quick ? 32 : 64;
  const size_t max_elems = size_t(batch) * 64 * 112 * 112 * 4; // the largest tensor (stem output) with room
  const size_t workspace_bytes = size_t(512) << 20;
  void *x, *w, *y, *ws;
  CK(cudaMalloc(&x, max_elems * 4));
  CK(cudaMalloc(&w, size_t(1024) * 1024 * 9 * 4));
  CK(cudaMalloc(&y, max_elems * 4));
  CK(cudaMalloc(&ws, workspace_bytes));
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  CK(cudnnCreateTensorDescriptor(&xd));
  CK(cudnnCreateTensorDescriptor(&yd));
  CK(cudnnCreateFilterDescriptor(&wd));
  CK(cudnnCreateConvolutionDescriptor(&cd));
  const float alpha = 1.f, beta = 0.f;
  for (const Dtype& d : kDtypes) {
    const cudaDataType_t type = d.data == CUDNN_DATA_HALF ? CUDA_R_16F : CUDA_R_32F;
    fill_random(x, max_elems, type);
    fill_random(y, max_elems, type);
    fill_random(w, size_t(1024) * 1024 * 9, type);
    for (const Shape& s : kShapes) {
      ConvPoint base{"", d.name, batch, s.c, s.hw, s.hw, s.k, s.rs, s.rs, s.stride, s.pad, 0.0, 0.0};
      CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, d.data, batch, s.c, s.hw, s.hw));
      CK(cudnnSetFilter4dDescriptor(wd, d.data, CUDNN_TENSOR_NHWC, s.k, s.c, s.rs, s.rs));
      CK(cudnnSetConvolution2dDescriptor(cd, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT));
      CK(cudnnSetConvolutionMathType(cd, d.math));
      CK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, d.data, batch, s.k, base.out_h(), base.out_w()));
      const int iters = static_cast<int>(std::clamp(2e10 / base.flops(), 1.0, 200.0));
      auto measure = [&](const char* op, auto&& call) {
        call(); // warm-up: kernel selection and module loading
        CK(cudaDeviceSynchronize());
        std::vector<double> t;
        for (int i = 0; i < reps; ++i)
          t.push_back(event_time(iters, call));
        std::sort(t.begin(), t.end());
        ConvPoint p = base;
        p.op = op;
        p.seconds = t[t.size() / 2];
        p.spread = t.size() > 1 ? (t[(3 * t.size()) / 4] - t[t.size() / 4]) / (2 * p.seconds) : 0.0;
        out.push_back(p);
      };
      // A direction cuDNN cannot run for this shape and dtype is skipped, and said so; the others still run.
      auto attempt = [&](const char* op, auto&& run) {
        try {
          run();
        } catch (const std::runtime_error& e) {
          note += std::string(note.empty() ? "skipped: " : "; ") + op + " " + d.name + " C" + std::to_string(s.c) +
                  " " + std::to_string(s.hw) + "px K" + std::to_string(s.k) + " " + std::to_string(s.rs) + "x" +
                  std::to_string(s.rs) + " (" + e.what() + ")";
        }
      };
      int count = 0;
      size_t need = 0;
      attempt("fwd", [&] {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        CK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf));
        auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(pick(perf, count, workspace_bytes, need));
        measure("fwd", [&] { CK(cudnnConvolutionForward(h, &alpha, xd, x, wd, w, cd, algo, ws, need, &beta, yd, y)); });
      });
      attempt("bwd_data", [&] {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        CK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, cd, xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                       &count, perf));
        auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(pick(perf, count, workspace_bytes, need));
        measure("bwd_data",
                [&] { CK(cudnnConvolutionBackwardData(h, &alpha, wd, w, yd, y, cd, algo, ws, need, &beta, xd, x)); });
      });
      attempt("bwd_filter", [&] {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        CK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                         &count, perf));
        auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(pick(perf, count, workspace_bytes, need));
        measure("bwd_filter",
                [&] { CK(cudnnConvolutionBackwardFilter(h, &alpha, xd, x, yd, y, cd, algo, ws, need, &beta, wd, w)); });
      });
    }
  }
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

} // namespace mlsim::validate
