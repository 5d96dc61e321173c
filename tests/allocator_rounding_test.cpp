// The caching allocator's rounding (allocator_rounding.hpp) against the rules
// of PyTorch's c10/cuda/CUDACachingAllocator.cpp: 512 B blocks; requests up to
// 1 MiB from 2 MiB segments, up to 10 MiB from 20 MiB segments, larger ones in
// segments of their own rounded to 2 MiB.
#include "sim/pipeline/step_graph/allocator_rounding.hpp"
#include "sim/pipeline/model_spec.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
constexpr double MiB = 1024.0 * 1024.0;
double reserved(const AllocatorRounding& a, std::vector<double> sizes) {
  std::vector<Bytes> t;
  for (double s : sizes)
    t.push_back(Bytes(s));
  return a.reserved(t).value();
}
} // namespace

TEST(AllocatorRounding, BlocksAndSegmentsFollowTheCachingAllocator) {
  AllocatorRounding a;
  EXPECT_EQ(a.block_of(Bytes(1)).value(), 512);
  EXPECT_EQ(a.block_of(Bytes(512)).value(), 512);
  EXPECT_EQ(a.block_of(Bytes(513)).value(), 1024);
  EXPECT_EQ(reserved(a, {100}), 2 * MiB);                  // one small segment
  EXPECT_EQ(reserved(a, std::vector<double>(4096, 512)), 2 * MiB); // 4096 blocks of 512 B fill it exactly
  EXPECT_EQ(reserved(a, std::vector<double>(4097, 512)), 4 * MiB);
  EXPECT_EQ(reserved(a, {1 * MiB + 1}), 20 * MiB);         // a large-pool segment
  EXPECT_EQ(reserved(a, {10 * MiB}), 10 * MiB);            // its own segment, already a multiple of 2 MiB
  EXPECT_EQ(reserved(a, {10 * MiB + 1}), 12 * MiB);
  EXPECT_EQ(reserved(a, {100, 3 * MiB, 50 * MiB + 7}), 2 * MiB + 20 * MiB + 52 * MiB);
}

TEST(AllocatorRounding, WithoutSegmentsOnlyBlocks) {
  AllocatorRounding bfc{Bytes(256), Bytes(0)};
  EXPECT_EQ(reserved(bfc, {1, 257, 10 * MiB + 1}), 256 + 512 + 10 * MiB + 256);
}

namespace {
StepPlan resnet50(const std::string& stack, long batch) {
  AcceleratorSpec a = accelerator_preset("v100-sxm2-16gb");
  StepContext ctx;
  ctx.accelerator = &a;
  ctx.batch_per_device = batch;
  auto node = ConfigNode::load_string("model: {preset: resnet50, optimizer: momentum, precision: mixed_fp16, stack: " +
                                          stack + "}\n",
                                      "recipe.yaml");
  return plan_step(parse_model(node.child("model")), ctx);
}
} // namespace

TEST(AllocatorRounding, ResNet50FragmentationIsDerivedFromItsTensors) {
  // Each tensor of 10 MiB or more wastes under one 2 MiB granule and the two pools at most one segment
  // each (2 + 20 MiB): the overhead is positive and under 2 MiB per 10 MiB of tensors plus 22 MiB.
  StepPlan p = resnet50("pytorch-eager", 256);
  double tensors = p.memory_footprint.value() - p.allocator_bytes.value();
  EXPECT_GT(p.allocator_bytes.value(), 0);
  EXPECT_LT(p.allocator_bytes.value(), tensors / (10 * MiB) * 2 * MiB + 22 * MiB);
  // XLA's arena has no segments: only 256 B blocks, at most 256 B per tensor.
  StepPlan x = resnet50("xla", 256);
  EXPECT_LT(x.allocator_bytes.value(), p.allocator_bytes.value());
  EXPECT_LT(x.allocator_bytes.value(), 1 * MiB);
}
