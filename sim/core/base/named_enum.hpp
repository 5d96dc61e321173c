// Choices written by name: an enum whose values a scenario names and a report prints.
//
// The header that declares such an enum specialises EnumNames<E> with its table of (value, name), in
// the order messages list them. The loader parses a name once (ConfigNode::get_enum / as_enum: "one of
// a, b, c" with the position of the value), the runtime switches on the value, and reports print
// to_string(e): the very name the value was parsed from, so the JSON output keeps its words.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace mlsim {

// Specialise with: static constexpr std::array<std::pair<E, std::string_view>, N> table{{...}};
template <typename E> struct EnumNames;

template <typename E>
concept NamedEnum = std::is_enum_v<E> && requires { EnumNames<E>::table; };

template <NamedEnum E> std::string to_string(E e) {
  for (const auto& [value, name] : EnumNames<E>::table)
    if (value == e)
      return std::string(name);
  return "?";
}

// The names in table order.
template <NamedEnum E> std::vector<std::string> enum_names() {
  std::vector<std::string> names;
  for (const auto& entry : EnumNames<E>::table)
    names.emplace_back(entry.second);
  return names;
}

// The value of a name, if it is one.
template <NamedEnum E> std::optional<E> enum_value(std::string_view name) {
  for (const auto& [value, n] : EnumNames<E>::table)
    if (n == name)
      return value;
  return std::nullopt;
}

} // namespace mlsim
