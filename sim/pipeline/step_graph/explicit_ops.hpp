// A model given as an explicit op list (`model.ops`), for ops no layer builder covers.
//
// Each entry gives per-sample FLOPs and activation bytes as read and written
// in fp32 (the precision policy rescales them by dtype), an optional count of
// parameters it owns, the dims that decide its fast path (`m` per sample: it
// scales with the batch) and its inputs (default: the previous op).
#pragma once

#include "sim/pipeline/step_graph/op_graph.hpp"

#include <string>
#include <vector>

namespace mlsim {

struct ExplicitOp {
  Op per_sample;                   // flops, elements and dims for one sample
  std::vector<std::string> inputs; // names of earlier ops ("input": the batch)
};

// The forward graph for `batch` samples; throws InputError for an unknown input name.
OpGraph build_explicit_graph(const std::vector<ExplicitOp>& ops, long batch);

} // namespace mlsim
