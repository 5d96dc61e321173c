// A bad trace file is exit 2 with where it is bad: the byte offset for malformed JSON, the event's
// index and offset for a bad event, and what was expected. Offsets are found in the text by the test.
#include "test_support.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/pipeline/trace/measured_step.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace mlsim;

namespace {

std::string write(const std::string& name, const std::string& text) {
  std::string path = mlsim::fixtures::scratch_dir() + name;
  std::ofstream(path) << text;
  return path;
}

// The message read_trace + measure_step give for `text` ("" if none).
std::string error_of(const std::string& name, const std::string& text) {
  try {
    measure_step(read_trace(write(name, text)), {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kFirst = R"({"ph": "X", "name": "ProfilerStep#0", "ts": 1, "dur": 20})";

} // namespace

TEST(TraceErrors, TruncatedFileNamesTheByteWhereInputEnded) {
  std::string text = R"({"traceEvents": [)" + kFirst;
  std::string m = error_of("cut.json", text);
  EXPECT_NE(m.find("byte " + std::to_string(text.size())), std::string::npos) << m;
  EXPECT_NE(m.find("expected ']'"), std::string::npos) << m;
  EXPECT_NE(m.find("got end of input"), std::string::npos) << m;
}

TEST(TraceErrors, SyntaxErrorNamesItsByte) {
  std::string text = R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 2,, "name": "a"}]})";
  std::string m = error_of("syntax.json", text);
  EXPECT_NE(m.find("byte " + std::to_string(text.find(",,") + 1)), std::string::npos) << m;
  EXPECT_NE(m.find("expected string literal"), std::string::npos) << m;
}

TEST(TraceErrors, BadTimestampNamesTheEventAndItsOffset) {
  std::string second = R"({"ph": "X", "name": "b", "ts": "soon", "dur": 1})";
  std::string text = R"({"traceEvents": [)" + kFirst + ", " + second + "]}";
  std::string m = error_of("ts.json", text);
  EXPECT_NE(m.find("traceEvents[1] (byte " + std::to_string(text.find(second)) + ")"), std::string::npos) << m;
  EXPECT_NE(m.find("ts: expected a number of microseconds >= 0, got \"soon\""), std::string::npos) << m;
}

TEST(TraceErrors, CompleteEventWithoutDuration) {
  std::string second = R"({"ph": "X", "name": "b", "ts": 5})";
  std::string text = "[" + kFirst + ",\n" + second + "]"; // a bare array of events is a trace too
  std::string m = error_of("dur.json", text);
  EXPECT_NE(m.find("traceEvents[1] (byte " + std::to_string(text.find(second)) + ")"), std::string::npos) << m;
  EXPECT_NE(m.find("expected \"dur\""), std::string::npos) << m;
}

TEST(TraceErrors, EventThatIsNotAnObject) {
  std::string text = R"({"traceEvents": [)" + kFirst + R"(, [1, 2]]})";
  std::string m = error_of("array.json", text);
  EXPECT_NE(m.find("traceEvents[1]"), std::string::npos) << m;
  EXPECT_NE(m.find("expected an object (a trace event), got an array"), std::string::npos) << m;
}

TEST(TraceErrors, NoStepMarkers) {
  std::string m = error_of("nosteps.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}]})");
  EXPECT_NE(m.find("expected ProfilerStep#N step markers"), std::string::npos) << m;
  EXPECT_NE(m.find("got none among 1 events"), std::string::npos) << m;
}

TEST(TraceErrors, StepsOutsideTheTrace) {
  std::string path = write("range.json", "[" + kFirst + "]");
  try {
    measure_step(read_trace(path), {"", 3, 5});
    ADD_FAILURE() << "steps 3..5 accepted in a trace of step 0";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("steps: expected a range within the trace's steps 0..0, got 3..5"),
              std::string::npos)
        << e.what();
  }
}

// Through the command: exit 2, the message on stderr, no section written.
TEST(TraceErrors, ImportTraceExitsTwoAndWritesNothing) {
  std::string text = R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 2,, "name": "a"}]})";
  std::string path = write("cli.json", text);
  std::string out = mlsim::fixtures::scratch_dir() + "cli-section.yaml";
  std::remove(out.c_str());
  auto [code, output] = fixtures::run_mlsim("import-trace " + path + " --out " + out);
  EXPECT_EQ(code, 2) << output;
  EXPECT_NE(output.find(path + ": byte " + std::to_string(text.find(",,") + 1)), std::string::npos) << output;
  EXPECT_FALSE(std::ifstream(out).good());
}

// A scenario naming a bad trace: the scenario's position of model.trace, then the trace's.
TEST(TraceErrors, ScenarioPointsAtModelTraceThenTheTrace) {
  std::string path = write("in-scenario.json", R"({"traceEvents": [)" + kFirst);
  try {
    fixtures::load(fixtures::base_scenario(1), {"model={trace: " + path + "}"});
    ADD_FAILURE() << "a truncated trace was accepted";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("model.trace: " + path + ": byte"), std::string::npos) << m;
  }
}
