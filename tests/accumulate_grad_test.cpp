// AccumulateGrad (step_graph/backward_rules.hpp): where a weight's gradient tensor already exists when the backward
// makes a new one, PyTorch adds the new one into it in place (torch/csrc/autograd/functions/accumulate_grad.h:
// `variable_grad += new_grad`), one kernel per tensor reading two tensors and writing one; a gradient set to None
// is taken over without a kernel. Each test holds that rule's consequence for a step.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace mlsim;

namespace {
// A dense 64 -> 1024 -> 1024 model (weights and bias each: 2 tensors a layer) in fp32 on one stack.
std::string dense_model(const std::string& stack, long micro_batches) {
  return "{input: [64], layers: [{type: dense, units: 1024}, {type: dense, units: 1024}], precision: fp32, "
         "optimizer: sgd, stack: {preset: " + stack + ", host_issue: {per_op: 0 s, per_optimizer_call: 0 s}}, "
         "gradient_accumulation: " + std::to_string(micro_batches) + "}";
}
double phase_seconds(const StepPlan& plan, const std::string& phase) {
  double s = 0;
  for (const PlannedOp& op : plan.ops)
    if (op.phase == phase)
      s += op.duration.value();
  return s;
}
double step_s(const std::string& model) {
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  yaml.replace(yaml.find("model:"), yaml.find("run:") - yaml.find("model:"), "model: " + model + "\n");
  return fixtures::run(yaml)["step_time_s"]["mean"].get<double>();
}
} // namespace

// One add per layer's gradients, over its weights and bias: 3 x 4 bytes a parameter (two reads, one write of
// fp32), a kernel per tensor; on a V100 (datasheet 900 GB/s; the preset's 0.9 of it, 0.5 us memory latency and
// 5 us launch floor) each takes 2 x 5 us + 0.5 us + (0.5 us + bytes / 810 GB/s).
TEST(AccumulateGrad, AnAddPerGradientTensorReadsTwoAndWritesOne) {
  StepPlan plan = fixtures::plan_model(dense_model("pytorch-eager", 4), "v100-sxm2-16gb", 32);
  const double params[] = {64.0 * 1024 + 1024, 1024.0 * 1024 + 1024};
  std::vector<const PlannedOp*> adds;
  for (const PlannedOp& op : plan.ops)
    if (op.phase == "accumulate")
      adds.push_back(&op);
  ASSERT_EQ(adds.size(), 2u);
  std::sort(adds.begin(), adds.end(), [](const PlannedOp* a, const PlannedOp* b) { return a->bytes < b->bytes; });
  for (size_t k = 0; k < adds.size(); ++k) {
    const PlannedOp* add = adds[k];
    const double p = params[k];
    EXPECT_NEAR(add->bytes.value(), 12.0 * p, 1e-6) << add->name;
    EXPECT_NEAR(add->duration.value(), 2 * 5e-6 + 0.5e-6 + 0.5e-6 + 12.0 * p / (900e9 * 0.9), 1e-9) << add->name;
  }
  // Every step of one micro-batch starts from gradients set to None (PyTorch 2's zero_grad): no adds at all.
  StepPlan one = fixtures::plan_model(dense_model("pytorch-eager", 1), "v100-sxm2-16gb", 32);
  EXPECT_EQ(phase_seconds(one, "accumulate"), 0.0);
  // PyTorch 1.x's zero_grad fills them with zeros, so the backward adds into them every step.
  StepPlan filled = fixtures::plan_model(dense_model("pytorch1-eager", 1), "v100-sxm2-16gb", 32);
  EXPECT_NEAR(phase_seconds(filled, "accumulate"), phase_seconds(plan, "accumulate"), 1e-12);
}

// Simulated, device-bound (the host's calls free): with gradients set to None the first micro-batch of a step
// takes them over and the other N - 1 add, so step(N) - N step(1) = (N - 1) (adds - optimizer); with zero-filled
// gradients every micro-batch adds, and step(N) - N step(1) = -(N - 1) optimizer.
TEST(AccumulateGrad, TheFirstMicroBatchTakesOverGradientsSetToNone) {
  const long n = 4;
  StepPlan none = fixtures::plan_model(dense_model("pytorch-eager", n), "a100-sxm4-40gb", 32);
  const double adds = phase_seconds(none, "accumulate"), optimizer = phase_seconds(none, "optimizer");
  ASSERT_GT(adds, 0.0);
  const double set_to_none = step_s(dense_model("pytorch-eager", n)) - n * step_s(dense_model("pytorch-eager", 1));
  EXPECT_NEAR(set_to_none, (n - 1) * (adds - optimizer), 0.01 * (n - 1) * adds);
  StepPlan fill = fixtures::plan_model(dense_model("pytorch1-eager", n), "a100-sxm4-40gb", 32);
  const double fill_optimizer = phase_seconds(fill, "optimizer");
  const double zero_fill = step_s(dense_model("pytorch1-eager", n)) - n * step_s(dense_model("pytorch1-eager", 1));
  EXPECT_NEAR(zero_fill, -(n - 1) * fill_optimizer, 0.01 * (n - 1) * adds);
}
