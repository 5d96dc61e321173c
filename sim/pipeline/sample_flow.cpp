#include "sim/pipeline/sample_flow.hpp"

namespace mlsim {

double element_size(ElementType dtype) {
  switch (dtype) {
  case ElementType::fp32: return 4.0;
  case ElementType::fp16: return 2.0;
  case ElementType::uint8: return 1.0;
  }
  return 1.0;
}

SampleFlow::SampleFlow(const PipelineSpec& pipeline, const DatasetSpec& dataset, const CpuSpec& cpu)
    : pipeline_(pipeline), dataset_(dataset), fp16_factor_(cpu.fp16_emulation_factor) {
  for (size_t i = 0; i < pipeline.stages.size(); ++i)
    if (pipeline.stages[i].kind == StageKind::cache) {
      after_cache_ = i + 1;
      has_cache_ = true;
    }
  at0_ = trace(0.0);
  SampleTrace at1 = trace(1e6);
  slope_ = at1;
  for (size_t i = 0; i < slope_.stage_cost.size(); ++i) {
    slope_.stage_cost[i] = (at1.stage_cost[i] - at0_.stage_cost[i]) / 1e6;
    slope_.bytes_after[i] = (at1.bytes_after[i] - at0_.bytes_after[i]) / 1e6;
  }
  final_at0_ = at0_.final_bytes;
  final_slope_ = (at1.final_bytes - at0_.final_bytes) / 1e6;
}

SampleTrace SampleFlow::trace(double stored_bytes) const {
  SampleTrace t;
  t.stored_bytes = stored_bytes;
  double bytes = stored_bytes;
  double width = dataset_.width.value_or(0.0), height = dataset_.height.value_or(0.0);
  double channels = dataset_.channels.value_or(1.0);
  ElementType dtype = ElementType::uint8;
  const double source_pixels = width * height; // the stored image's (FreshPages::by_source)
  for (const auto& stage : pipeline_.stages) {
    double pixels = width * height;
    double cost = 0.0;
    if (stage.kind == StageKind::map) {
      cost = stage.cost.for_sample(bytes, pixels, source_pixels).value();
      const StageOutput& o = stage.output;
      bool reshaped = o.width || o.height || o.channels || o.dtype;
      if (o.dtype == ElementType::fp16)
        cost *= fp16_factor_;
      width = o.width.value_or(width);
      height = o.height.value_or(height);
      channels = o.channels.value_or(channels);
      ElementType before = dtype;
      dtype = o.dtype.value_or(dtype);
      if (o.bytes)
        bytes = o.bytes->value();
      else if (reshaped && width * height > 0)
        bytes = width * height * channels * element_size(dtype);
      else if (o.dtype) // shape unknown: the same elements at the new element size
        bytes *= element_size(dtype) / element_size(before);
      if (o.scale)
        bytes *= *o.scale;
    }
    t.stage_cost.push_back(cost);
    t.bytes_after.push_back(bytes);
  }
  t.final_bytes = bytes;
  return t;
}

} // namespace mlsim
