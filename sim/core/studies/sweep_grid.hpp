// The grid of a sweep: `--vary KEY=V1,V2,...` and `--vary KEY=LO..HI[:STEP]`
// axes, their cartesian product, and its slicing into shards.
//
// Points are numbered in row-major order: the last --vary changes fastest,
// like nested loops written in the order the axes were given. A point is a
// list of `key=value` overrides (ConfigNode::with_overrides semantics). Values
// are split at top-level commas only, so a YAML flow value such as
// `pipeline.stages.0={name: read, parallelism: 8}` stays one value. A range is
// numeric: LO, LO+STEP, ... up to HI inclusive (STEP defaults to 1).
// Shard I of N (0 <= I < N) holds the points p with p % N == I: round-robin,
// so that expensive corners of the grid spread over the shards.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mlsim {

// The most points one grid (and so one merged results file) may have. Every
// point's overrides are built and validated up front, and at ~0.1 s per
// simulation a million points is already ~28 CPU-hours: a larger study is
// several grids. A bound here turns a typo (`1..1e9`) into an error at once
// instead of memory exhaustion.
inline constexpr size_t kMaxSweepPoints = 1'000'000;

struct SweepAxis {
  std::string key;
  std::vector<std::string> values; // as written (a range is expanded into numbers)
  bool is_range = false;
};

struct Shard {
  size_t index = 0, count = 1;
};

// Parses one --vary argument; InputError for a malformed one.
SweepAxis parse_axis(const std::string& spec);
// Parses "I/N"; InputError unless 0 <= I < N.
Shard parse_shard(const std::string& spec);

class SweepGrid {
public:
  // InputError for a repeated key, an empty axis, or more than kMaxSweepPoints points.
  explicit SweepGrid(std::vector<SweepAxis> axes);
  size_t size() const { return size_; }
  const std::vector<SweepAxis>& axes() const { return axes_; }
  // The axis values of point p, one per axis.
  std::vector<std::string> values(size_t p) const;
  // The overrides of point p: "key=value" per axis.
  std::vector<std::string> overrides(size_t p) const;
  // The points of a shard, ascending.
  std::vector<size_t> shard_points(const Shard& shard) const;

private:
  std::vector<SweepAxis> axes_;
  size_t size_ = 1;
};

// A number written without float noise: 8 -> "8", 0.1*3 -> "0.3".
std::string format_number(double v);

} // namespace mlsim
