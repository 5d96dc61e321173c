// `mlsim merge`: join the results files of a sweep's shards into one.
//
// Every input must have the same columns (the same --vary keys). Rows are
// keyed by their point number: the same point twice with the same row is
// kept once (a shard re-run), with different rows it is an error (files from
// different grids or scenarios). The output is in grid order. Points missing
// between 0 and the largest number seen are reported, so a shard that did not
// finish is noticed; a missing tail cannot be seen from the files alone.
#pragma once

#include <string>
#include <vector>

namespace mlsim {

struct MergeResult {
  std::string text;                 // the merged CSV
  size_t rows = 0;
  std::vector<size_t> missing;      // point numbers absent below the largest one
  std::vector<std::string> warnings;
};

MergeResult merge_results(const std::vector<std::string>& files);

} // namespace mlsim
