// `mlsim run` simulates the base scenario once: with what-ifs in a child whose figures feed them, without
// what-ifs in this process; and the two ways give the same figures, text and trace.
#include "test_support.hpp"

#include "sim/core/app/run_products.hpp"
#include "sim/core/run/simulation.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

using namespace mlsim;

namespace {
RunRequest quickstart(bool what_ifs) {
  RunRequest r;
  r.scenario = fixtures::source_path("scenarios/quickstart.yaml");
  r.trace = true;
  r.recommendations = what_ifs;
  r.cores_needed = what_ifs;
  return r;
}
} // namespace

TEST(RunOnce, WithWhatIfsTheBaseRunsOnceInAChild) {
  RunProducts p = produce_run(quickstart(true));
  EXPECT_EQ(p.base_simulations, 1);
  EXPECT_EQ(simulations_started(), 0) << "this process must stay free to fork the what-ifs";
  EXPECT_GE(p.doc["recommendations"].size(), 1u) << "quickstart is input-bound: the what-ifs ran";
  EXPECT_FALSE(p.doc["cores_needed"].is_null());
  EXPECT_NE(p.trace.find("traceEvents"), std::string::npos);
}

TEST(RunOnce, WithoutWhatIfsTheBaseRunsOnceHere) {
  RunProducts p = produce_run(quickstart(false));
  EXPECT_EQ(p.base_simulations, 1);
  EXPECT_EQ(simulations_started(), 1);
  EXPECT_TRUE(p.doc["cores_needed"].is_null());
}

// The figures carried back from the child equal those of `mlsim run` without what-ifs, which simulates
// in its own process.
TEST(RunOnce, ChildFiguresEqualAnInProcessRun) {
  RunProducts with = produce_run(quickstart(true));
  std::string out = mlsim::fixtures::scratch_dir() + "run_once_" + std::to_string(::getpid()) + ".json";
  auto r = fixtures::run_mlsim("run " + quickstart(true).scenario + " --quiet --no-recommendations --no-cores-needed --json " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(out);
  auto alone = nlohmann::ordered_json::parse(in);
  with.doc["cores_needed"] = nullptr;
  with.doc["recommendations"] = nlohmann::ordered_json::array();
  EXPECT_EQ(with.doc.dump(2), alone.dump(2));
}
