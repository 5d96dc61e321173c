// The run's figures as JSON with stable keys (the schema the README lists).
// Same scenario and seed -> byte-identical text: keys keep a fixed order and
// nothing depends on wall-clock time or addresses.
#pragma once

#include "sim/core/run/metrics.hpp"

#include <nlohmann/json.hpp>

namespace mlsim {

nlohmann::ordered_json metrics_to_json(const RunMetrics& m);

} // namespace mlsim
