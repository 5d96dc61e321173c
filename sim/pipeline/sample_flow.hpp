// What each stage does to one sample: its CPU cost and the size it leaves.
//
// A sample starts as its stored bytes s (drawn from the dataset's size
// distribution) with the dataset's image pixel count p (0 if not images).
// A map stage costs per_sample + per_byte * s_in + per_pixel * p_in
// core-seconds of the reference CPU, times the CPU's fp16 emulation factor
// when it emits fp16 on the host; its output shape sets the new size:
// pixels x channels x element size, a fixed size, or a scale of the input.
// Read, shuffle and cache stages cost no CPU here (their time is I/O and
// memory, modelled by the pipeline runtime).
#pragma once

#include "sim/hardware/cpu.hpp"
#include "sim/pipeline/job_spec.hpp"

#include <vector>

namespace mlsim {

struct SampleTrace {
  double stored_bytes = 0;          // bytes read from storage
  std::vector<double> stage_cost;   // core-seconds per stage (index = pipeline stage)
  std::vector<double> bytes_after;  // bytes after each stage
  double final_bytes = 0;           // bytes entering the batch
};

class SampleFlow {
public:
  SampleFlow(const PipelineSpec& pipeline, const DatasetSpec& dataset, const CpuSpec& cpu);

  SampleTrace trace(double stored_bytes) const;
  // Every stage cost and output size is affine in the stored size s (costs are affine in bytes and
  // pixels, outputs are fixed, scaled or reshaped), so a chunk of n samples of total stored size
  // `total` is summarised by (n, total): exact, and O(1) per stage.
  double stage_cost(size_t stage, double n, double total) const {
    return n * at0_.stage_cost[stage] + slope_.stage_cost[stage] * total;
  }
  double bytes_after(size_t stage, double n, double total) const {
    return n * at0_.bytes_after[stage] + slope_.bytes_after[stage] * total;
  }
  double final_bytes(double n, double total) const { return n * final_at0_ + final_slope_ * total; } // into the batch
  // Index of the first stage after the cache stage (0 if there is none).
  size_t after_cache() const { return after_cache_; }
  bool has_cache() const { return has_cache_; }

private:
  const PipelineSpec& pipeline_;
  const DatasetSpec& dataset_;
  double fp16_factor_ = 1.0;
  size_t after_cache_ = 0;
  bool has_cache_ = false;
  SampleTrace at0_, slope_; // trace(0) and d trace / d s
  double final_at0_ = 0, final_slope_ = 0;
};

double element_size(ElementType dtype);

} // namespace mlsim
