// Reading a profiler trace (Chrome trace-event JSON) in one streaming pass.
//
// Formats: torch.profiler's export_chrome_trace (Kineto: `{"traceEvents": [...],
// "deviceProperties": [...]}`), TensorFlow's profiler trace viewer JSON (same
// shape, devices named by `process_name` metadata), or a bare event array;
// plain or gzip-compressed (.gz). Timestamps and durations are microseconds
// (the Chrome format's unit, whatever displayTimeUnit says).
// The parse is nlohmann::json's SAX interface over a buffered reader: memory is
// the events kept (88 bytes each, names interned), never the file's text. Only what
// the step builder needs is kept: complete events (ph X) of the CPU, runtime and
// device categories, and process/thread names (ph M). Python-stack events,
// flows and counters are counted and dropped.
// Errors: InputError "file: byte N: expected X, got Y" for malformed JSON, and
// "file: traceEvents[i] (byte N): key: expected X, got Y" for a bad event.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mlsim {

struct TraceEvent {
  double ts = 0.0, dur = 0.0; // microseconds
  int64_t pid = 0, tid = 0;   // string ids are interned as kStringIdBase + index
  int64_t correlation = -1;   // args.correlation (Kineto) or args.correlation_id (TensorFlow)
  int64_t external_id = -1;   // args["External id"]: links a launch and its kernel to the CPU op
  int64_t msg_elements = -1;  // args["In msg nelems"] (record_param_comms, nccl:*)
  uint64_t offset = 0;        // byte offset of the event in the (uncompressed) file
  float bytes = -1.0f;        // args.bytes (memcpy, memset), or "size:" in TensorFlow's memcpy_details
  int32_t leading_dim = -1;   // first dim of the first input (args["Input Dims"], record_shapes=True)
  uint32_t name = 0, cat = 0; // interned in TraceFile::strings
  uint32_t dtype = 0;         // args.dtype (interned; 0 = none)
  uint32_t detail = 0;        // TensorFlow memcpy: memcpy_details (interned)
  uint32_t index = 0;         // position in traceEvents
  char ph = 0;
};

inline constexpr int64_t kStringIdBase = int64_t(1) << 40;

struct TraceFile {
  std::string file;
  std::deque<TraceEvent> events;             // kept events, in file order (no reallocation peak)
  std::vector<std::string> strings{""};      // interned strings; 0 is ""
  std::map<int64_t, std::string> process_names;                  // pid -> name (ph M)
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names; // (pid, tid) -> name (ph M)
  std::vector<std::string> device_names;     // deviceProperties[].name (Kineto)
  uint64_t total_events = 0;                 // events read, kept or not
  uint64_t bytes_read = 0;

  const std::string& str(uint32_t id) const { return strings[id]; }
  // Where an event came from, for messages: "file: traceEvents[i] (byte N)".
  std::string where(const TraceEvent& e) const;
};

// Reads `path` (".gz": gzip). Throws InputError with the byte offset on any error.
TraceFile read_trace(const std::string& path);

} // namespace mlsim
