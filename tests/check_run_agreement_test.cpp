// `mlsim check` rejects every scenario that `mlsim run` rejects, with the same
// message, over a committed corpus of inputs that once crashed or slipped through
// (tests/fuzz/agreement/, grown from fuzzing). No input ends in a signal or an
// internal error (exit 1).
#include "cli_runner.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using mlsim::fixtures::ProcessResult;
using mlsim::fixtures::run_process;

namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(mlsim::fixtures::source_path("tests/fuzz/agreement")))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

} // namespace

TEST(CheckRunAgreement, CorpusIsNotEmpty) { EXPECT_GE(corpus().size(), 10u); }

TEST(CheckRunAgreement, CheckRejectsWhatRunRejects) {
  for (const auto& file : corpus()) {
    SCOPED_TRACE(file);
    ProcessResult check = run_process({"check", file});
    ProcessResult run = run_process({"run", file, "--no-recommendations", "--no-cores-needed", "--quiet"});
    EXPECT_EQ(check.signal, 0);
    EXPECT_EQ(run.signal, 0);
    EXPECT_TRUE(check.exit_code == 0 || check.exit_code == 2) << check.err;
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 2) << run.err;
    if (run.exit_code == 2) {
      EXPECT_EQ(check.exit_code, 2) << "check accepted what run rejected: " << run.err;
      EXPECT_EQ(first_line(check.err), first_line(run.err));
    }
  }
}
