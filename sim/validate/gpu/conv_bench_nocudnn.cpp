// Without cuDNN at configure time: no convolution or normalisation sweep, and the reason.
#include "sim/validate/gpu/gpu_bench.hpp"

namespace mlsim::validate {

std::vector<ConvPoint> run_conv_bench(int, bool, std::string& note) {
  note = "mlsim was built without cuDNN (no cudnn.h / libcudnn at configure time): convolutions not measured";
  return {};
}

std::vector<NormPoint> run_norm_bench(int, bool, std::string& note) {
  note = "mlsim was built without cuDNN (no cudnn.h / libcudnn at configure time): normalisations not measured";
  return {};
}

} // namespace mlsim::validate
