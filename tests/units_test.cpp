#include "sim/core/units_parse.hpp"
#include <gtest/gtest.h>
using namespace mlsim;
TEST(Units, Placeholder) { std::string why; EXPECT_TRUE(parse_quantity<Bytes>("1 kB", why)); }
