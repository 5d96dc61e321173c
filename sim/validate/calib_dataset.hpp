// The calibration data set: real photographs re-encoded at several sizes and
// qualities with libjpeg-turbo, kept in a cache directory (never the repo).
//
// Sources: the JPEG photos of the Debian package mate-backgrounds
// (/usr/share/backgrounds/mate, 80 KB .. 5640x3172 px). Each source is centre-
// cropped to 4:3, box-downscaled by halves, then bilinearly resized to each
// target width and encoded at each quality. Sets:
//   "sweep"    widths 160..2048 at qualities 75 and 95 (the decode/read fits),
//   "imagenet" 500x375 at quality 90 (ImageNet-like, the default loader input),
//   "large"    1024x768 at quality 90 (a second image size for validate),
//   "native"   the source files themselves, untouched (full mode only).
// Ignores: progressive JPEGs and 4:4:4 subsampling (all outputs are baseline 4:2:0).
#pragma once

#include <string>
#include <vector>

namespace mlsim::validate {

struct CalibImage {
  std::string path;
  std::string set; // "sweep", "imagenet", "large", "native"
  int width = 0, height = 0, quality = 0;
  unsigned long long bytes = 0;
  double pixels() const { return static_cast<double>(width) * height; }
};

struct CalibSetOptions {
  bool quick = false;    // fewer sources and sizes
  std::string cache_dir; // empty: default_cache_dir()
};

// $MLSIM_CALIB_DIR, else $XDG_CACHE_HOME/mlsim/calib, else /tmp/mlsim-calib.
std::string default_cache_dir();
// The mate-backgrounds JPEG photos (or those under $MLSIM_PHOTO_DIR), smallest file first; empty if
// there are none.
std::vector<std::string> mate_photo_sources();
// Builds (or reuses) the set; throws std::runtime_error if there are no sources.
std::vector<CalibImage> build_calib_set(const CalibSetOptions& opt);
// The images of one set.
std::vector<CalibImage> select_set(const std::vector<CalibImage>& all, const std::string& set);
// The JPEG the loader stages' reference decode times (robust_measure.hpp reference_decode_s): the "imagenet"
// set's first file by name, the same in a quick and a full set; nullptr without one.
const CalibImage* reference_decode_image(const std::vector<CalibImage>& all);

} // namespace mlsim::validate
