// A pool of forked child processes, several at a time, for sweeps,
// right-sizing and recommendations.
//
// SimGrid allows one engine per process, and an engine that has run leaves
// state a forked child would inherit, so each simulation runs in a fresh
// child of a parent that has not simulated. isolated.hpp runs one child and
// blocks; this pool keeps up to `jobs` children alive at once, reads their
// pipes with poll() and hands each result to the parent as it finishes, in
// completion order. The child protocol is isolated.cpp's: one tag byte
// ('O' ok, 'I' input error, 'E' other error) then the text.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mlsim {

struct ChildOutcome {
  enum class Kind { ok, input_error, error } kind = Kind::error;
  std::string text; // the work's result, or the error message
  bool ok() const { return kind == Kind::ok; }
};

// Runs work(task) for every task in its own child, at most `jobs` at once,
// and calls on_done(task, outcome) in the parent as each child finishes. A
// child that dies (a signal, an abort) is an error outcome, not an exception.
// If on_done throws, the remaining children are killed and reaped and the
// exception propagates.
void run_in_children(const std::vector<size_t>& tasks, int jobs, const std::function<std::string(size_t)>& work,
                     const std::function<void(size_t, const ChildOutcome&)>& on_done);

// The CPUs this process may use (its affinity mask, which batch schedulers
// such as Slurm set to the job's allocation), at least 1.
int available_cpus();

} // namespace mlsim
