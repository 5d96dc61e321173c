// Output files are written whole or not at all, and the outputs of one
// command together or not at all.
//
// Each output gets a temporary beside its target, `.NAME.mlsim-tmp.PID`,
// created when the output is declared: an unwritable path is an error before
// any work. The contents go to the temporaries, and only when every one is
// written are they renamed over their targets. Temporaries are removed when
// the set is destroyed uncommitted (an exception, exit 2 or 1) and by
// SIGINT/SIGTERM/SIGHUP (install_output_cleanup_on_signals); a SIGKILL leaves
// one behind, and the next run writing the same target removes every
// temporary of it whose process is gone. A target that is a symbolic link is
// written through to the file it points to, as editors do.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mlsim {

class OutputSet {
public:
  OutputSet() = default;
  ~OutputSet(); // removes the temporaries of an uncommitted set
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  // Declares an output and creates its temporary now; InputError naming
  // `option` (e.g. "--json") when it cannot be written. Returns its slot.
  std::size_t add(const std::string& option, const std::string& path);
  void set(std::size_t slot, std::string content);
  // Writes every temporary, then renames them all; InputError on a write error
  // (nothing renamed then).
  void commit();

private:
  struct Output {
    std::string option, path, target, temp, content;
    int fd = -1;
    int registry_slot = -1;
  };
  void discard();
  std::vector<Output> outputs_;
};

// One output on its own (OutputSet of one).
void write_file_atomically(const std::string& path, const std::string& content);

// Fails now, with InputError naming `option`, when `path` could not be written
// later (the check creates and removes its temporary).
void check_output_path(const std::string& option, const std::string& path);

// Writes all of `s` to `fd`, retrying after signals; false on an error (errno says which).
bool write_fully(int fd, const std::string& s);

// SIGINT, SIGTERM and SIGHUP remove this process's temporaries, then end it
// as the signal would have.
void install_output_cleanup_on_signals();

} // namespace mlsim
