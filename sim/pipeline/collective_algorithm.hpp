// The all-reduce algorithms `distribution.algorithm` chooses from (how each works: collective.hpp).
#pragma once

#include "sim/core/base/named_enum.hpp"

namespace mlsim {

enum class CollectiveAlgorithm { ring, tree, hierarchical, parameter_server };
template <> struct EnumNames<CollectiveAlgorithm> {
  static constexpr std::array<std::pair<CollectiveAlgorithm, std::string_view>, 4> table{{
      {CollectiveAlgorithm::ring, "ring"}, {CollectiveAlgorithm::tree, "tree"},
      {CollectiveAlgorithm::hierarchical, "hierarchical"},
      {CollectiveAlgorithm::parameter_server, "parameter_server"}}};
};

} // namespace mlsim
