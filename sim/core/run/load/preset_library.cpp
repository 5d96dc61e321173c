#include "sim/core/run/load/preset_library.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

namespace mlsim {
namespace {

// Preset files are read once per process.
const ConfigNode& category_file(const std::string& category) {
  static std::map<std::string, ConfigNode> cache;
  auto it = cache.find(category);
  if (it != cache.end())
    return it->second;
  std::string file = preset_dir() + "/" + category + ".yaml";
  if (std::error_code ec; !std::filesystem::exists(file, ec))
    throw InputError(file, "", "the " + category + " preset file (check MLSIM_PRESET_DIR or the installation)",
                     "no such file");
  return cache.emplace(category, ConfigNode::load_file(file)).first->second;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".yaml");
}

} // namespace

std::string preset_dir() {
  if (const char* env = std::getenv("MLSIM_PRESET_DIR"); env && *env)
    return env;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> tried;
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "mlsim" / "presets";
    if (fs::is_directory(installed, ec))
      return installed.string();
    tried.push_back(installed.string());
  }
  if (fs::is_directory(MLSIM_PRESET_DIR, ec))
    return MLSIM_PRESET_DIR;
  tried.push_back(MLSIM_PRESET_DIR);
  std::string where;
  for (const auto& t : tried)
    where += (where.empty() ? "" : ", ") + t;
  throw InputError("", "MLSIM_PRESET_DIR", "a folder of preset files (set MLSIM_PRESET_DIR)", "none in " + where);
}

std::vector<std::string> preset_names(const std::string& category) {
  auto names = category_file(category).keys();
  std::sort(names.begin(), names.end());
  return names;
}

ConfigNode resolve_preset(const ConfigNode& user, const std::string& category, const std::string& profile_section) {
  ConfigNode node = user;
  std::string name;
  ConfigNode name_node;
  if (user.defined() && user.is_scalar()) {
    name = user.as_string();
    name_node = user;
    node = user.empty_mapping_here();
  } else if (user.has("preset")) {
    name_node = user.child("preset");
    name = name_node.as_string();
  } else {
    return user;
  }
  ConfigNode base;
  if (looks_like_path(name)) {
    if (std::error_code ec; !std::filesystem::exists(name, ec)) // a name too long for a path is not one
      name_node.fail("a preset name or a profile file that exists", "'" + name + "'");
    ConfigNode profile = ConfigNode::load_string(name_node.read_referenced_file(), name);
    base = profile.child(profile_section);
    if (!base.defined())
      name_node.fail("a profile with a '" + profile_section + "' section", "'" + name + "' without one");
  } else {
    const ConfigNode& file = category_file(category);
    base = file.child(name);
    if (!base.defined()) {
      auto names = preset_names(category);
      std::string hint = closest_match(name, names);
      std::string expected = "one of the " + category + " presets (";
      for (size_t i = 0; i < names.size(); ++i)
        expected += (i ? ", " : "") + names[i];
      name_node.fail(expected + ")", "'" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  }
  if (user.is_scalar()) // a bare name: the preset alone, reported under the user's key path
    return user.empty_mapping_here().over(base);
  return node.over(base);
}

} // namespace mlsim
