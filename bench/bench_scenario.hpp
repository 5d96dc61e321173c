// The scenario sim_speed measures: nodes of 128 cores, one NVMe disk and 8 A100s, a 5-stage
// tf.data pipeline (read, decode, crop, flip, normalize) feeding ResNet-50. Tests use it too, to
// count what a job of that shape costs the process.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace mlsim::bench {

inline std::string scenario(int nodes, int steps, bool folding) {
  return fmt::format(R"(name: bench-{nodes}x8
hardware:
  nodes:
    - name: node
      count: {nodes}
      cpu: {{preset: epyc-7742}}
      ram: {{preset: ddr4-512gb-8ch}}
      disks: [{{name: data, preset: nvme}}]
      nic: ib-hdr-200
      pcie: gen4-x16
      accelerators: {{preset: a100-sxm4-40gb, count: 8}}
      nvlink: nvlink3
dataset:
  samples: 100000000
  sample_size: {{distribution: lognormal, mean: 110 kB, stddev: 60 kB}}
  image: {{width: 500, height: 375, channels: 3}}
  location: local
pipeline:
  framework: tf.data
  batch_size: 256
  prefetch: 2
  stages:
    - read
    - {{name: decode, cost: {{per_sample: 0.3 ms, per_pixel: 4 ns}}, output: {{dtype: uint8}}}}
    - {{name: crop, cost: {{per_sample: 0.1 ms, per_pixel: 1 ns}}, output: {{width: 224, height: 224}}}}
    - {{name: flip, cost: {{per_pixel: 0.5 ns}}}}
    - {{name: normalize, cost: {{per_pixel: 2 ns}}, output: {{dtype: fp32}}}}
model: {{name: resnet50, forward_flops_per_sample: 8.2 GFLOP, parameters: 25.6e6, dtype: fp16}}
run: {{steps: {steps}, warmup_steps: {warmup}, seed: 1, replica_folding: {folding}}}
)",
                     fmt::arg("nodes", nodes), fmt::arg("steps", steps), fmt::arg("folding", folding),
                     fmt::arg("warmup", std::min(10, steps / 2)));
}

} // namespace mlsim::bench
