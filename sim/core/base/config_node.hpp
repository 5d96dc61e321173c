// Validated access to a YAML document.
//
// A ConfigNode is a YAML node plus its dotted key path ("hardware.nodes.0.cpu")
// and the file it came from, so that every error can say
// "file:line:col: hardware.nodes.0.cpu.cores: expected an integer >= 1, got 0".
// Values set from the command line (--set key=value) are reported as
// "--set key=value" instead of a file position. A node without a position of
// its own (a key that is absent, a mapping created by --set, a preset's empty
// stand-in) reports the position of the nearest enclosing mapping that has one.
#pragma once

#include "sim/core/base/errors.hpp"
#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units_parse.hpp"

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlsim {

struct ConfigSource {
  std::string file;                                  // shown in messages
  std::string text;                                  // the document as read (re-parsed for --set, keeping marks)
  std::map<std::string, std::string> overrides;      // key path -> "key=value" as typed
  std::map<std::string, std::string> created;        // mapping path that --set created -> "key=value"
};

class ConfigNode {
public:
  ConfigNode(YAML::Node node, std::string path, std::shared_ptr<const ConfigSource> source);
  ConfigNode() = default;
  ConfigNode(const ConfigNode&) = default;
  ConfigNode(ConfigNode&&) = default;
  // yaml-cpp's Node::operator= writes into the node it refers to; a ConfigNode rebinds instead.
  ConfigNode& operator=(const ConfigNode& other);
  ConfigNode& operator=(ConfigNode&& other) { return *this = static_cast<const ConfigNode&>(other); }

  // A node whose missing keys are looked up in `base` (a preset or a profile):
  // the user's values win, and each value's errors point at the file it came from.
  ConfigNode over(const ConfigNode& base) const;

  // Loads a YAML file (syntax errors become InputError with the position). The
  // document is checked first (yaml_document_check.hpp: UTF-8, plain keys, no
  // repeated key); the file must be a regular file under kMaxInputFileBytes.
  static ConfigNode load_file(const std::string& file);
  static ConfigNode load_string(const std::string& text, const std::string& name);
  // The text of the file this scalar names (a profile, a histogram), read with
  // the same bound; an error names this key.
  std::string read_referenced_file() const;
  // An empty mapping at this node's path and position: a stand-in for a bare
  // preset name, so that a key missing from it is reported here.
  ConfigNode empty_mapping_here() const;

  // Applies "a.b.0.c=value" overrides before validation; the value is read as YAML.
  static ConfigNode with_overrides(const ConfigNode& root, const std::vector<std::string>& assignments);

  const std::string& path() const { return path_; }
  // The file the document came from (for paths written relative to it).
  std::string source_file() const { return source_ ? source_->file : std::string(); }
  const YAML::Node& yaml() const { return node_; }
  bool defined() const { return node_.IsDefined() && !node_.IsNull(); }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool has(const std::string& key) const;

  ConfigNode child(const std::string& key) const;   // may be undefined
  ConfigNode required(const std::string& key) const; // error if absent
  std::vector<ConfigNode> items() const;             // a sequence's elements (error if not a sequence)
  std::vector<std::string> keys() const;             // a map's keys in file order

  // Rejects keys not in `allowed`, suggesting the closest allowed key.
  void allow_only(std::initializer_list<const char*> allowed) const;
  void allow_only(const std::vector<std::string>& allowed) const;

  std::string as_string() const;
  double as_number() const;
  long long as_integer() const;
  bool as_bool() const;
  template <typename Q> Q as_quantity() const {
    std::string why;
    auto q = parse_quantity<Q>(as_string(), why);
    if (!q)
      fail(QuantityTraits<Q>::describe(), quoted() + " (" + why + ")");
    return *q;
  }

  // Typed getters for a child key, with defaults and range checks.
  std::string get_string(const std::string& key, std::optional<std::string> fallback = std::nullopt) const;
  std::string get_choice(const std::string& key, const std::vector<std::string>& options,
                         std::optional<std::string> fallback = std::nullopt) const;
  // A named choice (named_enum.hpp), with get_choice's message and "did you mean".
  template <NamedEnum E> E get_enum(const std::string& key, std::optional<E> fallback = std::nullopt) const {
    std::optional<std::string> fallback_name;
    if (fallback)
      fallback_name = to_string(*fallback);
    return *enum_value<E>(get_choice(key, enum_names<E>(), fallback_name));
  }
  // This scalar as a named choice: "one of a, b, c", got the value as written.
  template <NamedEnum E> E as_enum() const {
    if (auto v = enum_value<E>(as_string()))
      return *v;
    std::string expected = "one of ";
    for (const auto& [value, name] : EnumNames<E>::table)
      expected += (value == EnumNames<E>::table.front().first ? "" : ", ") + std::string(name);
    fail(expected, quoted());
  }
  double get_number(const std::string& key, std::optional<double> fallback = std::nullopt,
                    double min = -1e300, double max = 1e300) const;
  long long get_integer(const std::string& key, std::optional<long long> fallback = std::nullopt,
                        long long min = -(1LL << 62), long long max = 1LL << 62) const;
  bool get_bool(const std::string& key, std::optional<bool> fallback = std::nullopt) const;
  template <typename Q>
  Q get_quantity(const std::string& key, std::optional<Q> fallback = std::nullopt, bool positive = true) const {
    ConfigNode c = child(key);
    if (!c.defined()) {
      if (fallback)
        return *fallback;
      missing(key, QuantityTraits<Q>::describe());
    }
    Q q = c.as_quantity<Q>();
    if (positive && !(q.value() > 0.0))
      c.fail("a positive value (" + QuantityTraits<Q>::describe() + ")", c.quoted());
    if (!positive && q.value() < 0.0)
      c.fail("a value >= 0 (" + QuantityTraits<Q>::describe() + ")", c.quoted());
    return q;
  }

  // "file:line:col" (1-based) or "--set key=value".
  std::string where() const;
  // The value as written, quoted, for "got ..." parts of messages.
  std::string quoted() const;

  [[noreturn]] void fail(const std::string& expected, const std::string& got) const;
  [[noreturn]] void missing(const std::string& key, const std::string& expected) const;

private:
  std::string key_text(const YAML::Node& key) const;

  YAML::Node node_;
  std::string path_;
  std::shared_ptr<const ConfigSource> source_;
  std::shared_ptr<const ConfigNode> base_; // fallback layer for missing keys
  YAML::Mark anchor_ = YAML::Mark::null_mark(); // nearest enclosing position, for nodes without one

  std::string position(const YAML::Mark& m) const;
  std::string created_note() const; // "; --set X created P" when an enclosing mapping came from --set

};

// Edit distance, for "did you mean" suggestions.
size_t edit_distance(const std::string& a, const std::string& b);
// The closest candidate within a small distance, or "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

} // namespace mlsim
