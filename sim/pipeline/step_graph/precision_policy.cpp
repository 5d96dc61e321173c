#include "sim/pipeline/step_graph/precision_policy.hpp"

#include <limits>
#include <map>

namespace mlsim {

DType master_dtype(PrecisionPolicy p) { return p == PrecisionPolicy::fp16 ? DType::fp16 : DType::fp32; }

DType model_weight_dtype(PrecisionPolicy p) {
  return p == PrecisionPolicy::fp16 || p == PrecisionPolicy::mixed_fp16_o2 ? DType::fp16 : master_dtype(p);
}

bool keeps_16bit_weight_copies(PrecisionPolicy p) {
  return p == PrecisionPolicy::mixed_fp16 || p == PrecisionPolicy::mixed_bf16;
}

namespace {
constexpr size_t kInput = std::numeric_limits<size_t>::max();

DType storage(DType d) { return d == DType::tf32 ? DType::fp32 : d; }

Op make_cast(const std::string& name, const std::string& layer, double elements, DType from, DType to,
             const std::string& why) {
  Op c;
  c.name = name;
  c.layer = layer;
  c.kind = OpKind::cast;
  c.in_elements = c.out_elements = elements;
  c.flops = Flops(elements);
  c.compute_dtype = DType::fp32;
  c.in_dtype = from;
  c.out_dtype = to;
  c.note = why;
  return c;
}

class PrecisionPass {
public:
  PrecisionPass(const OpGraph& fwd, PrecisionPolicy policy, const StackProfile& stack, DType input_dtype)
      : fwd_(fwd), policy_(policy), stack_(stack), input_dtype_(input_dtype) {}

  OpGraph run() {
    for (size_t i = 0; i < fwd_.ops.size(); ++i)
      place(i);
    return std::move(out_);
  }

private:
  const OpGraph& fwd_;
  PrecisionPolicy policy_;
  const StackProfile& stack_;
  DType input_dtype_;
  OpGraph out_;
  std::map<size_t, size_t> result_;                       // old op -> new op holding its output
  std::map<std::pair<size_t, DType>, size_t> cast_cache_; // (producer, dtype) -> cast op
  std::map<size_t, DType> out_dtype_;                     // old op -> dtype of its output

  DType half() const { return policy_ == PrecisionPolicy::mixed_bf16 ? DType::bf16 : DType::fp16; }

  DType wanted_compute(const Op& op, const std::vector<size_t>& producers) const {
    switch (policy_) {
    case PrecisionPolicy::fp32: return DType::fp32;
    case PrecisionPolicy::tf32:
      return is_matrix_kind(op.kind) && stack_.tf32 ? DType::tf32 : DType::fp32;
    case PrecisionPolicy::fp16:
    case PrecisionPolicy::mixed_fp16_o2: return DType::fp16;
    default: break;
    }
    if (op.precision_class == PrecisionClass::matrix)
      return half();
    if (op.precision_class == PrecisionClass::needs_fp32)
      return DType::fp32;
    DType d = op.reads_model_input ? input_dtype_ : half();
    for (size_t p : producers)
      if (out_dtype_.at(p) == DType::fp32)
        d = DType::fp32; // mixed inputs promote to fp32, as autocast does
    if (!op.reads_model_input && !producers.empty()) {
      bool all_half = true;
      for (size_t p : producers)
        all_half = all_half && is_16bit(out_dtype_.at(p));
      if (all_half)
        d = out_dtype_.at(producers.front());
    }
    return d;
  }

  // The new op that delivers `producer`'s output in `dtype` (inserting a cast when needed).
  size_t deliver(size_t producer, DType dtype) {
    size_t src = result_.at(producer);
    DType have = out_dtype_.at(producer);
    if (have == dtype)
      return src;
    auto key = std::make_pair(producer, dtype);
    if (auto it = cast_cache_.find(key); it != cast_cache_.end())
      return it->second;
    const Op& p = fwd_.ops[producer];
    size_t c = out_.add(make_cast(p.name + "/cast_" + to_string(dtype), p.layer, p.out_elements, have, dtype,
                                  "mixed precision"));
    out_.connect(src, c);
    cast_cache_[key] = c;
    return c;
  }

  void place(size_t i) {
    Op op = fwd_.ops[i];
    std::vector<size_t> producers = fwd_.producers(i);
    DType compute = wanted_compute(op, producers);
    DType io = storage(compute);
    bool fallback = is_16bit(compute) && op.kind != OpKind::cast && stack_.path_for(op.kind) ==
                                                                       SixteenBitPath::fp32_with_casts;
    op.forced_vector_path = is_16bit(compute) && stack_.path_for(op.kind) == SixteenBitPath::vector;
    op.compute_dtype = fallback ? DType::fp32 : compute;
    op.in_dtype = op.out_dtype = fallback ? DType::fp32 : io;
    op.param_dtype = model_weight_dtype(policy_);
    bool weight_copy = keeps_16bit_weight_copies(policy_) && op.owned_parameters > 0 &&
                       op.precision_class == PrecisionClass::matrix;
    if (weight_copy)
      op.param_dtype = io; // reads the 16-bit copy
    if (fallback)
      op.param_dtype = DType::fp32;

    // Inputs, each delivered in the dtype at the op's boundary (16-bit even for a fallback op).
    std::vector<size_t> inputs;
    for (size_t p : producers)
      inputs.push_back(deliver(p, io));
    if (op.reads_model_input && input_dtype_ != io && op.kind != OpKind::copy) {
      size_t c = out_.add(make_cast(op.layer + "/input_cast_" + to_string(io), op.layer,
                                    op.in_elements / (producers.size() + 1.0), input_dtype_, io, "input dtype"));
      inputs.push_back(c);
    }
    if (fallback) {
      double elements = op.in_elements + op.param_elements;
      size_t c = out_.add(make_cast(op.name + "/to_fp32", op.layer, elements, io, DType::fp32,
                                    "stack " + stack_.name + ": fp32 fallback"));
      for (size_t in : inputs)
        out_.connect(in, c);
      inputs = {c};
    }
    size_t weight_cast = 0;
    if (weight_copy && !fallback) {
      weight_cast = out_.add(make_cast(op.name + "/weights_" + to_string(io), op.layer, op.owned_parameters,
                                       DType::fp32, io, "fp32 master weights"));
      op.note = "reads a 16-bit weight copy";
    }
    size_t id = out_.add(op);
    for (size_t in : inputs)
      out_.connect(in, id);
    if (weight_copy && !fallback)
      out_.connect(weight_cast, id, /*weight=*/true);
    result_[i] = id;
    out_dtype_[i] = op.out_dtype;
    if (fallback) {
      size_t c = out_.add(make_cast(op.name + "/from_fp32", op.layer, op.out_elements, DType::fp32, io,
                                    "stack " + stack_.name + ": fp32 fallback"));
      out_.connect(id, c);
      result_[i] = c;
      out_dtype_[i] = io;
    }
  }
};
} // namespace

OpGraph apply_precision(const OpGraph& forward, PrecisionPolicy policy, const StackProfile& stack, DType input_dtype) {
  return PrecisionPass(forward, policy, stack, input_dtype).run();
}

} // namespace mlsim
