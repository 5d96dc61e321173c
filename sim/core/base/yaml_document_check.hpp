// Checks on a YAML text that yaml-cpp's loader does not make, done once at
// load, before any key is read:
//   - the text is valid UTF-8 (the JSON writer would fail much later on a name);
//   - every mapping key is a plain scalar (a complex key `? [a, b]`, an alias or
//     a null key cannot be named in a message and cannot be compared);
//   - no mapping repeats a key (yaml-cpp keeps the first silently, so
//     `cores: 32` then `cores: 0` would quietly mean 32).
// It walks the parser's events once (no node tree, so aliases are never
// expanded and a recursive anchor cannot loop). Each problem is an InputError
// at `name:line:col`.
#pragma once

#include <string>

namespace mlsim {

// Throws InputError at the first problem; `name` is the file shown in messages.
void check_yaml_document(const std::string& text, const std::string& name);

// The position "line:col" (1-based) of the first byte that is not valid UTF-8,
// or "" when the whole text is valid. Overlong forms, surrogates and code
// points above U+10FFFF are invalid (RFC 3629, section 3).
std::string first_invalid_utf8(const std::string& text);

} // namespace mlsim
