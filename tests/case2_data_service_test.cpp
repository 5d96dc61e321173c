// Seed case 2: disaggregated input processing. Co-located vs a data service
// with N workers (time and cost), right-sizing the workers, a stream shared by
// several jobs, and coordinated reads for variable-size inputs.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using mlsim::fixtures::source_path;

namespace {
nlohmann::ordered_json run_case(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return mlsim::simulate_file_in_child(source_path("scenarios/cases/" + name + ".yaml"), overrides);
}
} // namespace

TEST(Case2DataService, ColocatedHostStarvesTheGpus) {
  auto j = run_case("case2-colocated");
  EXPECT_EQ(j["input_bound"], "highly");
  EXPECT_EQ(j["bottleneck"]["kind"], "stage");
}

TEST(Case2DataService, ServiceWorkersCutTimeAndCostPerSample) {
  auto local = run_case("case2-colocated");
  auto service = run_case("case2-service");
  EXPECT_GT(service["throughput_samples_per_s"].get<double>(), 2.0 * local["throughput_samples_per_s"].get<double>());
  // The service adds 4 x 1.53 USD/h to the trainer's 32.77 USD/h...
  EXPECT_NEAR(service["cost"]["per_hour_usd"].get<double>(), 32.77 + 4 * 1.53, 1e-9);
  EXPECT_NEAR(local["cost"]["per_hour_usd"].get<double>(), 32.77, 1e-9);
  // ...and still makes a sample cheaper, because the GPUs stop waiting.
  EXPECT_LT(service["cost"]["per_million_samples_usd"].get<double>(),
            local["cost"]["per_million_samples_usd"].get<double>());
}

// Workers scale horizontally: the stall falls as service nodes are added.
TEST(Case2DataService, MoreServiceWorkersNeverIncreaseTheStall) {
  double previous = 1.0;
  for (int n : {1, 2, 4, 8}) {
    auto j = run_case("case2-service", {"hardware.nodes.1.count=" + std::to_string(n)});
    double stall = j["breakdown"]["input"].get<double>();
    EXPECT_LE(stall, previous + 1e-3) << n << " workers";
    previous = stall;
  }
  EXPECT_LT(previous, 0.05); // 8 workers x 16 cores keep up with 8 A100s
}

// Right-sizing: `mlsim run` searches the worker count for a stall under 5 %; separate runs confirm it.
TEST(Case2DataService, CoresNeededFindsTheSmallestWorkerCount) {
  std::string out = mlsim::fixtures::scratch_dir() + "case2.json";
  std::string cmd = mlsim::fixtures::mlsim_binary() + " run " + source_path("scenarios/cases/case2-service.yaml") +
                    " --quiet --no-recommendations --json " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto j = nlohmann::json::parse(std::ifstream(out));
  ASSERT_TRUE(j["cores_needed"]["found"].get<bool>());
  EXPECT_EQ(j["cores_needed"]["varied"], "hardware.nodes.1.count");
  int n = j["cores_needed"]["per_node"].get<int>();
  auto at = run_case("case2-service", {"hardware.nodes.1.count=" + std::to_string(n)});
  EXPECT_LT(at["breakdown"]["input"].get<double>(), 0.05);
  if (n > 1) {
    auto below = run_case("case2-service", {"hardware.nodes.1.count=" + std::to_string(n - 1)});
    EXPECT_GE(below["breakdown"]["input"].get<double>(), 0.05);
  }
  // cores per accelerator = service nodes x 16 cores / 8 accelerators
  EXPECT_DOUBLE_EQ(j["cores_needed"]["per_accelerator"].get<double>(), n * 16.0 / 8.0);
}

// One preprocessed stream read by K identical jobs: each pays 1/K of the service.
TEST(Case2DataService, ASharedStreamSplitsTheServiceCost) {
  auto alone = run_case("case2-service");
  auto shared = run_case("case2-service", {"pipeline.service.shared_by_jobs=4"});
  EXPECT_NEAR(alone["cost"]["per_hour_usd"].get<double>() - shared["cost"]["per_hour_usd"].get<double>(),
              4 * 1.53 * (1 - 1.0 / 4), 1e-9);
  EXPECT_EQ(alone["step_time_s"]["mean"], shared["step_time_s"]["mean"]);
}

// Variable-length text, padded to the longest sequence of each batch: without coordination every
// synchronous step waits for the trainer that drew the longest batch among 32; with coordinated
// reads all trainers of a round get batches of the same size, so that straggler is gone.
TEST(Case2DataService, CoordinatedReadsRemoveStragglers) {
  auto plain = run_case("case2-coordinated-reads");
  auto coordinated = run_case("case2-coordinated-reads", {"pipeline.service.coordinated_reads=true"});
  EXPECT_LT(coordinated["step_time_s"]["mean"].get<double>(), 0.8 * plain["step_time_s"]["mean"].get<double>());
  EXPECT_LT(coordinated["step_time_s"]["p99"].get<double>(), plain["step_time_s"]["p99"].get<double>());
  EXPECT_GT(plain["padded_fraction"].get<double>(), 0.3); // lognormal lengths: much of a batch is padding
}
