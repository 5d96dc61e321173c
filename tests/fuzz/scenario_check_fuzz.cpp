// libFuzzer target: everything `mlsim check` does, in process, on one input.
//
// The input is a scenario's YAML text. Leading lines of the form
//   #--set key=value
// are also applied as command-line overrides (YAML reads them as comments), so
// the fuzzer mutates `--set` arguments too. Bad input must end in InputError
// (exit 2 for a user); any other exception escapes and aborts, and a signal, a
// leak or undefined behaviour is reported by the sanitizers: each one is a finding.
#include "sim/core/base/config_node.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/run/scenario.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  const std::string marker = "#--set ";
  size_t at = 0;
  while (text.compare(at, marker.size(), marker) == 0) {
    size_t end = text.find('\n', at);
    overrides.push_back(text.substr(at + marker.size(), end == std::string::npos ? std::string::npos
                                                                                   : end - at - marker.size()));
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  try {
    mlsim::ConfigNode root = mlsim::ConfigNode::load_string(text, "fuzz.yaml");
    if (!overrides.empty())
      root = mlsim::ConfigNode::with_overrides(root, overrides);
    mlsim::load_scenario(root);
  } catch (const mlsim::InputError&) {
    // the expected answer to bad input
  }
  return 0;
}
