// A base-layer header that reaches up into the run layer: the layer check must reject it.
#pragma once
#include "sim/core/run/high.hpp"
