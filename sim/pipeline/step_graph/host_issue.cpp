#include "sim/pipeline/step_graph/host_issue.hpp"

#include <algorithm>
#include <cmath>

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

std::vector<Seconds> micro_batch_waits(const std::vector<Seconds>& device, const std::vector<Seconds>& host,
                                       size_t optimizer_begin, long micro_batches, HostSync sync,
                                       size_t first_end) {
  const size_t n = device.size(), fb = std::min(optimizer_begin, n);
  if (sync == HostSync::none) { // the host runs ahead: only the step's surplus shows
    double surplus = 0;
    for (size_t i = 0; i < n; ++i) {
      const long runs = i < fb ? micro_batches - (i >= first_end ? 1 : 0) : 1; // the first skips [first_end, fb)
      const double times = static_cast<double>(runs);
      surplus += times * (host[i] - device[i]).value();
    }
    return {Seconds(std::max(0.0, surplus) / static_cast<double>(micro_batches))};
  }
  double issued = 0, device_free = 0; // both clocks from the sync
  auto issue = [&](size_t i) {
    issued += host[i].value();
    const double start = std::max(device_free, issued);
    const double wait = start - device_free;
    device_free = start + device[i].value();
    return wait;
  };
  for (size_t i = fb; i < n; ++i)
    issue(i);
  std::vector<Seconds> waits;
  double lead = device_free - issued; // > 0: the host is ahead of the device
  for (long m = 0; m < micro_batches; ++m) {
    double w = 0;
    for (size_t i = 0; i < (m == 0 ? std::min(first_end, fb) : fb); ++i)
      w += issue(i);
    const double next_lead = device_free - issued;
    const bool repeats = !waits.empty() && std::abs(w - waits.back().value()) <= 1e-15 &&
                         (std::abs(next_lead - lead) <= 1e-15 || (w == 0 && next_lead >= lead));
    waits.push_back(Seconds(w));
    if (repeats) // the same state again (host-bound), or a host ever further ahead that never waits
      break;
    lead = next_lead;
    if (sync == HostSync::every_micro_batch) // the read-back: both clocks restart at the next micro-batch
      issued = device_free;
    issued -= device_free, device_free = 0; // keep both clocks small
  }
  return waits;
}

} // namespace mlsim
