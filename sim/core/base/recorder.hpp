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
#include <utility>
#include <vector>

namespace mlsim {

// A counter's name. Explicit, so that counters are named through declared functions shared by the model
// that writes a counter and the report that reads it (e.g. sim/pipeline/pipeline_counters.hpp), never by
// a string literal typed twice.
struct CounterName {
  explicit CounterName(std::string t) : text(std::move(t)) {}
  std::string text;
};

class Recorder;

// A counter that a model adds to often (per chunk, per batch): its name is looked up once, on the
// first add (a counter never added to stays absent from the report, as with Recorder::add).
class CounterSlot {
public:
  CounterSlot(Recorder& recorder, CounterName name) : recorder_(&recorder), name_(std::move(name)) {}
  inline void add(double value);

private:
  Recorder* recorder_;
  CounterName name_;
  double* total_ = nullptr;
};

// The periods during which at least one of a set of overlapping activities is in progress (a node's
// reads), merged as they happen: begin() when one starts and end() when one ends, both at the current
// simulated time (never earlier than the last call). A period that touches the previous one continues
// it. At the end of a run the last period may still be open (activities in progress): it ends at its
// last end() so far, and open() says so.
class BusyPeriods {
public:
  void begin(double now) {
    if (open_++ == 0 && (periods_.empty() || now > periods_.back().second))
      periods_.emplace_back(now, now);
  }
  void end(double now) {
    --open_;
    periods_.back().second = now;
  }
  const std::vector<std::pair<double, double>>& periods() const { return periods_; }
  bool open() const { return open_ > 0; }

private:
  std::vector<std::pair<double, double>> periods_;
  long open_ = 0;
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
  // New totals for the counters (those absent from `counters` are removed); a counter kept keeps its
  // place, so the CounterSlots that point at it stay valid.
  void replace_counters(const std::map<std::string, double>& counters);

  // The busy periods named `what` (created empty on first use); null when busy periods are filtered
  // and `what` is not kept.
  BusyPeriods* busy(const std::string& what);
  const BusyPeriods* find_busy(const std::string& what) const;
  // Keeps only the busy periods with one of these names (those a report reads). Default: every one.
  void keep_only_busy(const std::vector<std::string>& names);

  // Spans beyond this many are counted but not kept (traces of huge runs stay bounded).
  void set_span_limit(size_t limit) { span_limit_ = limit; }
  size_t dropped_spans() const { return dropped_; }

  // Keeps only spans with one of these names and ignores the others (a run whose trace nobody asked
  // for keeps none: it would record ~100 spans per chunk of samples, a sixth of a small run's time, and
  // the reports read no span). Default: every span is kept.
  void keep_only_spans(const std::vector<std::string>& names);

private:
  friend class CounterSlot;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<Span> spans_;
  std::vector<StepRecord> steps_;
  std::map<std::string, double> counters_;
  std::map<std::string, BusyPeriods> busy_; // std::map: a BusyPeriods stays where it is
  bool busy_filtered_ = false;
  std::vector<std::string> kept_busy_;
  bool filtered_ = false;
  std::vector<bool> kept_name_; // by interned id, when filtered_
  size_t span_limit_ = 2'000'000;
  size_t dropped_ = 0;
};

void CounterSlot::add(double value) {
  if (total_ == nullptr)
    total_ = &recorder_->counters_[name_.text]; // std::map: the node stays where it is
  *total_ += value;
}

} // namespace mlsim
