// The host issuing the step's ops (sim/pipeline/step_graph/host_issue.hpp): the walk from a sync, the
// run-ahead surplus, and the stacks' figures in a planned step, each against its closed form.
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/model_load.hpp"
#include "sim/pipeline/step_graph/host_issue.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
using fixtures::device_seconds;
using fixtures::plan_model;
std::vector<Seconds> ms(std::initializer_list<double> v) {
  std::vector<Seconds> out;
  for (double x : v)
    out.push_back(Seconds(x * 1e-3));
  return out;
}
} // namespace

// device 1, 1, 1 ms; host 2, 0.5, 0.5 ms; the host syncs before op 1. From the sync: op 1 issued at 0.5 (waits
// 0.5, ends 1.5); op 2 issued at 1.0, starts at 1.5 (no wait, ends 2.5); op 0 issued at 3.0 (waits 0.5, ends 4.0).
TEST(HostIssue, WalkFromTheSyncWaitsWhereTheHostIsBehind) {
  HostIssue r = host_issue(ms({1, 1, 1}), ms({2, 0.5, 0.5}), size_t{1});
  ASSERT_EQ(r.wait.size(), 3u);
  EXPECT_NEAR(r.wait[1].value(), 0.5e-3, 1e-12);
  EXPECT_NEAR(r.wait[2].value(), 0.0, 1e-12);
  EXPECT_NEAR(r.wait[0].value(), 0.5e-3, 1e-12);
  EXPECT_NEAR(r.total_wait.value(), 1.0e-3, 1e-12);
  EXPECT_NEAR(r.host.value(), 3.0e-3, 1e-12);
}

TEST(HostIssue, WithoutASyncOnlyTheHostsSurplusShowsOnceAStep) {
  HostIssue ahead = host_issue(ms({1, 1}), ms({3, 0}), std::nullopt); // host 3 ms, device 2 ms
  EXPECT_NEAR(ahead.wait[0].value(), 1e-3, 1e-12);
  EXPECT_NEAR(ahead.wait[1].value(), 0.0, 1e-12);
  HostIssue behind = host_issue(ms({1, 1}), ms({1.5, 0}), std::nullopt); // the device is the limit
  EXPECT_NEAR(behind.total_wait.value(), 0.0, 1e-12);
  // With a sync the same host cost is exposed at once: the first op waits for its whole call.
  HostIssue synced = host_issue(ms({1, 1}), ms({1.5, 0}), size_t{0});
  EXPECT_NEAR(synced.total_wait.value(), 1.5e-3, 1e-12);
}

// Gradient accumulation, by hand: one forward/backward op (device 1 ms, host call 3 ms) and one optimizer op
// (device 5 ms, no host time), the sync before the optimizer, 4 micro-batches. From the sync the optimizer
// runs 0..5; micro-batch 0's op is issued at 3 and starts at 5 (no wait); micro-batch 1's is issued at 6,
// the device free at 6 (no wait); micro-batch 2's is issued at 9, the device free since 7 (waits 2); every
// later one waits 2 as well (host-bound: host 3 - device 1), so the walk stops there.
TEST(HostIssue, AccumulatedMicroBatchesSpendTheOptimizersHeadStartThenWaitForTheHost) {
  std::vector<Seconds> w = micro_batch_waits(ms({1, 5}), ms({3, 0}), 1, 4, HostSync::before_optimizer);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_NEAR(w[0].value(), 0.0, 1e-12);
  EXPECT_NEAR(w[1].value(), 0.0, 1e-12);
  EXPECT_NEAR(w[2].value(), 2e-3, 1e-12);
  EXPECT_NEAR(w[3].value(), 2e-3, 1e-12);
  // A host faster than the device never waits, however many micro-batches: the walk stops at the second.
  std::vector<Seconds> fast = micro_batch_waits(ms({3, 5}), ms({1, 0}), 1, 1000, HostSync::before_optimizer);
  EXPECT_LE(fast.size(), 2u);
  EXPECT_NEAR(fast.back().value(), 0.0, 1e-12);
  // Without a sync: the step's surplus, 4 x (3 - 1) + (0 - 5) = 3 ms, spread over the 4 micro-batches.
  std::vector<Seconds> ahead = micro_batch_waits(ms({1, 5}), ms({3, 0}), 1, 4, HostSync::none);
  ASSERT_EQ(ahead.size(), 1u);
  EXPECT_NEAR(ahead[0].value(), 0.75e-3, 1e-12);
}

// A loop that reads the loss back after every micro-batch's backward (`loss.item()`), by hand: forward/backward
// ops a (device 1 ms, call 3 ms) and b (device 5 ms, no call), the optimizer c (device 2 ms), 3 micro-batches.
// From the sync c runs 0..2; micro-batch 0's a is issued at 3 (waits 1) and b runs 4..9. The read-back then
// blocks the host until 9 and both clocks restart: every later a waits its whole call, 3 ms. Without it the
// host is 3 ms ahead of each 6 ms micro-batch and never waits again.
TEST(HostIssue, AReadBackEveryMicroBatchExposesTheHostsLagInEach) {
  std::vector<Seconds> w = micro_batch_waits(ms({1, 5, 2}), ms({3, 0, 0}), 2, 3, HostSync::every_micro_batch);
  ASSERT_GE(w.size(), 2u);
  EXPECT_NEAR(w[0].value(), 1e-3, 1e-12);
  for (size_t m = 1; m < w.size(); ++m)
    EXPECT_NEAR(w[m].value(), 3e-3, 1e-12);
  std::vector<Seconds> ahead = micro_batch_waits(ms({1, 5, 2}), ms({3, 0, 0}), 2, 3, HostSync::before_optimizer);
  EXPECT_NEAR(ahead[0].value(), 1e-3, 1e-12);
  EXPECT_NEAR(ahead.back().value(), 0.0, 1e-12);
  // An op the first micro-batch skips (an AccumulateGrad add, first_end = 1): micro-batch 0 is a alone, the
  // device free at 2, so a (issued at 3) waits 1; b does not run before the read-back.
  std::vector<Seconds> skip = micro_batch_waits(ms({1, 5, 2}), ms({3, 0, 0}), 2, 3, HostSync::every_micro_batch, 1);
  EXPECT_NEAR(skip[0].value(), 1e-3, 1e-12);
  EXPECT_NEAR(skip.back().value(), 3e-3, 1e-12);
}

// Through the scenario: `model.loss_readback: micro_batch` on a stack with host calls (1 ms each, tiny ops
// from the sync every op waits for its call) makes every micro-batch after the first wait its calls less its
// device time up to the last call; `none` is the default; anything else names the key.
TEST(HostIssue, LossReadbackIsAModelKey) {
  const std::string base = "{input: [64], layers: [{type: dense, units: 64}], stack: {preset: pytorch-eager, "
                           "host_issue: {per_op: 1 ms}}, gradient_accumulation: 4";
  StepPlan plain = plan_model(base + "}", "a100-sxm4-80gb", 4);
  StepPlan readback = plan_model(base + ", loss_readback: micro_batch}", "a100-sxm4-80gb", 4);
  ASSERT_FALSE(readback.micro_batch_host_wait.empty());
  EXPECT_GT(readback.host_issue_wait.value(), plain.host_issue_wait.value());
  EXPECT_GT(readback.micro_batch_host_wait.back().value(), 0.5e-3);
  EXPECT_THROW(plan_model(base + ", loss_readback: sometimes}", "a100-sxm4-80gb", 4), InputError);
}

// In a simulation the accumulated step is the optimizer and the N micro-batches with those waits: a
// host-bound dense stack (1 ms a call, tiny ops) at N = 6 takes the optimizer, then micro-batches at the host's
// pace: step = device time of all ops + the waits of the walk.
TEST(HostIssue, AnAccumulatedHostBoundStepRunsAtTheHostsPace) {
  const std::string layers = "input: [64], layers: [{type: dense, units: 64}, {type: dense, units: 64}]";
  const std::string stack = "stack: {preset: pytorch-eager, host_issue: {per_op: 1 ms}, loss_scale_sync: true}";
  const std::string model = "{" + layers + ", precision: mixed_fp16, " + stack + ", gradient_accumulation: 6}";
  StepPlan plan = plan_model(model, "a100-sxm4-80gb", 4);
  ASSERT_FALSE(plan.micro_batch_host_wait.empty());
  // Host-bound: every micro-batch after the first waits its calls less its device time (its AccumulateGrad adds,
  // [accumulate_begin, optimizer_begin), included: no call of their own).
  double fb_calls = static_cast<double>(plan.accumulate_begin) * 1e-3, fb_device = 0;
  for (size_t i = 0; i < plan.optimizer_begin; ++i)
    fb_device += (plan.ops[i].duration - plan.ops[i].host_wait).value();
  EXPECT_NEAR(plan.micro_batch_host_wait.back().value(), fb_calls - fb_device, 1e-9);
  std::string yaml = fixtures::base_scenario(1, 0.001, 1.0);
  yaml.replace(yaml.find("model:"), yaml.find("run:") - yaml.find("model:"),
               "model: " + model + "\n");
  auto j = fixtures::run(yaml, {"pipeline.workers=8"});
  double expected = plan.host_issue_wait.value();
  for (size_t i = 0; i < plan.ops.size(); ++i) // the first micro-batch takes its gradients over: no adds
    expected += (plan.ops[i].duration - plan.ops[i].host_wait).value() *
                (i < plan.accumulate_begin ? 6 : i < plan.optimizer_begin ? 5 : 1);
  double step = j["step_time_s"]["mean"].get<double>();
  EXPECT_GT(step, 6 * fb_calls); // at the host's pace
  EXPECT_NEAR(step, expected, 0.02 * expected);
}

// A step of tiny ops, each far shorter on the device than the host's call: from the sync every op waits for its
// call, so the device step is the calls (one per forward and backward op, one for the fused update however many
// layers it updates) plus the device time of the op just before the sync (the last issued).
TEST(HostIssue, AHostBoundStepIsTheHostsCallsPlusTheLastOp) {
  const std::string layers = "input: [64], layers: [{type: dense, units: 64}, {type: dense, units: 64}]";
  const std::string stack = "stack: {preset: pytorch-eager, host_issue: {per_op: 1 ms}, loss_scale_sync: true}";
  StepPlan amp = plan_model("{" + layers + ", precision: mixed_fp16, " + stack + "}", "a100-sxm4-80gb", 4);
  StepPlan bare = plan_model("{" + layers + ", precision: mixed_fp16}", "a100-sxm4-80gb", 4);
  ASSERT_EQ(amp.ops.size(), bare.ops.size());
  const double n = static_cast<double>(amp.optimizer_begin + 1);
  const double before_sync = bare.ops[amp.optimizer_begin - 1].duration.value();
  EXPECT_NEAR(device_seconds(amp), n * 1e-3 + before_sync, 1e-9);
  EXPECT_NEAR(amp.host_issue.value(), n * 1e-3, 1e-12);
  EXPECT_NEAR(amp.host_issue_wait.value(), device_seconds(amp) - device_seconds(bare), 1e-12);
  EXPECT_NE(amp.ops[amp.optimizer_begin].why.find("waiting for the host"), std::string::npos);
  // A model cast to fp16 scales its loss too (apex's scaler reads its overflow flag): the same sync.
  StepPlan o2 = plan_model("{" + layers + ", precision: mixed_fp16_o2, " + stack + "}", "a100-sxm4-80gb", 4);
  EXPECT_NE(o2.ops[o2.optimizer_begin].why.find("waiting for the host"), std::string::npos);
  // fp32 has no loss scaler, so no sync: the host runs ahead and the step is the host's calls.
  StepPlan fp32 = plan_model("{" + layers + ", " + stack + "}", "a100-sxm4-80gb", 4);
  EXPECT_NEAR(device_seconds(fp32), static_cast<double>(fp32.optimizer_begin + 1) * 1e-3, 1e-9);
  // Nothing modelled: the step is the device's alone.
  StepPlan off = plan_model("{" + layers + ", precision: mixed_fp16, stack: {preset: pytorch-eager, "
                            "host_issue: {per_op: 0 s}}}", "a100-sxm4-80gb", 4);
  EXPECT_NEAR(device_seconds(off), device_seconds(bare), 1e-12);
  EXPECT_THROW(plan_model("{" + layers + ", stack: {preset: pytorch-eager, host_issue: {per_op: -1 us}}}",
                          "a100-sxm4-80gb", 4), InputError);
  EXPECT_THROW(plan_model("{" + layers + ", stack: {preset: pytorch-eager, host_issue: {per_kernel: 1 us}}}",
                          "a100-sxm4-80gb", 4), InputError);
}

// A per-op optimizer update calls one Python op per kernel: a dense layer's momentum update with zero fills is 8
// kernels (backward_rules.hpp), 8 Python calls; a fused (foreach) update of any number of layers is one call.
TEST(HostIssue, APerOpOptimizerCallsOncePerKernelAFusedOneOnceInAll) {
  const std::string layer = "input: [64], optimizer: momentum, layers: [{type: dense, units: 64}";
  StepPlan per_op = plan_model("{" + layer + "], stack: {preset: pytorch1-eager, host_issue: {per_op: 10 us, "
                               "per_optimizer_call: 2 us}}}", "a100-sxm4-80gb", 4);
  ASSERT_EQ(per_op.ops.size() - per_op.optimizer_begin, 1u);
  // (PyTorch 1.x fills the gradients, so the backward adds into them: that AccumulateGrad op has no call.)
  EXPECT_NEAR(per_op.host_issue.value(), static_cast<double>(per_op.accumulate_begin) * 10e-6 + 8 * 2e-6, 1e-12);
  StepPlan fused = plan_model("{" + layer + ", {type: dense, units: 64}], stack: {preset: pytorch-eager, "
                              "host_issue: {per_op: 10 us}}}", "a100-sxm4-80gb", 4);
  ASSERT_EQ(fused.ops.size() - fused.optimizer_begin, 2u);
  EXPECT_NEAR(fused.host_issue.value(), static_cast<double>(fused.optimizer_begin + 1) * 10e-6, 1e-12);
}

// Two machines in series from the sync (a flow shop): the device finishes the walk at
//   T = max over k of (issued_k + the device time of ops k..end of the walk), issued_k = (k + 1) calls
// (every call the same, as in a step of forward and backward ops), whatever the ops' lengths.
double flow_shop_end(const StepPlan& bare, size_t sync, size_t calls, double per_call) {
  double best = 0.0;
  for (size_t k = 0; k < calls; ++k) {
    double tail = 0.0;
    for (size_t j = k; j < bare.ops.size(); ++j)
      tail += bare.ops[(sync + j) % bare.ops.size()].duration.value();
    best = std::max(best, static_cast<double>(k + 1) * per_call + tail);
  }
  return best;
}

// The preset figure on the step it came from and the step it predicts: ResNet-50, fp16 AMP, eager PyTorch 2.x on
// an H200, 76 us a call. From the sync, the foreach update is one call (the other 106 fused ops are issued with
// it) and each forward and backward op one more. At batch 128 the device's work (~22 ms) is well under the
// host's 515 calls: host-bound. At batch 256 the two are close, and only part of the host's time is exposed.
TEST(HostIssue, EagerPyTorchOnAnH200IsHostBoundAtBatch128ButNot256) {
  const std::string rn50 = "{preset: resnet50, precision: mixed_fp16, layout: nhwc, stack: pytorch-eager}";
  const std::string bare = "{preset: resnet50, precision: mixed_fp16, layout: nhwc, stack: {preset: pytorch-eager, "
                           "host_issue: {per_op: 0 s}}}";
  StepPlan b128 = plan_model(rn50, "h200-sxm", 128), b128_bare = plan_model(bare, "h200-sxm", 128);
  ASSERT_EQ(b128.ops.size(), 621u);
  ASSERT_EQ(b128.optimizer_begin, 514u);
  const double calls = 515 * 76e-6;
  EXPECT_NEAR(b128.host_issue.value(), calls, 1e-12);
  EXPECT_LT(device_seconds(b128_bare), 0.6 * calls); // the device alone: well under the host's calls
  // The walk from the sync: the optimizer's 107 ops issued by one call, then the 514 forward and backward ops.
  // Issued_k counts calls, so walk the update as one op of the summed length.
  auto walk = [](const StepPlan& bare) {
    StepPlan w;
    PlannedOp update;
    for (size_t i = bare.optimizer_begin; i < bare.ops.size(); ++i)
      update.duration += bare.ops[i].duration;
    w.ops.push_back(update);
    for (size_t i = 0; i < bare.optimizer_begin; ++i)
      w.ops.push_back(bare.ops[i]);
    return w;
  };
  EXPECT_NEAR(device_seconds(b128), flow_shop_end(walk(b128_bare), 0, 515, 76e-6), 1e-9);
  EXPECT_GT(device_seconds(b128), calls);
  StepPlan b256 = plan_model(rn50, "h200-sxm", 256), b256_bare = plan_model(bare, "h200-sxm", 256);
  EXPECT_NEAR(device_seconds(b256), flow_shop_end(walk(b256_bare), 0, 515, 76e-6), 1e-9);
  EXPECT_GT(b256.host_issue_wait.value(), 0.0);
  EXPECT_LT(b256.host_issue_wait.value(), 0.5 * calls);
  EXPECT_NEAR(device_seconds(b256) - device_seconds(b256_bare), b256.host_issue_wait.value(), 1e-12);
}

// The whole run of the batch-128 scenario: the step is the plan's device step (no input, no all-reduce), the
// report's accelerator utilisation leaves out the device's waits for the host, and the host names the bottleneck.
TEST(HostIssue, AHostBoundRunNamesTheHostAndCountsTheWaitsAsIdle) {
  const auto j = simulate_file_in_child(
      fixtures::source_path("scenarios/measured/rn50-pytorch-h200-amp-b128-1gpu.yaml"), {});
  StepPlan plan = plan_model("{preset: resnet50, precision: mixed_fp16, layout: nhwc, optimizer: momentum, "
                             "stack: pytorch-eager}",
                             "h200-sxm", 128);
  const double step = j.at("step_time_s").at("mean").get<double>();
  EXPECT_NEAR(step, device_seconds(plan), 1e-6 * step);
  EXPECT_NEAR(j.at("host_issue").at("device_wait_s_per_step").get<double>(), plan.host_issue_wait.value(), 1e-12);
  EXPECT_NEAR(j.at("accelerator_utilization").get<double>(), 1.0 - plan.host_issue_wait.value() / step, 1e-6);
  EXPECT_EQ(j.at("bottleneck").at("kind"), "host");
  EXPECT_EQ(j.at("bottleneck").at("name"), "node.cpu");
  EXPECT_NEAR(j.at("bottleneck").at("utilization").get<double>(), plan.host_issue.value() / step, 1e-6);
}
