// The recorder: models record what happened; reports read it.
//
// Spans are (track, name, category, start, end) on interned tracks so that a
// large run stays small in memory; step records carry each trainer step's
// breakdown as measured by the trainer; counters accumulate named totals
// (bytes per link, busy core-seconds per stage...). Nothing here prints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlsim {

// A counter's name. Explicit, so that counters are named through declared functions shared by the model
// that writes a counter and the report that reads it (e.g. sim/pipeline/pipeline_counters.hpp), never by
// a string literal typed twice.
struct CounterName {
  explicit CounterName(std::string t) : text(std::move(t)) {}
  std::string text;
};

struct Span {
  uint32_t track;
  uint32_t name;
  uint32_t category;
  double start;
  double end;
};

// One training step of one accelerator, in seconds of simulated time.
struct StepRecord {
  int rank = 0;
  long step = 0;
  double start = 0, end = 0;
  double input = 0;        // waiting for the next batch (the stall)
  double h2d = 0;          // host-to-device copy of the batch, on the step's critical path
  double host_compute = 0; // host-placed ops of the step
  double device_compute = 0;
  double collective = 0;   // exposed gradient communication (not hidden behind compute)
  double padded_fraction = 0; // share of the batch's elements that are padding
};

class Recorder {
public:
  void span(uint32_t track, uint32_t name, uint32_t category, double start, double end);
  uint32_t intern(const std::string& s);
  const std::string& text(uint32_t id) const { return strings_[id]; }

  void step(const StepRecord& r) { steps_.push_back(r); }
  void add(const CounterName& counter, double value) { counters_[counter.text] += value; }
  void set(const CounterName& counter, double value) { counters_[counter.text] = value; }
  double counter(const CounterName& name, double fallback = 0.0) const;

  const std::vector<Span>& spans() const { return spans_; }
  const std::vector<StepRecord>& steps() const { return steps_; }
  const std::map<std::string, double>& counters() const { return counters_; }
  void replace_counters(std::map<std::string, double> counters) { counters_ = std::move(counters); }

  // Spans beyond this many are counted but not kept (traces of huge runs stay bounded).
  void set_span_limit(size_t limit) { span_limit_ = limit; }
  size_t dropped_spans() const { return dropped_; }

  // Keeps only spans with one of these names (the ones a report reads) and ignores the others: a run
  // whose trace nobody asked for records ~100 spans per chunk of samples, which cost a sixth of a small
  // run's time (growing the vector, first touches of its pages). Default: every span is kept.
  void keep_only_spans(const std::vector<std::string>& names);

private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<Span> spans_;
  std::vector<StepRecord> steps_;
  std::map<std::string, double> counters_;
  bool filtered_ = false;
  std::vector<bool> kept_name_; // by interned id, when filtered_
  size_t span_limit_ = 2'000'000;
  size_t dropped_ = 0;
};

} // namespace mlsim
