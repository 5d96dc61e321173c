// Output files are written whole or not at all: the text goes to a temporary
// file beside the target, which is renamed over it once complete.
#pragma once

#include <string>

namespace mlsim {

// Throws InputError when the directory is not writable.
void write_file_atomically(const std::string& path, const std::string& content);

} // namespace mlsim
