// The recorder counters (and the spans the metrics read) the input pipeline writes, declared once: the
// pipeline adds to them and the run's metrics (sim/core/run/metrics.cpp) read them, through these names.
#pragma once

#include "sim/core/base/recorder.hpp"

#include <string>

namespace mlsim::pipeline_counters {

inline CounterName workers() { return CounterName("pipeline.workers"); }           // pipeline workers, all nodes
inline CounterName batches() { return CounterName("pipeline.batches"); }           // batch shares delivered
inline CounterName read_ram_bytes() { return CounterName("read.ram_bytes"); }      // bytes read from RAM / page cache
inline CounterName read_storage_bytes() { return CounterName("read.storage_bytes"); } // bytes read from disk or remote storage
inline CounterName read_samples() { return CounterName("read.samples"); }
inline CounterName read_busy_seconds() { return CounterName("read.busy_seconds"); }  // reader-seconds spent reading
// The framework's receive (and pin) cost in the training process (framework_costs.hpp).
inline CounterName receive_core_seconds() { return CounterName("framework.receive.core_seconds"); }
inline CounterName collate_core_seconds() { return CounterName("stage.collate.core_seconds"); }
// Per map stage, by the stage's name in the scenario.
inline CounterName stage_core_seconds(const std::string& stage) { return CounterName("stage." + stage + ".core_seconds"); }
inline CounterName stage_samples(const std::string& stage) { return CounterName("stage." + stage + ".samples"); }

} // namespace mlsim::pipeline_counters

// Span names the pipeline and the trainer record, declared once like the counters (the metrics read
// no span: they read the busy periods below).
namespace mlsim::pipeline_spans {

inline const std::string& wait_for_input() { static const std::string n = "wait for input"; return n; } // a trainer without its batch
inline const std::string& read() { static const std::string n = "read"; return n; } // a read of samples

} // namespace mlsim::pipeline_spans

// Busy periods (Recorder::busy) the pipeline records and the run's metrics read.
namespace mlsim::pipeline_busy {

// While any read of the node's samples is in progress (the input analysis: read in advance or on demand).
inline std::string reads(const std::string& node) { return node + "/reads"; }

} // namespace mlsim::pipeline_busy
