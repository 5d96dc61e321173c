// Units as types.
//
// A Quantity carries its dimension as exponents of four base units:
// bytes, floating-point operations, seconds and US dollars. Arithmetic
// derives the dimension at compile time, so `Bytes / BytesPerSec` is
// `Seconds` and `Bytes + Seconds` does not compile. The value inside is an
// SI double (bytes, FLOP, seconds, dollars); unwrap it with `.value()` only
// in the thin adapters that call SimGrid or write output.
//
// Bits never appear inside: the parser (units_parse.hpp) converts `Gb/s` to
// bytes per second at the YAML boundary.
#pragma once

#include <cmath>
#include <compare>

namespace mlsim {

template <int ByteExp, int FlopExp, int TimeExp, int DollarExp>
class Quantity {
public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double in_si_units) : value_(in_si_units) {}

  constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator-() const { return Quantity(-value_); }
  constexpr Quantity& operator+=(Quantity o) { value_ += o.value_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value_ -= o.value_; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  constexpr Quantity& operator*=(double k) { value_ *= k; return *this; }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.value_); }
  constexpr auto operator<=>(const Quantity&) const = default;

private:
  double value_ = 0.0;
};

// Same dimension divided: a plain ratio.
template <int B, int F, int T, int D>
constexpr double operator/(Quantity<B, F, T, D> a, Quantity<B, F, T, D> b) {
  return a.value() / b.value();
}

template <int B1, int F1, int T1, int D1, int B2, int F2, int T2, int D2>
  requires(B1 != B2 || F1 != F2 || T1 != T2 || D1 != D2)
constexpr auto operator/(Quantity<B1, F1, T1, D1> a, Quantity<B2, F2, T2, D2> b) {
  return Quantity<B1 - B2, F1 - F2, T1 - T2, D1 - D2>(a.value() / b.value());
}

template <int B1, int F1, int T1, int D1, int B2, int F2, int T2, int D2>
constexpr auto operator*(Quantity<B1, F1, T1, D1> a, Quantity<B2, F2, T2, D2> b) {
  return Quantity<B1 + B2, F1 + F2, T1 + T2, D1 + D2>(a.value() * b.value());
}

using Seconds = Quantity<0, 0, 1, 0>;
using Hertz = Quantity<0, 0, -1, 0>;
using Bytes = Quantity<1, 0, 0, 0>;
using BytesPerSec = Quantity<1, 0, -1, 0>;
using Flops = Quantity<0, 1, 0, 0>;
using FlopsPerSec = Quantity<0, 1, -1, 0>;
using Dollars = Quantity<0, 0, 0, 1>;
using DollarsPerSec = Quantity<0, 0, -1, 1>;

template <typename Q> constexpr Q max(Q a, Q b) { return a < b ? b : a; }
template <typename Q> constexpr Q min(Q a, Q b) { return b < a ? b : a; }

namespace literals {
constexpr Seconds operator""_s(long double v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_ms(long double v) { return Seconds(static_cast<double>(v) * 1e-3); }
constexpr Seconds operator""_us(long double v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Bytes operator""_B(unsigned long long v) { return Bytes(static_cast<double>(v)); }
constexpr Bytes operator""_MB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e6); }
constexpr Bytes operator""_GB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e9); }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1073741824.0); }
constexpr BytesPerSec operator""_GBps(long double v) { return BytesPerSec(static_cast<double>(v) * 1e9); }
constexpr FlopsPerSec operator""_TFLOPs(long double v) { return FlopsPerSec(static_cast<double>(v) * 1e12); }
} // namespace literals

} // namespace mlsim
