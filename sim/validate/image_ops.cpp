#include "sim/validate/image_ops.hpp"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace mlsim::validate {

namespace {
struct TjHandle {
  tjhandle h;
  explicit TjHandle(bool compress) : h(compress ? tjInitCompress() : tjInitDecompress()) {
    if (!h)
      throw std::runtime_error("libjpeg-turbo: cannot create a handle");
  }
  ~TjHandle() { tjDestroy(h); }
};
tjhandle decompressor() {
  thread_local TjHandle handle(false);
  return handle.h;
}
tjhandle compressor() {
  thread_local TjHandle handle(true);
  return handle.h;
}
} // namespace

void jpeg_dimensions(const uint8_t* data, size_t size, int& width, int& height) {
  int subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(decompressor(), data, static_cast<unsigned long>(size), &width, &height, &subsamp,
                          &colorspace) != 0)
    throw std::runtime_error(std::string("JPEG header: ") + tjGetErrorStr2(decompressor()));
}

void decode_jpeg_into(const uint8_t* data, size_t size, Image& img) {
  jpeg_dimensions(data, size, img.width, img.height);
  if (img.rgb.size() < img.pixels() * 3)
    img.rgb.resize(img.pixels() * 3);
  if (tjDecompress2(decompressor(), data, static_cast<unsigned long>(size), img.rgb.data(), img.width, 0,
                    img.height, TJPF_RGB, TJFLAG_FASTDCT) != 0)
    throw std::runtime_error(std::string("JPEG decode: ") + tjGetErrorStr2(decompressor()));
}

Image decode_jpeg(const uint8_t* data, size_t size) {
  Image img;
  decode_jpeg_into(data, size, img);
  return img;
}

std::vector<uint8_t> encode_jpeg(const Image& img, int quality) {
  unsigned char* buf = nullptr;
  unsigned long len = 0;
  if (tjCompress2(compressor(), img.rgb.data(), img.width, 0, img.height, TJPF_RGB, &buf, &len, TJSAMP_420, quality,
                  TJFLAG_FASTDCT) != 0)
    throw std::runtime_error(std::string("JPEG encode: ") + tjGetErrorStr2(compressor()));
  std::vector<uint8_t> out(buf, buf + len);
  tjFree(buf);
  return out;
}

Image resize_crop_bilinear(const Image& src, int x0, int y0, int w, int h, int out_w, int out_h) {
  Image dst;
  dst.width = out_w;
  dst.height = out_h;
  dst.rgb.resize(dst.pixels() * 3);
  std::vector<int> xi(static_cast<size_t>(out_w));
  std::vector<float> xf(static_cast<size_t>(out_w));
  const float sx = static_cast<float>(w) / static_cast<float>(out_w);
  const float sy = static_cast<float>(h) / static_cast<float>(out_h);
  for (int ox = 0; ox < out_w; ++ox) {
    float fx = std::clamp((static_cast<float>(ox) + 0.5f) * sx - 0.5f, 0.0f, static_cast<float>(w - 1));
    int ix = std::min(static_cast<int>(fx), w - 2 < 0 ? 0 : w - 2);
    xi[static_cast<size_t>(ox)] = x0 + ix;
    xf[static_cast<size_t>(ox)] = w > 1 ? fx - static_cast<float>(ix) : 0.0f;
  }
  const size_t stride = static_cast<size_t>(src.width) * 3;
  for (int oy = 0; oy < out_h; ++oy) {
    float fy = std::clamp((static_cast<float>(oy) + 0.5f) * sy - 0.5f, 0.0f, static_cast<float>(h - 1));
    int iy = std::min(static_cast<int>(fy), h - 2 < 0 ? 0 : h - 2);
    float wy = h > 1 ? fy - static_cast<float>(iy) : 0.0f;
    const uint8_t* r0 = src.rgb.data() + static_cast<size_t>(y0 + iy) * stride;
    const uint8_t* r1 = h > 1 ? r0 + stride : r0;
    uint8_t* out = dst.rgb.data() + static_cast<size_t>(oy) * static_cast<size_t>(out_w) * 3;
    for (int ox = 0; ox < out_w; ++ox) {
      const size_t c0 = static_cast<size_t>(xi[static_cast<size_t>(ox)]) * 3;
      const size_t c1 = w > 1 ? c0 + 3 : c0;
      const float wx = xf[static_cast<size_t>(ox)];
      for (int c = 0; c < 3; ++c) {
        float top = r0[c0 + c] + wx * (static_cast<float>(r0[c1 + c]) - r0[c0 + c]);
        float bot = r1[c0 + c] + wx * (static_cast<float>(r1[c1 + c]) - r1[c0 + c]);
        out[static_cast<size_t>(ox) * 3 + c] = static_cast<uint8_t>(top + wy * (bot - top) + 0.5f);
      }
    }
  }
  return dst;
}

Image random_resized_crop(const Image& src, std::mt19937& rng, int out) {
  const double area = static_cast<double>(src.pixels());
  std::uniform_real_distribution<double> scale(0.08, 1.0);
  std::uniform_real_distribution<double> log_ratio(std::log(3.0 / 4.0), std::log(4.0 / 3.0));
  for (int attempt = 0; attempt < 10; ++attempt) {
    double target = area * scale(rng);
    double aspect = std::exp(log_ratio(rng));
    int w = static_cast<int>(std::lround(std::sqrt(target * aspect)));
    int h = static_cast<int>(std::lround(std::sqrt(target / aspect)));
    if (w > 0 && h > 0 && w <= src.width && h <= src.height) {
      int x0 = std::uniform_int_distribution<int>(0, src.width - w)(rng);
      int y0 = std::uniform_int_distribution<int>(0, src.height - h)(rng);
      return resize_crop_bilinear(src, x0, y0, w, h, out, out);
    }
  }
  int side = std::min(src.width, src.height); // fallback: centre crop
  return resize_crop_bilinear(src, (src.width - side) / 2, (src.height - side) / 2, side, side, out, out);
}

void hflip(Image& img) {
  for (int y = 0; y < img.height; ++y) {
    uint8_t* row = img.rgb.data() + static_cast<size_t>(y) * static_cast<size_t>(img.width) * 3;
    for (int l = 0, r = img.width - 1; l < r; ++l, --r)
      for (int c = 0; c < 3; ++c)
        std::swap(row[l * 3 + c], row[r * 3 + c]);
  }
}

void normalize_to_fp32(const Image& img, float* out) {
  static constexpr float mean[3] = {0.485f, 0.456f, 0.406f};
  static constexpr float inv_std[3] = {1.0f / 0.229f, 1.0f / 0.224f, 1.0f / 0.225f};
  const size_t n = img.pixels();
  for (int c = 0; c < 3; ++c) {
    float* plane = out + static_cast<size_t>(c) * n;
    const float k = inv_std[c] / 255.0f, off = mean[c] * inv_std[c];
    for (size_t i = 0; i < n; ++i)
      plane[i] = static_cast<float>(img.rgb[i * 3 + static_cast<size_t>(c)]) * k - off;
  }
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or NaN (keep NaN quiet)
    return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (absx >= 0x47800000u) // >= 65536: overflow
    return static_cast<uint16_t>(sign | 0x7c00u);
  const uint32_t e = absx >> 23;
  if (e < 113) { // below 2^-14: a half subnormal or zero
    if (e < 102)
      return static_cast<uint16_t>(sign);
    const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t s = 126 - e; // 14..24
    uint32_t m = mant >> s;
    const uint32_t rem = mant & ((1u << s) - 1), half = 1u << (s - 1);
    if (rem > half || (rem == half && (m & 1u)))
      ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t h = ((e - 112) << 10) | ((absx & 0x7fffffu) >> 13);
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h; // a carry into the exponent is the correct rounding (up to inf)
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0x1f)
    x = sign | 0x7f800000u | (m << 13);
  else if (e != 0)
    x = sign | ((e + 112) << 23) | (m << 13);
  else if (m == 0)
    x = sign;
  else { // subnormal: normalise
    e = 113;
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    x = sign | (e << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void convert_to_fp16(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = float_to_half(in[i]);
}

void collate(const std::vector<const void*>& samples, size_t bytes_each, void* batch) {
  auto* dst = static_cast<uint8_t*>(batch);
  for (size_t i = 0; i < samples.size(); ++i)
    std::memcpy(dst + i * bytes_each, samples[i], bytes_each);
}

} // namespace mlsim::validate
