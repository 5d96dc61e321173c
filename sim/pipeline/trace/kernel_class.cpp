#include "sim/pipeline/trace/kernel_class.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace mlsim {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has_any(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (s.find(w) != std::string::npos)
      return true;
  return false;
}

} // namespace

KernelInfo classify_kernel(const std::string& name) {
  std::string n = lower(name);
  KernelInfo k;
  if (has_any(n, {"gemm", "xmma", "cutlass", "conv", "wgrad", "dgrad", "winograd", "implicit_", "matmul",
                  "sm70_", "sm75_", "sm80_", "sm86_", "sm90_", "volta_", "turing_", "ampere_", "hopper_",
                  "cublas", "gemv"}))
    k.cls = KernelClass::matrix;
  k.dtype_known = true;
  if (has_any(n, {"double", "dgemm", "f64"}))
    k.fp64 = true;
  else if (has_any(n, {"bf16", "bfloat16"}))
    k.dtype = DType::bf16;
  else if (has_any(n, {"h884", "h1688", "h16816", "hgemm", "f16", "fp16", "half", "hmma"}))
    k.dtype = DType::fp16;
  else if (has_any(n, {"tf32", "s1688", "s16816"}))
    k.dtype = DType::tf32;
  else if (has_any(n, {"sgemm", "f32", "fp32", "float", "s884"}))
    k.dtype = DType::fp32;
  else
    k.dtype_known = false;
  return k;
}

bool is_nccl_kernel(const std::string& name) { return lower(name).find("nccl") != std::string::npos; }

std::string nccl_algorithm(const std::string& name) {
  std::string n = lower(name);
  for (const char* a : {"ring", "tree", "collnet", "nvls"})
    if (n.find(std::string("_") + a) != std::string::npos)
      return a;
  return "";
}

std::string nccl_collective(const std::string& name) {
  std::string n = lower(name);
  for (const char* c : {"allreduce", "all_reduce", "allgather", "all_gather", "reducescatter", "reduce_scatter",
                        "broadcast", "sendrecv", "alltoall"})
    if (n.find(c) != std::string::npos) {
      std::string s = c;
      if (s.find('_') == std::string::npos && s.size() > 3 && s.rfind("all", 0) == 0)
        s.insert(3, "_");
      if (s == "reducescatter")
        s = "reduce_scatter";
      return s;
    }
  return "";
}

double trace_dtype_size(const std::string& dtype) {
  std::string d = lower(dtype);
  if (d == "float" || d == "float32" || d == "int" || d == "int32" || d == "fp32")
    return 4;
  if (d == "half" || d == "float16" || d == "bfloat16" || d == "bf16" || d == "fp16")
    return 2;
  if (d == "double" || d == "float64" || d == "long" || d == "int64")
    return 8;
  if (d == "byte" || d == "char" || d == "int8" || d == "uint8" || d == "bool")
    return 1;
  return 0;
}

} // namespace mlsim
