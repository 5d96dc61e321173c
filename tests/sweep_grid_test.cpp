// Sweep grids: --vary parsing, the cartesian product, shard slicing, CSV round trips.
#include "sim/core/base/csv.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/studies/sweep_grid.hpp"
#include "sim/core/studies/sweep_merge.hpp"
#include "sim/core/studies/sweep_row.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

using namespace mlsim;

TEST(SweepGrid, ListAndRangeAxes) {
  auto list = parse_axis("pipeline.batch_size=64, 128,256");
  EXPECT_EQ(list.key, "pipeline.batch_size");
  EXPECT_EQ(list.values, (std::vector<std::string>{"64", "128", "256"}));
  EXPECT_EQ(parse_axis("hardware.nodes.0.cpu.cores=8..32:8").values,
            (std::vector<std::string>{"8", "16", "24", "32"}));
  EXPECT_EQ(parse_axis("k=1..4").values, (std::vector<std::string>{"1", "2", "3", "4"}));
  // Decimal steps do not accumulate float noise into the values written to --set.
  EXPECT_EQ(parse_axis("k=0.1..0.5:0.1").values, (std::vector<std::string>{"0.1", "0.2", "0.3", "0.4", "0.5"}));
  // A YAML flow value keeps its commas; a unit with a space stays one value.
  EXPECT_EQ(parse_axis("pipeline.stages.0={name: read, parallelism: 4},{name: read, parallelism: 8}").values,
            (std::vector<std::string>{"{name: read, parallelism: 4}", "{name: read, parallelism: 8}"}));
  EXPECT_EQ(parse_axis("c=1 ms,2 ms").values, (std::vector<std::string>{"1 ms", "2 ms"}));
}

TEST(SweepGrid, BadAxesAreInputErrors) {
  for (const char* bad : {"nokey", "=1,2", "k=", "k=1,,2", "k=4..1", "k=1..4:0", "k=a..b", "k=1..4:-1"})
    EXPECT_THROW(parse_axis(bad), InputError) << bad;
  EXPECT_THROW(SweepGrid({parse_axis("k=1,2"), parse_axis("k=3")}), InputError); // a key varied twice
}

TEST(SweepGrid, CartesianProductLastAxisFastest) {
  SweepGrid g({parse_axis("a=1,2,3"), parse_axis("b=x,y")});
  ASSERT_EQ(g.size(), 6u);
  std::set<std::vector<std::string>> seen;
  for (size_t p = 0; p < g.size(); ++p) {
    auto v = g.values(p);
    EXPECT_EQ(v[0], std::to_string(p / 2 + 1));
    EXPECT_EQ(v[1], p % 2 == 0 ? "x" : "y");
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 6u); // every combination exactly once
  EXPECT_EQ(g.overrides(3), (std::vector<std::string>{"a=2", "b=y"}));
}

TEST(SweepGrid, ShardsPartitionTheGrid) {
  SweepGrid g({parse_axis("a=1..7"), parse_axis("b=1..5"), parse_axis("c=1,2")}); // 70 points
  for (size_t n : {1u, 2u, 3u, 7u, 16u, 70u, 100u}) {
    std::vector<int> count(g.size(), 0);
    size_t largest = 0, smallest = g.size();
    for (size_t i = 0; i < n; ++i) {
      auto pts = g.shard_points(Shard{i, n});
      largest = std::max(largest, pts.size());
      smallest = std::min(smallest, pts.size());
      for (size_t p : pts)
        ++count[p];
    }
    for (size_t p = 0; p < g.size(); ++p)
      EXPECT_EQ(count[p], 1) << "point " << p << " with " << n << " shards";
    EXPECT_LE(largest - smallest, 1u) << n << " shards are balanced";
  }
}

TEST(SweepGrid, ShardSpec) {
  EXPECT_EQ(parse_shard("3/8").index, 3u);
  EXPECT_EQ(parse_shard("3/8").count, 8u);
  for (const char* bad : {"8/8", "-1/8", "1/0", "1", "a/b", "1/8x"})
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
}

TEST(SweepCsv, QuotedFieldsRoundTrip) {
  CsvRow row{"0", "{name: read, parallelism: 4}", "say \"hi\"", "two\nlines", ""};
  std::string text = csv_line({"a", "b", "c", "d", "e"}) + csv_line(row);
  CsvFile f = parse_csv(text, "t.csv");
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0], row);
  EXPECT_FALSE(f.truncated_tail);
  EXPECT_TRUE(parse_csv(text + "1,x,y", "t.csv").truncated_tail); // a row cut by a kill is not a row
  EXPECT_EQ(parse_csv(text + "1,x,y", "t.csv").rows.size(), 1u);
}

TEST(SweepCsv, ErrorRowsHaveEmptyFigures) {
  CsvRow h = sweep_header({"k"});
  CsvRow r = sweep_row(4, {"9"}, nullptr, "boom,\nbang");
  ASSERT_EQ(r.size(), h.size());
  EXPECT_EQ(r[0], "4");
  EXPECT_EQ(r[1], "9");
  EXPECT_EQ(r[2], "error");
  EXPECT_EQ(r.back(), "boom, bang");
  EXPECT_EQ(h.front(), "point");
  EXPECT_EQ(h.back(), "error");
}

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = mlsim::fixtures::scratch_dir() + name;
  std::ofstream(path) << text;
  return path;
}
} // namespace

TEST(SweepMerge, UnionInGridOrderDuplicatesOnceConflictsRejected) {
  CsvRow h{"point", "k", "status"};
  std::string a = write_temp("m_a.csv", csv_line(h) + csv_line({"2", "c", "ok"}) + csv_line({"0", "a", "ok"}));
  std::string b = write_temp("m_b.csv", csv_line(h) + csv_line({"1", "b", "ok"}) + csv_line({"2", "c", "ok"}));
  MergeResult m = merge_results({a, b});
  EXPECT_EQ(m.text, csv_line(h) + csv_line({"0", "a", "ok"}) + csv_line({"1", "b", "ok"}) + csv_line({"2", "c", "ok"}));
  EXPECT_TRUE(m.missing.empty());
  std::string gap = write_temp("m_gap.csv", csv_line(h) + csv_line({"4", "e", "ok"}));
  EXPECT_EQ(merge_results({a, gap}).missing, (std::vector<size_t>{1, 3}));
  std::string clash = write_temp("m_clash.csv", csv_line(h) + csv_line({"1", "B", "ok"}));
  EXPECT_THROW(merge_results({b, clash}), InputError);
  std::string other = write_temp("m_other.csv", csv_line({"point", "j", "status"}) + csv_line({"3", "d", "ok"}));
  EXPECT_THROW(merge_results({a, other}), InputError);
}
