// Placeholder until the what-if module lands: no recommendation is made.
#include "sim/core/recommendations.hpp"

namespace mlsim {

std::vector<Recommendation> simulate_recommendations(const std::string&, const std::vector<std::string>&,
                                                     const Scenario&, const nlohmann::ordered_json&, size_t) {
  return {};
}

nlohmann::ordered_json recommendations_to_json(const std::vector<Recommendation>&) {
  return nlohmann::ordered_json::array();
}

} // namespace mlsim
