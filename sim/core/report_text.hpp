// The text report, in the vocabulary of TensorFlow's profiler overview page.
#pragma once

#include "sim/core/metrics.hpp"

#include <string>

namespace mlsim {

std::string render_text_report(const Scenario& scenario, const RunMetrics& m);

} // namespace mlsim
