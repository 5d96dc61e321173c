#include "sim/pipeline/step_graph/layer_builders.hpp"

#include "sim/core/base/errors.hpp"

#include <numeric>

namespace mlsim {

Op base_op(const LayerSpec& l, const std::string& suffix, OpKind kind, PrecisionClass pc) {
  Op op;
  op.name = l.name + "/" + suffix;
  op.layer = l.name;
  op.kind = kind;
  op.precision_class = pc;
  op.placement = l.placement;
  return op;
}

namespace {

[[noreturn]] void bad_shape(const LayerSpec& l, const std::string& expected, const Shape& got) {
  throw InputError("", "model.layers '" + l.name + "' (" + l.type + ")", expected, "input shape " + to_string(got));
}

double elements(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), 1.0, [](double a, long b) { return a * static_cast<double>(b); });
}

long conv_out(long in, int k, int s, const std::string& padding) {
  if (padding == "same")
    return (in + s - 1) / s;
  long pad = padding == "valid" ? 0 : std::stol(padding);
  return (in + 2 * pad - k) / s + 1;
}


// An elementwise op over `n` elements per sample (reads `reads` tensors of that size, writes one).
Op elementwise(const LayerSpec& l, const std::string& suffix, double n, long batch, double flops_per_element,
               double reads = 1.0) {
  Op op = base_op(l, suffix, OpKind::elementwise, PrecisionClass::follow_input);
  op.in_elements = reads * n * static_cast<double>(batch);
  op.out_elements = n * static_cast<double>(batch);
  op.flops = Flops(flops_per_element * n * static_cast<double>(batch));
  return op;
}

double activation_flops(const std::string& a) {
  if (a == "relu" || a == "linear") return 1.0;
  if (a == "leaky_relu") return 2.0;
  if (a == "gelu") return 8.0;
  if (a == "silu") return 5.0; // x * sigmoid(x)
  return 4.0; // sigmoid, tanh: an exp and a division
}

void append_activation(LayerOutput& out, const LayerSpec& l, long batch) {
  if (l.activation.empty() || l.activation == "linear")
    return;
  out.ops.push_back(elementwise(l, l.activation, elements(out.shape), batch, activation_flops(l.activation)));
}

LayerOutput conv(const LayerSpec& l, const Shape& in, long batch, bool transpose) {
  if (in.size() != 3)
    bad_shape(l, "an image input [height, width, channels]", in);
  int s = l.stride > 0 ? l.stride : 1;
  long h = in[0], w = in[1], cin = in[2], cout = l.filters, k = l.kernel;
  long ho = transpose ? (l.padding == "same" ? h * s : (h - 1) * s + k) : conv_out(h, l.kernel, s, l.padding);
  long wo = transpose ? (l.padding == "same" ? w * s : (w - 1) * s + k) : conv_out(w, l.kernel, s, l.padding);
  if (ho < 1 || wo < 1)
    bad_shape(l, "an input at least as large as the " + std::to_string(k) + "x" + std::to_string(k) + " kernel", in);
  // A grouped convolution is `groups` independent convolutions of cin/groups channels into cout/groups: one
  // batched implicit GEMM whose per-group dims are what its tiles and the tensor-core alignment rule see.
  const long g = l.groups;
  if (g < 1 || cin % g != 0 || cout % g != 0)
    throw InputError("", "model.layers '" + l.name + "' (" + l.type + ").groups",
                     "a group count dividing both the input channels (" + std::to_string(cin) + ") and filters (" +
                         std::to_string(cout) + ")",
                     std::to_string(g));
  const long cin_g = cin / g, cout_g = cout / g;
  LayerOutput out;
  out.shape = {ho, wo, cout};
  Op op = base_op(l, transpose ? "conv_transpose" : "conv", OpKind::conv, PrecisionClass::matrix);
  long positions = transpose ? h * w : ho * wo; // GEMM rows per sample: the positions the kernel is applied at
  op.dims = {{"batch", batch}, {"m", batch * positions}, {"n", cout_g}, {"k", cin_g * k * k},
             {"in_channels", cin_g}, {"out_channels", cout_g}};
  if (g > 1)
    op.dims["groups"] = g;
  if (!transpose) // what decides whether cuDNN offers Winograd (3x3, stride 1) and its tile count
    op.dims.insert({{"kernel_size", k}, {"stride", s}, {"out_height", ho}, {"out_width", wo}});
  op.flops = Flops(2.0 * static_cast<double>(batch) * positions * cout * cin_g * k * k);
  op.in_elements = elements(in) * static_cast<double>(batch);
  op.out_elements = elements(out.shape) * static_cast<double>(batch);
  op.owned_parameters = static_cast<double>(k * k * cin_g * cout + (l.bias ? cout : 0));
  op.owned_tensors = 1 + (l.bias ? 1 : 0);
  op.param_elements = op.owned_parameters;
  out.ops.push_back(op);
  append_activation(out, l, batch);
  return out;
}

LayerOutput dense(const LayerSpec& l, const Shape& in, long batch) {
  if (in.empty())
    bad_shape(l, "an input with a feature dim", in);
  long fin = in.back();
  double rows = elements(in) / static_cast<double>(fin);
  LayerOutput out;
  out.shape = in;
  out.shape.back() = l.units;
  Op op = base_op(l, "matmul", OpKind::matmul, PrecisionClass::matrix);
  long m = static_cast<long>(rows) * batch;
  op.dims = {{"batch", batch}, {"m", m}, {"n", l.units}, {"k", fin}};
  op.flops = Flops(2.0 * static_cast<double>(m) * static_cast<double>(fin) * static_cast<double>(l.units));
  op.in_elements = elements(in) * static_cast<double>(batch);
  op.out_elements = elements(out.shape) * static_cast<double>(batch);
  op.param_elements = static_cast<double>(fin * l.units + (l.bias ? l.units : 0));
  op.owned_parameters = l.tied_weights ? (l.bias ? l.units : 0) : op.param_elements;
  op.owned_tensors = (l.tied_weights ? 0 : 1) + (l.bias ? 1 : 0);
  out.ops.push_back(op);
  append_activation(out, l, batch);
  return out;
}

LayerOutput pool(const LayerSpec& l, const Shape& in, long batch) {
  if (in.size() != 3)
    bad_shape(l, "an image input [height, width, channels]", in);
  int s = l.stride > 0 ? l.stride : l.kernel;
  LayerOutput out;
  out.shape = {conv_out(in[0], l.kernel, s, l.padding), conv_out(in[1], l.kernel, s, l.padding), in[2]};
  if (out.shape[0] < 1 || out.shape[1] < 1)
    bad_shape(l, "an input at least as large as the pooling window", in);
  Op op = elementwise(l, l.type, elements(out.shape), batch, static_cast<double>(l.kernel * l.kernel));
  op.in_elements = elements(in) * static_cast<double>(batch);
  op.argmax_pool = l.type == "max_pool";
  out.ops.push_back(op);
  return out;
}

// A normalisation or softmax over each sample's last dim (or channels): two passes over the input.
LayerOutput normalization(const LayerSpec& l, const Shape& in, long batch, PrecisionClass pc, double params) {
  LayerOutput out;
  out.shape = in;
  Op op = base_op(l, l.type, OpKind::reduction, pc);
  op.in_elements = 2.0 * elements(in) * static_cast<double>(batch); // statistics pass + normalising pass
  op.statistics_pass = true;
  op.out_elements = elements(in) * static_cast<double>(batch);
  op.flops = Flops(5.0 * elements(in) * static_cast<double>(batch));
  op.owned_parameters = params;
  op.owned_tensors = params > 0 ? 2 : 0; // scale and shift
  op.param_elements = params;
  if (l.type == "batch_norm") { // cuDNN's kernels: how they parallelise depends on the channel count
    op.channel_statistics = true;
    op.dims["channels"] = in.back();
  }
  out.ops.push_back(op);
  return out;
}

LayerOutput embedding(const LayerSpec& l, const Shape& in, long batch) {
  if (in.size() != 1)
    bad_shape(l, "a sequence of token ids [length]", in);
  LayerOutput out;
  out.shape = {in[0], l.width};
  double tokens = static_cast<double>(in[0] * batch);
  Op gather = base_op(l, "gather", OpKind::copy, PrecisionClass::follow_input);
  int tables = 1 + (l.positions > 0) + (l.token_types > 0);
  gather.in_elements = tables * tokens; // ids
  gather.out_elements = tables * tokens * static_cast<double>(l.width);
  gather.param_elements = gather.out_elements; // the table rows read
  gather.owned_parameters = static_cast<double>((l.vocab + l.positions + l.token_types) * l.width);
  gather.owned_tensors = tables;
  out.ops.push_back(gather);
  if (tables > 1) // the looked-up rows are summed
    out.ops.push_back(elementwise(l, "sum", elements(out.shape), batch, tables - 1.0, tables));
  return out;
}

LayerOutput loss(const LayerSpec& l, const Shape& in, long batch) {
  LayerOutput out;
  out.shape = {1};
  Op op = base_op(l, l.loss, OpKind::reduction, PrecisionClass::needs_fp32);
  op.in_elements = 2.0 * elements(in) * static_cast<double>(batch); // predictions and labels
  op.out_elements = static_cast<double>(batch);
  op.flops = Flops(4.0 * elements(in) * static_cast<double>(batch));
  out.ops.push_back(op);
  return out;
}

} // namespace

LayerOutput build_layer(const LayerSpec& l, const std::vector<Shape>& inputs, long batch) {
  if (inputs.empty())
    throw InternalError("layer '" + l.name + "' has no input");
  const Shape& in = inputs.front();
  bool many = l.type == "concat" || l.type == "add" || l.type == "multiply";
  if (!many && inputs.size() != 1)
    throw InputError("", "model.layers '" + l.name + "'.inputs", "one input for a " + l.type + " layer",
                     std::to_string(inputs.size()) + " inputs");
  const std::string& t = l.type;
  if (t == "conv2d" || t == "conv2d_transpose")
    return conv(l, in, batch, t == "conv2d_transpose");
  if (t == "dense")
    return dense(l, in, batch);
  if (t == "max_pool" || t == "avg_pool")
    return pool(l, in, batch);
  if (t == "attention")
    return build_attention(l, in, batch);
  if (t == "embedding")
    return embedding(l, in, batch);
  if (t == "loss")
    return loss(l, in, batch);
  if (t == "batch_norm") // cuDNN batch norm reads and writes 16-bit with fp32 statistics: it follows its input
    return normalization(l, in, batch, PrecisionClass::follow_input, 2.0 * static_cast<double>(in.back()));
  if (t == "layer_norm")
    return normalization(l, in, batch, PrecisionClass::needs_fp32, 2.0 * static_cast<double>(in.back()));
  if (t == "softmax")
    return normalization(l, in, batch, PrecisionClass::needs_fp32, 0.0);
  LayerOutput out;
  out.shape = in;
  if (t == "flatten") {
    out.shape = {static_cast<long>(elements(in))};
  } else if (t == "global_avg_pool") {
    if (in.size() != 3)
      bad_shape(l, "an image input [height, width, channels]", in);
    out.shape = {in[2]};
    Op op = base_op(l, "mean", OpKind::reduction, PrecisionClass::follow_input);
    op.in_elements = elements(in) * static_cast<double>(batch);
    op.out_elements = static_cast<double>(in[2] * batch);
    op.flops = Flops(op.in_elements);
    out.ops.push_back(op);
  } else if (t == "activation") {
    out.ops.push_back(elementwise(l, l.activation, elements(in), batch, activation_flops(l.activation)));
  } else if (t == "dropout") {
    out.ops.push_back(elementwise(l, "dropout", elements(in), batch, 2.0));
  } else if (t == "add") {
    for (const auto& s : inputs)
      if (s != in)
        bad_shape(l, "inputs of one shape " + to_string(in), s);
    out.ops.push_back(elementwise(l, "add", elements(in), batch, inputs.size() - 1.0,
                                  static_cast<double>(inputs.size())));
    out.ops.back().gradient_passes_through = true;
  } else if (t == "multiply") {
    // Elementwise product; an input of [channels] scales every position (squeeze-and-excitation's gate).
    double read = 0.0;
    for (const auto& s : inputs) {
      bool per_channel = s.size() == 1 && s[0] == in.back();
      if (s != in && !per_channel)
        bad_shape(l, "inputs of one shape " + to_string(in) + " or per-channel scales [" + std::to_string(in.back()) +
                         "]",
                  s);
      read += elements(s);
    }
    Op op = elementwise(l, "multiply", elements(in), batch, inputs.size() - 1.0);
    op.in_elements = read * static_cast<double>(batch);
    out.ops.push_back(op);
  } else if (t == "concat") {
    double total = 0.0;
    for (const auto& s : inputs) {
      if (s.size() != in.size() || !std::equal(s.begin(), s.end() - 1, in.begin()))
        bad_shape(l, "inputs that differ only in the last dim, like " + to_string(in), s);
      total += elements(s);
    }
    out.shape.back() = 0;
    for (const auto& s : inputs)
      out.shape.back() += s.back();
    Op op = base_op(l, "concat", OpKind::copy, PrecisionClass::follow_input);
    op.in_elements = op.out_elements = total * static_cast<double>(batch);
    out.ops.push_back(op);
  } else {
    throw InternalError("no builder for layer type '" + t + "'");
  }
  return out;
}

} // namespace mlsim
