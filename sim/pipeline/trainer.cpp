#include "sim/pipeline/trainer.hpp"

#include "sim/core/base/engine.hpp"
#include "sim/pipeline/pipeline_counters.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace mlsim {

namespace {
// The copy is from page-locked memory only when the loader pins its batches (pin_memory) and the node allows it.
bool pinned_copy(const JobContext& job, const NodeSpec& node) { return job.pipeline->pinned && node.pcie.pinned; }
bool overlapped_copy(const JobContext& job, const NodeSpec& node) {
  return job.pipeline->copy == CopyMode::overlapped && pinned_copy(job, node);
}
} // namespace

Trainer::Trainer(Setup setup)
    : s_(setup), cat_input_(s_.recorder->intern("input")), cat_h2d_(s_.recorder->intern("h2d")),
      name_wait_(s_.recorder->intern(pipeline_spans::wait_for_input())),
      name_h2d_(s_.recorder->intern("copy batch to device")), name_receive_(s_.recorder->intern("receive batch")),
      name_receive_pin_(s_.recorder->intern("receive and pin batch")),
      cat_host_issue_(s_.recorder->intern("host_issue")),
      name_host_issue_(s_.recorder->intern("waiting for the host to issue the next op")),
      receive_core_seconds_(*s_.recorder, pipeline_counters::receive_core_seconds()) {}

void Trainer::start() {
  sg4::Host* gpu = s_.node->accelerators[static_cast<size_t>(s_.local_rank)];
  if (overlapped_copy(*s_.job, *s_.node->spec)) {
    on_device_ = std::make_unique<BatchQueue>(1);
    // A daemon: after a fast-forward (steady_state.hpp) the trainer stops before the copier's last batch.
    spawn_actor(gpu->get_name() + ".copier", gpu, [this] { copy_ahead(); })->daemonize();
  }
  spawn_actor(gpu->get_name() + ".trainer", gpu, [this] { run(); });
}

void Trainer::copy_ahead() {
  sg4::Host* gpu = s_.node->accelerators[static_cast<size_t>(s_.local_rank)];
  auto* rec = s_.recorder;
  uint32_t track = rec->intern(gpu->get_name() + "/copy");
  for (long batch = 0; batch < s_.job->run->steps * s_.job->micro_batches; ++batch) {
    on_device_->acquire_token(); // one batch ahead of the step at most
    Batch b = s_.queue->pop();
    receive(b, track, true); // the pin-memory thread, one batch ahead
    b.copy_start = sg4::Engine::get_clock();
    s_.platform->transfer(s_.node->cpu, gpu, Bytes(b.bytes))->wait();
    rec->span(track, name_h2d_, cat_h2d_, b.copy_start, sg4::Engine::get_clock());
    on_device_->push(b);
  }
}

void Trainer::receive(const Batch& b, uint32_t track, bool pin) {
  const FrameworkCosts& fc = s_.job->pipeline->framework_costs;
  double work = fc.receive(b.bytes).value() + (pin ? fc.pin(b.bytes).value() : 0.0);
  if (work <= 0 && fc.receive_latency.value() <= 0)
    return;
  double t0 = sg4::Engine::get_clock();
  if (work > 0)
    s_.node->scheduler->run(Seconds(work)); // the training process's cores, not the device
  if (fc.receive_latency.value() > 0)
    sg4::this_actor::sleep_for(fc.receive_latency.value()); // the hand-off between processes: waiting, no CPU
  s_.recorder->span(track, pin ? name_receive_pin_ : name_receive_, cat_input_, t0, sg4::Engine::get_clock());
  receive_core_seconds_.add(work);
}

Batch Trainer::next_batch(StepRecord& r, double since, uint32_t track) {
  auto* rec = s_.recorder;
  sg4::Host* gpu = s_.node->accelerators[static_cast<size_t>(s_.local_rank)];
  if (on_device_) {
    Batch batch = on_device_->pop();
    double t = sg4::Engine::get_clock();
    // The part of the wait during which this batch was being copied is the exposed copy; the rest is input.
    double copying_from = std::clamp(batch.copy_start, since, t);
    r.input += copying_from - since;
    r.h2d += t - copying_from;
    rec->span(track, name_wait_, cat_input_, since, copying_from);
    if (t > copying_from)
      rec->span(track, name_h2d_, cat_h2d_, copying_from, t);
    return batch;
  }
  Batch batch = s_.queue->pop();
  receive(batch, track, pinned_copy(*s_.job, *s_.node->spec)); // inside next(): shown as input wait
  double t = sg4::Engine::get_clock();
  r.input += t - since;
  rec->span(track, name_wait_, cat_input_, since, t);
  if (!pinned_copy(*s_.job, *s_.node->spec)) // pageable: the driver stages through a pinned buffer
    sg4::this_actor::exec_init(batch.bytes)->set_host(s_.node->ram_bus)->wait();
  s_.platform->transfer(s_.node->cpu, gpu, Bytes(batch.bytes))->wait();
  double t2 = sg4::Engine::get_clock();
  r.h2d += t2 - t;
  rec->span(track, name_h2d_, cat_h2d_, t, t2);
  return batch;
}

double Trainer::run_device_ops(size_t begin, size_t end, double scale, bool trace, uint32_t track,
                               const HostWaits& waits) {
  const StepPlan& plan = *s_.plan;
  // The batch's compute scale stretches the kernels, not the device's wait for the host to issue them.
  auto kernel = [&](size_t i) { return (plan.ops[i].duration - plan.ops[i].host_wait).value() * scale; };
  auto wait = [&](size_t i) {
    return (i == begin ? waits.before_first : 0.0) + (waits.per_op ? plan.ops[i].host_wait.value() : 0.0);
  };
  double total = 0;
  for (size_t i = begin; i < end; ++i)
    total += wait(i) + kernel(i);
  double t0 = sg4::Engine::get_clock();
  if (total > 0)
    sg4::this_actor::execute(total * kWorkPerSecond);
  if (trace) {
    auto* rec = s_.recorder;
    double at = t0;
    for (size_t i = begin; i < end; ++i) {
      if (double w = wait(i); w > 0) { // the gap a profiler shows before the kernel
        rec->span(track, name_host_issue_, cat_host_issue_, at, at + w);
        at += w;
      }
      double d = kernel(i);
      rec->span(track, rec->intern(plan.ops[i].name), rec->intern("device"), at, at + d);
      at += d;
    }
  }
  return sg4::Engine::get_clock() - t0;
}

void Trainer::run() {
  const JobContext& job = *s_.job;
  const StepPlan& plan = *s_.plan;
  auto* rec = s_.recorder;
  sg4::Host* gpu = s_.node->accelerators[static_cast<size_t>(s_.local_rank)];
  sg4::Host* cpu = s_.node->cpu;
  uint32_t track = rec->intern(gpu->get_name());
  uint32_t host_track = rec->intern(gpu->get_name() + "/host-ops");
  uint32_t cat_coll = rec->intern("collective");
  uint32_t name_exposed = rec->intern("wait for gradients");
  const size_t n_ops = plan.ops.size();
  // buckets_after[i]: bytes of the buckets whose gradients are ready after op i.
  std::vector<std::vector<double>> buckets_after(n_ops + 1);
  for (const auto& b : plan.buckets)
    buckets_after[std::min(b.ready_after_op, n_ops == 0 ? 0 : n_ops - 1)].push_back(b.bytes.value());

  for (long step = 0; step < job.run->steps; ++step) {
    if (s_.steady && s_.steady->stop_before(step))
      break;
    const double queue_level = static_cast<double>(s_.queue->size());
    StepRecord r;
    r.rank = s_.rank;
    r.step = step;
    r.start = sg4::Engine::get_clock();
    bool trace = step < s_.trace_steps || step >= job.run->steps - 1;
    const long micro_batches = job.micro_batches;
    r.padded_fraction = 0.0;
    size_t seg = 0; // first device op not yet run
    double scale = 1.0;
    bool trace_ops = trace; // of many micro-batches, the first and the last are recorded op by op
    // Accumulating: each micro-batch's forward and backward wait for the host as the plan's micro-batch
    // walk says (host_issue.hpp), once before the micro-batch, instead of the one-batch step's per-op waits.
    const bool micro_waits = micro_batches > 1 && !plan.micro_batch_host_wait.empty();
    HostWaits waits;
    auto flush = [&](size_t upto) {
      if (upto > seg) {
        s_.communicator->hand_over(); // reduced while the device computes
        HostWaits w = waits;
        w.per_op = !micro_waits || seg >= plan.optimizer_begin;
        r.device_compute += run_device_ops(seg, upto, scale, trace_ops, track, w);
        waits.before_first = 0.0; // spent
      }
      seg = upto;
    };
    auto wait_gradients = [&] {
      double w0 = sg4::Engine::get_clock();
      s_.communicator->wait_all();
      double w1 = sg4::Engine::get_clock();
      r.collective += w1 - w0;
      if (w1 > w0)
        rec->span(track, name_exposed, cat_coll, w0, w1);
    };
    for (long micro = 0; micro < micro_batches; ++micro) {
      // Every micro-batch runs forward and backward; only the last reduces its gradients and steps the optimizer.
      const bool last = micro == micro_batches - 1;
      const size_t end = last ? n_ops : std::min(plan.optimizer_begin, n_ops);
      Batch batch = next_batch(r, sg4::Engine::get_clock(), track);
      r.padded_fraction += batch.padded_fraction / static_cast<double>(micro_batches);
      scale = batch.compute_scale;
      trace_ops = trace && (micro == 0 || last);
      if (micro_waits)
        waits.before_first = plan.micro_batch_wait(micro).value();

      if (job.pipeline->device_stage.present) {
        const auto& ds = job.pipeline->device_stage;
        double per_sample_bytes = batch.samples > 0 ? batch.bytes / batch.samples : 0;
        double pixels = job.dataset->width.value_or(0) * job.dataset->height.value_or(0);
        double d = ds.cost.for_sample(per_sample_bytes, pixels).value() * batch.samples;
        double d0 = sg4::Engine::get_clock();
        sg4::this_actor::execute(d * kWorkPerSecond);
        r.device_compute += sg4::Engine::get_clock() - d0;
        rec->span(track, rec->intern(ds.name), rec->intern("device"), d0, sg4::Engine::get_clock());
      }

      seg = 0;
      // No gradients held yet (set to None after the last step): the backward's go in without an add.
      const size_t skip_from = plan.micro_batch_end(micro);
      for (size_t i = 0; i < end; ++i) {
        if (i == skip_from && i < plan.optimizer_begin) {
          flush(i);
          seg = i = plan.optimizer_begin;
          if (i >= end)
            break;
        }
        const PlannedOp& op = plan.ops[i];
        if (i == plan.optimizer_begin) {
          flush(i);
          wait_gradients();
        }
        if (op.placement == OpPlacement::host) {
          flush(i);
          s_.communicator->hand_over();
          double h0 = sg4::Engine::get_clock();
          if (op.to_host.value() > 0)
            s_.platform->transfer(gpu, cpu, op.to_host)->wait();
          s_.node->scheduler->run(op.duration);
          if (op.to_device.value() > 0)
            s_.platform->transfer(cpu, gpu, op.to_device)->wait();
          double h1 = sg4::Engine::get_clock();
          r.host_compute += h1 - h0;
          if (trace_ops)
            rec->span(host_track, rec->intern(op.name), rec->intern("host"), h0, h1);
          seg = i + 1;
        }
        if ((last || job.reduce_every_micro_batch) && !buckets_after[i].empty()) {
          flush(i + 1);
          for (double bytes : buckets_after[i])
            s_.communicator->submit(bytes);
        }
      }
      flush(end);
      if (!last && job.reduce_every_micro_batch)
        wait_gradients(); // DDP's backward returns once its buckets are reduced
    }
    if (plan.optimizer_begin >= n_ops)
      wait_gradients();
    s_.communicator->hand_over(); // buckets after the optimizer's start: reduced during the next step
    r.end = sg4::Engine::get_clock();
    rec->step(r);
    if (s_.steady)
      s_.steady->record(r, queue_level);
  }
}

} // namespace mlsim
