// A hardware model that reads YAML itself: the check that parsing stays in the loader must reject it.
#pragma once
#include "sim/core/base/config_node.hpp"
