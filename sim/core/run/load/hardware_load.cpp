// Nodes, their CPU, RAM, disks, NIC, PCIe and NVLink, and the remote storage, from YAML (hardware_load.hpp).
#include "sim/core/run/load/hardware_load.hpp"

#include "sim/core/run/load/preset_library.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace mlsim {

namespace {
// A cost term: default 0, valid range [0, max] (a slower stage cannot be simulated in finite work).
Seconds cost_term(const ConfigNode& node, const std::string& key, double max, const char* max_text) {
  Seconds v = node.get_quantity<Seconds>(key, Seconds(0.0), false);
  if (!(v.value() <= max))
    node.child(key).fail(std::string("a cost between 0 and ") + max_text, node.child(key).quoted());
  return v;
}

// A list of 1 to max_items numbers in [lo, hi].
std::vector<double> number_list(const ConfigNode& node, double lo, double hi, size_t max_items, const char* expected) {
  if (!node.is_sequence() || node.items().empty() || node.items().size() > max_items)
    node.fail(expected, node.quoted());
  std::vector<double> out;
  for (const ConfigNode& item : node.items()) {
    const double v = item.is_scalar() ? item.as_number() : -1.0;
    if (!(v >= lo && v <= hi))
      item.fail(expected, item.quoted());
    out.push_back(v);
  }
  return out;
}
// `v`, read from `list`, strictly ascending.
void ascending(const ConfigNode& list, const std::vector<double>& v) {
  for (size_t i = 1; i < v.size(); ++i)
    if (!(v[i] > v[i - 1]))
      list.fail("ascending numbers", list.quoted());
}
} // namespace

StageCost parse_stage_cost(const ConfigNode& node, Seconds page_fault) {
  node.allow_only({"per_sample", "per_byte", "per_pixel", "fresh_pages", "work_by_source", "r2", "reps", "spread",
                   "source"});
  StageCost c;
  c.per_sample = cost_term(node, "per_sample", 3600.0, "1 h per sample");
  c.per_byte = cost_term(node, "per_byte", 1.0, "1 s per byte");
  c.per_pixel = cost_term(node, "per_pixel", 1.0, "1 s per pixel");
  if (ConfigNode f = node.child("fresh_pages"); f.defined()) {
    // {pixels: [...], pages: [...]}, or with batches: [...] a row of pages per batch size.
    f.allow_only({"pixels_of", "pixels", "batches", "pages", "launches"});
    if (!(page_fault.value() > 0.0))
      f.fail("no fresh_pages here: they are priced by the cpu's page_fault (a calibration profile's cpu)", f.quoted());
    FreshPages& t = c.fresh_pages;
    t.pixels = number_list(f.required("pixels"), 0.0, 1e12, 256, "a list of pixel counts, each 0 to 1e12");
    ascending(f.child("pixels"), t.pixels);
    const char* row = "a list of page counts (each 0 to 1e9), one per pixel count";
    if (f.has("batches")) {
      t.batches = number_list(f.child("batches"), 1.0, 1e7, 64, "a list of batch sizes, each 1 to 1e7");
      ascending(f.child("batches"), t.batches);
    }
    // One table: a row of counts, or with batches a list of rows, one per batch size.
    auto table = [&](const ConfigNode& list) {
      FreshPages::Table out;
      if (t.batches.empty()) {
        out.push_back(number_list(list, 0.0, 1e9, 256, row));
      } else {
        if (!list.is_sequence() || list.items().size() != t.batches.size())
          list.fail("a list of rows, one per batch size, each " + std::string(row), list.quoted());
        for (const ConfigNode& r : list.items())
          out.push_back(number_list(r, 0.0, 1e9, 256, row));
      }
      for (size_t r = 0; r < out.size(); ++r)
        if (out[r].size() != t.pixels.size())
          (t.batches.empty() ? list : list.items()[r]).fail(row, list.quoted());
      return out;
    };
    t.pages = table(f.required("pages"));
    if (ConfigNode l = f.child("launches"); l.defined()) { // each calibration process's own table
      if (!l.is_sequence() || l.items().empty() || l.items().size() > 64)
        l.fail("a list of 1 to 64 tables shaped as pages, one per calibration process", l.quoted());
      for (const ConfigNode& one : l.items())
        t.launches.push_back(table(one));
    }
    // Whose pixels the table is over: the stage's input (default) or the sample's source image (cpu.hpp).
    const std::string of = f.get_string("pixels_of", "input");
    if (of != "input" && of != "source")
      f.child("pixels_of").fail("input or source", f.child("pixels_of").quoted());
    t.by_source = of == "source";
    c.page_fault = page_fault;
  }
  if (ConfigNode w = node.child("work_by_source"); w.defined()) { // {pixels: [...], scale: [...]} (cpu.hpp)
    w.allow_only({"pixels", "scale"});
    SourceScale& t = c.work_by_source;
    t.pixels = number_list(w.required("pixels"), 0.0, 1e12, 256, "a list of source image pixel counts, each 0 to 1e12");
    ascending(w.child("pixels"), t.pixels);
    const char* scales = "a list of work scales (each above 0, at most 1000), one per pixel count";
    t.scale = number_list(w.required("scale"), std::nextafter(0.0, 1.0), 1e3, 256, scales);
    if (t.scale.size() != t.pixels.size())
      w.child("scale").fail(scales, w.child("scale").quoted());
  }
  return c;
}

CpuSpec parse_cpu(const ConfigNode& node) {
  node.allow_only({"preset", "name", "source", "cores", "core_speed", "fp16_emulation_factor", "all_cores_efficiency",
                   "core_flops", "stage_costs", "model", "measured", "scheduler", "balance_delay",
                   "busy_wake_delay", "shared_core_efficiency", "page_fault", "launch"});
  CpuSpec c;
  c.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "cpu");
  c.cores = static_cast<int>(node.get_integer("cores", std::nullopt, 1, 4096));
  c.core_speed = node.get_number("core_speed", 1.0, 1e-3, 1e3);
  c.fp16_emulation_factor = node.get_number("fp16_emulation_factor", 1.0, 1.0, 1e3);
  c.all_cores_efficiency = node.get_number("all_cores_efficiency", 1.0, 0.0, 1.0);
  if (!(c.all_cores_efficiency > 0.0)) // (0, 1]: zero would stop every core
    node.child("all_cores_efficiency").fail("a number in (0, 1]", node.child("all_cores_efficiency").quoted());
  c.core_flops = node.get_quantity<FlopsPerSec>("core_flops", FlopsPerSec(32e9));
  c.scheduling = node.get_enum<CpuScheduling>("scheduler", CpuScheduling::per_core);
  c.balance_delay = node.get_quantity<Seconds>("balance_delay", Seconds(4e-3), false);
  c.busy_wake_delay = node.get_quantity<Seconds>("busy_wake_delay", Seconds(0.0), false);
  c.page_fault = node.get_quantity<Seconds>("page_fault", Seconds(0.0), false);
  if (!(c.page_fault.value() <= 1.0))
    node.child("page_fault").fail("a time between 0 and 1 s", node.child("page_fault").quoted());
  if (ConfigNode e = node.child("shared_core_efficiency"); e.defined())
    c.shared_core_efficiency = number_list(e, std::nextafter(0.0, 1.0), 1.0, 64,
                                           "a list of numbers in (0, 1]: what a core gets done with 2, 3, ... threads on it");
  if (ConfigNode costs = node.child("stage_costs"); costs.defined())
    for (const auto& k : costs.keys())
      c.stage_costs[k] = parse_stage_cost(costs.child(k), c.page_fault);
  if (ConfigNode l = node.child("launch"); l.defined()) { // one calibration process's page faults (cpu.hpp)
    size_t launches = 0;
    for (const auto& [name, cost] : c.stage_costs)
      launches = std::max(launches, cost.fresh_pages.launches.size());
    if (launches == 0)
      l.fail("no launch here: no stage cost of this cpu has fresh_pages.launches (a calibration profile's)",
             l.quoted());
    if (l.is_sequence()) { // one per worker process: the tables stay whole (input_pipeline.hpp)
      const std::string expected = "a list of launches, each an integer 0 to " + std::to_string(launches - 1);
      for (double k : number_list(l, 0.0, static_cast<double>(launches - 1), 1024, expected.c_str())) {
        if (k != std::floor(k))
          l.fail(expected, l.quoted());
        c.worker_launches.push_back(static_cast<size_t>(k));
      }
      return c;
    }
    const auto k = static_cast<size_t>(node.get_integer("launch", std::nullopt, 0, static_cast<long>(launches) - 1));
    for (auto& [name, cost] : c.stage_costs)
      if (k < cost.fresh_pages.launches.size())
        cost.fresh_pages = cost.fresh_pages.of_launch(k);
  }
  return c;
}

RamSpec parse_ram(const ConfigNode& node) {
  node.allow_only({"preset", "source", "size", "bandwidth", "reserved", "measured"});
  RamSpec r;
  r.size = node.get_quantity<Bytes>("size");
  r.bandwidth = node.get_quantity<BytesPerSec>("bandwidth");
  r.reserved = node.get_quantity<Bytes>("reserved", Bytes(r.size.value() * 0.1), false);
  if (r.reserved >= r.size)
    node.child("reserved").fail("less than ram.size", node.child("reserved").quoted());
  return r;
}

DiskSpec parse_disk(const ConfigNode& node) {
  node.allow_only({"preset", "name", "source", "kind", "sequential_read", "random_read_iops", "latency", "measured"});
  DiskSpec d;
  d.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "disk");
  d.kind = node.get_enum<DiskKind>("kind", DiskKind::sata_ssd);
  d.sequential_read = node.get_quantity<BytesPerSec>("sequential_read");
  d.random_read_iops = node.get_number("random_read_iops", std::nullopt, 1e-3);
  d.latency = node.get_quantity<Seconds>("latency", Seconds(0.0), false);
  return d;
}

NicSpec parse_nic(const ConfigNode& node) {
  node.allow_only({"preset", "name", "source", "bandwidth", "latency"});
  NicSpec n;
  n.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "nic");
  n.bandwidth = node.get_quantity<BytesPerSec>("bandwidth");
  n.latency = node.get_quantity<Seconds>("latency", Seconds(5e-6), false);
  return n;
}

PcieSpec parse_pcie(const ConfigNode& node) {
  node.allow_only({"preset", "source", "generation", "lanes", "protocol_efficiency", "latency", "gpus_per_switch",
                   "pinned", "measured"});
  PcieSpec p;
  p.generation = static_cast<int>(node.get_integer("generation", std::nullopt, 1, 5));
  p.lanes = static_cast<int>(node.get_integer("lanes", 16));
  if (p.lanes != 1 && p.lanes != 2 && p.lanes != 4 && p.lanes != 8 && p.lanes != 16)
    node.child("lanes").fail("one of 1, 2, 4, 8, 16", node.child("lanes").quoted());
  p.protocol_efficiency = node.get_number("protocol_efficiency", 0.8, 0.05, 1.0);
  p.latency = node.get_quantity<Seconds>("latency", Seconds(1e-6), false);
  p.gpus_per_switch = static_cast<int>(node.get_integer("gpus_per_switch", 1, 1, 64));
  p.pinned = node.get_bool("pinned", true);
  return p;
}

NvlinkSpec parse_nvlink(const ConfigNode& node) {
  NvlinkSpec n;
  if (!node.defined())
    return n;
  node.allow_only({"preset", "name", "source", "topology", "bandwidth", "latency"});
  n.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "nvlink");
  n.topology = node.get_enum<NvlinkTopology>("topology", NvlinkTopology::nvswitch);
  if (n.present())
    n.bandwidth = node.get_quantity<BytesPerSec>("bandwidth");
  n.latency = node.get_quantity<Seconds>("latency", Seconds(1e-6), false);
  return n;
}

NodeSpec parse_node(const ConfigNode& node, size_t index) {
  node.allow_only({"name", "count", "role", "price", "cpu", "ram", "disks", "nic", "pcie", "accelerators", "nvlink"});
  NodeSpec n;
  n.name = node.get_string("name", "node" + std::to_string(index));
  n.count = static_cast<int>(node.get_integer("count", 1, 1, 100000));
  n.role = node.get_enum<NodeRole>("role", NodeRole::trainer);
  n.price = node.get_quantity<DollarsPerSec>("price", DollarsPerSec(0.0), false);
  n.cpu = parse_cpu(resolve_preset(node.required("cpu"), "cpus", "cpu"));
  n.ram = parse_ram(resolve_preset(node.required("ram"), "ram", "ram"));
  if (ConfigNode disks = node.child("disks"); disks.defined()) {
    std::set<std::string> names;
    for (const auto& d : disks.items()) {
      DiskSpec spec = parse_disk(resolve_preset(d, "disks", "disk"));
      if (!names.insert(spec.name).second)
        d.fail("a unique disk name", "a second disk named '" + spec.name + "'");
      n.disks.push_back(spec);
    }
  }
  if (node.has("nic")) {
    n.nic = parse_nic(resolve_preset(node.child("nic"), "nics", "nic"));
  } else { // checked in require_nics once the traffic is known
    n.nic.present = false;
    n.nic.bandwidth = BytesPerSec(1e12);
  }
  if (ConfigNode acc = node.child("accelerators"); acc.defined()) {
    ConfigNode resolved = resolve_preset(acc, "accelerators", "accelerator");
    n.accelerator_count = static_cast<int>(resolved.get_integer("count", 1, 1, 1024));
    n.accelerator = parse_accelerator(resolved);
    n.pcie = parse_pcie(resolve_preset(node.required("pcie"), "pcie", "pcie"));
    n.nvlink = parse_nvlink(resolve_preset(node.child("nvlink"), "nvlink", "nvlink"));
  } else if (node.has("pcie")) {
    n.pcie = parse_pcie(resolve_preset(node.child("pcie"), "pcie", "pcie"));
  }
  if (n.role == NodeRole::data_service && n.accelerator_count > 0)
    node.child("accelerators").fail("no accelerators on a data_service node", "some");
  return n;
}

StorageSpec parse_storage(const ConfigNode& node) {
  StorageSpec st;
  if (!node.defined())
    return st;
  node.allow_only({"bandwidth", "random_read_iops", "latency", "source"});
  st.present = true;
  st.bandwidth = node.get_quantity<BytesPerSec>("bandwidth");
  st.random_read_iops = node.get_number("random_read_iops", 1e6, 1e-3);
  st.latency = node.get_quantity<Seconds>("latency", Seconds(1e-3), false);
  return st;
}

} // namespace mlsim
