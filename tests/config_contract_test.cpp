// The bad-input contract of scenario loading: every error keeps the position
// of the file's own text (with or without --set), names the override it came
// from, and the document is checked once at load (UTF-8, plain keys, no key
// twice) and read with a bound. Expected positions are found by searching the
// scenario text itself, not taken from the loader.
#include "sim/core/base/errors.hpp"
#include "sim/core/base/input_file.hpp"
#include "sim/core/base/yaml_document_check.hpp"
#include "sim/core/run/scenario.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

using namespace mlsim;

namespace {

std::string temp_path(const std::string &stem) {
  static int calls = 0;
  return mlsim::fixtures::scratch_dir() + "config_contract_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + "_" +
         stem;
}

std::string write_temp(const std::string &text) {
  std::string path = temp_path("scenario.yaml");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string error_of_file(const std::string &path, const std::vector<std::string> &overrides = {}) {
  try {
    load_scenario_file(path, overrides);
  } catch (const InputError &e) {
    return e.what();
  }
  return "no error";
}

std::string error_of(const std::string &text, const std::vector<std::string> &overrides = {}) {
  std::string path = write_temp(text);
  std::string m = error_of_file(path, overrides);
  return m.rfind(path, 0) == 0 ? "FILE" + m.substr(path.size()) : m;
}

// "line:col" (1-based) of the first occurrence of `needle` in `text`, plus `shift` columns.
std::string position_of(const std::string &text, const std::string &needle, int shift = 0) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  size_t line_start = text.rfind('\n', at);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(line_start), '\n'));
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1 + static_cast<size_t>(shift));
}

std::string replaced(std::string s, const std::string &from, const std::string &to) {
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

} // namespace

// Today's main cloned the document for --set, and the clone put every node at 1:1.
TEST(ConfigContract, UnrelatedOverrideKeepsTheFilePosition) {
  std::string text = replaced(fixtures::base_scenario(), "  warmup_steps: 10", "  warmup_steps: 100");
  std::string expected = "FILE:" + position_of(text, "warmup_steps: 100", 14) + ": run.warmup_steps:";
  EXPECT_EQ(error_of(text).rfind(expected, 0), 0u) << error_of(text);
  std::string m = error_of(text, {"pipeline.prefetch=3"});
  EXPECT_EQ(m.rfind(expected, 0), 0u) << m;
}

TEST(ConfigContract, ErrorInAnOverriddenValueNamesTheOverride) {
  std::string m = error_of(fixtures::base_scenario(), {"pipeline.prefetch=3", "run.warmup_steps=500"});
  EXPECT_EQ(m.rfind("--set run.warmup_steps=500: run.warmup_steps: expected fewer", 0), 0u) << m;
}

// A missing key is reported at the mapping that should hold it.
TEST(ConfigContract, MissingKeyHasTheMappingsPosition) {
  std::string text = replaced(fixtures::base_scenario(), "  batch_size: 32\n", "");
  std::string expected = "FILE:" + position_of(text, "  framework: tf.data", 2) +
                         ": pipeline.batch_size: expected an integer, got no value (the key is missing)";
  EXPECT_EQ(error_of(text), expected);
  EXPECT_EQ(error_of(text, {"run.steps=50"}), expected);
}

// A mapping created by --set has no line of its own: the nearest enclosing mapping's, and the override named.
TEST(ConfigContract, MappingCreatedByOverrideNamesIt) {
  std::string path = fixtures::source_path("scenarios/cases/case3-p100-downsized.yaml");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string m = error_of_file(path, {"pipeline.service.shared_by_jobs=2"});
  std::string expected = path + ":" + position_of(text.str(), "  framework: tf.data", 2) + ": pipeline.service.node:";
  EXPECT_EQ(m.rfind(expected, 0), 0u) << m;
  EXPECT_NE(m.find("'pipeline.service' was created by --set pipeline.service.shared_by_jobs=2"), std::string::npos)
      << m;
}

// An unknown key that only an override made has no line in the file: the override is its place.
TEST(ConfigContract, UnknownKeyMadeByAnOverrideNamesIt) {
  std::string m = error_of(fixtures::base_scenario(), {"a.b.c=1"});
  EXPECT_EQ(m.rfind("--set a.b.c=1: a: expected one of the keys ", 0), 0u) << m;
  std::string nested = error_of(fixtures::base_scenario(), {"pipeline.bogus.x=1"});
  EXPECT_EQ(nested.rfind("--set pipeline.bogus.x=1: pipeline.bogus: expected one of the keys ", 0), 0u) << nested;
}

// A preset name that looks like a path but is too long for one made std::filesystem::exists throw
// (ENAMETOOLONG) past the loader: an abort, found by fuzzing. It is a name that names no file.
TEST(ConfigContract, PresetPathTooLongForTheSystemIsAnInputError) {
  std::string name = std::string(5000, 'a') + ".yaml";
  std::string text = replaced(fixtures::base_scenario(), "preset: a100-sxm4-40gb", "preset: " + name);
  std::string m = error_of(text);
  EXPECT_EQ(m.rfind("FILE:" + position_of(text, name) + ": ", 0), 0u) << m.substr(0, 200);
  EXPECT_NE(m.find("expected a preset name or a profile file that exists"), std::string::npos) << m.substr(0, 200);
}

// 1e308 GB is 1e317 bytes: not a double. It used to pass as infinity and then blame the absent ram.reserved.
TEST(ConfigContract, QuantityBeyondDoubleIsItsOwnError) {
  std::string text = replaced(fixtures::base_scenario(), "size: 256 GiB", "size: 1e308 GB");
  std::string m = error_of(text);
  EXPECT_EQ(m.rfind("FILE:" + position_of(text, "1e308 GB") + ": hardware.nodes.0.ram.size: expected a size", 0), 0u)
      << m;
}

TEST(ConfigContract, DuplicateKeyNamesBothLines) {
  std::string text = replaced(fixtures::base_scenario(), "  batch_size: 32\n", "  batch_size: 32\n  batch_size: 0\n");
  std::string second = position_of(text, "  batch_size: 0", 2);
  std::string first_line =
      position_of(text, "  batch_size: 32").substr(0, position_of(text, "  batch_size: 32").find(':'));
  std::string m = error_of(text);
  EXPECT_EQ(m.rfind("FILE:" + second + ": pipeline.batch_size: expected each key once in a mapping (first at line " +
                        first_line + ")",
                    0),
            0u)
      << m;
}

TEST(ConfigContract, DuplicateKeyInAFlowMappingAndInAnOverride) {
  std::string text = replaced(fixtures::base_scenario(), "{cores: 16, core_speed: 1.0}", "{cores: 32, cores: 0}");
  EXPECT_EQ(error_of(text).rfind(
                "FILE:" + position_of(text, "cores: 0") + ": hardware.nodes.0.cpu.cores: expected each key once", 0),
            0u)
      << error_of(text);
  std::string value = "{steps: 3, steps: 4, seed: 1, warmup_steps: 1}";
  std::string col = std::to_string(value.find("steps", 2) + 1); // the second one
  std::string m = error_of(fixtures::base_scenario(), {"run=" + value});
  EXPECT_EQ(m.rfind("--set run=" + value + ": run: in the value:1:" + col + ": steps: expected each key once", 0), 0u)
      << m;
}

TEST(ConfigContract, DuplicateKeyInsideAProfileFile) {
  std::string profile = temp_path("profile.yaml");
  std::ofstream(profile) << "cpu:\n  cores: 8\n  cores: 64\n";
  std::string text = replaced(fixtures::base_scenario(), "{cores: 16, core_speed: 1.0}", "{preset: " + profile + "}");
  std::string m = error_of(text);
  EXPECT_EQ(m.rfind(profile + ":3:3: cpu.cores: expected each key once in a mapping (first at line 2)", 0), 0u) << m;
}

TEST(ConfigContract, ComplexKeyIsAnInputErrorWithPosition) {
  std::string text = replaced(fixtures::base_scenario(), "  batch_size: 32\n", "  batch_size: 32\n  ? [a, b]\n  : 3\n");
  std::string m = error_of(text);
  EXPECT_EQ(
      m.rfind("FILE:" + position_of(text, "[a, b]") + ": pipeline: expected a key name, got a list used as a key", 0),
      0u)
      << m;
  std::string flow = replaced(fixtures::base_scenario(), "{cores: 16, core_speed: 1.0}", "{cores: 16, {x: 1}: 2}");
  EXPECT_EQ(
      error_of(flow).rfind("FILE:" + position_of(flow, "{x: 1}") + ": hardware.nodes.0.cpu: expected a key name", 0),
      0u)
      << error_of(flow);
}

TEST(ConfigContract, InvalidUtf8IsRejectedAtLoadWithPosition) {
  std::string text = replaced(fixtures::base_scenario(), "name: test", "name: te\xff\xfest");
  EXPECT_EQ(error_of(text), "FILE:1:9: expected UTF-8 text, got a byte that is not valid UTF-8");
  std::string m = error_of(fixtures::base_scenario(), {"name=a\xc3"});
  EXPECT_EQ(m.rfind("--set name=a\xc3: name: in the value:1:2: expected UTF-8 text", 0), 0u) << m;
}

// yaml-cpp 0.7 reads a lone "," at the top level as an endless series of empty documents: the
// loader hung on it (found by fuzzing). A scenario is one document; the second is the error.
TEST(ConfigContract, StrayFlowIndicatorIsAnErrorNotAHang) {
  EXPECT_EQ(error_of(","), "FILE:1:1: expected a single YAML document, got a second document");
  std::string two = fixtures::base_scenario() + "---\nname: other\n";
  EXPECT_EQ(error_of(two), "FILE:" + position_of(two, "---\nname: other") + ": expected a single YAML document, got a second document");
}

// RFC 3629 section 3/4 examples: overlong "/" (C0 AF), a surrogate (ED A0 80), above U+10FFFF (F4 90 80 80).
TEST(ConfigContract, Utf8ValidatorFollowsRfc3629) {
  EXPECT_EQ(first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "");
  EXPECT_EQ(first_invalid_utf8("a\n\xc0\xaf"), "2:1");
  EXPECT_EQ(first_invalid_utf8("ab\xed\xa0\x80"), "1:3");
  EXPECT_EQ(first_invalid_utf8("\xf4\x90\x80\x80"), "1:1");
  EXPECT_EQ(first_invalid_utf8("\xe2\x82"), "1:1"); // cut short
}

TEST(ConfigContract, ReferencedFileMustBeARegularBoundedFile) {
  std::string dir_text = replaced(fixtures::base_scenario(), "sample_size: 1 kB",
                                  "sample_size: {distribution: histogram, file: " + mlsim::fixtures::scratch_dir() + "}");
  std::string m = error_of(dir_text);
  EXPECT_EQ(
      m.rfind("FILE:" + position_of(dir_text, mlsim::fixtures::scratch_dir() + "}") +
                  ": dataset.sample_size.file: expected the name of a readable file (a regular file of at most 64 MiB)",
              0),
      0u)
      << m;
  EXPECT_NE(m.find("(a directory)"), std::string::npos) << m;

  std::string dev = error_of(fixtures::base_scenario(), {"hardware.nodes.0.nic=/dev/zero"});
  EXPECT_EQ(
      dev.rfind("--set hardware.nodes.0.nic=/dev/zero: hardware.nodes.0.nic: expected the name of a readable file", 0),
      0u)
      << dev;
  EXPECT_NE(dev.find("(a character device)"), std::string::npos) << dev;

  std::string fifo = temp_path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string f = error_of_file(fifo); // must not block waiting for a writer
  EXPECT_EQ(f, fifo + ": expected a readable YAML file (a regular file of at most 64 MiB), got a FIFO");
  ::unlink(fifo.c_str());
}

TEST(ConfigContract, OversizedFileIsRejectedBeforeReading) {
  std::string big = temp_path("big.yaml");
  { std::ofstream out(big); }
  ASSERT_EQ(::truncate(big.c_str(), static_cast<off_t>(kMaxInputFileBytes) + 1), 0); // sparse: no disk used
  std::string m = error_of_file(big);
  EXPECT_EQ(m, big + ": expected a readable YAML file (a regular file of at most 64 MiB), got a file of 65 MiB, over "
                     "the limit of 64 MiB");
  ::unlink(big.c_str());
}

// A very long bad value is shown by its start and its length, cut between UTF-8 characters.
TEST(ConfigContract, LongBadValueIsShownByItsStartAndLength) {
  std::string value;
  for (int i = 0; i < 100; ++i)
    value += "\xc3\xa9"; // 'é', two bytes each: the cut at 60 bytes falls between two characters
  std::string m = error_of(replaced(fixtures::base_scenario(), "batch_size: 32", "batch_size: " + value));
  EXPECT_NE(m.find("got '" + value.substr(0, 60) + "...' (200 bytes)"), std::string::npos) << m;
  std::string odd = "x" + value; // now byte 60 continues a character: the cut moves back to byte 59
  m = error_of(replaced(fixtures::base_scenario(), "batch_size: 32", "batch_size: " + odd));
  EXPECT_NE(m.find("got '" + odd.substr(0, 59) + "...' (201 bytes)"), std::string::npos) << m;
  // A value of ordinary length is quoted whole.
  m = error_of(replaced(fixtures::base_scenario(), "batch_size: 32", "batch_size: thirty-two"));
  EXPECT_NE(m.find("got 'thirty-two'"), std::string::npos) << m;
}
