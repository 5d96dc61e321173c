#include "sim/core/base/units_parse.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mlsim {
namespace {

struct Prefix {
  std::string_view text;
  double factor;
};

// Longest first so that "Ki" wins over "K"-less parses.
constexpr std::array<Prefix, 11> kPrefixes{{{"Ki", 1024.0},
                                            {"Mi", 1048576.0},
                                            {"Gi", 1073741824.0},
                                            {"Ti", 1099511627776.0},
                                            {"Pi", 1125899906842624.0},
                                            {"k", 1e3},
                                            {"M", 1e6},
                                            {"G", 1e9},
                                            {"T", 1e12},
                                            {"P", 1e15},
                                            {"", 1.0}}};

struct TimeUnit {
  std::string_view text;
  double seconds;
};
constexpr std::array<TimeUnit, 8> kTimeUnits{
    {{"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ms", 1e-3}, {"s", 1.0}, {"min", 60.0}, {"h", 3600.0}, {"d", 86400.0}}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::optional<double> time_unit(std::string_view u) {
  for (const auto& t : kTimeUnits)
    if (u == t.text)
      return t.seconds;
  return std::nullopt;
}

// Parses a unit without a "/time" part. Sets dimension exponents and factor.
bool parse_base_unit(std::string_view u, ParsedQuantity& q, double& factor, std::string& why) {
  if (auto t = time_unit(u)) {
    q.time_exp = 1;
    factor = *t;
    return true;
  }
  if (u == "USD" || u == "$") {
    q.dollar_exp = 1;
    factor = 1.0;
    return true;
  }
  if (!u.empty() && u.front() == 'K' && (u.size() == 2 || (u.size() > 1 && u[1] != 'i'))) {
    why = "'K' is ambiguous: write k (1000) or Ki (1024)";
    return false;
  }
  for (const auto& p : kPrefixes) {
    if (u.substr(0, p.text.size()) != p.text)
      continue;
    std::string_view rest = u.substr(p.text.size());
    if (rest == "B") {
      q.byte_exp = 1;
      factor = p.factor;
      return true;
    }
    if (rest == "b" || rest == "bit") {
      q.byte_exp = 1;
      factor = p.factor / 8.0;
      return true;
    }
    if (rest == "FLOP") {
      if (p.text.size() == 2) {
        why = "binary prefixes are for data, not FLOP";
        return false;
      }
      q.flop_exp = 1;
      factor = p.factor;
      return true;
    }
    if (rest == "Hz") { // a clock: cycles per second
      if (p.text.size() == 2) {
        why = "binary prefixes are for data, not Hz";
        return false;
      }
      q.time_exp = -1;
      factor = p.factor;
      return true;
    }
    if (rest == "FLOPS") { // TFLOPS: a rate
      if (p.text.size() == 2) {
        why = "binary prefixes are for data, not FLOP";
        return false;
      }
      q.flop_exp = 1;
      q.time_exp = -1;
      factor = p.factor;
      return true;
    }
  }
  why = "unknown unit '" + std::string(u) + "'";
  return false;
}

} // namespace

std::optional<ParsedQuantity> parse_any_quantity(std::string_view text, std::string& why) {
  std::string_view s = trim(text);
  if (s.empty()) {
    why = "empty value";
    return std::nullopt;
  }
  std::string number_text;
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '-' ||
                          s[i] == '+' || ((s[i] == 'e' || s[i] == 'E') && i > 0 && i + 1 < s.size() &&
                                          (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' ||
                                           s[i + 1] == '+')))) {
    number_text.push_back(s[i]);
    ++i;
  }
  if (number_text.empty()) {
    why = "no number";
    return std::nullopt;
  }
  char* end = nullptr;
  double number = std::strtod(number_text.c_str(), &end);
  if (end != number_text.c_str() + number_text.size() || !std::isfinite(number)) {
    why = "'" + number_text + "' is not a number";
    return std::nullopt;
  }
  std::string_view unit = trim(s.substr(i));
  if (unit.empty()) {
    why = "a number without its unit";
    return std::nullopt;
  }
  ParsedQuantity q;
  double factor = 1.0;
  auto slash = unit.find('/');
  std::string_view head = slash == std::string_view::npos ? unit : unit.substr(0, slash);
  if (!parse_base_unit(head, q, factor, why))
    return std::nullopt;
  if (slash != std::string_view::npos) {
    std::string_view per = unit.substr(slash + 1);
    auto t = time_unit(per);
    if (!t) {
      why = "unknown time unit '" + std::string(per) + "' after '/'";
      return std::nullopt;
    }
    if (q.time_exp != 0) {
      why = "'" + std::string(unit) + "' divides time by time";
      return std::nullopt;
    }
    q.time_exp = -1;
    factor /= *t;
  }
  q.in_si_units = number * factor;
  if (!std::isfinite(q.in_si_units)) { // 1e308 GB: every later comparison with it would be meaningless
    why = "'" + std::string(s) + "' is beyond the largest representable quantity";
    return std::nullopt;
  }
  return q;
}

std::string describe_dimension(int b, int f, int t, int d) {
  if (b == 0 && f == 0 && t == 1 && d == 0)
    return "a duration such as '2.5 ms'";
  if (b == 1 && f == 0 && t == 0 && d == 0)
    return "a size such as '4 GiB' or '500 kB'";
  if (b == 1 && f == 0 && t == -1 && d == 0)
    return "a data rate such as '16 Gb/s' or '500 MB/s'";
  if (b == 0 && f == 1 && t == 0 && d == 0)
    return "an amount of work such as '4.1 GFLOP'";
  if (b == 0 && f == 1 && t == -1 && d == 0)
    return "a compute rate such as '125 TFLOP/s'";
  if (b == 0 && f == 0 && t == 0 && d == 1)
    return "an amount of money such as '12 USD'";
  if (b == 0 && f == 0 && t == -1 && d == 1)
    return "a price such as '2.5 USD/h'";
  if (b == 0 && f == 0 && t == -1 && d == 0)
    return "a frequency such as '1410 MHz'";
  return "a quantity of another kind";
}

namespace {
std::string scaled(double v, const char* const* units, int n, double step) {
  int k = 0;
  double a = std::fabs(v);
  while (k + 1 < n && a >= step) {
    a /= step;
    v /= step;
    ++k;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s", v, units[k]);
  return buf;
}
} // namespace

std::string format_seconds(Seconds s) {
  double v = s.value();
  char buf[64];
  double a = std::fabs(v);
  if (a >= 1.0 || a == 0.0)
    std::snprintf(buf, sizeof buf, "%.3g s", v);
  else if (a >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g ms", v * 1e3);
  else if (a >= 1e-6)
    std::snprintf(buf, sizeof buf, "%.3g us", v * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3g ns", v * 1e9);
  return buf;
}
std::string format_bytes(Bytes b) {
  static const char* const u[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return scaled(b.value(), u, 6, 1000.0);
}
std::string format_rate(BytesPerSec r) {
  static const char* const u[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
  return scaled(r.value(), u, 6, 1000.0);
}
std::string format_flops_rate(FlopsPerSec r) {
  static const char* const u[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  return scaled(r.value(), u, 6, 1000.0);
}

} // namespace mlsim
