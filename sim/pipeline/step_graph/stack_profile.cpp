#include "sim/pipeline/step_graph/stack_profile.hpp"



namespace mlsim {

} // namespace mlsim
