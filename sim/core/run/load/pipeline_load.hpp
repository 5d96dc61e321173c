// The loader of the `pipeline:` section and the dataset's sample sizes: YAML -> the typed specs of
// sim/pipeline (pipeline_spec.hpp, framework_costs.hpp, sample_size.hpp).
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/hardware/cpu.hpp"
#include "sim/pipeline/framework_costs.hpp"
#include "sim/pipeline/pipeline_spec.hpp"
#include "sim/pipeline/sample_size.hpp"

#include <string>

namespace mlsim {

// `cpu` supplies calibrated stage costs referenced by name (`cost: jpeg_decode`).
PipelineSpec parse_pipeline(const ConfigNode& node, const CpuSpec& cpu);

// `node` may be undefined (the defaults); explicit keys win. `page_fault`: the node's cpu.page_fault, the
// price of the worker's fresh pages.
FrameworkCosts parse_framework_costs(const ConfigNode& node, Framework framework, Seconds page_fault);

// `dataset.sample_size`: a size, or {distribution: constant | normal | lognormal | histogram, ...}.
SampleSizeDistribution parse_sample_size(const ConfigNode& node);

} // namespace mlsim
