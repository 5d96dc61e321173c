// Reading an input file (a scenario, a preset, a profile, a histogram, a
// results CSV) with a bound: it must be a regular file no larger than a
// limit, so that `nic: /dev/zero`, a FIFO or a directory is an error at once
// instead of a read that never ends or runs out of memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace mlsim {

// Scenario, preset, profile and histogram files: 64 MiB (the largest shipped is a few kB).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;
// Results CSVs (merge, sweep --resume): 1 GiB, a million rows of a wide grid.
inline constexpr std::size_t kMaxResultsFileBytes = std::size_t{1} << 30;

// The file's bytes, or nullopt with `why` saying what the path is instead
// ("a directory", "a FIFO", "a file of 70 MiB, over the limit of 64 MiB", ...).
std::optional<std::string> read_bounded_file(const std::string& path, std::size_t limit, std::string& why);

// What read_bounded_file expects, for "expected ..." parts of messages.
std::string bounded_file_expectation(std::size_t limit);

} // namespace mlsim
