#include "sim/pipeline/step_graph/op.hpp"

#include "sim/core/base/errors.hpp"

namespace mlsim {

std::string to_string(OpKind k) {
  switch (k) {
  case OpKind::matmul: return "matmul";
  case OpKind::conv: return "conv";
  case OpKind::elementwise: return "elementwise";
  case OpKind::reduction: return "reduction";
  case OpKind::cast: return "cast";
  case OpKind::copy: return "copy";
  case OpKind::collective: return "collective";
  }
  return "?";
}

OpKind op_kind_from_string(const std::string& s) {
  for (OpKind k : {OpKind::matmul, OpKind::conv, OpKind::elementwise, OpKind::reduction, OpKind::cast, OpKind::copy,
                   OpKind::collective})
    if (to_string(k) == s)
      return k;
  throw InternalError("unknown op kind '" + s + "'");
}

std::string to_string(Phase p) {
  switch (p) {
  case Phase::forward: return "forward";
  case Phase::backward: return "backward";
  case Phase::accumulate: return "accumulate";
  case Phase::optimizer: return "optimizer";
  }
  return "?";
}

} // namespace mlsim
