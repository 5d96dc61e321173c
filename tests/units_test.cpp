// The one unit parser: every prefix, bits vs bytes, bad strings.
#include "sim/core/base/units_parse.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
template <typename Q> double parse_ok(const std::string& s) {
  std::string why;
  auto q = parse_quantity<Q>(s, why);
  EXPECT_TRUE(q.has_value()) << s << ": " << why;
  return q ? q->value() : -1.0;
}
template <typename Q> std::string parse_bad(const std::string& s) {
  std::string why;
  auto q = parse_quantity<Q>(s, why);
  EXPECT_FALSE(q.has_value()) << s;
  return why;
}
} // namespace

TEST(Units, SiPrefixesOnBytes) {
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 B"), 1.0);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 kB"), 1e3);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 MB"), 1e6);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 GB"), 1e9);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 TB"), 1e12);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 PB"), 1e15);
}

TEST(Units, BinaryPrefixesOnBytes) {
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 KiB"), 1024.0);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 MiB"), 1048576.0);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("4 GiB"), 4.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 TiB"), 1099511627776.0);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("1 PiB"), 1125899906842624.0);
}

TEST(Units, BitsAreEighthsOfBytes) {
  EXPECT_DOUBLE_EQ(parse_ok<BytesPerSec>("16 Gb/s"), 2e9);
  EXPECT_DOUBLE_EQ(parse_ok<BytesPerSec>("100 Gb/s"), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_ok<BytesPerSec>("500 MB/s"), 5e8);
  EXPECT_DOUBLE_EQ(parse_ok<BytesPerSec>("1 Gib/s"), 1073741824.0 / 8.0);
  EXPECT_DOUBLE_EQ(parse_ok<Bytes>("8 kb"), 1000.0);
}

TEST(Units, TimesAndRatesPerTimeUnit) {
  EXPECT_DOUBLE_EQ(parse_ok<Seconds>("2.5 ms"), 2.5e-3);
  EXPECT_DOUBLE_EQ(parse_ok<Seconds>("3 us"), 3e-6);
  EXPECT_DOUBLE_EQ(parse_ok<Seconds>("7ns"), 7e-9);
  EXPECT_DOUBLE_EQ(parse_ok<Seconds>("2 min"), 120.0);
  EXPECT_DOUBLE_EQ(parse_ok<Seconds>("1 h"), 3600.0);
  EXPECT_DOUBLE_EQ(parse_ok<BytesPerSec>("60 MB/min"), 1e6);
}

TEST(Units, ComputeAndMoney) {
  EXPECT_DOUBLE_EQ(parse_ok<FlopsPerSec>("125 TFLOP/s"), 125e12);
  EXPECT_DOUBLE_EQ(parse_ok<FlopsPerSec>("19.5 TFLOPS"), 19.5e12);
  EXPECT_DOUBLE_EQ(parse_ok<Flops>("4.1 GFLOP"), 4.1e9);
  EXPECT_DOUBLE_EQ(parse_ok<DollarsPerSec>("36 USD/h"), 0.01);
  EXPECT_DOUBLE_EQ(parse_ok<Flops>("1e3 FLOP"), 1e3);
}

TEST(Units, ClocksInHertz) {
  EXPECT_DOUBLE_EQ(parse_ok<Hertz>("1980 MHz"), 1.98e9);
  EXPECT_DOUBLE_EQ(parse_ok<Hertz>("1.41 GHz"), 1.41e9);
  EXPECT_DOUBLE_EQ(parse_ok<Hertz>("50 Hz"), 50.0);
  EXPECT_NE(parse_bad<Hertz>("1 MiHz").find("binary prefixes"), std::string::npos);
  EXPECT_NE(parse_bad<Seconds>("1 GHz").find("frequency"), std::string::npos); // wrong dimension
}

TEST(Units, RejectsBadStrings) {
  EXPECT_NE(parse_bad<Bytes>("42").find("without its unit"), std::string::npos);
  EXPECT_NE(parse_bad<Bytes>("1 KB").find("ambiguous"), std::string::npos);
  EXPECT_NE(parse_bad<Bytes>("GB").find("no number"), std::string::npos);
  EXPECT_NE(parse_bad<Bytes>("1 XB").find("unknown unit"), std::string::npos);
  EXPECT_NE(parse_bad<Bytes>("1 GB/s").find("data rate"), std::string::npos); // wrong dimension
  EXPECT_NE(parse_bad<BytesPerSec>("1 GB/parsec").find("unknown time unit"), std::string::npos);
  EXPECT_NE(parse_bad<Flops>("1 GiFLOP").find("binary prefixes"), std::string::npos);
  parse_bad<Seconds>("");
  parse_bad<Seconds>("1.2.3 s");
}

TEST(Units, ArithmeticDerivesDimensions) {
  Bytes b(1e9);
  BytesPerSec r(2e9);
  Seconds t = b / r;
  EXPECT_DOUBLE_EQ(t.value(), 0.5);
  Flops f(10e12);
  FlopsPerSec p(20e12);
  EXPECT_DOUBLE_EQ((f / p).value(), 0.5);
  EXPECT_DOUBLE_EQ((r * Seconds(2.0)).value(), 4e9);
  EXPECT_DOUBLE_EQ(b / Bytes(5e8), 2.0);
}
