// The run's figures as JSON with stable keys (the schema the README lists).
// Same scenario and seed -> byte-identical text: keys keep a fixed order and
// nothing depends on wall-clock time or addresses.
#pragma once

#include "sim/core/run/metrics.hpp"

#include <nlohmann/json.hpp>

namespace mlsim {

// The one JSON form of a run's figures, and its inverse: every reader of a report (recommendations,
// sweep rows, cores_needed, rightsize, validate) goes through metrics_from_json, so a key is named in
// one place. metrics_from_json(metrics_to_json(m)) gives m back (doubles round-trip exactly); keys a
// study adds (cores_needed, recommendations) are ignored. A report that lacks a key is an InternalError.
nlohmann::ordered_json metrics_to_json(const RunMetrics& m);
RunMetrics metrics_from_json(const nlohmann::ordered_json& j);

} // namespace mlsim
