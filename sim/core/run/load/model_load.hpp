// The loader of the `model:` section: YAML -> ModelSpec (sim/pipeline/model_spec.hpp) in one of its
// forms (roofline, fixed step, step graph, trace), with the step graph's parts.
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/pipeline/model_spec.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace mlsim {

ModelSpec parse_model(const ConfigNode& node);

// The training loop's keys every model form accepts (gradient_accumulation, gradient_sync, loss_readback,
// gradient_compression), read by parse_model.
std::vector<std::string> with_loop_keys(std::vector<std::string> form_keys);

// The step-graph forms (the caller has ruled out the roofline form) and their parts.
GraphModel parse_graph_model(const ConfigNode& node);
LayerSpec parse_layer(const ConfigNode& node, size_t index); // every key checked against its type
ExplicitOp parse_explicit_op(const ConfigNode& node, size_t index);
// `node` is the model's `stack` value: a preset name or an inline mapping.
StackProfile parse_stack(const ConfigNode& node);
// A named preset from stacks.yaml.
StackProfile stack_preset(const std::string& name);

// The trace form: parses and loads the trace (InputError with the trace's byte offset on a bad file).
TraceModel parse_trace_model(const ConfigNode& node);
// Refuses the what-ifs the trace cannot answer, at the key that asks for them.
void check_trace_what_ifs(const TraceModel& m, const AcceleratorSpec& acc, const ConfigNode& accelerator_node,
                          long batch, const ConfigNode& batch_node);

} // namespace mlsim
