#include "sim/validate/calib_dataset.hpp"

#include "sim/validate/file_io.hpp"
#include "sim/validate/image_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace mlsim::validate {

std::string default_cache_dir() {
  if (const char* d = std::getenv("MLSIM_CALIB_DIR"); d && *d)
    return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "mlsim" / "calib").string();
  return "/tmp/mlsim-calib";
}

std::vector<std::string> mate_photo_sources() {
  std::vector<std::string> out;
  // MLSIM_PHOTO_DIR: another folder of JPEG photos (a machine without the package, e.g. a GPU host
  // given a few photos with the binary).
  const char* env = std::getenv("MLSIM_PHOTO_DIR");
  const fs::path root = env && *env ? fs::path(env) : fs::path("/usr/share/backgrounds/mate");
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return out;
  for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
    auto ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".jpg" || ext == ".jpeg" || ext == ".JPG"))
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    auto sa = file_size(a), sb = file_size(b);
    return sa != sb ? sa < sb : a < b;
  });
  return out;
}

namespace {
// 2x2 box filter: a clean way down before the final bilinear step.
Image downscale_half(const Image& s) {
  Image d;
  d.width = s.width / 2;
  d.height = s.height / 2;
  d.rgb.resize(d.pixels() * 3);
  const size_t stride = static_cast<size_t>(s.width) * 3;
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const uint8_t* p = s.rgb.data() + static_cast<size_t>(2 * y) * stride + static_cast<size_t>(2 * x) * 3 + c;
        d.rgb[(static_cast<size_t>(y) * d.width + x) * 3 + c] =
            static_cast<uint8_t>((p[0] + p[3] + p[stride] + p[stride + 3] + 2) / 4);
      }
  return d;
}

Image to_4x3(const Image& src, int out_w) {
  int cw = src.width, ch = src.width * 3 / 4;
  if (ch > src.height) {
    ch = src.height;
    cw = src.height * 4 / 3;
  }
  Image crop = resize_crop_bilinear(src, (src.width - cw) / 2, (src.height - ch) / 2, cw, ch, cw, ch);
  while (crop.width >= 2 * out_w)
    crop = downscale_half(crop);
  return resize_crop_bilinear(crop, 0, 0, crop.width, crop.height, out_w, out_w * 3 / 4);
}

struct Variant {
  std::string set;
  int width, quality;
};
} // namespace

std::vector<CalibImage> build_calib_set(const CalibSetOptions& opt) {
  std::vector<std::string> sources = mate_photo_sources();
  if (sources.empty())
    throw std::runtime_error("no calibration photos: install the Debian package mate-backgrounds");
  const fs::path dir = opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir;
  fs::create_directories(dir / "jpeg");

  std::vector<std::string> used = sources;
  if (opt.quick) { // four mid-sized photos: skip the 16 MB original to stay fast
    std::vector<std::string> q;
    for (size_t i = 0; i < sources.size() && q.size() < 4; i += std::max<size_t>(1, sources.size() / 5))
      q.push_back(sources[i]);
    used = q;
  }
  // Widths about 1.25x apart from 500 up: a loader's page faults per image step with the size (the C
  // allocator maps large buffers afresh for each image, small ones reuse the heap), and the profile
  // interpolates them between the sizes measured here.
  std::vector<int> widths = opt.quick ? std::vector<int>{160, 500, 1280}
                                      : std::vector<int>{160, 320, 500, 640, 800, 960, 1280, 1600, 2048};
  std::vector<Variant> variants;
  for (int w : widths)
    for (int q : {75, 95})
      variants.push_back({"sweep", w, q});
  variants.push_back({"imagenet", 500, 90});
  variants.push_back({"large", 1024, 90});

  std::vector<CalibImage> out;
  for (const auto& src : used) {
    const std::string stem = fs::path(src).stem().string();
    Image decoded;
    for (const auto& v : variants) {
      CalibImage ci;
      ci.set = v.set;
      ci.width = v.width;
      ci.height = v.width * 3 / 4;
      ci.quality = v.quality;
      ci.path = (dir / "jpeg" / fmt::format("{}_{}x{}_q{}.jpg", stem, ci.width, ci.height, ci.quality)).string();
      if (file_size(ci.path) == 0) {
        if (decoded.width == 0) {
          auto bytes = read_file(src);
          decoded = decode_jpeg(bytes.data(), bytes.size());
        }
        write_file(ci.path, encode_jpeg(to_4x3(decoded, v.width), v.quality));
      }
      ci.bytes = file_size(ci.path);
      out.push_back(ci);
    }
    if (!opt.quick) {
      auto bytes = read_file(src);
      CalibImage n;
      n.path = src;
      n.set = "native";
      jpeg_dimensions(bytes.data(), bytes.size(), n.width, n.height);
      n.quality = 0;
      n.bytes = bytes.size();
      out.push_back(n);
    }
  }
  return out;
}

std::vector<CalibImage> select_set(const std::vector<CalibImage>& all, const std::string& set) {
  std::vector<CalibImage> out;
  for (const auto& c : all)
    if (c.set == set)
      out.push_back(c);
  return out;
}

const CalibImage* reference_decode_image(const std::vector<CalibImage>& all) {
  const CalibImage* best = nullptr;
  for (const auto& c : all)
    if (c.set == "imagenet" && (!best || fs::path(c.path).filename() < fs::path(best->path).filename()))
      best = &c;
  return best;
}

} // namespace mlsim::validate
