#include "sim/core/base/config_node.hpp"

#include "sim/core/base/input_file.hpp"
#include "sim/core/base/yaml_document_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>

namespace mlsim {

namespace {
std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string yaml_kind(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull())
    return "nothing";
  if (n.IsMap())
    return "a mapping";
  if (n.IsSequence())
    return "a list";
  // A value too long to read in a message is shown by its start and its length (cut at a UTF-8 boundary).
  constexpr size_t kShown = 60;
  const std::string& v = n.Scalar();
  if (v.size() <= kShown + 20)
    return "'" + v + "'";
  size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80)
    --cut;
  return "'" + v.substr(0, cut) + "...' (" + std::to_string(v.size()) + " bytes)";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}
} // namespace

ConfigNode::ConfigNode(YAML::Node node, std::string path, std::shared_ptr<const ConfigSource> source)
    : node_(std::move(node)), path_(std::move(path)), source_(std::move(source)) {}

ConfigNode& ConfigNode::operator=(const ConfigNode& other) {
  if (this != &other) {
    // Rebind, even to an undefined node (Node::reset refuses those).
    node_.~Node();
    new (&node_) YAML::Node(other.node_);
    path_ = other.path_;
    source_ = other.source_;
    base_ = other.base_;
    anchor_ = other.anchor_;
  }
  return *this;
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  auto source = std::make_shared<ConfigSource>();
  source->file = name;
  source->text = text;
  try {
    check_yaml_document(text, name);
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap())
      throw InputError(name + ":1:1", "", "a YAML mapping at the top level", yaml_kind(root));
    return ConfigNode(root, "", source);
  } catch (const YAML::Exception& e) {
    throw InputError(name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1), "",
                     "valid YAML", e.msg);
  }
}

ConfigNode ConfigNode::load_file(const std::string& file) {
  std::string why;
  auto text = read_bounded_file(file, kMaxInputFileBytes, why);
  if (!text)
    throw InputError(file, "", "a readable YAML file (" + bounded_file_expectation(kMaxInputFileBytes) + ")", why);
  return load_string(*text, file);
}

std::string ConfigNode::read_referenced_file() const {
  std::string file = as_string();
  std::string why;
  auto text = read_bounded_file(file, kMaxInputFileBytes, why);
  if (!text)
    fail("the name of a readable file (" + bounded_file_expectation(kMaxInputFileBytes) + ")",
         "'" + file + "' (" + why + ")");
  return *text;
}

ConfigNode ConfigNode::empty_mapping_here() const {
  ConfigNode n(YAML::Node(YAML::NodeType::Map), path_, source_);
  n.anchor_ = node_.IsDefined() && node_.Mark().line >= 0 ? node_.Mark() : anchor_;
  return n;
}

ConfigNode ConfigNode::with_overrides(const ConfigNode& root, const std::vector<std::string>& assignments) {
  auto source = std::make_shared<ConfigSource>(*root.source_);
  // A fresh parse of the text keeps every node's line:col (YAML::Clone sets them all to 1:1).
  YAML::Node doc = source->text.empty() ? YAML::Clone(root.node_) : YAML::Load(source->text);
  for (const auto& a : assignments) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--set " + a, "", "key=value", "'" + a + "'");
    std::string key = a.substr(0, eq);
    std::string text = a.substr(eq + 1);
    YAML::Node value;
    try {
      check_yaml_document(text, "value");
      value = YAML::Load(text);
    } catch (const InputError& e) { // "value:1:2: ...": the position inside the value
      throw InputError("--set " + a + ": " + key + ": in the " + e.what());
    } catch (const YAML::Exception& e) {
      throw InputError("--set " + a, key, "a YAML value", e.msg);
    }
    auto parts = split(key, '.');
    YAML::Node cur = doc;
    std::string walked;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string& p = parts[i];
      if (p.empty())
        throw InputError("--set " + a, key, "a dotted key path", "an empty part");
      bool last = i + 1 == parts.size();
      if (cur.IsSequence()) {
        char* end = nullptr;
        long idx = std::strtol(p.c_str(), &end, 10);
        if (*end != '\0' || idx < 0 || static_cast<size_t>(idx) >= cur.size())
          throw InputError("--set " + a, join_path(walked, p),
                           "an index below " + std::to_string(cur.size()) + " into the list " + walked, "'" + p + "'");
        if (last) {
          cur[static_cast<size_t>(idx)] = value;
        } else {
          YAML::Node next = cur[static_cast<size_t>(idx)];
          cur.reset(next);
        }
      } else {
        if (cur.IsDefined() && !cur.IsNull() && !cur.IsMap())
          throw InputError("--set " + a, walked, "a mapping to set '" + p + "' in", yaml_kind(cur));
        if (last) {
          cur[p] = value;
        } else {
          if (!cur[p].IsDefined() || cur[p].IsNull()) {
            cur[p] = YAML::Node(YAML::NodeType::Map);
            source->created.emplace(join_path(walked, p), a);
          }
          YAML::Node next = cur[p];
          cur.reset(next);
        }
      }
      walked = join_path(walked, p);
    }
    source->overrides[key] = a;
  }
  return ConfigNode(doc, "", source);
}

ConfigNode ConfigNode::over(const ConfigNode& base) const {
  ConfigNode layered = *this;
  if (!layered.source_) // an absent user node: the base alone, keeping the user's path
    layered = ConfigNode(YAML::Node(YAML::NodeType::Map), path_, base.source_);
  if (!layered.node_.IsDefined() || layered.node_.IsNull())
    layered.node_ = YAML::Node(YAML::NodeType::Map);
  layered.base_ = std::make_shared<const ConfigNode>(base);
  return layered;
}

bool ConfigNode::has(const std::string& key) const { return child(key).defined(); }

ConfigNode ConfigNode::child(const std::string& key) const {
  YAML::Node found = node_.IsMap() ? node_[key] : YAML::Node();
  ConfigNode own(found.IsDefined() ? found : YAML::Node(), join_path(path_, key), source_);
  own.anchor_ = node_.IsDefined() && node_.Mark().line >= 0 ? node_.Mark() : anchor_;
  if (!base_)
    return own;
  ConfigNode inherited = base_->child(key);
  if (!own.defined())
    return inherited;
  if (own.is_map() && inherited.is_map())
    return own.over(inherited);
  return own;
}

ConfigNode ConfigNode::required(const std::string& key) const {
  ConfigNode c = child(key);
  if (!c.defined())
    missing(key, "a value");
  return c;
}

std::vector<ConfigNode> ConfigNode::items() const {
  if (!node_.IsSequence())
    fail("a list", yaml_kind(node_));
  std::vector<ConfigNode> out;
  for (size_t i = 0; i < node_.size(); ++i) {
    out.emplace_back(node_[i], join_path(path_, std::to_string(i)), source_);
    out.back().anchor_ = node_.Mark().line >= 0 ? node_.Mark() : anchor_;
  }
  return out;
}

// A mapping's key as text; a key that is itself a list or a mapping is bad input, not a yaml-cpp exception.
std::string ConfigNode::key_text(const YAML::Node& key) const {
  if (!key.IsScalar())
    ConfigNode(key, path_, source_).fail("a key that is a plain name", yaml_kind(key));
  return key.Scalar();
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> out;
  if (node_.IsMap())
    for (auto it = node_.begin(); it != node_.end(); ++it)
      out.push_back(key_text(it->first));
  if (base_)
    for (const auto& k : base_->keys())
      if (std::find(out.begin(), out.end(), k) == out.end())
        out.push_back(k);
  return out;
}

void ConfigNode::allow_only(std::initializer_list<const char*> allowed) const {
  allow_only(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::allow_only(const std::vector<std::string>& allowed) const {
  if (base_)
    base_->allow_only(allowed);
  if (!defined())
    return;
  if (!node_.IsMap())
    fail("a mapping", yaml_kind(node_));
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    std::string k = key_text(it->first);
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end())
      continue;
    ConfigNode key_node(it->first, join_path(path_, k), source_);
    std::string hint = closest_match(k, allowed);
    std::string expected = "one of the keys ";
    for (size_t i = 0; i < allowed.size(); ++i)
      expected += (i ? ", " : "") + allowed[i];
    // A key with no line in the file that an override runs through (the 'a' of --set a.b.c=1)
    // was made by that override: name it rather than the file.
    std::string where = key_node.where();
    if (source_ && it->first.Mark().line < 0)
      for (const auto& [key, text] : source_->overrides)
        if (key.rfind(key_node.path_ + ".", 0) == 0)
          where = "--set " + text;
    throw InputError(where, key_node.path_, expected,
                     "unknown key '" + k + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar())
    fail("a single value", yaml_kind(node_));
  return node_.Scalar();
}

double ConfigNode::as_number() const {
  std::string s = as_string();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v))
    fail("a number", quoted());
  return v;
}

long long ConfigNode::as_integer() const {
  std::string s = as_string();
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0')
    fail("an integer", quoted());
  return v;
}

bool ConfigNode::as_bool() const {
  std::string s = as_string();
  if (s == "true" || s == "yes" || s == "on")
    return true;
  if (s == "false" || s == "no" || s == "off")
    return false;
  fail("true or false", quoted());
}

std::string ConfigNode::get_string(const std::string& key, std::optional<std::string> fallback) const {
  ConfigNode c = child(key);
  if (!c.defined()) {
    if (fallback)
      return *fallback;
    missing(key, "a string");
  }
  return c.as_string();
}

std::string ConfigNode::get_choice(const std::string& key, const std::vector<std::string>& options,
                                   std::optional<std::string> fallback) const {
  std::string expected = "one of ";
  for (size_t i = 0; i < options.size(); ++i)
    expected += (i ? ", " : "") + options[i];
  ConfigNode c = child(key);
  if (!c.defined()) {
    if (fallback)
      return *fallback;
    missing(key, expected);
  }
  std::string v = c.as_string();
  if (std::find(options.begin(), options.end(), v) == options.end()) {
    std::string hint = closest_match(v, options);
    c.fail(expected, c.quoted() + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  return v;
}

double ConfigNode::get_number(const std::string& key, std::optional<double> fallback, double min, double max) const {
  ConfigNode c = child(key);
  if (!c.defined()) {
    if (fallback)
      return *fallback;
    missing(key, "a number");
  }
  double v = c.as_number();
  if (v < min || v > max) {
    std::ostringstream e;
    e << "a number in [" << min << ", " << max << "]";
    if (max >= 1e300)
      e.str(""), e << "a number >= " << min;
    c.fail(e.str(), c.quoted());
  }
  return v;
}

long long ConfigNode::get_integer(const std::string& key, std::optional<long long> fallback, long long min,
                                  long long max) const {
  ConfigNode c = child(key);
  if (!c.defined()) {
    if (fallback)
      return *fallback;
    missing(key, "an integer");
  }
  long long v = c.as_integer();
  if (v < min || v > max) {
    std::string e = max >= (1LL << 62) ? "an integer >= " + std::to_string(min)
                                      : "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    c.fail(e, c.quoted());
  }
  return v;
}

bool ConfigNode::get_bool(const std::string& key, std::optional<bool> fallback) const {
  ConfigNode c = child(key);
  if (!c.defined()) {
    if (fallback)
      return *fallback;
    missing(key, "true or false");
  }
  return c.as_bool();
}

std::string ConfigNode::where() const {
  if (!source_)
    return "";
  for (const auto& [key, text] : source_->overrides)
    if (path_ == key || path_.rfind(key + ".", 0) == 0)
      return "--set " + text;
  if (node_.IsDefined() && node_.Mark().line >= 0)
    return position(node_.Mark());
  return position(anchor_);
}

std::string ConfigNode::position(const YAML::Mark& m) const {
  if (m.line < 0)
    return source_->file;
  return source_->file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::string ConfigNode::created_note() const {
  if (!source_)
    return "";
  for (const auto& [created, text] : source_->created)
    if (path_ == created || path_.rfind(created + ".", 0) == 0)
      return "; '" + created + "' was created by --set " + text;
  return "";
}

std::string ConfigNode::quoted() const { return yaml_kind(node_); }

void ConfigNode::fail(const std::string& expected, const std::string& got) const {
  throw InputError(where(), path_, expected, got);
}

void ConfigNode::missing(const std::string& key, const std::string& expected) const {
  throw InputError(where(), join_path(path_, key), expected, "no value (the key is missing" + created_note() + ")");
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

} // namespace mlsim
