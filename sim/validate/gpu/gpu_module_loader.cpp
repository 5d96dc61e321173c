// gpu_bench.hpp's functions in mlsim: each asks the GPU module (gpu_module.hpp),
// loaded once, on the first call. Where it is: $MLSIM_GPU_MODULE, else next to
// the executable, else <prefix>/lib/mlsim/ beside an installed one, else the
// build folder it was built in (MLSIM_GPU_MODULE_DIR, unset without CUDA).
#include "sim/validate/gpu/gpu_module.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlsim::validate {

namespace {

constexpr const char* kFile = "libmlsim-gpu.so";

std::vector<std::string> candidates() {
  if (const char* env = std::getenv("MLSIM_GPU_MODULE"); env && *env)
    return {env};
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    out.push_back((exe.parent_path() / kFile).string());
    out.push_back((exe.parent_path().parent_path() / "lib" / "mlsim" / kFile).string());
  }
#ifdef MLSIM_GPU_MODULE_DIR
  out.push_back(std::string(MLSIM_GPU_MODULE_DIR) + "/" + kFile);
#endif
  return out;
}

struct Loaded {
  const GpuModule* module = nullptr;
  std::string why_not;
};

Loaded load() {
#ifndef MLSIM_GPU_MODULE_DIR
  if (!std::getenv("MLSIM_GPU_MODULE"))
    return {nullptr, "mlsim was built without CUDA (no toolkit found at configure time)"};
#endif
  std::string tried;
  for (const std::string& path : candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); // kept open for the process's life
    if (!handle) {
      const char* e = ::dlerror();
      return {nullptr, "the GPU module " + path + " does not load: " + (e ? e : "unknown error")};
    }
    using Entry = const GpuModule* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, "mlsim_gpu_module"));
    const GpuModule* m = entry ? entry() : nullptr;
    if (!m)
      return {nullptr, "the GPU module " + path + " has no entry point mlsim_gpu_module"};
    if (m->abi != kGpuModuleAbi)
      return {nullptr, "the GPU module " + path + " is of another build (interface " + std::to_string(m->abi) +
                           ", this mlsim needs " + std::to_string(kGpuModuleAbi) + ")"};
    return {m, ""};
  }
  return {nullptr, "no GPU module " + std::string(kFile) + " (looked in " + tried + ")"};
}

const Loaded& module() {
  static const Loaded loaded = load();
  return loaded;
}

const GpuModule& required() {
  const Loaded& l = module();
  if (!l.module)
    throw std::runtime_error(l.why_not);
  return *l.module;
}

} // namespace

GpuInfo probe_gpu() {
  if (const Loaded& l = module(); l.module)
    return l.module->probe_gpu();
  GpuInfo g;
  g.reason = module().why_not;
  return g;
}

GpuBenchResult run_gpu_bench(int reps, bool quick) { return required().run_gpu_bench(reps, quick); }

void GpuGemmStackDeleter::operator()(GpuGemmStack* s) const {
  if (s)
    required().free_gemm_stack(s);
}

GpuGemmStackPtr make_gpu_gemm_stack(int n, int layers, size_t max_batch_bytes) {
  const Loaded& l = module();
  return GpuGemmStackPtr(l.module ? l.module->make_gemm_stack(n, layers, max_batch_bytes) : nullptr);
}

void gpu_gemm_stack_step(GpuGemmStack& s, const void* host_batch, size_t bytes) {
  required().gemm_stack_step(s, host_batch, bytes);
}

} // namespace mlsim::validate
