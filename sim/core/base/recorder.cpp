#include "sim/core/base/recorder.hpp"

#include <algorithm>

namespace mlsim {

uint32_t Recorder::intern(const std::string& s) {
  auto it = ids_.find(s);
  if (it != ids_.end())
    return it->second;
  auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(s);
  ids_.emplace(s, id);
  return id;
}

void Recorder::keep_only_spans(const std::vector<std::string>& names) {
  filtered_ = true;
  for (const auto& n : names) {
    const uint32_t id = intern(n);
    if (id >= kept_name_.size())
      kept_name_.resize(id + 1, false);
    kept_name_[id] = true;
  }
}

BusyPeriods* Recorder::busy(const std::string& what) {
  if (busy_filtered_ && std::find(kept_busy_.begin(), kept_busy_.end(), what) == kept_busy_.end())
    return nullptr;
  return &busy_[what];
}

const BusyPeriods* Recorder::find_busy(const std::string& what) const {
  auto it = busy_.find(what);
  return it == busy_.end() ? nullptr : &it->second;
}

void Recorder::keep_only_busy(const std::vector<std::string>& names) {
  busy_filtered_ = true;
  kept_busy_ = names;
}

void Recorder::span(uint32_t track, uint32_t name, uint32_t category, double start, double end) {
  if (filtered_ && !(name < kept_name_.size() && kept_name_[name]))
    return;
  if (spans_.size() >= span_limit_) {
    ++dropped_;
    return;
  }
  spans_.push_back({track, name, category, start, end});
}

void Recorder::replace_counters(const std::map<std::string, double>& counters) {
  std::erase_if(counters_, [&](const auto& kv) { return !counters.contains(kv.first); });
  for (const auto& [name, total] : counters)
    counters_[name] = total;
}

double Recorder::counter(const CounterName& name, double fallback) const {
  auto it = counters_.find(name.text);
  return it == counters_.end() ? fallback : it->second;
}

} // namespace mlsim
