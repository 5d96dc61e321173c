// The same scenario and seed give byte-identical JSON; another seed may differ.
#include "cli_runner.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {
using mlsim::fixtures::slurp;
int run_cli(const std::string& args) {
  return std::system((mlsim::fixtures::mlsim_binary() + " " + args + " > /dev/null 2>&1").c_str());
}
} // namespace

TEST(Determinism, SameSeedSameBytes) {
  std::string dir = mlsim::fixtures::scratch_dir();
  std::string scn = mlsim::fixtures::source_path("scenarios/quickstart.yaml");
  ASSERT_EQ(run_cli("run " + scn + " --json " + dir + "a.json"), 0);
  ASSERT_EQ(run_cli("run " + scn + " --json " + dir + "b.json"), 0);
  std::string a = slurp(dir + "a.json"), b = slurp(dir + "b.json");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

TEST(Determinism, VariableSizesDependOnTheSeed) {
  std::string dir = mlsim::fixtures::scratch_dir();
  std::string scn = mlsim::fixtures::source_path("scenarios/quickstart.yaml");
  ASSERT_EQ(run_cli("run " + scn + " --set run.seed=1 --json " + dir + "s1.json"), 0);
  ASSERT_EQ(run_cli("run " + scn + " --set run.seed=2 --json " + dir + "s2.json"), 0);
  EXPECT_NE(slurp(dir + "s1.json"), slurp(dir + "s2.json"));
}
