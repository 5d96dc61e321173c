// Typed errors. Library code throws; only main() turns an error into a
// message and an exit code (InputError -> 2, anything else -> 1).
#pragma once

#include <stdexcept>
#include <string>

namespace mlsim {

// Bad user input: a scenario, an override, a command-line value.
// what() is the one-line message "where: key: expected X, got Y".
class InputError : public std::runtime_error {
public:
  InputError(const std::string& where, const std::string& key, const std::string& expected, const std::string& got)
      : std::runtime_error(compose(where, key, expected, got)) {}
  explicit InputError(const std::string& message) : std::runtime_error(message) {}

private:
  static std::string compose(const std::string& where, const std::string& key, const std::string& expected,
                             const std::string& got) {
    std::string m = where.empty() ? std::string() : where + ": ";
    if (!key.empty())
      m += key + ": ";
    m += "expected " + expected + ", got " + got;
    return m;
  }
};

// The user stopped a simulation (SIGINT, SIGTERM): exit 128 + the signal's number, as a shell reports it.
class Interrupted : public std::runtime_error {
public:
  explicit Interrupted(int signal_number)
      : std::runtime_error("interrupted by signal " + std::to_string(signal_number) + "; no output was written"),
        signal_number_(signal_number) {}
  int exit_code() const { return 128 + signal_number_; }

private:
  int signal_number_;
};

// A fault inside the simulator (a deadlock, a broken invariant): exit 1.
class InternalError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace mlsim
