// The one parser for quantities written in scenario files.
//
// Accepts "<number> <unit>" (the space is optional): time (ns, us, ms, s,
// min, h), data (B = byte, b = bit) with SI prefixes k M G T P (powers of
// 1000) or binary prefixes Ki Mi Gi Ti Pi (powers of 1024), data rates
// (<data>/s), work (FLOP with SI prefixes), compute rates (<FLOP>/s or
// <FLOP>S), money (USD, $) and prices (USD/h, $/h). A capital "K" is
// rejected as ambiguous (kB or KiB?), and a bare number is rejected: bits vs.
// bytes and 1000 vs. 1024 are never guessed.
#pragma once

#include "sim/core/base/units.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mlsim {

// A parsed quantity before its dimension is checked against the expected type.
struct ParsedQuantity {
  double in_si_units = 0.0;
  int byte_exp = 0, flop_exp = 0, time_exp = 0, dollar_exp = 0;
};

// Parses `text`; on failure returns nullopt and sets `why` to a short reason.
std::optional<ParsedQuantity> parse_any_quantity(std::string_view text, std::string& why);

// What a quantity of a dimension looks like, for error messages ("a data rate such as '16 Gb/s'").
std::string describe_dimension(int byte_exp, int flop_exp, int time_exp, int dollar_exp);

template <typename Q> struct QuantityTraits;
template <int B, int F, int T, int D> struct QuantityTraits<Quantity<B, F, T, D>> {
  static constexpr int byte_exp = B, flop_exp = F, time_exp = T, dollar_exp = D;
  static std::string describe() { return describe_dimension(B, F, T, D); }
};

// Parses `text` as quantity type Q. On failure returns nullopt and sets `why`.
template <typename Q> std::optional<Q> parse_quantity(std::string_view text, std::string& why) {
  using Tr = QuantityTraits<Q>;
  auto parsed = parse_any_quantity(text, why);
  if (!parsed)
    return std::nullopt;
  if (parsed->byte_exp != Tr::byte_exp || parsed->flop_exp != Tr::flop_exp || parsed->time_exp != Tr::time_exp ||
      parsed->dollar_exp != Tr::dollar_exp) {
    why = "that is " + describe_dimension(parsed->byte_exp, parsed->flop_exp, parsed->time_exp, parsed->dollar_exp);
    return std::nullopt;
  }
  return Q(parsed->in_si_units);
}

// Formats a quantity for humans, e.g. "12.5 GB/s", "3.20 ms", "4.00 GiB" is never produced: output uses SI.
std::string format_seconds(Seconds s);
std::string format_bytes(Bytes b);
std::string format_rate(BytesPerSec r);
std::string format_flops_rate(FlopsPerSec r);

} // namespace mlsim
