// Named choices (sim/core/base/named_enum.hpp): parsed once from their names as the scenario format
// documents them (README), printed back as the same words, unknown names refused with the list.
#include "sim/core/base/config_node.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/pipeline/job_spec.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
template <NamedEnum E> void expect_round_trip() {
  for (const auto& name : enum_names<E>()) {
    auto value = enum_value<E>(name);
    ASSERT_TRUE(value.has_value()) << name;
    EXPECT_EQ(to_string(*value), name);
  }
}
} // namespace

TEST(NamedEnum, EveryNameRoundTrips) {
  expect_round_trip<NodeRole>();
  expect_round_trip<DiskKind>();
  expect_round_trip<NvlinkTopology>();
  expect_round_trip<CpuScheduling>();
  expect_round_trip<DType>();
  expect_round_trip<DataLocation>();
  expect_round_trip<CollectiveAlgorithm>();
  expect_round_trip<Framework>();
  expect_round_trip<PipelinePlacement>();
  expect_round_trip<CopyMode>();
  expect_round_trip<BatchPadding>();
  expect_round_trip<ElementType>();
  expect_round_trip<PrecisionPolicy>();
  expect_round_trip<Optimizer>();
  expect_round_trip<FusionPolicy>();
  expect_round_trip<SixteenBitPath>();
  expect_round_trip<OpPlacement>();
  expect_round_trip<PrecisionClass>();
  expect_round_trip<SampleSizeDistribution::Kind>();
}

// The scenario spellings that are not C++ identifiers (README: pipeline.framework, disks' kind, nvlink).
TEST(NamedEnum, ScenarioSpellings) {
  EXPECT_EQ(to_string(Framework::tf_data), "tf.data");
  EXPECT_EQ(to_string(Framework::keras_generator), "keras-generator");
  EXPECT_EQ(to_string(DiskKind::sata_ssd), "sata-ssd");
  EXPECT_EQ(to_string(NvlinkTopology::nvswitch), "switch");
  EXPECT_FALSE(enum_value<Framework>("tf_data").has_value());
}

TEST(NamedEnum, GetEnumParsesDefaultsAndRefusesWithTheList) {
  ConfigNode root = ConfigNode::load_string("dataset:\n  location: remote\n  other: ram\n  bad: remot\n", "e.yaml");
  ConfigNode d = root.child("dataset");
  EXPECT_EQ(d.get_enum<DataLocation>("location"), DataLocation::remote);
  EXPECT_EQ(d.get_enum<DataLocation>("absent", DataLocation::local), DataLocation::local);
  try {
    d.get_enum<DataLocation>("bad");
    FAIL() << "accepted 'remot'";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "e.yaml:4:8: dataset.bad: expected one of local, remote, ram, got 'remot' "
                           "(did you mean 'remote'?)");
  }
  EXPECT_THROW(d.get_enum<DataLocation>("absent"), InputError);
}

TEST(NamedEnum, AsEnumRefusesWithTheList) {
  ConfigNode root = ConfigNode::load_string("model:\n  dtype: fp8\n", "m.yaml");
  try {
    root.child("model").child("dtype").as_enum<DType>();
    FAIL() << "accepted fp8";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "m.yaml:2:10: model.dtype: expected one of fp32, tf32, fp16, bf16, got 'fp8'");
  }
}
