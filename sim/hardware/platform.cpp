#include "sim/hardware/platform.hpp"

#include "sim/core/base/errors.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace mlsim {

CpuScheduler& Platform::scheduler_of(const sg4::Host* cpu) const {
  auto it = scheduler_of_.find(cpu);
  if (it == scheduler_of_.end())
    throw InternalError("no CPU scheduler for host " + cpu->get_name());
  return *it->second;
}

Platform::Platform(const PlatformSpec& spec) {
  // Hosts that only compute (RAM buses, disks) never send: a zone of their own keeps them out of
  // the full zone's route table, which holds one slot per pair of its hosts. The two are siblings: a full
  // zone with a child zone would need gateways on every route.
  root_ = sg4::create_empty_zone("mlsim");
  zone_ = sg4::create_full_zone("mlsim.network");
  zone_->set_parent(root_);
  compute_zone_ = sg4::create_empty_zone("mlsim.compute");
  compute_zone_->set_parent(root_);
  switch_link_ = add_link("network-switch", "switch", 1e15, spec.network.switch_latency.value());
  switch_latency_ = spec.network.switch_latency.value();
  // Trainer nodes first, group by group, so that trainer instance i has node id i. Folding (fewer
  // simulated than job nodes) only happens to a job of one trainer group.
  const bool folded = spec.simulated_trainer_nodes < spec.job_trainer_nodes;
  for (const auto& node : *spec.nodes)
    if (node.role == NodeRole::trainer)
      for (int i = 0; i < (node.trains() && folded ? spec.simulated_trainer_nodes : node.count); ++i)
        build_node(node, i, true);
  for (const auto& node : *spec.nodes)
    if (node.role != NodeRole::trainer)
      for (int i = 0; i < node.count; ++i)
        build_node(node, i, false);
  if (spec.storage.present) {
    storage_ = zone_->create_host("storage", kWorkPerSecond)->seal();
    // With replica folding the simulated nodes get their share of the shared storage.
    double share = static_cast<double>(spec.simulated_trainer_nodes) / spec.job_trainer_nodes;
    storage_ops_ = compute_zone_->create_host("storage.ops", spec.storage.random_read_iops * share)->seal();
    storage_link_ = add_link("storage.egress", "storage", spec.storage.bandwidth.value() * share, 0.0);
    int id = next_node_id_++;
    uplinks_[storage_] = {id, {}};
    nic_of_node_[id] = storage_link_;
  }

  // Routes: only the pairs that talk (a full zone stores one entry per pair it is given).
  for (auto& node : trainers_) {
    for (auto* gpu : node.accelerators)
      connect(node.cpu, gpu);
    for (size_t a = 0; a < node.accelerators.size(); ++a)
      for (size_t b = a + 1; b < node.accelerators.size(); ++b)
        connect(node.accelerators[a], node.accelerators[b]);
  }
  size_t n = trainers_.size();
  size_t total_gpus = 0;
  for (auto& node : trainers_)
    total_gpus += node.accelerators.size();
  if (n > 1 && total_gpus <= kAllPairsLimit) {
    // Small jobs: every accelerator pair across nodes (trees, any collective pattern).
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j)
        for (auto* a : trainers_[i].accelerators)
          for (auto* b : trainers_[j].accelerators)
            connect(a, b);
  }
  for (size_t i = 0; n > 1 && i < n; ++i) { // connect() skips pairs it already has
    auto& here = trainers_[i];
    auto& next = trainers_[(i + 1) % n];
    for (size_t k = 0; k < here.accelerators.size(); ++k)
      connect(here.accelerators[k], next.accelerators[k]); // hierarchical rings: same local rank
    connect(here.accelerators.back(), next.accelerators.front()); // flat ring across nodes
  }
  // Parameter server on node 0's CPU: every accelerator reaches it.
  if (!trainers_.empty())
    for (auto& node : trainers_)
      for (auto* gpu : node.accelerators)
        connect(trainers_.front().cpu, gpu);
  for (auto& svc : service_)
    for (auto& node : trainers_)
      connect(svc.cpu, node.cpu);
  if (storage_) {
    for (auto& node : trainers_)
      connect(storage_, node.cpu);
    for (auto& svc : service_)
      connect(storage_, svc.cpu);
  }
  compute_zone_->seal();
  zone_->seal();
  root_->seal();
}

int Platform::add_link(const std::string& name, const std::string& kind, double bandwidth, double latency) {
  auto* link = zone_->create_split_duplex_link(name, bandwidth);
  link->set_latency(latency)->seal();
  int idx = static_cast<int>(links_.size());
  links_.push_back({name, kind, bandwidth, 0.0});
  sg_links_.push_back(link);
  link_index_[name] = idx;
  return idx;
}

void Platform::build_node(const NodeSpec& spec, int instance, bool trainer) {
  NodeInstance node;
  node.spec = &spec;
  node.index = instance;
  node.name = node_instance_name(spec, instance);
  int id = next_node_id_++;
  node.cpu = zone_->create_host(node.name + ".cpu", spec.cpu.core_speed * kWorkPerSecond)->set_core_count(spec.cpu.cores);
  if (spec.cpu.all_cores_efficiency < 1.0 && spec.cpu.cores > 1) {
    // Co-running slowdown (sim/hardware/cpu.hpp): with n execs on c cores the host delivers
    // min(n, c) x speed x e(min(n, c)); SimGrid shares that fairly, each exec still capped at one core.
    // SimGrid calls this only when the number of active execs changes (sleeps do not count).
    const CpuSpec cpu = spec.cpu;
    const double core = spec.cpu.core_speed * kWorkPerSecond;
    node.cpu->set_sharing_policy(sg4::Host::SharingPolicy::NONLINEAR, [cpu, core](double /*capacity*/, int n) {
      const int busy = std::min(n, cpu.cores);
      return busy <= 0 ? core * cpu.cores : busy * core * corunning_efficiency(cpu, busy);
    });
  }
  node.cpu->seal();
  node.scheduler = std::make_shared<CpuScheduler>(node.cpu, spec.cpu);
  scheduler_of_[node.cpu] = node.scheduler.get();
  node.ram_bus = compute_zone_->create_host(node.name + ".ram", spec.ram.bandwidth.value())->seal();
  for (const auto& d : spec.disks) {
    auto* home = compute_zone_->create_host(node.name + "." + d.name, d.sequential_read.value())->seal();
    node.disks.push_back({&d, std::make_shared<DiskServer>(d, home)});
  }
  nic_of_node_[id] = add_link(node.name + ".nic", "nic", spec.nic.bandwidth.value(), spec.nic.latency.value());
  uplinks_[node.cpu] = {id, {}};
  std::vector<int> switches;
  for (int k = 0; k < spec.accelerator_count; ++k) {
    std::string gname = node.name + ".gpu" + std::to_string(k);
    auto* gpu = zone_->create_host(gname, kWorkPerSecond)->seal();
    node.accelerators.push_back(gpu);
    double pcie_bw = spec.pcie.bandwidth().value();
    std::vector<int> chain{add_link(gname + ".pcie", "pcie", pcie_bw, spec.pcie.latency.value())};
    if (spec.pcie.gpus_per_switch > 1) {
      size_t sw = static_cast<size_t>(k / spec.pcie.gpus_per_switch);
      if (sw >= switches.size())
        switches.push_back(add_link(node.name + ".pcie-switch" + std::to_string(sw), "pcie-switch", pcie_bw, 0.0));
      chain.push_back(switches[sw]);
    }
    uplinks_[gpu] = {id, chain};
    if (spec.nvlink.present())
      nvlink_of_[gpu] = add_link(gname + ".nvlink", "nvlink", spec.nvlink.bandwidth.value(), spec.nvlink.latency.value());
  }
  (trainer ? trainers_ : service_).push_back(std::move(node));
}

void Platform::connect(sg4::Host* a, sg4::Host* b) {
  using Dir = sg4::LinkInRoute::Direction;
  auto one_way = [&](sg4::Host* src, sg4::Host* dst) {
    if (routes_.count({src, dst}))
      return;
    const auto& [src_node, src_chain] = uplinks_.at(src);
    const auto& [dst_node, dst_chain] = uplinks_.at(dst);
    std::vector<std::pair<int, Dir>> hops;
    if (src_node == dst_node && nvlink_of_.count(src) && nvlink_of_.count(dst)) {
      hops = {{nvlink_of_.at(src), Dir::UP}, {nvlink_of_.at(dst), Dir::DOWN}};
    } else {
      for (int l : src_chain)
        hops.emplace_back(l, Dir::UP);
      if (src_node != dst_node) {
        hops.emplace_back(nic_of_node_.at(src_node), Dir::UP);
        hops.emplace_back(switch_link_, Dir::UP);
        hops.emplace_back(nic_of_node_.at(dst_node), Dir::DOWN);
      }
      for (auto it = dst_chain.rbegin(); it != dst_chain.rend(); ++it)
        hops.emplace_back(*it, Dir::DOWN);
    }
    std::vector<sg4::LinkInRoute> route;
    std::vector<int> ids;
    for (auto [l, d] : hops) {
      route.emplace_back(l == switch_link_ ? switch_port(src_node) : sg_links_[l], d);
      ids.push_back(l);
    }
    zone_->add_route(src->get_netpoint(), dst->get_netpoint(), nullptr, nullptr, route, false);
    routes_[{src, dst}] = ids;
  };
  one_way(a, b);
  one_way(b, a);
}

// The switch is non-blocking: its one link would tie every cross-node flow of the job into one sharing
// system that SimGrid walks at each event (with every node simulated, most of the run). A port per
// sending node has the same latency and never limits a flow; bytes are still counted on the switch.
sg4::Link* Platform::switch_port(int node) {
  auto& port = switch_ports_[node];
  if (!port)
    port = zone_->create_link("network-switch.port" + std::to_string(node), 1e15)->set_latency(switch_latency_)->seal();
  return port;
}

sg4::CommPtr Platform::transfer(sg4::Host* from, sg4::Host* to, Bytes bytes) {
  if (from != to)
    for (int l : routes_.at({from, to}))
      links_[l].bytes += bytes.value();
  return sg4::Comm::sendto_async(from, to, static_cast<uint64_t>(bytes.value()));
}

std::pair<double, double> Platform::route_capacity(sg4::Host* from, sg4::Host* to) const {
  double bw = 1e300, lat = 0.0;
  for (int l : routes_.at({from, to})) {
    bw = std::min(bw, links_[l].capacity);
    lat += sg_links_[l]->get_latency();
  }
  return {bw, lat};
}

const LinkInfo* Platform::find_link(const std::string& name) const {
  int i = find_link_index(name);
  return i < 0 ? nullptr : &links_[i];
}

int Platform::find_link_index(const std::string& name) const {
  auto it = link_index_.find(name);
  return it == link_index_.end() ? -1 : it->second;
}

} // namespace mlsim
