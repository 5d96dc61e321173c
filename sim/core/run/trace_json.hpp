// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one
// process per node, one thread (track) per CPU worker, reader, accelerator,
// host-op lane and all-reduce lane; spans named by stage or op.
#pragma once

#include "sim/core/base/recorder.hpp"

#include <string>

namespace mlsim {

std::string render_chrome_trace(const Recorder& recorder);

} // namespace mlsim
