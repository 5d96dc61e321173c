// `mlsim validate --client pytorch`: a real torch DataLoader feeding an emulated accelerator, over a grid.
//
// Each configuration: W workers with the default transforms (pytorch_loader_bench.py), batch B, an
// accelerator emulated by a sleep of step_s per step, the job held to `cores` cores (sched_setaffinity;
// the workers inherit it). step_s = ratio x the loader's time per batch predicted from the profile:
//   T_batch = (B x sum of the torch_* stage costs at the set's mean image + worker(B x sample bytes))
//             / min(W, cores)   (+ receive in the training process)
// so ratio ~1 puts the job where the loader and the accelerator are equally fast (the hardest case).
// Default grid: image set {imagenet 500x375, large 1024x768} x cores {1, all} x workers {1, 2, 3} x
// batch {8, 16} = 24 configurations, the ratio cycling through {1, 0.5, 2}; --quick: 3 configurations.
#pragma once

#include "sim/validate/job_config.hpp"
#include "sim/validate/loader_job.hpp"
#include "sim/validate/profile.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlsim::validate {

// Core-seconds per batch of one worker on the profile's core: the transforms and the worker's own cost.
double torch_batch_cost_s(const Profile& p, const JobConfig& cfg, const JobInputs& in);

// The grid, step_s set from the profile and each image set's inputs.
std::vector<JobConfig> pytorch_grid(bool quick, int host_cores, const Profile& p,
                                    const std::function<JobInputs(const std::string&)>& inputs);

// Measures one configuration through the client (a started ClientProcess, client_process.hpp).
class ClientProcess;
std::function<Measured(const JobConfig&, const JobInputs&, const RunLength&)> pytorch_runner(ClientProcess& client);

} // namespace mlsim::validate
