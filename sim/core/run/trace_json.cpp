#include "sim/core/run/trace_json.hpp"

#include <nlohmann/json.hpp>

#include <map>

namespace mlsim {

std::string render_chrome_trace(const Recorder& rec) {
  using json = nlohmann::ordered_json;
  json events = json::array();
  // Track "gpu-node.gpu3/allreduce" -> process "gpu-node", thread "gpu3/allreduce".
  std::map<uint32_t, std::pair<int, int>> ids;
  std::map<std::string, int> pids;
  int next_tid = 1;
  for (const auto& s : rec.spans()) {
    if (ids.count(s.track))
      continue;
    const std::string& track = rec.text(s.track);
    auto cut = track.find_first_of("./");
    std::string process = cut == std::string::npos ? track : track.substr(0, cut);
    std::string thread = cut == std::string::npos ? track : track.substr(cut + 1);
    auto [it, fresh] = pids.emplace(process, static_cast<int>(pids.size()) + 1);
    if (fresh)
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", it->second}, {"tid", 0},
                        {"args", {{"name", process}}}});
    int tid = next_tid++;
    ids[s.track] = {it->second, tid};
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", it->second}, {"tid", tid},
                      {"args", {{"name", thread}}}});
  }
  for (const auto& s : rec.spans()) {
    auto [pid, tid] = ids[s.track];
    events.push_back({{"ph", "X"}, {"name", rec.text(s.name)}, {"cat", rec.text(s.category)}, {"pid", pid},
                      {"tid", tid}, {"ts", s.start * 1e6}, {"dur", (s.end - s.start) * 1e6}});
  }
  json doc;
  doc["displayTimeUnit"] = "ms";
  doc["traceEvents"] = events;
  return doc.dump();
}

} // namespace mlsim
