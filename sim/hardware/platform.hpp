// The platform builder: scenario nodes -> SimGrid hosts, links and disks.
//
// Per node instance: a CPU host (its cores, speed in reference core-seconds
// per second x 1e9; with per-core scheduling its work is served in closed form by
// an actor there, cpu_scheduler.hpp), one host per accelerator (device-seconds x 1e9), a RAM
// bus (a one-core host whose speed is the RAM bandwidth in bytes/s, shared by
// cached reads and pageable staging), per disk a host where its server runs
// (NodeDisk below).
// Hosts that only compute (RAM buses, disks) live in a zone of their
// own, so that the route table (one slot per pair of hosts that communicate:
// CPUs, accelerators, storage) does not grow with them. Links are full duplex
// (SimGrid split-duplex): one PCIe link per accelerator (plus a shared switch
// uplink when gpus_per_switch > 1), one NVLink per accelerator into a
// non-blocking switch, one NIC per node, a switch link with the network's
// latency between nodes, and the remote storage's egress link.
//
// Network model: CM02 with cross-traffic and the TCP window cap off, so a
// transfer of s bytes over a route takes exactly latency + s / bottleneck
// bandwidth (SimGrid's default LV08 multiplies latency by 13 and caps flows
// at gamma/(2*latency), which fits TCP over Ethernet but not NVLink or PCIe).
// Calibration measures the real factors; put the measured goodput in the
// bandwidths.
#pragma once

#include "sim/hardware/cpu_scheduler.hpp"
#include "sim/hardware/disk_server.hpp"
#include "sim/hardware/node_spec.hpp"

#include <simgrid/forward.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlsim {

// Up to this many accelerators, every cross-node pair gets a route (a full zone stores one entry per
// pair); larger jobs get the ring and hierarchical neighbours and the parameter-server routes only.
inline constexpr size_t kAllPairsLimit = 256;

// Work units: 1 reference core-second (or device-second) = 1e9 flops of the SimGrid host.
inline constexpr double kWorkPerSecond = 1e9;

struct LinkInfo {
  std::string name;
  std::string kind; // pcie, pcie-switch, nvlink, nic, switch, storage
  double capacity = 0.0; // bytes/s per direction
  double bytes = 0.0;    // bytes carried (both directions summed)
};

// A disk of a node: its sequential bandwidth and its random-access operations, each shared equally by
// the reads in flight, served by one actor on a host of the disk's own (disk_server.hpp). Not an
// s4u::Disk: SimGrid 3.32 keeps every finished Disk::read in the reading actor's activity list, and each
// later activity of that actor scans the list, so a run's time grew with the square of its steps
// (SIMGRID-NOTES: 64 % of a 1,000-step run).
struct NodeDisk {
  const DiskSpec* spec = nullptr;
  std::shared_ptr<DiskServer> server;
};

// The name of instance `instance` of a node spec: "gpu-node[3]", or the spec's name when it has one
// instance. Hosts, links and trace tracks of the node are named after it.
inline std::string node_instance_name(const NodeSpec& spec, int instance) {
  return spec.count > 1 ? spec.name + "[" + std::to_string(instance) + "]" : spec.name;
}

struct NodeInstance {
  const NodeSpec* spec = nullptr;
  int index = 0;                       // instance index within the scenario (trainer nodes first)
  std::string name;                    // "gpu-node[3]"
  simgrid::s4u::Host* cpu = nullptr;   // the node: its actors live here; its CPU work goes to `scheduler`
  std::shared_ptr<CpuScheduler> scheduler;
  simgrid::s4u::Host* ram_bus = nullptr;
  std::vector<simgrid::s4u::Host*> accelerators;
  std::vector<NodeDisk> disks;
};

class Platform {
public:
  // Builds hosts, links and routes in the current engine. Call once per engine.
  explicit Platform(const PlatformSpec& spec);

  std::vector<NodeInstance>& trainers() { return trainers_; }
  std::vector<NodeInstance>& service_nodes() { return service_; }
  simgrid::s4u::Host* storage_host() const { return storage_; }
  simgrid::s4u::Host* storage_ops() const { return storage_ops_; }

  // Starts a transfer of `bytes` from one host to another and accounts it on the links of its route.
  simgrid::s4u::CommPtr transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, Bytes bytes);
  // The bottleneck bandwidth and total latency of the route.
  std::pair<double, double> route_capacity(simgrid::s4u::Host* from, simgrid::s4u::Host* to) const;

  // The CPU scheduler of the node whose host is `cpu` (a trainer or a service node).
  CpuScheduler& scheduler_of(const simgrid::s4u::Host* cpu) const;

  const std::vector<LinkInfo>& links() const { return links_; }
  const LinkInfo* find_link(const std::string& name) const;
  int find_link_index(const std::string& name) const;

private:
  struct Endpoint;
  void build_node(const NodeSpec& spec, int instance, bool trainer);
  int add_link(const std::string& name, const std::string& kind, double bandwidth, double latency);
  void connect(simgrid::s4u::Host* a, simgrid::s4u::Host* b);
  simgrid::s4u::Link* switch_port(int node);

  simgrid::s4u::NetZone* root_ = nullptr;
  simgrid::s4u::NetZone* zone_ = nullptr;         // hosts that communicate: CPUs, accelerators, storage
  simgrid::s4u::NetZone* compute_zone_ = nullptr; // hosts that only compute: RAM buses, disks
  std::vector<NodeInstance> trainers_;
  std::vector<NodeInstance> service_;
  simgrid::s4u::Host* storage_ = nullptr;
  simgrid::s4u::Host* storage_ops_ = nullptr;
  std::vector<LinkInfo> links_;
  std::vector<simgrid::s4u::SplitDuplexLink*> sg_links_;
  std::map<std::string, int> link_index_;
  // Per host: the chain of link indices from the host up to its node's NIC (exclusive), and its node id.
  std::map<const simgrid::s4u::Host*, std::pair<int, std::vector<int>>> uplinks_;
  std::map<int, int> nic_of_node_;       // node id -> NIC link index
  std::map<const simgrid::s4u::Host*, CpuScheduler*> scheduler_of_;
  std::map<const simgrid::s4u::Host*, int> nvlink_of_;
  int switch_link_ = -1; // reported; flows cross a port per sending node (switch_port)
  double switch_latency_ = 0.0;
  std::map<int, simgrid::s4u::Link*> switch_ports_;
  int storage_link_ = -1;
  std::map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, std::vector<int>> routes_;
  int next_node_id_ = 0;
};

} // namespace mlsim
