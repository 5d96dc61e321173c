#include "sim/pipeline/trace/trace_events.hpp"

#include "sim/core/base/errors.hpp"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <fmt/format.h>

#include <istream>
#include <memory>
#include <streambuf>
#include <type_traits>

namespace mlsim {
namespace {

// A read buffer over zlib's reader (which passes plain files through unchanged) that knows the
// offset of the byte being read, so SAX callbacks can say where an event starts.
class CountingBuffer : public std::streambuf {
public:
  explicit CountingBuffer(const std::string& path) : file_(gzopen(path.c_str(), "rb")), buf_(1 << 20) {
    if (file_)
      gzbuffer(file_, 1 << 18);
  }
  ~CountingBuffer() override {
    if (file_)
      gzclose(file_);
  }
  bool ok() const { return file_ != nullptr; }
  uint64_t offset() const { return base_ + static_cast<uint64_t>(gptr() - eback()); }

protected:
  int_type underflow() override {
    base_ += static_cast<uint64_t>(egptr() - eback());
    int n = gzread(file_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (n <= 0) {
      setg(buf_.data(), buf_.data(), buf_.data());
      return traits_type::eof();
    }
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(buf_[0]);
  }

private:
  gzFile file_;
  std::vector<char> buf_;
  uint64_t base_ = 0;
};

bool kept_category(const std::string& cat) {
  // Kineto's categories the step builder reads; TensorFlow's events carry no category (or others).
  static const char* dropped[] = {"python_function", "ac2g", "Trace", "overhead", "cuda_profiler_range",
                                  "gpu_user_annotation", "cpu_instant_event", "fwdbwd"};
  for (const char* d : dropped)
    if (cat == d)
      return false;
  return true;
}

class Handler {
public:
  using json = nlohmann::json;
  Handler(TraceFile& out, CountingBuffer& in) : out_(out), in_(in) {}

  std::string error; // set when the parse stops on a bad event

  bool null() { return scalar(Value{}); }
  bool boolean(bool) { return scalar(Value{}); }
  bool number_integer(json::number_integer_t v) { return scalar(number(static_cast<double>(v), v)); }
  bool number_unsigned(json::number_unsigned_t v) {
    return scalar(number(static_cast<double>(v), static_cast<int64_t>(v)));
  }
  bool number_float(json::number_float_t v, const json::string_t&) {
    return scalar(number(v, static_cast<int64_t>(v)));
  }
  bool string(json::string_t& s) {
    Value v;
    v.kind = Value::str;
    v.text = &s;
    return scalar(v);
  }
  bool binary(json::binary_t&) { return scalar(Value{}); }
  bool key(json::string_t& k) {
    keys_.back() = k;
    return true;
  }
  bool start_object(std::size_t) {
    size_t d = stack_.size();
    if (in_events(d)) {
      ev_ = TraceEvent{};
      ev_.index = static_cast<uint32_t>(out_.total_events++);
      ev_.offset = in_.offset() - 1;
      have_ts_ = have_dur_ = false;
      ph_.clear();
      cat_.clear();
      name_.clear();
      meta_name_.clear();
    }
    push('o');
    return true;
  }
  bool end_object() {
    pop();
    if (in_events(stack_.size()))
      return finish_event();
    return true;
  }
  bool start_array(std::size_t) {
    size_t d = stack_.size();
    if (d == 0) {
      events_depth_ = 1; // a bare array: its items are events
    } else if (d == 1 && stack_[0] == 'o') {
      if (keys_[0] == "traceEvents")
        events_depth_ = 2;
      in_device_props_ = keys_[0] == "deviceProperties";
    } else if (in_event_args(d) && keys_[d - 1] == "Input Dims") {
      dims_depth_ = d; // [[batch, ...], ...]
    } else if (in_events(d)) {
      ev_.index = static_cast<uint32_t>(out_.total_events++);
      ev_.offset = in_.offset() - 1;
      return event_error("an object (a trace event)", "an array");
    }
    push('a');
    return true;
  }
  bool end_array() {
    pop();
    if (stack_.size() == dims_depth_)
      dims_depth_ = 0;
    if (stack_.size() == 1 && stack_[0] == 'o') {
      if (keys_[0] == "traceEvents")
        events_depth_ = 0; // later keys of the root object hold no events
      in_device_props_ = false;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    // nlohmann says "... - unexpected X; expected Y" (or "... - invalid literal; last read: ...").
    std::string what = ex.what();
    auto dash = what.find(" - ");
    std::string rest = dash == std::string::npos ? what : what.substr(dash + 3);
    std::string expected = "valid JSON", got = rest;
    if (auto semi = rest.find("; expected "); semi != std::string::npos) {
      expected = rest.substr(semi + 11);
      got = rest.substr(0, semi);
      if (got.rfind("unexpected ", 0) == 0)
        got = got.substr(11);
    }
    if (got.size() > 80)
      got = got.substr(0, 80) + "...";
    error = fmt::format("{}: byte {}: expected {}, got {}", out_.file, position == 0 ? 0 : position - 1, expected, got);
    return false;
  }

private:
  struct Value {
    enum Kind { other, num, str } kind = other;
    double d = 0.0;
    int64_t i = 0;
    const std::string* text = nullptr;
  };
  static Value number(double d, int64_t i) {
    Value v;
    v.kind = Value::num;
    v.d = d;
    v.i = i;
    return v;
  }

  void push(char c) {
    stack_.push_back(c);
    keys_.emplace_back();
  }
  void pop() {
    stack_.pop_back();
    keys_.pop_back();
  }
  // Depth d (stack size) is an event's own depth: the next object opened there is an event.
  bool in_events(size_t d) const { return events_depth_ > 0 && d == events_depth_; }
  bool in_event_fields(size_t d) const { return events_depth_ > 0 && d == events_depth_ + 1; }
  bool in_event_args(size_t d) const {
    return events_depth_ > 0 && d == events_depth_ + 2 && keys_[events_depth_] == "args";
  }

  uint32_t intern(const std::string& s) {
    auto [it, added] = ids_.try_emplace(s, static_cast<uint32_t>(out_.strings.size()));
    if (added)
      out_.strings.push_back(s);
    return it->second;
  }
  int64_t id_of(const Value& v) {
    return v.kind == Value::str ? kStringIdBase + intern(*v.text) : v.i;
  }

  bool event_error(const std::string& expected, const std::string& got) {
    error = fmt::format("{}: traceEvents[{}] (byte {}): expected {}, got {}", out_.file, ev_.index, ev_.offset,
                        expected, got);
    return false;
  }
  bool field_error(const std::string& key, const std::string& expected, const Value& v) {
    std::string got = v.kind == Value::str ? "\"" + *v.text + "\"" : v.kind == Value::num ? fmt::format("{}", v.d)
                                                                                            : "another type";
    error = fmt::format("{}: traceEvents[{}] (byte {}): {}: expected {}, got {}", out_.file, ev_.index, ev_.offset,
                        key, expected, got);
    return false;
  }

  bool scalar(const Value& v) {
    size_t d = stack_.size();
    if (in_events(d)) {
      ev_.index = static_cast<uint32_t>(out_.total_events++);
      ev_.offset = in_.offset() - 1;
      return event_error("an object (a trace event)", "a scalar");
    }
    if (in_event_fields(d))
      return event_field(keys_.back(), v);
    if (in_event_args(d))
      return arg_field(keys_.back(), v);
    if (dims_depth_ > 0 && d == dims_depth_ + 2 && v.kind == Value::num && ev_.leading_dim < 0)
      ev_.leading_dim = static_cast<int32_t>(v.i); // the first number of the first non-empty input shape
    if (in_device_props_ && d == 3 && keys_.back() == "name" && v.kind == Value::str)
      out_.device_names.push_back(*v.text);
    return true;
  }

  bool event_field(const std::string& k, const Value& v) {
    if (k == "ph") {
      if (v.kind != Value::str || v.text->empty())
        return field_error("ph", "an event phase such as \"X\"", v);
      ph_ = *v.text;
    } else if (k == "name") {
      if (v.kind == Value::str)
        name_ = *v.text;
    } else if (k == "cat") {
      if (v.kind == Value::str)
        cat_ = *v.text;
    } else if (k == "ts" || k == "dur") {
      if (v.kind != Value::num || v.d < 0)
        return field_error(k, "a number of microseconds >= 0", v);
      (k == "ts" ? ev_.ts : ev_.dur) = v.d;
      (k == "ts" ? have_ts_ : have_dur_) = true;
    } else if (k == "pid") {
      ev_.pid = id_of(v);
    } else if (k == "tid") {
      ev_.tid = id_of(v);
    }
    return true;
  }

  bool arg_field(const std::string& k, const Value& v) {
    auto integer = [&](auto& slot) {
      if (v.kind == Value::num)
        slot = static_cast<std::remove_reference_t<decltype(slot)>>(v.i);
      return true;
    };
    if (k == "correlation" || k == "correlation_id")
      return integer(ev_.correlation);
    if (k == "External id")
      return integer(ev_.external_id);
    if (k == "In msg nelems" || k == "In msg size")
      return integer(ev_.msg_elements);
    if (k == "bytes" || k == "num_bytes") {
      if (v.kind == Value::num)
        ev_.bytes = static_cast<float>(v.d);
    } else if (k == "dtype" && v.kind == Value::str) {
      ev_.dtype = intern(*v.text);
    } else if (k == "name" && v.kind == Value::str) {
      meta_name_ = *v.text;
    } else if (k == "memcpy_details" && v.kind == Value::str) {
      ev_.detail = intern(*v.text);
      auto at = v.text->find("size:");
      if (at != std::string::npos)
        ev_.bytes = static_cast<float>(std::atof(v.text->c_str() + at + 5));
    }
    return true;
  }

  bool finish_event() {
    if (ph_.empty())
      return event_error("a \"ph\" (event phase)", "an event without one");
    ev_.ph = ph_[0];
    if (ev_.ph == 'M') {
      if (name_ == "process_name")
        out_.process_names[ev_.pid] = meta_name_;
      else if (name_ == "thread_name")
        out_.thread_names[{ev_.pid, ev_.tid}] = meta_name_;
      return true;
    }
    if (ev_.ph != 'X')
      return true; // instants, counters, flows: not used
    if (!have_ts_)
      return event_error("\"ts\" on a complete event (ph X)", "none");
    if (!have_dur_)
      return event_error("\"dur\" on a complete event (ph X)", "none");
    if (!kept_category(cat_))
      return true;
    ev_.name = intern(name_);
    ev_.cat = intern(cat_);
    out_.events.push_back(ev_);
    return true;
  }

  TraceFile& out_;
  CountingBuffer& in_;
  std::vector<char> stack_;
  std::vector<std::string> keys_;
  std::unordered_map<std::string, uint32_t> ids_;
  size_t events_depth_ = 0, dims_depth_ = 0;
  bool in_device_props_ = false;
  TraceEvent ev_;
  bool have_ts_ = false, have_dur_ = false;
  std::string ph_, cat_, name_, meta_name_;
};

} // namespace

std::string TraceFile::where(const TraceEvent& e) const {
  return fmt::format("{}: traceEvents[{}] (byte {})", file, e.index, e.offset);
}

TraceFile read_trace(const std::string& path) {
  TraceFile out;
  out.file = path;
  CountingBuffer buf(path);
  if (!buf.ok())
    throw InputError(path, "", "a readable trace file (Chrome trace JSON, optionally .gz)", "a file that cannot be opened");
  std::istream in(&buf);
  Handler h(out, buf);
  bool ok = nlohmann::json::sax_parse(in, &h, nlohmann::json::input_format_t::json, true);
  out.bytes_read = buf.offset();
  if (!ok)
    throw InputError(h.error.empty() ? path + ": expected a Chrome trace JSON document" : h.error);
  if (out.total_events == 0)
    throw InputError(path, "", "a trace with events (a \"traceEvents\" array or a bare array of events)",
                     "no events");
  return out;
}

} // namespace mlsim
