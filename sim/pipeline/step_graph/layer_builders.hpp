// Forward ops of one layer, computed from its shapes.
//
// conv2d:   out = ceil(H/s) ("same") or floor((H - k + 2p)/s) + 1; FLOPs =
//           2 * Ho * Wo * Cout * k * k * Cin per sample; params k*k*Cin*Cout (+Cout bias).
// conv2d_transpose: out = H*s ("same") or (H-1)*s + k ("valid"); FLOPs =
//           2 * H * W * Cin * k * k * Cout per sample (each input pixel scattered).
// dense:    over the last dim; FLOPs = 2 * rows * Fin * units; params Fin*units (+units).
// attention (self, multi-head, on [S, D]): QKV projection 2*S*D*3D, scores
//           2*S*S*D, softmax, context 2*S*S*D, output projection 2*S*D*D; params 4D^2 + 4D.
// pooling, activations, dropout, add, concat, norms, softmax, loss: memory-bound
//           ops whose FLOPs are a small count per element.
// Counts follow the usual convention (multiply-add = 2 FLOPs; biases, norms and
// activations are not counted in published MAC figures). Ignores: fused
// kernels (each op reads and writes HBM), dropout masks, attention masking.
// References: Dumoulin & Visin, "A guide to convolution arithmetic" (2016);
// Vaswani et al. (2017); Kaplan et al., "Scaling Laws" (2020), Table 1.
#pragma once

#include "sim/pipeline/step_graph/layer_spec.hpp"
#include "sim/pipeline/step_graph/op.hpp"

#include <vector>

namespace mlsim {

struct LayerOutput {
  Shape shape;          // per sample
  std::vector<Op> ops;  // forward ops, a chain in execution order (empty for flatten)
};

// Builds `layer`'s forward ops for `batch` samples; throws InputError (with the
// layer's name and the shapes) when the inputs do not fit the layer.
// An op of layer `l` named "<layer>/<suffix>", with the layer's placement.
Op base_op(const LayerSpec& l, const std::string& suffix, OpKind kind, PrecisionClass pc);

LayerOutput build_layer(const LayerSpec& layer, const std::vector<Shape>& inputs, long batch);

// Multi-head self-attention (attention_builder.cpp).
LayerOutput build_attention(const LayerSpec& layer, const Shape& in, long batch);

} // namespace mlsim
