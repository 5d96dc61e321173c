#include "sim/pipeline/step_graph/host_issue.hpp"

#include <algorithm>

namespace mlsim {

HostIssue host_issue(const std::vector<Seconds>& device, const std::vector<Seconds>& host,
                     std::optional<size_t> sync) {
  const size_t n = device.size();
  HostIssue r;
  r.wait.assign(n, Seconds(0.0));
  double device_total = 0;
  for (size_t i = 0; i < n; ++i) {
    r.host += host[i];
    device_total += device[i].value();
  }
  if (n == 0)
    return r;
  if (!sync) { // the host runs ahead: in the steady state only the surplus shows, once a step
    r.wait[0] = Seconds(std::max(0.0, r.host.value() - device_total));
    r.total_wait = r.wait[0];
    return r;
  }
  double issued = 0, device_free = 0; // both clocks from the sync
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (*sync + k) % n;
    issued += host[i].value();
    const double start = std::max(device_free, issued);
    r.wait[i] = Seconds(start - device_free);
    r.total_wait += r.wait[i];
    device_free = start + device[i].value();
  }
  return r;
}

} // namespace mlsim
