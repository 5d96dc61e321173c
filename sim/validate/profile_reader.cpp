// Reads a calibrated profile back through the scenario unit parser.
#include "sim/validate/profile.hpp"

#include "sim/core/base/config_node.hpp"
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/hardware/pcie.hpp"

namespace mlsim::validate {

Profile read_profile(const std::string& path) {
  ConfigNode root = ConfigNode::load_file(path);
  Profile p;
  ConfigNode cpu = root.required("cpu");
  p.cpu.cores = static_cast<int>(cpu.get_integer("cores", std::nullopt, 1, 1 << 20));
  p.cpu.core_speed = cpu.get_number("core_speed", 1.0, 1e-6, 1e6);
  p.cpu.fp16_emulation_factor = cpu.get_number("fp16_emulation_factor", 1.0, 0.0, 1e6);
  p.cpu.balance_delay_s = cpu.get_quantity<Seconds>("balance_delay", Seconds(0.0), false).value();
  p.cpu.busy_wake_delay_s = cpu.get_quantity<Seconds>("busy_wake_delay", Seconds(0.0), false).value();
  if (ConfigNode e = cpu.child("shared_core_efficiency"); e.defined())
    for (const ConfigNode& item : e.items())
      p.cpu.shared_core_efficiency.push_back(item.as_number());
  p.cpu.all_cores_efficiency = cpu.get_number("all_cores_efficiency", 0.0, 0.0, 1.0); // 0: derive from the fits
  p.cpu.page_fault_s = cpu.get_quantity<Seconds>("page_fault", Seconds(0.0), false).value();
  ConfigNode stages = cpu.child("stage_costs");
  ConfigNode fits = root.child("calibration").child("stage_fits");
  if (stages.defined())
    for (const auto& name : stages.keys()) {
      ConfigNode s = stages.child(name);
      StageCost c;
      c.per_sample_s = s.get_quantity<Seconds>("per_sample", Seconds(0.0), false).value();
      c.per_byte_s = s.get_quantity<Seconds>("per_byte", Seconds(0.0), false).value();
      c.per_pixel_s = s.get_quantity<Seconds>("per_pixel", Seconds(0.0), false).value();
      c.r2 = s.get_number("r2", 0.0, -1e9, 1.0);
      c.reps = static_cast<int>(s.get_integer("reps", 0, 0));
      c.spread = s.get_number("spread", 0.0, 0.0);
      if (s.has("fresh_pages") || s.has("work_by_source")) { // the scenario loader's parse and checks (hardware_load.hpp)
        const mlsim::StageCost parsed = parse_stage_cost(s, Seconds(p.cpu.page_fault_s));
        c.fresh_pages = parsed.fresh_pages;
        c.page_fault_s = c.fresh_pages.empty() ? 0.0 : p.cpu.page_fault_s;
        c.work_by_source = parsed.work_by_source;
      }
      if (ConfigNode f = fits.defined() ? fits.child(name) : ConfigNode(); f.defined()) {
        c.all_cores_efficiency = f.get_number("all_cores_efficiency", 0.0, 0.0, 100.0);
        c.regressor = f.get_string("regressor", "");
        c.points = static_cast<int>(f.get_integer("points", 0, 0));
        c.per_file_s = f.get_quantity<Seconds>("per_file", Seconds(0.0), false).value();
        c.context = f.get_string("context", "isolated");
        c.in_loader_factor = f.get_number("in_loader_factor", 0.0, 0.0, 1e3);
      }
      p.cpu.stage_costs[name] = c;
    }
  if (ConfigNode hc = root.child("calibration").child("host_compute"); hc.defined())
    for (const auto& name : hc.keys()) {
      ConfigNode s = hc.child(name);
      StageCost c;
      c.regressor = "flops";
      c.per_sample_s = s.get_quantity<Seconds>("per_call", Seconds(0.0), false).value();
      c.per_flop_s = s.get_quantity<Seconds>("per_flop").value();
      c.r2 = s.get_number("r2", 0.0, -1e9, 1.0);
      c.reps = static_cast<int>(s.get_integer("reps", 0, 0));
      c.spread = s.get_number("spread", 0.0, 0.0);
      if (ConfigNode f = fits.defined() ? fits.child(name) : ConfigNode(); f.defined())
        c.all_cores_efficiency = f.get_number("all_cores_efficiency", 0.0, 0.0, 100.0);
      p.cpu.stage_costs[name] = c;
    }
  if (!p.cpu.stage_costs.count("host_gemm_fp32") && cpu.has("core_flops")) { // a profile without fit details
    StageCost c;
    c.regressor = "flops";
    c.per_flop_s = 1.0 / cpu.get_quantity<FlopsPerSec>("core_flops").value();
    p.cpu.stage_costs["host_gemm_fp32"] = c;
  }
  if (ConfigNode ram = root.child("ram"); ram.defined()) {
    p.ram.size_bytes = ram.get_quantity<Bytes>("size", Bytes(0.0), false).value();
    p.ram.bandwidth_Bps = ram.get_quantity<BytesPerSec>("bandwidth", BytesPerSec(0.0), false).value();
  }
  if (ConfigNode disk = root.child("disk"); disk.defined()) {
    p.disk.sequential_read_Bps = disk.get_quantity<BytesPerSec>("sequential_read", BytesPerSec(0.0), false).value();
    p.disk.random_read_iops = disk.get_number("random_read_iops", 0.0, 0.0);
    p.disk.latency_s = disk.get_quantity<Seconds>("latency", Seconds(0.0), false).value();
  }
  if (ConfigNode pcie = root.child("pcie"); pcie.defined()) {
    // The measured figures are under calibration.pcie; older profiles kept them in pcie itself.
    ConfigNode measured = root.child("calibration").child("pcie");
    ConfigNode src = pcie.has("bandwidth") || !measured.defined() ? pcie : measured;
    PcieProfile pc;
    if (src.has("bandwidth"))
      pc.bandwidth_Bps = src.get_quantity<BytesPerSec>("bandwidth").value();
    else { // the preset schema only: generation x lanes x efficiency
      const int gen = static_cast<int>(pcie.get_integer("generation", std::nullopt, 1, 5));
      const int lanes = static_cast<int>(pcie.get_integer("lanes", 16, 1, 16));
      pc.bandwidth_Bps = pcie_lane_rate(gen).value() * lanes * pcie.get_number("protocol_efficiency", 0.8, 0.05, 1.0);
    }
    pc.latency_s = pcie.get_quantity<Seconds>("latency", Seconds(0.0), false).value();
    pc.pageable_factor = src.get_number("pageable_factor", 1.0, 0.0, 1.0);
    if (measured.defined() && measured.has("d2h_bandwidth"))
      pc.d2h_bandwidth_Bps = measured.get_quantity<BytesPerSec>("d2h_bandwidth").value();
    p.pcie = pc;
  }
  if (ConfigNode acc = root.child("accelerator"); acc.defined()) {
    AcceleratorProfile a;
    a.name = acc.get_string("name", "accelerator");
    a.memory_bandwidth_Bps = acc.get_quantity<BytesPerSec>("memory_bandwidth").value();
    a.launch_overhead_s = acc.get_quantity<Seconds>("launch_overhead", Seconds(0.0), false).value();
    for (const char* sec : {"vector_peak", "matrix_peak"})
      if (ConfigNode peaks = acc.child(sec); peaks.defined())
        for (const auto& d : peaks.keys()) {
          GemmCurve g;
          g.dtype = d;
          g.peak_flops = peaks.get_quantity<FlopsPerSec>(d).value();
          if (ConfigNode gc = root.child("calibration").child("gemm_curves").child(d); gc.defined())
            g.s_half = gc.get_number("s_half", 0.0, 0.0);
          a.gemm.push_back(g);
        }
    p.accelerator = a;
  }
  if (ConfigNode fc = root.child("framework_costs").child("pytorch"); fc.defined()) {
    FrameworkCostsProfile f;
    auto get = [&](const char* key) { return fc.get_quantity<Seconds>(key, Seconds(0.0), false).value(); };
    f.receive_per_batch_s = get("receive_per_batch");
    f.receive_per_byte_s = get("receive_per_byte");
    f.worker_per_batch_s = get("worker_per_batch");
    f.worker_per_byte_s = get("worker_per_byte");
    f.worker_fresh_pages_per_byte = fc.get_number("worker_fresh_pages_per_byte", 0.0, 0.0, 1.0);
    f.pin_per_byte_s = get("pin_per_byte");
    f.worker_startup_s = get("worker_startup");
    f.receive_latency_s = get("receive_latency");
    p.framework_costs = f;
  }
  if (ConfigNode cal = root.child("calibration"); cal.defined()) {
    p.meta.host = cal.get_string("host", "");
    p.meta.cpu_model = cal.get_string("cpu_model", "");
    p.meta.gpu = cal.get_string("gpu", "none");
    p.meta.date = cal.get_string("date", "");
    p.meta.mode = cal.get_string("mode", "");
    p.meta.reference_spin_s = cal.get_quantity<Seconds>("reference_spin", Seconds(0.0), false).value();
    p.meta.reference_gemm_s = cal.get_quantity<Seconds>("reference_gemm", Seconds(0.0), false).value();
    p.meta.reference_decode_s = cal.get_quantity<Seconds>("reference_decode", Seconds(0.0), false).value();
    p.meta.reference_decode_image = cal.get_string("reference_decode_image", "");
    if (p.framework_costs) {
      ConfigNode fits = cal.child("framework_fits").child("pytorch");
      p.framework_costs->reference_spin_s = fits.get_quantity<Seconds>("reference_spin", Seconds(0.0), false).value();
      p.framework_costs->reference_decode_s = fits.get_quantity<Seconds>("reference_decode", Seconds(0.0), false).value();
      p.framework_costs->reference_page_fault_s =
          fits.get_quantity<Seconds>("reference_page_fault", Seconds(0.0), false).value();
    }
  }
  return p;
}

} // namespace mlsim::validate
