// Where one training step's device time goes, op by op, without simulating: the step graph of a model
// preset on an accelerator preset, summed per op kind and path, and the top ops with the cause of their
// time (tiles and waves, memory-bound, padding). The figures behind the README's "Published results"
// causes column.
//
//   build/bench/step_breakdown ACCELERATOR PRECISION BATCH [STACK] [LAYOUT] [MODEL] [TOP]
//   build/bench/step_breakdown a100-sxm4-80gb tf32 256 pytorch-eager nchw resnet50 12
// Prints the device step time (ops in stream order, no all-reduce, no input), the images per second it
// implies, the time per op kind and path, and the TOP ops.
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/model_load.hpp"
#include "sim/pipeline/model_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace mlsim;
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s ACCELERATOR PRECISION BATCH [STACK=pytorch-eager] [LAYOUT=nhwc] "
                         "[MODEL=resnet50] [TOP=12] [OPTIMIZER=momentum]\n"
                         "  MODEL may carry preset options: bert_large:sequence=512:vocab=30528\n", argv[0]);
    return 2;
  }
  const std::string stack = argc > 4 ? argv[4] : "pytorch-eager";
  const std::string layout = argc > 5 ? argv[5] : "nhwc";
  const std::string model = argc > 6 ? argv[6] : "resnet50";
  const size_t top = argc > 7 ? static_cast<size_t>(std::atoi(argv[7])) : 12;
  const std::string optimizer = argc > 8 ? argv[8] : "momentum";
  // "name:key=value:..." -> "name, key: value, ..." inside the model's flow mapping
  std::string preset = model.substr(0, model.find(':')), options;
  for (size_t at = model.find(':'); at != std::string::npos;) {
    size_t next = model.find(':', at + 1);
    std::string kv = model.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    size_t eq = kv.find('=');
    options += ", " + kv.substr(0, eq) + ": " + (eq == std::string::npos ? "" : kv.substr(eq + 1));
    at = next;
  }
  try {
    AcceleratorSpec acc = accelerator_preset(argv[1]);
    StepContext ctx;
    ctx.accelerator = &acc;
    ctx.batch_per_device = std::atol(argv[3]);
    auto node = ConfigNode::load_string(fmt::format("model: {{preset: {}{}, optimizer: {}, precision: {}, "
                                                    "stack: {}, layout: {}}}\n",
                                                    preset, options, optimizer, argv[2], stack, layout),
                                        "step_breakdown.yaml");
    StepPlan plan = plan_step(parse_model(node.child("model")), ctx);
    double total = 0, flops = 0;
    std::map<std::string, double> by_kind, by_phase;
    for (const auto& op : plan.ops) {
      total += op.duration.value();
      flops += op.flops.value();
      by_kind[op.kind + " on " + op.path] += op.duration.value();
      by_phase[op.phase] += op.duration.value();
    }
    fmt::print("{} {} batch {} ({}, {}): device step {:.2f} ms, {:.0f} samples/s, {:.1f} TFLOP/s useful, {} ops\n",
               argv[1], argv[2], ctx.batch_per_device, stack, layout, 1e3 * total, ctx.batch_per_device / total,
               flops / total / 1e12, plan.ops.size());
    for (const auto& [kind, t] : by_kind)
      fmt::print("  {:<28} {:8.2f} ms {:5.1f} %\n", kind, 1e3 * t, 100 * t / total);
    for (const auto& [phase, t] : by_phase)
      fmt::print("  phase {:<22} {:8.2f} ms {:5.1f} %\n", phase, 1e3 * t, 100 * t / total);
    std::vector<const PlannedOp*> ops;
    for (const auto& op : plan.ops)
      ops.push_back(&op);
    std::sort(ops.begin(), ops.end(), [](auto* a, auto* b) { return a->duration.value() > b->duration.value(); });
    for (size_t i = 0; i < std::min(top, ops.size()); ++i)
      fmt::print("  {:<34} {:7.3f} ms util {:4.0f} %  {}\n", ops[i]->name, 1e3 * ops[i]->duration.value(),
                 100 * ops[i]->utilization, ops[i]->why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
