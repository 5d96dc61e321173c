// No input crashes mlsim: each input that once ended in a signal, an internal
// error or a silent endless run (issue "no input crashes it") is a test here.
// Expected outcomes come from the error contract (exit 2 with file:line:col and
// the key to change; 128 + signal when stopped), not from the code's output.
#include "cli_runner.hpp"
#include "test_support.hpp"

#include "sim/core/base/engine.hpp"
#include "sim/core/base/errors.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

using namespace mlsim;
using fixtures::ProcessOptions;
using fixtures::ProcessResult;
using fixtures::run_process;

namespace {

std::string read_source(const std::string& rel) {
  std::ifstream in(fixtures::source_path(rel));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A copy of a scenario in the source tree with `from` replaced by `to` (which must be there).
std::string variant(const std::string& rel, const std::string& from, const std::string& to) {
  std::string text = read_source(rel);
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  static int calls = 0;
  std::string path = mlsim::fixtures::scratch_dir() + "safety_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) +
                     ".yaml";
  std::ofstream(path) << text;
  return path;
}

const std::vector<std::string> kFast{"--no-recommendations", "--no-cores-needed", "--quiet"};

ProcessResult run_fast(const std::string& file, std::vector<std::string> extra = {}, const ProcessOptions& o = {}) {
  std::vector<std::string> args{"run", file};
  args.insert(args.end(), kFast.begin(), kFast.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return run_process(args, o);
}

// Exit 2 from both `check` and `run`, the message at file:line:col of the file, naming `key`.
void expect_load_error(const std::string& file, const std::string& key) {
  for (const char* cmd : {"check", "run"}) {
    ProcessResult r = std::string(cmd) == "check" ? run_process({"check", file}) : run_fast(file);
    EXPECT_EQ(r.signal, 0) << cmd;
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("^mlsim: " + file + ":[0-9]+:[0-9]+: ")))
        << cmd << ": " << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << cmd << ": " << r.err;
  }
}

const std::string kCase5 = "scenarios/cases/case5-tpu-unet-batch128.yaml";

} // namespace

// Was a segfault: the shuffle buffer's fill read a dataset held in RAM from a disk the node does not have.
TEST(Safety, ShuffleStageOverDatasetInRamRuns) {
  std::string file = variant(kCase5, "    - read\n", "    - read\n    - {name: shuffle, buffer: 10000}\n");
  ProcessResult r = run_fast(file);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Was SimGrid aborting in its stack allocation. Actors are bounded by memory (~15 kB each, limits.hpp):
// 10,000,000 workers reading a dataset in RAM are 2 x 10^7 actors, ~300 GB.
TEST(Safety, TooManyActorsIsALoadErrorNamingTheKey) {
  expect_load_error(variant(kCase5, "  prefetch: 2\n", "  prefetch: 2\n  workers: 10000000\n"), "pipeline.workers");
}

// Was bad_alloc inside an actor: 100,000 batches of 128 per accelerator drawn ahead.
TEST(Safety, DeepPrefetchIsALoadErrorNamingTheKey) {
  expect_load_error(variant(kCase5, "  prefetch: 2\n", "  prefetch: 100000\n"), "pipeline.prefetch");
}

// Was length_error inside an actor (a model given by FLOP per sample has no memory check).
TEST(Safety, BatchOfTwoToThe61IsALoadError) {
  std::string file = variant("scenarios/cases/case3-p100-hdd.yaml", "batch_size:", "batch_size: 2305843009213693952 #");
  expect_load_error(file, "pipeline.batch_size");
}

// batch x accelerators overflowed 64 bits and passed the "global batch <= dataset" rule.
TEST(Safety, GlobalBatchDoesNotOverflow) {
  Scenario ok = fixtures::load(fixtures::base_scenario(2));
  ASSERT_EQ(ok.total_accelerators(), 2);
  EXPECT_THROW(fixtures::load(fixtures::base_scenario(2), {"pipeline.batch_size=9223372036854775807"}), InputError);
}

// Was SimGrid's "Deadlock detected" (exit 1): an infinite cost per batch.
TEST(Safety, HugePerByteCostIsALoadError) {
  std::string file = variant("scenarios/quickstart.yaml", "per_byte: 0.05 ns", "per_byte: 1e308 s");
  expect_load_error(file, "per_byte");
}

// Was 17 s of work and then bad_alloc: every node of the service is simulated.
TEST(Safety, HugeDataServiceIsRejectedAtOnce) {
  std::string file = variant("scenarios/cases/case2-service.yaml", "count: 4", "count: 100000");
  ProcessResult r = run_process({"check", file});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  EXPECT_NE(r.err.find("hardware.nodes.1.count"), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: hardware.nodes.1.count"))) << r.err;
}

// The device-memory check ran only in `run`: `check` called such a scenario valid.
TEST(Safety, CheckRejectsABatchThatDoesNotFitInDeviceMemory) {
  std::string file = variant("scenarios/quickstart.yaml", "batch_size: 128", "batch_size: 20000");
  ProcessResult r = run_process({"check", file});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("pipeline.batch_size"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fits in the"), std::string::npos) << r.err;
}

// An exception inside an actor keeps its class (InputError -> exit 2), and the other actors stop.
TEST(Safety, ActorExceptionsComeOutWithTheirClass) {
  auto engine = make_engine();
  auto* zone = simgrid::s4u::create_full_zone("z");
  auto* host = zone->create_host("h", 1e9)->seal();
  zone->seal();
  int loops = 0;
  spawn_actor("forever", host, [&loops] {
    for (;;) {
      simgrid::s4u::this_actor::sleep_for(1.0);
      ++loops;
    }
  })->daemonize();
  spawn_actor("bad", host, [] {
    simgrid::s4u::this_actor::sleep_for(3.5);
    throw InputError("x.yaml:1:2", "pipeline.k", "a thing", "another");
  });
  spawn_actor("waits", host, [] { simgrid::s4u::this_actor::sleep_for(1e6); }); // killed, not waited for
  engine->run();
  EXPECT_DOUBLE_EQ(simgrid::s4u::Engine::get_clock(), 3.5);
  EXPECT_EQ(loops, 3);
  EXPECT_THROW(rethrow_actor_failure(), InputError);
  EXPECT_NO_THROW(rethrow_actor_failure()); // reported once
}

TEST(Safety, ActorBadAllocIsAnInternalErrorNotASignal) {
  auto engine = make_engine();
  auto* zone = simgrid::s4u::create_full_zone("z");
  auto* host = zone->create_host("h", 1e9)->seal();
  zone->seal();
  spawn_actor("alloc", host, [] { throw std::bad_alloc(); });
  engine->run();
  EXPECT_THROW(rethrow_actor_failure(), std::bad_alloc);
}

// run.steps: 10000000 ran silently for hours: run.max_wall ends it with exit 2 naming the key.
TEST(Safety, MaxWallEndsALongRunWithExitTwo) {
  std::string file = variant("scenarios/quickstart.yaml", "  steps: 30\n", "  steps: 10000000\n  fast_forward: false\n  max_wall: 2 s\n");
  std::string json = mlsim::fixtures::scratch_dir() + "maxwall_" + std::to_string(::getpid()) + ".json";
  ProcessResult r = run_fast(file, {"--json", json});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(r.seconds, 30.0);
  EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: run.max_wall: "))) << r.err;
  EXPECT_NE(::access(json.c_str(), F_OK), 0) << "no output after a stopped run";
}

// The wall limit (or a signal) is noticed when the engine moves its clock, before it ends the activities
// due then; the quickstart's disk servers wait on semaphores with timeouts, and killing one whose wait timed
// out at that instant made SimGrid abort in about half of such runs. Ten stops, each at a random instant.
TEST(Safety, StoppingWhileDisksWaitIsClean) {
  std::string file = variant("scenarios/quickstart.yaml", "  steps: 30\n", "  steps: 10000000\n  fast_forward: false\n  max_wall: 0.3 s\n");
  for (int i = 0; i < 10; ++i) {
    ProcessResult r = run_fast(file);
    ASSERT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(r.err.find("Cannot find myself"), std::string::npos) << r.err;
    ASSERT_NE(r.err.find("run.max_wall"), std::string::npos) << r.err;
  }
}

// A long run reports progress (forced here: stderr is not a terminal under ctest).
TEST(Safety, LongRunReportsProgress) {
  std::string file = variant("scenarios/quickstart.yaml", "  steps: 30\n", "  steps: 10000000\n  fast_forward: false\n  max_wall: 4 s\n");
  ProcessResult r = run_fast(file, {}, ProcessOptions{{"MLSIM_PROGRESS=1"}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("mlsim: step [0-9]+/10000000 .*steps/s.*ETA"))) << r.err;
}

class SafetySignal : public ::testing::TestWithParam<int> {};

// SIGINT / SIGTERM stop a simulation cleanly: 128 + signal, a message, no output file.
TEST_P(SafetySignal, StopsCleanlyWithoutOutput) {
  int sig = GetParam();
  std::string file = variant("scenarios/quickstart.yaml", "  steps: 30\n", "  steps: 10000000\n  fast_forward: false\n");
  std::string json = mlsim::fixtures::scratch_dir() + "signal_" + std::to_string(::getpid()) + ".json";
  ProcessOptions o;
  o.send_after = 2.0;
  o.send_signal = sig;
  ProcessResult r = run_fast(file, {"--json", json}, o);
  EXPECT_EQ(r.signal, 0) << "ended by the signal itself, not by mlsim";
  EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
  EXPECT_NE(r.err.find("interrupted by signal"), std::string::npos) << r.err;
  EXPECT_NE(::access(json.c_str(), F_OK), 0);
}
INSTANTIATE_TEST_SUITE_P(Signals, SafetySignal, ::testing::Values(SIGINT, SIGTERM));

// Was exit 1 (yaml-cpp's bad conversion, found by the fuzzer): a mapping key that is a list or a mapping.
TEST(Safety, AKeyThatIsNotAPlainNameIsBadInput) {
  EXPECT_THROW(fixtures::load("? [a, b]\n: 1\n"), InputError);
  std::string text = fixtures::base_scenario(1);
  EXPECT_THROW(fixtures::load(text + "? {x: 1}\n: 2\n"), InputError);
}
