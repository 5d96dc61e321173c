// The loader framework's own CPU costs, outside the user's transforms, where
// they happen (`pipeline.framework_costs`), in core-seconds on the reference CPU:
//   receive  = receive_per_batch + receive_per_byte x batch bytes
//              in the training process, inside next(): the trainer's node
//              cores, counted as input wait (as a profiler shows it). PyTorch:
//              the main process takes each batch from the workers' result
//              queue (shared-memory tensors, unpickling), also with no image work.
//   receive_latency  wall time inside next() beyond its CPU, with the batch
//              ready: a delay of the trainer, no CPU. PyTorch: the batch's
//              shared-memory handle is a file descriptor the training process
//              fetches from the worker's resource-sharer thread (a round trip
//              between processes, each wake-up a scheduler latency); ~1-4 ms
//              per batch on a 2-core x86 VM with torch 1.13, nearly independent
//              of the batch's size.
//   worker   = worker_per_batch + (worker_per_byte
//              + worker_fresh_pages_per_byte x page_fault) x batch bytes
//              in the worker that built the batch, after collation (PyTorch:
//              default_collate into shared memory, pickling the handles).
//              PyTorch's worker collates every batch into a shared-memory
//              tensor of its own (`_new_shared`), mapped afresh: each 4 KiB
//              page of it is a minor page fault the worker pays for, priced
//              at the node's cpu.page_fault (0 unless a calibration measured
//              it; ~11 us on a 2-core x86 VM, where these faults were ~90 % of
//              the worker's per-byte cost, and a fraction of a us on bare
//              metal). Default for pytorch: 1 / 4096 pages a byte; 0 for the
//              others.
//   pin      = pin_per_byte x batch bytes, with pin_memory: true, in the
//              pin-memory thread: it receives the batch and copies it to
//              page-locked memory, one batch ahead when the copy overlaps.
//   startup  = W x worker_startup, with persistent_workers: false, at each
//              epoch's start: the training process starts its W workers one
//              after another and hands out the epoch's first batches only
//              when all have started, so no worker begins a batch of the epoch
//              before W x worker_startup of CPU work (on one of the node's
//              cores) after the first of them asks for one.
// Defaults: pytorch has non-zero receive and worker costs, of the order measured
// on a 2-core x86 VM with torch 1.13 (receive ~0.13-0.21 ms per 224x224 fp32
// sample = 0.25 ns/byte; worker ~4 % over the transforms); `mlsim calibrate
// --client pytorch` is meant to supply measured ones. tf.data and custom: zero
// (tf.data's equivalent is the iterator's host-side get_next and its copy to
// the device, keras-generator's the GIL-bound enqueue of each batch: give them
// as the same keys when measured).
// receive_latency and worker_startup default to 0 for every framework (`calibrate --client pytorch` measures it).
// Ignores: the drain at the end of an epoch (the last batches are built before
// the next epoch's workers start, as with persistent workers), the GIL between the pin-memory thread and the training loop, the
// variance of each cost, the training process's own faults when it first reads a received batch's shared
// pages (the calibration's receive does not touch the data; a real loop's copy to the device does).
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"

#include <string>

namespace mlsim {

// The loader framework (pipeline.framework: its defaults, pipeline_spec.hpp, and its costs here).
enum class Framework { tf_data, pytorch, keras_generator, custom };
template <> struct EnumNames<Framework> {
  static constexpr std::array<std::pair<Framework, std::string_view>, 4> table{{
      {Framework::tf_data, "tf.data"}, {Framework::pytorch, "pytorch"},
      {Framework::keras_generator, "keras-generator"}, {Framework::custom, "custom"}}};
};

struct FrameworkCosts {
  Seconds receive_per_batch{0.0};
  Seconds receive_per_byte{0.0};
  Seconds worker_per_batch{0.0};
  Seconds worker_per_byte{0.0};
  Seconds pin_per_byte{0.0};
  Seconds worker_startup{0.0};
  Seconds receive_latency{0.0};
  double worker_fresh_pages_per_byte = 0.0;
  Seconds page_fault{0.0}; // the node's cpu.page_fault: the price of each fresh page

  Seconds receive(double batch_bytes) const { return receive_per_batch + receive_per_byte * batch_bytes; }
  Seconds worker(double batch_bytes) const {
    return worker_per_batch + (worker_per_byte + page_fault * worker_fresh_pages_per_byte) * batch_bytes;
  }
  Seconds pin(double batch_bytes) const { return pin_per_byte * batch_bytes; }
};

// The framework's defaults (see above).
FrameworkCosts default_framework_costs(Framework framework);

} // namespace mlsim
