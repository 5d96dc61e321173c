// Every class of scenario error gives one message with file, line, column,
// the key, what was expected and what was found.
#include "sim/core/base/errors.hpp"
#include "sim/core/run/scenario.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <unistd.h>

using namespace mlsim;

namespace {

std::string write_temp(const std::string& text) {
  // Unique per process and call: ctest runs these tests concurrently in separate processes.
  static int calls = 0;
  std::string path = mlsim::fixtures::scratch_dir() + "scenario_" + std::to_string(::getpid()) + "_" +
                     std::to_string(++calls) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

// Loads `text` (after replacing `from` by `to` in the base scenario) and returns the error message.
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  std::string path = write_temp(text);
  try {
    load_scenario_file(path, overrides);
  } catch (const InputError& e) {
    std::string m = e.what();
    // Messages start with the file name; strip it to compare the rest.
    if (m.rfind(path, 0) == 0)
      m = "FILE" + m.substr(path.size());
    return m;
  }
  return "no error";
}

std::string replaced(const std::string& from, const std::string& to) {
  std::string s = fixtures::base_scenario();
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

} // namespace

TEST(ScenarioErrors, BaseScenarioLoads) { EXPECT_EQ(error_of(fixtures::base_scenario()), "no error"); }

TEST(ScenarioErrors, YamlSyntaxErrorHasPosition) {
  std::string m = error_of("name: x\nhardware: [1, 2\n");
  EXPECT_TRUE(std::regex_search(m, std::regex("^FILE:[0-9]+:[0-9]+: expected valid YAML"))) << m;
}

TEST(ScenarioErrors, UnknownKeySuggestsClosest) {
  std::string m = error_of(replaced("  warmup_steps: 10", "  warmup_step: 10"));
  EXPECT_EQ(m.substr(0, m.find(": expected")), "FILE:30:3: run.warmup_step") << m;
  EXPECT_NE(m.find("did you mean 'warmup_steps'?"), std::string::npos) << m;
}

TEST(ScenarioErrors, NumberWithoutUnit) {
  std::string m = error_of(replaced("bandwidth: 100 Gb/s", "bandwidth: 100"));
  EXPECT_NE(m.find("FILE:7:"), std::string::npos) << m;
  EXPECT_NE(m.find("hardware.nodes.0.nic.bandwidth: expected a data rate such as '16 Gb/s'"), std::string::npos) << m;
  EXPECT_NE(m.find("got '100' (a number without its unit)"), std::string::npos) << m;
}

TEST(ScenarioErrors, WrongDimension) {
  std::string m = error_of(replaced("bandwidth: 1000 GB/s", "bandwidth: 1000 GB"));
  EXPECT_NE(m.find("hardware.nodes.0.ram.bandwidth: expected a data rate"), std::string::npos) << m;
  EXPECT_NE(m.find("that is a size"), std::string::npos) << m;
}

TEST(ScenarioErrors, NegativeBandwidth) {
  std::string m = error_of(replaced("bandwidth: 100 Gb/s", "bandwidth: -5 Gb/s"));
  EXPECT_NE(m.find("hardware.nodes.0.nic.bandwidth: expected a positive value"), std::string::npos) << m;
}

TEST(ScenarioErrors, ZeroCores) {
  std::string m = error_of(replaced("cores: 16", "cores: 0"));
  EXPECT_TRUE(std::regex_search(m, std::regex("^FILE:5:[0-9]+: hardware.nodes.0.cpu.cores: expected an integer in "
                                              "\\[1, 4096\\], got '0'")))
      << m;
}

TEST(ScenarioErrors, UnknownCpuScheduler) {
  std::string m = error_of(replaced("cores: 16", "cores: 16, scheduler: round_robin"));
  EXPECT_TRUE(std::regex_search(m, std::regex("^FILE:5:[0-9]+: hardware.nodes.0.cpu.scheduler: expected one of")))
      << m;
  EXPECT_NE(m.find("per_core"), std::string::npos) << m;
  EXPECT_NE(m.find("round_robin"), std::string::npos) << m;
}

TEST(ScenarioErrors, SharedCoreEfficiencyIsAListOfFractions) {
  std::string m = error_of(replaced("cores: 16", "cores: 16, shared_core_efficiency: [0.9, 1.5]"));
  EXPECT_TRUE(std::regex_search(
      m, std::regex("^FILE:5:[0-9]+: hardware.nodes.0.cpu.shared_core_efficiency.1: expected a list of numbers in \\(0, 1\\]")))
      << m;
  EXPECT_NE(m.find("1.5"), std::string::npos) << m;
  m = error_of(replaced("cores: 16", "cores: 16, shared_core_efficiency: 0.9"));
  EXPECT_NE(m.find("cpu.shared_core_efficiency: expected a list of numbers"), std::string::npos) << m;
}

TEST(ScenarioErrors, BatchLargerThanDataset) {
  std::string m = error_of(replaced("samples: 1000000", "samples: 10"));
  EXPECT_NE(m.find("pipeline.batch_size: expected a global batch"), std::string::npos) << m;
  EXPECT_NE(m.find("no larger than dataset.samples = 10"), std::string::npos) << m;
}

TEST(ScenarioErrors, MissingKeyNamesIt) {
  std::string m = error_of(replaced("  steps: 60\n", ""));
  EXPECT_NE(m.find("run.steps: expected an integer, got no value (the key is missing)"), std::string::npos) << m;
}

TEST(ScenarioErrors, UnknownPresetListsChoices) {
  std::string m = error_of(replaced("preset: a100-sxm4-40gb", "preset: a100-sxm-40gb"));
  EXPECT_NE(m.find("hardware.nodes.0.accelerators.preset: expected one of the accelerators presets ("), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'a100-sxm4-40gb'?"), std::string::npos) << m;
}

TEST(ScenarioErrors, BadChoice) {
  std::string m = error_of(replaced("framework: tf.data", "framework: tfdata"));
  EXPECT_NE(m.find("pipeline.framework: expected one of tf.data, pytorch, keras-generator, custom, got 'tfdata' "
                   "(did you mean 'tf.data'?)"),
            std::string::npos)
      << m;
}

TEST(ScenarioErrors, PcieLanesMustBeAPowerOfTwo) {
  std::string m = error_of(replaced("lanes: 16", "lanes: 12"));
  EXPECT_NE(m.find("hardware.nodes.0.pcie.lanes: expected one of 1, 2, 4, 8, 16, got '12'"), std::string::npos) << m;
}

TEST(ScenarioErrors, OverrideErrorNamesTheOverride) {
  std::string m = error_of(fixtures::base_scenario(), {"hardware.nodes.0.cpu.cores=-3"});
  EXPECT_EQ(m.rfind("--set hardware.nodes.0.cpu.cores=-3: hardware.nodes.0.cpu.cores: expected an integer", 0), 0u)
      << m;
}

TEST(ScenarioErrors, OverrideOfAMissingListIndex) {
  std::string m = error_of(fixtures::base_scenario(), {"hardware.nodes.5.cpu.cores=4"});
  EXPECT_NE(m.find("expected an index below 1"), std::string::npos) << m;
}

TEST(ScenarioErrors, OverrideChangesTheValue) {
  std::string path = write_temp(fixtures::base_scenario());
  Scenario s = load_scenario_file(path, {"hardware.nodes.0.cpu.cores=48", "pipeline.batch_size=64"});
  EXPECT_EQ(s.nodes[0].cpu.cores, 48);
  EXPECT_EQ(s.pipeline.batch_size, 64);
}

TEST(ScenarioErrors, MissingFile) {
  try {
    load_scenario_file("/nonexistent/x.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.yaml"), std::string::npos);
  }
}
