// The floor for sim_speed's 1-node run: the same activities in plain SimGrid s4u, with none of mlsim.
//
// One node: a dispatcher reads `chunks` chunks per step (the node's batch) once every accelerator's
// buffer has a free slot, up to `chunks` reads in flight and the rest waiting, each from the disk (its
// accesses and bytes shared with the other reads in flight, then the per-request latency), served as
// mlsim serves it: sim/hardware/disk_server.hpp is itself plain SimGrid (a server per disk whose
// steps run on the engine's timers, a read's end run by that step: it queues the chunk for the
// workers and starts the next waiting read), so the replica uses it as it is; `chunks` workers, slots of a pool as in mlsim
// (sim/pipeline/slot_queue.hpp: no actor per worker), submit a chunk's CPU work to the node's cores,
// served as mlsim serves them (sim/hardware/core_server.hpp, plain SimGrid as well: one server per node,
// the epyc-7742's 128 cores at speed 1, no co-running slowdown, the default balance delay), whose
// completion takes the worker's next chunk; the last chunk of a batch puts a collate task at the head
// of the queue, and the worker that takes it hands the batch to the 8 trainers; a trainer copies its batch over its PCIe link,
// runs the step on its accelerator host and sends its share of a ring all-reduce to the next
// accelerator over NVLink, then waits at a barrier. Sample sizes are drawn as mlsim draws them
// (lognormal, 110 kB mean), the costs are the bench scenario's, rounded. What it leaves out of
// mlsim: recording, step bookkeeping, the fast-forward monitor.
#pragma once

#include "sim/hardware/core_server.hpp"
#include "sim/hardware/disk_server.hpp"
#include "sim/pipeline/slot_queue.hpp"

#include <simgrid/s4u.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bare {

namespace sg4 = simgrid::s4u;

struct Counts {
  long execs = 0, comms = 0;
  double end_time = 0;
};

struct Chunk {
  double bytes = 0;
  long batch = 0;
  bool collate = false;
};

inline Counts run(int argc, char** argv, int steps, int chunks = 128, int gpus = 8, int batch = 256) {
  Counts counts;
  sg4::Engine engine(&argc, argv);
  sg4::Exec::on_start_cb([&counts](const sg4::Exec&) { ++counts.execs; });
  sg4::Activity::on_completion_cb([&counts](const sg4::Activity& a) { counts.comms += dynamic_cast<const sg4::Comm*>(&a) != nullptr; });
  auto* root = sg4::create_empty_zone("root");
  auto* net = sg4::create_full_zone("net");
  net->set_parent(root);
  auto* compute = sg4::create_empty_zone("compute");
  compute->set_parent(root);
  auto* cpu = net->create_host("cpu", 1e9)->seal();
  mlsim::DiskSpec nvme;
  nvme.sequential_read = mlsim::BytesPerSec(7e9);
  nvme.random_read_iops = 1e6;
  nvme.latency = mlsim::Seconds(20e-6);
  auto disk = std::make_shared<mlsim::DiskServer>(nvme, compute->create_host("disk", 7e9)->seal());
  std::vector<sg4::Host*> gpu;
  mlsim::CpuSpec epyc;
  epyc.cores = 128;
  auto cores = std::make_shared<mlsim::CoreServer>(epyc, cpu);
  std::vector<sg4::Link*> nvlink;
  for (int g = 0; g < gpus; ++g) {
    gpu.push_back(net->create_host("gpu" + std::to_string(g), 1e9)->seal());
    auto* pcie = net->create_split_duplex_link("pcie" + std::to_string(g), 25.2e9)->set_latency(1e-6)->seal();
    nvlink.push_back(net->create_split_duplex_link("nvlink" + std::to_string(g), 300e9)->set_latency(1e-6)->seal());
    using Dir = sg4::LinkInRoute::Direction;
    net->add_route(cpu->get_netpoint(), gpu[g]->get_netpoint(), nullptr, nullptr, {{pcie, Dir::DOWN}}, false);
  }
  using Dir = sg4::LinkInRoute::Direction;
  for (int g = 0; g < gpus; ++g) {
    int n = (g + 1) % gpus;
    net->add_route(gpu[g]->get_netpoint(), gpu[n]->get_netpoint(), nullptr, nullptr,
                   {{nvlink[g], Dir::UP}, {nvlink[n], Dir::DOWN}}, false);
  }
  compute->seal();
  net->seal();
  root->seal();

  std::vector<sg4::SemaphorePtr> tokens, ready;
  for (int g = 0; g < gpus; ++g) {
    tokens.push_back(sg4::Semaphore::create(2)); // prefetch 2
    ready.push_back(sg4::Semaphore::create(0));
  }
  auto left = std::make_shared<std::map<long, int>>(); // chunks of each batch not yet processed
  // The workers: a chunk's CPU work is a piece of the worker's thread; its completion takes the next.
  using Workers = mlsim::SlotQueue<Chunk>;
  auto workers = std::make_shared<Workers>(nullptr); // its start, below, needs its address
  std::vector<long> thread(static_cast<size_t>(chunks));
  for (auto& t : thread)
    t = cores->new_thread();
  auto barrier = sg4::Barrier::create(static_cast<unsigned>(gpus));
  const double per_sample_cpu = 1.2e-3, per_byte_h2d = 224.0 * 224 * 3 * 4, step_s = 0.0202;
  const double gradient = 25.6e6 * 2, ring = 2.0 * (gpus - 1) / gpus * gradient;

  // The read stage: `chunks` slots (slot_queue.hpp); a read's end maps its chunk and starts the next
  // waiting one.
  const double per_chunk = static_cast<double>(gpus * batch / chunks);
  auto reads = std::make_shared<mlsim::SlotQueue<Chunk>>(nullptr);
  *reads = mlsim::SlotQueue<Chunk>([disk, workers, per_chunk, r = reads.get()](int slot, Chunk c) {
    disk->submit(per_chunk, mlsim::Bytes(c.bytes), [workers, r, slot, c] {
      workers->offer(c);
      r->release(slot);
    });
  });
  for (int slot = 0; slot < chunks; ++slot)
    reads->add_free(slot);
  sg4::Actor::create("dispatch", cpu, [=] {
    std::mt19937_64 rng(1);
    const double sigma = std::sqrt(std::log(1 + (60.0 / 110) * (60.0 / 110))), mu = std::log(110e3) - sigma * sigma / 2;
    std::lognormal_distribution<double> size(mu, sigma);
    for (long id = 0;; ++id) {
      for (auto& t : tokens)
        t->acquire();
      (*left)[id] = chunks;
      for (int c = 0; c < chunks; ++c) {
        double bytes = 0;
        for (int i = 0; i < gpus * batch / chunks; ++i)
          bytes += size(rng);
        reads->offer({bytes, id});
      }
    }
  })->daemonize();
  *workers = Workers([=, w = workers.get()](int worker, Chunk c) {
    if (c.collate) { // hand the batch to every trainer
      for (auto& s : ready)
        s->release();
      w->release(worker);
      return;
    }
    cores->submit(mlsim::Seconds(per_chunk * per_sample_cpu), thread[static_cast<size_t>(worker)], [=] {
      if (--(*left)[c.batch] == 0) {
        left->erase(c.batch);
        w->offer({0, c.batch, true}, /*ahead=*/true);
      }
      w->release(worker);
    });
  });
  for (int w = 0; w < chunks; ++w)
    workers->add_free(w);
  for (int g = 0; g < gpus; ++g)
    sg4::Actor::create("trainer", gpu[g], [=, &counts] {
      for (int s = 0; s < steps; ++s) {
        tokens[g]->release();
        ready[g]->acquire();
        sg4::Comm::sendto_async(cpu, gpu[g], static_cast<uint64_t>(batch * per_byte_h2d))->wait();
        sg4::this_actor::execute(step_s * 1e9);
        sg4::Comm::sendto_async(gpu[g], gpu[(g + 1) % gpus], static_cast<uint64_t>(ring))->wait();
        barrier->wait();
      }
      counts.end_time = sg4::Engine::get_clock();
    });
  engine.run();
  return counts;
}

} // namespace bare
