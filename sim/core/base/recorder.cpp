#include "sim/core/base/recorder.hpp"

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

void Recorder::span(uint32_t track, uint32_t name, uint32_t category, double start, double end) {
  if (filtered_ && !(name < kept_name_.size() && kept_name_[name]))
    return;
  if (spans_.size() >= span_limit_) {
    ++dropped_;
    return;
  }
  spans_.push_back({track, name, category, start, end});
}

double Recorder::counter(const CounterName& name, double fallback) const {
  auto it = counters_.find(name.text);
  return it == counters_.end() ? fallback : it->second;
}

} // namespace mlsim
