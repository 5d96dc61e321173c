// The pipeline, its framework costs and the dataset's sample sizes, from YAML (pipeline_load.hpp).
#include "sim/core/run/load/pipeline_load.hpp"

#include "sim/core/run/load/hardware_load.hpp"

#include <cctype>
#include <numeric>
#include <sstream>
#include <vector>

namespace mlsim {

// A stage's `kind` as written: convert is a map whose output defaults to fp32 (pipeline_spec.hpp).
enum class StageKindName { read, map, convert, shuffle, cache };
template <> struct EnumNames<StageKindName> {
  static constexpr std::array<std::pair<StageKindName, std::string_view>, 5> table{
      {{StageKindName::read, "read"}, {StageKindName::map, "map"}, {StageKindName::convert, "convert"},
       {StageKindName::shuffle, "shuffle"}, {StageKindName::cache, "cache"}}};
};

namespace {

StageKind stage_kind(StageKindName k) {
  switch (k) {
  case StageKindName::read: return StageKind::read;
  case StageKindName::shuffle: return StageKind::shuffle;
  case StageKindName::cache: return StageKind::cache;
  case StageKindName::map:
  case StageKindName::convert: return StageKind::map;
  }
  return StageKind::map;
}

// A calibrated cost by name, from the CPU's profile.
StageCost calibrated_cost(const ConfigNode& node, const CpuSpec& cpu) {
  std::string name = node.as_string();
  auto it = cpu.stage_costs.find(name);
  if (it == cpu.stage_costs.end()) {
    std::string known;
    for (const auto& [k, v] : cpu.stage_costs)
      known += (known.empty() ? "" : ", ") + k;
    node.fail("a cost {per_sample, per_byte, per_pixel} or a calibrated stage of the node's cpu (" +
                  (known.empty() ? std::string("none: the cpu has no stage_costs") : known) + ")",
              node.quoted());
  }
  return it->second;
}

// `cost: flip`, `cost: {calibrated: flip, scale: 0.5}` or `cost: {per_sample: ..., per_byte: ..., per_pixel: ...}`.
StageCost parse_cost(const ConfigNode& node, const CpuSpec& cpu) {
  if (!node.defined())
    return {};
  if (node.is_scalar())
    return calibrated_cost(node, cpu);
  if (node.has("calibrated")) {
    node.allow_only({"calibrated", "scale"});
    return calibrated_cost(node.child("calibrated"), cpu).scaled(node.get_number("scale", 1.0, 0.0));
  }
  return parse_stage_cost(node);
}

StageOutput parse_output(const ConfigNode& node) {
  StageOutput o;
  if (!node.defined())
    return o;
  node.allow_only({"width", "height", "channels", "dtype", "bytes", "scale"});
  if (node.has("width"))
    o.width = node.get_number("width", std::nullopt, 1);
  if (node.has("height"))
    o.height = node.get_number("height", std::nullopt, 1);
  if (node.has("channels"))
    o.channels = node.get_number("channels", std::nullopt, 1);
  if (node.has("dtype"))
    o.dtype = node.get_enum<ElementType>("dtype");
  if (node.has("bytes"))
    o.bytes = node.get_quantity<Bytes>("bytes");
  if (node.has("scale"))
    o.scale = node.get_number("scale", std::nullopt, 1e-9);
  return o;
}

StageSpec parse_stage(const ConfigNode& node, const CpuSpec& cpu) {
  StageSpec s;
  if (node.is_scalar()) {
    s.name = node.as_string();
    if (s.name == "read")
      s.kind = StageKind::read;
    else
      node.fail("'read' or a stage mapping {name, kind, cost, output}", node.quoted());
    return s;
  }
  node.allow_only({"name", "kind", "cost", "probability", "output", "parallelism", "buffer"});
  s.name = node.get_string("name");
  // A stage named read, shuffle or cache is of that kind unless it says otherwise.
  StageKindName kind = node.get_enum<StageKindName>(
      "kind", s.name == "read" || s.name == "shuffle" || s.name == "cache" ? *enum_value<StageKindName>(s.name)
                                                                          : StageKindName::map);
  s.kind = stage_kind(kind);
  // A stage applied with probability p (RandomHorizontalFlip) costs p x its cost on average; the
  // per-batch variance this hides is ignored.
  s.cost = parse_cost(node.child("cost"), cpu).scaled(node.get_number("probability", 1.0, 0.0, 1.0));
  s.output = parse_output(node.child("output"));
  if (kind == StageKindName::convert && !s.output.dtype) // ToTensor: uint8 HWC -> float32 CHW, the same elements
    s.output.dtype = ElementType::fp32;
  s.parallelism = static_cast<int>(node.get_integer("parallelism", 0, 0, 100000));
  s.buffer_samples = node.get_integer("buffer", 0, 0);
  if (s.kind == StageKind::shuffle && s.buffer_samples == 0)
    node.missing("buffer", "the shuffle buffer size in samples");
  return s;
}

} // namespace

PipelineSpec parse_pipeline(const ConfigNode& node, const CpuSpec& cpu) {
  node.allow_only({"framework", "batch_size", "workers", "prefetch", "prefetch_factor", "chunks_per_batch",
                   "pin_memory", "copy", "placement", "service", "stages", "batch", "device_stage",
                   "framework_costs", "persistent_workers", "worker_assignment", "batch_order"});
  PipelineSpec p;
  p.framework = node.get_enum<Framework>("framework", Framework::custom);
  p.batch_size = node.get_integer("batch_size", std::nullopt, 1, 10000000); // samples per accelerator
  // Framework defaults (documented in pipeline_spec.hpp); explicit keys win.
  if (p.framework == Framework::pytorch) {
    p.whole_batch_workers = true;
    p.workers = static_cast<int>(node.get_integer("workers", 4, 1, 100000));
    int factor = static_cast<int>(node.get_integer("prefetch_factor", 2, 1, 1000));
    p.prefetch = static_cast<int>(node.get_integer("prefetch", static_cast<long long>(factor) * p.workers, 0, 100000));
    p.pinned = node.get_bool("pin_memory", false);
  } else if (p.framework == Framework::keras_generator) {
    p.whole_batch_workers = true;
    p.workers = static_cast<int>(node.get_integer("workers", 1, 1, 100000));
    p.prefetch = static_cast<int>(node.get_integer("prefetch", 0, 0, 100000));
    p.pinned = node.get_bool("pin_memory", false);
  } else {
    if (node.has("prefetch_factor"))
      node.child("prefetch_factor").fail("no prefetch_factor (a pytorch setting; use prefetch)", "a value");
    p.workers = static_cast<int>(node.get_integer("workers", 0, 0, 100000));
    p.prefetch = static_cast<int>(node.get_integer("prefetch", 2, 0, 100000));
    p.pinned = node.get_bool("pin_memory", true);
  }
  if (p.whole_batch_workers) { // framework defaults (pipeline_spec.hpp)
    const bool torch = p.framework == Framework::pytorch;
    p.assignment = node.get_enum<WorkerAssignment>("worker_assignment",
                                                   torch ? WorkerAssignment::round_robin : WorkerAssignment::first_free);
    p.order = node.get_enum<BatchOrder>("batch_order", BatchOrder::in_order);
  } else {
    for (const char* key : {"worker_assignment", "batch_order"})
      if (node.has(key))
        node.child(key).fail("no such key for an element-parallel pipeline (framework pytorch or keras-generator)",
                             node.child(key).quoted());
  }
  if (!cpu.worker_launches.empty() && !p.whole_batch_workers) // threads of one process share its allocator
    (node.has("framework") ? node.child("framework") : node)
        .fail("framework pytorch or keras-generator (worker processes) where cpu.launch is a list, one per worker",
              node.has("framework") ? node.child("framework").quoted() : "framework custom (the default)");
  // A non-blocking copy needs page-locked memory (a pageable one is synchronous) and a batch to copy ahead.
  p.copy = node.get_enum<CopyMode>("copy", p.pinned && p.prefetch > 0 ? CopyMode::overlapped : CopyMode::serialized);
  if (p.copy == CopyMode::overlapped && !p.pinned)
    node.child("copy").fail("serialized when pin_memory is false (a pageable copy cannot overlap compute)",
                            "overlapped");
  p.chunks_per_batch = static_cast<int>(node.get_integer("chunks_per_batch", 0, 0, 1 << 20));
  p.placement = node.get_enum<PipelinePlacement>("placement", PipelinePlacement::local);
  if (ConfigNode svc = node.child("service"); svc.defined()) {
    svc.allow_only({"node", "coordinated_reads", "shared_by_jobs"});
    p.service_node = svc.get_string("node");
    p.coordinated_reads = svc.get_bool("coordinated_reads", false);
    p.shared_by_jobs = static_cast<int>(svc.get_integer("shared_by_jobs", 1, 1, 10000));
  } else if (p.placement == PipelinePlacement::service) {
    node.missing("service", "{node: <data-service node name>}");
  }
  if (ConfigNode stages = node.child("stages"); stages.defined())
    for (const auto& s : stages.items()) {
      p.stages.push_back(parse_stage(s, cpu));
      // A calibrated cost's page faults as the profile measured them at this loader's batch (cpu.hpp).
      FreshPages& pages = p.stages.back().cost.fresh_pages;
      pages = pages.for_batch(static_cast<double>(p.batch_size));
    }
  if (ConfigNode b = node.child("batch"); b.defined()) {
    b.allow_only({"collate", "padding"});
    p.batching.collate = parse_cost(b.child("collate"), cpu);
    p.batching.padding = b.get_enum<BatchPadding>("padding", BatchPadding::none);
  }
  if (ConfigNode d = node.child("device_stage"); d.defined()) {
    d.allow_only({"name", "cost"});
    p.device_stage.present = true;
    p.device_stage.name = d.get_string("name", "device_preprocess");
    p.device_stage.cost = parse_stage_cost(d.required("cost"));
  }
  p.framework_costs = parse_framework_costs(node.child("framework_costs"), p.framework, cpu.page_fault);
  // PyTorch's default: workers start anew at each epoch (framework_costs.worker_startup).
  p.persistent_workers = node.get_bool("persistent_workers", p.framework != Framework::pytorch);
  return p;
}

FrameworkCosts parse_framework_costs(const ConfigNode& node, Framework framework, Seconds page_fault) {
  FrameworkCosts c = default_framework_costs(framework);
  c.page_fault = page_fault;
  if (!node.defined())
    return c;
  node.allow_only({"receive_per_batch", "receive_per_byte", "worker_per_batch", "worker_per_byte", "pin_per_byte",
                   "worker_startup", "receive_latency", "worker_fresh_pages_per_byte"});
  c.worker_fresh_pages_per_byte =
      node.get_number("worker_fresh_pages_per_byte", c.worker_fresh_pages_per_byte, 0.0, 1.0);
  auto get = [&](const char* key, Seconds& field) { field = node.get_quantity<Seconds>(key, field, false); };
  get("receive_per_batch", c.receive_per_batch);
  get("receive_per_byte", c.receive_per_byte);
  get("worker_per_batch", c.worker_per_batch);
  get("worker_per_byte", c.worker_per_byte);
  get("pin_per_byte", c.pin_per_byte);
  get("worker_startup", c.worker_startup);
  get("receive_latency", c.receive_latency);
  return c;
}

SampleSizeDistribution parse_sample_size(const ConfigNode& node) {
  if (node.is_scalar())
    return SampleSizeDistribution::constant(node.as_quantity<Bytes>());
  node.allow_only({"distribution", "size", "mean", "stddev", "bins", "file"});
  using Kind = SampleSizeDistribution::Kind;
  Kind kind = node.get_enum<Kind>("distribution", Kind::constant);
  if (kind == Kind::constant)
    return SampleSizeDistribution::constant(node.has("size") ? node.get_quantity<Bytes>("size")
                                                             : node.get_quantity<Bytes>("mean"));
  if (kind == Kind::normal || kind == Kind::lognormal) {
    Bytes mean = node.get_quantity<Bytes>("mean"); // checked before stddev
    Bytes stddev = node.get_quantity<Bytes>("stddev", Bytes(0.0), false);
    return SampleSizeDistribution::spread(kind, mean, stddev);
  }
  std::vector<double> sizes, weights; // a histogram
  if (node.has("bins")) {
    for (const auto& bin : node.child("bins").items()) {
      auto cells = bin.items();
      if (cells.size() != 2)
        bin.fail("a [size, weight] pair", bin.quoted());
      sizes.push_back(cells[0].as_quantity<Bytes>().value());
      double w = cells[1].as_number();
      if (w < 0)
        cells[1].fail("a weight >= 0", cells[1].quoted());
      weights.push_back(w);
    }
  } else {
    ConfigNode f = node.required("file");
    std::istringstream in(f.read_referenced_file()); // a regular file under the input size limit
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty() || line[0] == '#' || !std::isdigit(static_cast<unsigned char>(line[0])))
        continue;
      double size = 0, weight = 0;
      char comma = 0;
      std::istringstream ls(line);
      if (!(ls >> size >> comma >> weight) || comma != ',' || size <= 0 || weight < 0)
        throw InputError(f.as_string() + ":" + std::to_string(lineno), "", "'bytes,weight' with bytes > 0",
                         "'" + line + "'");
      sizes.push_back(size);
      weights.push_back(weight);
    }
  }
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (sizes.empty() || total <= 0)
    node.fail("a histogram with at least one bin of positive weight", "none");
  return SampleSizeDistribution::histogram(std::move(sizes), std::move(weights));
}

} // namespace mlsim
