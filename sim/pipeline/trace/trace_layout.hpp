// Where things are in a profiler trace: the training steps (markers), the device replayed and each event's
// role on it, the data loader's and the batch copy's events, and the batch size the ops were recorded with.
// Read by measured_step.cpp, which turns one step's events into the ops it replays.
#pragma once

#include "sim/pipeline/trace/measured_step.hpp"
#include "sim/pipeline/trace/trace_events.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mlsim::trace_layout {

bool starts_with(const std::string& s, const char* p);
bool contains(const std::string& s, const char* p);

struct Step {
  long number = 0;
  double start = 0, end = 0;
  int64_t pid = 0, tid = 0;
};
// The selected steps, in time order (InputError naming the trace when there are none or too few).
std::vector<Step> find_steps(const TraceFile& t, const StepSelection& sel);

enum class Role { none, kernel, memcpy, memset };
struct Devices {
  bool tensorflow = false;
  std::vector<Role> role;   // per event
  int64_t pid = 0;          // the device replayed (the one with most events)
  size_t count = 0;
};
Devices find_devices(const TraceFile& t);

bool is_input_op(const std::string& n); // the data loader's wait
bool to_device(const std::string& n);   // a host-to-device copy
bool to_host(const std::string& n);     // a device-to-host copy
// The batch: the most common first input dim of the ops that take the activations first (-1: unknown).
long infer_batch(const TraceFile& t, const std::vector<Step>& steps);

} // namespace mlsim::trace_layout
