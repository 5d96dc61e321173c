// The output side of the bad-input contract, end to end through the binary:
// outputs appear all together or not at all, nothing temporary is left on any
// exit path mlsim controls (exit 2, SIGTERM), stale temporaries of killed runs
// are removed, a symlinked output is written through, sizes that could only
// fail late are refused up front, and a killed sweep leaves no child running.
#include "sim/core/base/atomic_file.hpp"
#include "sim/core/base/errors.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace mlsim;

namespace {

// A fresh, empty directory per test and process.
std::string fresh_dir() {
  std::string d = mlsim::fixtures::scratch_dir() + "output_contract_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + std::to_string(::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d + "/";
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

int run_cli(const std::string &args) {
  int status = std::system((fixtures::mlsim_binary() + " " + args + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quickstart() { return fixtures::source_path("scenarios/quickstart.yaml"); }
const std::string kFast = " --quiet --no-recommendations --no-cores-needed";

// A pid that certainly belonged to a process that has ended: a child of ours, reaped.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0)
    std::_Exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

pid_t spawn(const std::vector<std::string> &args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char *> argv;
    std::string bin = fixtures::mlsim_binary();
    argv.push_back(bin.data());
    for (const auto &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::freopen("/dev/null", "w", stderr);
    std::freopen("/dev/null", "w", stdout);
    ::execv(bin.c_str(), argv.data());
    std::_Exit(127);
  }
  return pid;
}

// Processes whose parent is `parent` (from /proc), alive and not zombies.
std::vector<pid_t> live_children(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto &e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::string stat = slurp("/proc/" + name + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos)
      continue;
    char state = 0;
    long ppid = 0;
    std::istringstream rest(stat.substr(close + 2));
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z')
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

bool alive(pid_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

} // namespace

TEST(OutputContract, UnwritableSecondOutputLeavesNoFirstOne) {
  std::string d = fresh_dir();
  EXPECT_EQ(run_cli("run " + quickstart() + kFast + " --json " + d + "x.json --trace /nonexistent/dir/t.json"), 2);
  EXPECT_TRUE(entries(d).empty()) << entries(d).size(); // neither x.json nor a temporary
}

TEST(OutputContract, BadInputAfterOutputsAreDeclaredLeavesNothing) {
  std::string d = fresh_dir();
  EXPECT_EQ(
      run_cli("run " + quickstart() + kFast + " --set run.steps=0 --json " + d + "x.json --trace " + d + "t.json"), 2);
  EXPECT_TRUE(entries(d).empty());
}

TEST(OutputContract, SameFileTwiceIsRefused) {
  std::string d = fresh_dir();
  EXPECT_EQ(run_cli("run " + quickstart() + kFast + " --json " + d + "x.json --trace " + d + "x.json"), 2);
  EXPECT_TRUE(entries(d).empty());
}

TEST(OutputContract, BothOutputsWrittenTogether) {
  std::string d = fresh_dir();
  ASSERT_EQ(run_cli("run " + quickstart() + kFast + " --json " + d + "x.json --trace " + d + "t.json"), 0);
  EXPECT_EQ(entries(d), (std::vector<std::string>{"t.json", "x.json"}));
  EXPECT_EQ(nlohmann::json::parse(slurp(d + "x.json"))["scenario"], "quickstart");
  EXPECT_TRUE(nlohmann::json::parse(slurp(d + "t.json")).contains("traceEvents"));
}

TEST(OutputContract, SymlinkIsWrittenThrough) {
  std::string d = fresh_dir();
  std::ofstream(d + "real.json") << "old";
  fs::create_symlink("real.json", d + "link.json");
  ASSERT_EQ(run_cli("run " + quickstart() + kFast + " --json " + d + "link.json"), 0);
  EXPECT_TRUE(fs::is_symlink(d + "link.json"));
  EXPECT_EQ(fs::read_symlink(d + "link.json"), "real.json");
  EXPECT_EQ(nlohmann::json::parse(slurp(d + "real.json"))["scenario"], "quickstart");
  EXPECT_EQ(entries(d), (std::vector<std::string>{"link.json", "real.json"}));
}

TEST(OutputContract, StaleTemporariesOfDeadRunsAreRemoved) {
  std::string d = fresh_dir();
  std::string stale = ".x.json.mlsim-tmp." + std::to_string(dead_pid());
  std::string live = ".x.json.mlsim-tmp." + std::to_string(::getpid()); // this test process is alive: kept
  std::ofstream(d + stale) << "half";
  std::ofstream(d + live) << "in progress";
  ASSERT_EQ(run_cli("run " + quickstart() + kFast + " --json " + d + "x.json"), 0);
  EXPECT_EQ(entries(d), (std::vector<std::string>{live, "x.json"}));
}

TEST(OutputContract, SigtermRemovesTemporaries) {
  std::string d = fresh_dir();
  // A long run (recommendations re-simulate), terminated once its temporaries exist.
  pid_t pid = spawn({"run", quickstart(), "--quiet", "--set", "run.steps=3000", "--set", "run.fast_forward=false",
                     "--json", d + "x.json", "--trace", d + "t.json"});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (entries(d).size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(entries(d).size(), 2u) << "the temporaries never appeared";
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run finished before it could be terminated";
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_TRUE(entries(d).empty());
}

TEST(OutputContract, UnwritableOutputFailsBeforeSimulating) {
  // rightsize over 100 values and merge: exit 2 at once, naming the option.
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run_cli("rightsize " + quickstart() +
                    " --vary hardware.nodes.0.cpu.cores=1..100 --target 'stall<0.05' "
                    "--out /nonexistent/dir/c.csv"),
            2);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  std::string d = fresh_dir();
  std::ofstream(d + "a.csv") << "point,k,status\n0,1,ok\n";
  EXPECT_EQ(run_cli("merge " + d + "a.csv --out /nonexistent/dir/m.csv"), 2);
}

TEST(OutputContract, UncommittedSetLeavesNothingAndCommitWritesAll) {
  std::string d = fresh_dir();
  {
    OutputSet set;
    set.set(set.add("--a", d + "a.txt"), "A");
    set.add("--b", d + "b.txt");
    EXPECT_EQ(entries(d).size(), 2u); // the two temporaries
  }
  EXPECT_TRUE(entries(d).empty());
  OutputSet set;
  set.set(set.add("--a", d + "a.txt"), "A");
  set.set(set.add("--b", d + "b.txt"), "B");
  set.commit();
  EXPECT_EQ(entries(d), (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(slurp(d + "b.txt"), "B");
  EXPECT_THROW(OutputSet().add("--x", d), InputError); // a directory
}

TEST(OutputContract, HugeGridIsRefusedUpFront) {
  // 10^9 points: refused with the limit named, not built until memory runs out.
  std::string err = fresh_dir() + "err.txt";
  int status = std::system((fixtures::mlsim_binary() + " sweep " + quickstart() +
                            " --vary run.seed=1..1000 --vary pipeline.batch_size=1..1000 --vary "
                            "hardware.nodes.0.cpu.cores=1..1000 --list > /dev/null 2> " +
                            err)
                               .c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(slurp(err).find("expected a grid of at most 1000000 points, got 1e+09 points"), std::string::npos)
      << slurp(err);
}

TEST(OutputContract, MergeRefusesPointsOutsideTheGridLimit) {
  std::string d = fresh_dir();
  for (const char *p : {"-1", "4000000000", "4e9"}) {
    std::ofstream(d + "a.csv") << "point,k,status\n" << p << ",1,ok\n";
    EXPECT_EQ(run_cli("merge " + d + "a.csv"), 2) << p;
  }
}

TEST(OutputContract, KilledSweepLeavesNoChildRunning) {
  std::string d = fresh_dir();
  // Points of 100,000 steps each, every one simulated (minutes), two at a time: killed as soon as both children run.
  pid_t sweep = spawn({"sweep", quickstart(), "--set", "run.steps=100000", "--set", "run.fast_forward=false", "--vary",
                       "run.seed=1..4", "--jobs", "2", "--out", d + "s.csv"});
  std::vector<pid_t> children;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (children.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    children = live_children(sweep);
  }
  ASSERT_EQ(children.size(), 2u) << "the sweep never ran two children";
  ::kill(sweep, SIGKILL);
  ::waitpid(sweep, nullptr, 0);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto any_alive = [&] { return std::any_of(children.begin(), children.end(), alive); };
  while (any_alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  bool leaked = any_alive();
  for (pid_t c : children) // never leave them behind, even when the test fails
    if (alive(c))
      ::kill(c, SIGKILL);
  EXPECT_FALSE(leaked) << "children outlived the killed sweep";
}
