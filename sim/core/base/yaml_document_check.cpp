#include "sim/core/base/yaml_document_check.hpp"

#include "sim/core/base/errors.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <sstream>
#include <vector>

namespace mlsim {
namespace {

std::string at(const std::string& name, const YAML::Mark& m) {
  return name + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// Length of the UTF-8 sequence starting at s[i], or 0 when it is invalid.
size_t utf8_sequence_length(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  if (b < 0x80)
    return 1;
  size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  unsigned char b1 = byte(i + 1);
  if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 > 0x9F) || (b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 > 0x8F))
    return 0; // overlong, surrogate, above U+10FFFF
  return n;
}

// One open collection while walking the events.
struct Frame {
  bool is_map = false;
  bool expect_key = true;                          // maps alternate key, value
  std::map<std::string, YAML::Mark> seen;          // key -> where it first appeared
  std::string path;                                // for messages
  size_t index = 0;                                // lists: the next item's index
};

class Checker : public YAML::EventHandler {
public:
  explicit Checker(std::string name) : name_(std::move(name)) {}

  // A scenario is one document. yaml-cpp 0.7 also reads a stray flow indicator at the top level
  // (a lone ",") as an endless series of empty documents, so stopping at the second one is
  // what keeps such input from hanging the loader.
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1)
      reject(mark, "a single YAML document", "a second document");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    if (at_key())
      reject(mark, "a key name", "an empty (null) key");
    value_done();
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    if (at_key())
      reject(mark, "a key name", "an alias (*name) used as a key");
    value_done();
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    if (at_key()) {
      Frame& f = stack_.back();
      auto [it, fresh] = f.seen.emplace(value, mark);
      if (!fresh)
        throw InputError(at(name_, mark), join(f.path, value),
                         "each key once in a mapping (first at line " + std::to_string(it->second.line + 1) + ")",
                         "'" + value + "' again at line " + std::to_string(mark.line + 1));
      pending_key_ = value;
      f.expect_key = false;
      return;
    }
    value_done();
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(mark, true);
  }
  void OnMapEnd() override { close(); }

private:
  bool at_key() const { return !stack_.empty() && stack_.back().is_map && stack_.back().expect_key; }

  static std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

  int documents_ = 0;

  [[noreturn]] void reject(const YAML::Mark& mark, const std::string& expected, const std::string& got) const {
    throw InputError(at(name_, mark), stack_.empty() ? "" : stack_.back().path, expected, got);
  }

  // A value (scalar, or a collection just closed) completes the pending key or one list item.
  void value_done() {
    if (stack_.empty())
      return;
    Frame& f = stack_.back();
    if (f.is_map)
      f.expect_key = true;
    else
      ++f.index;
  }

  void open(const YAML::Mark& mark, bool is_map) {
    if (at_key())
      reject(mark, "a key name", is_map ? "a mapping used as a key" : "a list used as a key (a complex key '? [..]')");
    Frame f;
    f.is_map = is_map;
    if (!stack_.empty())
      f.path = stack_.back().is_map ? join(stack_.back().path, pending_key_)
                                     : join(stack_.back().path, std::to_string(stack_.back().index));
    stack_.push_back(std::move(f));
  }

  void close() {
    stack_.pop_back();
    value_done();
  }

  std::string name_;
  std::string pending_key_;
  std::vector<Frame> stack_;
};

} // namespace

std::string first_invalid_utf8(const std::string& text) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_sequence_length(text, i);
    if (n == 0)
      return std::to_string(line) + ":" + std::to_string(col);
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += n;
  }
  return "";
}

void check_yaml_document(const std::string& text, const std::string& name) {
  if (std::string pos = first_invalid_utf8(text); !pos.empty())
    throw InputError(name + ":" + pos, "", "UTF-8 text", "a byte that is not valid UTF-8");
  std::istringstream in(text);
  YAML::Parser parser(in);
  Checker checker(name);
  while (parser.HandleNextDocument(checker)) {
  }
}

} // namespace mlsim
