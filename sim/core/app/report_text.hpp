// The text report, in the vocabulary of TensorFlow's profiler overview page.
#pragma once

#include "sim/core/studies/cores_needed.hpp"
#include "sim/core/run/metrics.hpp"
#include "sim/core/studies/recommendations.hpp"

#include <string>

namespace mlsim {

std::string render_text_report(const Scenario& scenario, const RunMetrics& m);
std::string render_cores_needed(const CoresNeeded& c);
std::string render_recommendations(const std::vector<Recommendation>& recs);

} // namespace mlsim
