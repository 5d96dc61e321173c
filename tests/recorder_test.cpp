// The recorder's span filter: a run without a trace keeps only the spans its metrics read, and its
// figures are those of the same run with every span kept.
#include "cli_runner.hpp"
#include "test_support.hpp"

#include "sim/core/base/recorder.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>

namespace {

int run_cli(const std::string& args) {
  return std::system((mlsim::fixtures::mlsim_binary() + " " + args + " > /dev/null 2>&1").c_str());
}

} // namespace

TEST(Recorder, KeepsOnlyTheNamedSpansWhenFiltered) {
  mlsim::Recorder rec;
  const uint32_t track = rec.intern("t"), cat = rec.intern("c");
  const uint32_t early = rec.intern("interned before the filter"), read = rec.intern("read");
  rec.keep_only_spans({"read", "named before it was interned"});
  rec.span(track, early, cat, 0, 1);
  rec.span(track, read, cat, 1, 2);
  rec.span(track, rec.intern("named before it was interned"), cat, 2, 3);
  rec.span(track, rec.intern("interned after the filter"), cat, 3, 4);
  ASSERT_EQ(rec.spans().size(), 2u);
  EXPECT_EQ(rec.text(rec.spans()[0].name), "read");
  EXPECT_EQ(rec.spans()[1].start, 2.0);
  EXPECT_EQ(rec.dropped_spans(), 0u); // filtered spans are not "dropped" (that is the size limit)
}

TEST(Recorder, KeepsEverySpanByDefault) {
  mlsim::Recorder rec;
  for (int i = 0; i < 5; ++i)
    rec.span(rec.intern("t"), rec.intern("n" + std::to_string(i)), rec.intern("c"), i, i + 1);
  EXPECT_EQ(rec.spans().size(), 5u);
}

TEST(CounterSlot, AddsToTheNamedCounterAndSurvivesNewTotals) {
  mlsim::Recorder rec;
  mlsim::CounterSlot slot(rec, mlsim::CounterName("a.bytes"));
  EXPECT_TRUE(rec.counters().empty()); // never added to: absent, as with Recorder::add
  slot.add(2);
  rec.add(mlsim::CounterName("a.bytes"), 3);
  slot.add(5);
  EXPECT_EQ(rec.counter(mlsim::CounterName("a.bytes")), 10.0);
  rec.replace_counters({{"a.bytes", 100.0}, {"b", 1.0}});
  slot.add(1); // the slot still points at the kept counter
  EXPECT_EQ(rec.counter(mlsim::CounterName("a.bytes")), 101.0);
  EXPECT_EQ(rec.counter(mlsim::CounterName("b")), 1.0);
  rec.replace_counters({{"a.bytes", 7.0}});
  EXPECT_EQ(rec.counters().size(), 1u); // "b" removed
}

TEST(BusyPeriods, MergesOverlappingAndTouchingActivities) {
  mlsim::BusyPeriods b;
  b.begin(0); // [0, 2] and [1, 3] overlap, [3, 4] touches them: one period [0, 4]
  b.begin(1);
  b.end(2);
  b.end(3);
  b.begin(3);
  b.end(4);
  b.begin(5); // a gap, then [5, 6]
  b.end(6);
  using P = std::vector<std::pair<double, double>>;
  EXPECT_EQ(b.periods(), (P{{0, 4}, {5, 6}}));
  EXPECT_FALSE(b.open());
  b.begin(7); // still in progress at the end: open, ending at its last end so far
  b.begin(8);
  b.end(9);
  EXPECT_TRUE(b.open());
  EXPECT_EQ(b.periods().back(), std::make_pair(7.0, 9.0));
}

TEST(Recorder, KeepsOnlyTheBusyPeriodsAsked) {
  mlsim::Recorder rec;
  rec.keep_only_busy({"node/reads"});
  ASSERT_NE(rec.busy("node/reads"), nullptr);
  EXPECT_EQ(rec.busy("other/reads"), nullptr);
  rec.busy("node/reads")->begin(1);
  rec.busy("node/reads")->end(2);
  ASSERT_NE(rec.find_busy("node/reads"), nullptr);
  EXPECT_EQ(rec.find_busy("node/reads")->periods().size(), 1u);
  EXPECT_EQ(rec.find_busy("other/reads"), nullptr);
}

// The input analysis reads the trainers' waits from their step records and the pipeline's reads from
// busy periods, never spans: a run with a trace (every span) and one without (none) give the same bytes. The quickstart reads from disk both
// while the trainers wait and ahead of them, so both read figures are non-zero and would change if the
// filter lost the read spans.
TEST(Recorder, FiguresWithAndWithoutATraceAreTheSame) {
  const std::string dir = mlsim::fixtures::scratch_dir();
  const std::string scn = mlsim::fixtures::source_path("scenarios/quickstart.yaml");
  const std::string quick = " --no-recommendations --no-cores-needed";
  ASSERT_EQ(run_cli("run " + scn + quick + " --json " + dir + "plain.json"), 0);
  ASSERT_EQ(run_cli("run " + scn + quick + " --json " + dir + "traced.json --trace " + dir + "t.json"), 0);
  const std::string plain = mlsim::fixtures::slurp(dir + "plain.json");
  EXPECT_EQ(plain, mlsim::fixtures::slurp(dir + "traced.json"));
  const auto ia = nlohmann::json::parse(plain).at("input_analysis_s_per_step");
  EXPECT_GT(ia.at("read_on_demand").get<double>(), 0.0);
  EXPECT_GT(ia.at("read_in_advance").get<double>(), 0.0);
}
