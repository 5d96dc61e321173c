// What one process can simulate, checked when a scenario is loaded (so `check`
// rejects what `run` would, and before any engine starts) with the key to change.
//
//   actors            <= max_actors(): each actor's stack is touched as deep as its calls go
//                     (~15 kB resident); unguarded stacks add no memory mapping (the kernel merges
//                     them, engine.hpp), so half of this machine's memory is the bound. Guarded
//                     stacks (2 mappings each) are used only up to max_guarded_actors().
//                     Per simulated trainer node (of every trainer group): a dispatcher, the dataset
//                     disk's server (local data), workers, read
//                     slots when they may read from RAM or remote storage (local-disk reads need no actor);
//                     per accelerator: a trainer, a communicator, a copier; per node: one
//                     core server (per_core scheduler, core_server.hpp).
//   hosts             <= kMaxHosts: hosts that communicate are one full zone, which keeps a
//                     route slot for every pair (hosts^2 x 8 bytes: 800 MB at 10,000).
//                     Per node instance: its CPU and one per accelerator (RAM and disks are
//                     in a zone without routes).
//   compute hosts     <= kMaxComputeHosts: per node its RAM bus and disks; each is a SimGrid
//                     host with its own resource (cores have none: core_server.hpp).
//   buffered samples  <= kMaxBufferedSamples: sizes drawn for every batch in flight
//                     ((prefetch + 1) x batch_size per accelerator) and a shuffle buffer's fill.
//   memory estimate   <= half of this machine's RAM: route table + compute hosts + actors + samples
//                     + the step records (steps x simulated accelerators).
//   finite work       a batch's CPU work (core-seconds) and bytes, and a step's device
//                     time, finite and below kMaxBatchCoreSeconds / kMaxBatchBytes /
//                     kMaxStepSeconds: past them SimGrid's solver sees infinities and
//                     reports a deadlock instead of a time.
// The estimates count what the simulation creates, not what a real machine would.
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/pipeline/step_plan.hpp"

namespace mlsim {

inline constexpr long kMaxHosts = 10000;
inline constexpr long kMaxComputeHosts = 250000; // ~2 per node: far past what the actors allow
inline constexpr double kMaxBufferedSamples = 1e7;
inline constexpr double kMaxBatchCoreSeconds = 1e9; // ~32 years of one core per batch
inline constexpr double kMaxBatchBytes = 1e15;      // 1 PB per batch
inline constexpr double kMaxStepSeconds = 1e9;

struct SimulationSize {
  double actors = 0, workers = 0, readers = 0 /* read slots' actors */, core_actors = 0, accelerator_actors = 0;
  double hosts = 0;         // in the route table
  double compute_hosts = 0; // RAM buses, disks
  double batch_samples = 0, shuffle_samples = 0;
  double memory_bytes = 0;
};

// The actors this machine's memory holds (see above), with unguarded stacks.
long max_actors();

// The actors whose stacks fit with a guard page each (two mappings) under vm.max_map_count.
long max_guarded_actors();

// Whether `s`'s actors fit with a guard page on every stack.
bool guarded_stacks_fit(const Scenario& s);

// What simulating `s` creates (see the header comment for what is counted).
SimulationSize estimate_size(const Scenario& s);

// Throws InputError at the key to change when `s` exceeds what this process can simulate.
// `root` is the scenario's document, for the positions of the keys.
// `plans`: one per trainer group (plan_trainer_steps).
void check_simulable(const Scenario& s, const std::vector<StepPlan>& plans, const ConfigNode& root);

// The step of one accelerator of a trainer group's node; a batch whose step does not fit in
// device memory is an InputError at pipeline.batch_size.
StepPlan plan_trainer_step(const Scenario& s, const NodeSpec& trainer);
// One plan per trainer group, in Scenario::trainer_groups() order (each checked to fit).
std::vector<StepPlan> plan_trainer_steps(const Scenario& s);

} // namespace mlsim
