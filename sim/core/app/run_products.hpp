// What `mlsim run` produces: the JSON document, the text report and the Chrome trace.
//
// The base scenario is simulated once. With what-ifs (cores needed, recommendations) it runs in a child,
// because SimGrid allows one engine per process and the what-ifs fork children of a parent that has not
// simulated; the child sends back the base's JSON figures, text report and trace, and the figures feed
// the what-ifs. Without what-ifs it runs in this process.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mlsim {

struct RunRequest {
  std::string scenario;
  std::vector<std::string> overrides;
  bool text_report = true;     // render the text report
  bool trace = false;          // render the Chrome trace
  bool recommendations = true; // simulated what-ifs
  bool cores_needed = true;    // the cores-per-accelerator search
};

struct RunProducts {
  nlohmann::ordered_json doc; // the --json document, cores_needed and recommendations included
  std::string text;           // the text report with the what-ifs ("" unless asked for)
  std::string trace;          // the Chrome trace ("" unless asked for)
  long base_simulations = 0;  // times the base scenario was simulated (in a child or here): 1
};

// Loads, checks and simulates the request's scenario; throws InputError for bad input.
RunProducts produce_run(const RunRequest& request);

} // namespace mlsim
