// The typed description of the machines of a job: node groups, the network between them and the
// remote storage. Filled by the scenario loader (sim/core/run/scenario.* and sim/core/run/load/); read by
// the platform builder.
#pragma once

#include "sim/hardware/accelerator.hpp"
#include "sim/hardware/cpu.hpp"
#include "sim/hardware/disk.hpp"
#include "sim/hardware/nic.hpp"
#include "sim/hardware/nvlink.hpp"
#include "sim/hardware/pcie.hpp"
#include "sim/hardware/ram.hpp"

#include <string>
#include <vector>

namespace mlsim {

// What a node group does: train (with accelerators), or run the input pipeline for the trainers.
enum class NodeRole { trainer, data_service };
template <> struct EnumNames<NodeRole> {
  static constexpr std::array<std::pair<NodeRole, std::string_view>, 2> table{{
      {NodeRole::trainer, "trainer"}, {NodeRole::data_service, "data_service"}}};
};

struct NodeSpec {
  std::string name;
  int count = 1;
  NodeRole role = NodeRole::trainer;
  CpuSpec cpu;
  RamSpec ram;
  std::vector<DiskSpec> disks;
  NicSpec nic;
  PcieSpec pcie;
  int accelerator_count = 0;
  AcceleratorSpec accelerator;
  NvlinkSpec nvlink;
  DollarsPerSec price{0.0};

  // A trainer group of the data-parallel job: role trainer, with accelerators.
  bool trains() const { return role == NodeRole::trainer && accelerator_count > 0; }
};

// Remote storage (object store / network file system) reached over the NICs.
struct StorageSpec {
  bool present = false;
  BytesPerSec bandwidth{0.0}; // aggregate egress of the storage service
  double random_read_iops = 0.0;
  Seconds latency{0.0};       // per request
};

struct NetworkSpec {
  Seconds switch_latency{1e-6}; // between any two NICs (a non-blocking switch)
};

// What the platform builder needs: the machines, and how many of the job's trainer nodes are simulated
// (all of them, or 2 of one group's under replica folding: sim/core/run/scenario.hpp).
struct PlatformSpec {
  const std::vector<NodeSpec>* nodes = nullptr;
  NetworkSpec network;
  StorageSpec storage;
  int simulated_trainer_nodes = 1; // trainer node instances built
  int job_trainer_nodes = 1;       // trainer nodes in the job (shared storage is split among them)
};

} // namespace mlsim
