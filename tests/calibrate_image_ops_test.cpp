// The real loader stages: exact fp16 encodings, JPEG round trip, crop shape, flip, normalisation.
#include "sim/validate/idx_reader.hpp"
#include "sim/validate/image_ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstdlib>

using namespace mlsim::validate;

TEST(CalibrateImageOps, FloatToHalfKnownEncodings) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);              // largest finite half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);              // rounds to +inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000); // tie to even -> 0
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp -> tie to even 2
  EXPECT_EQ(float_to_half(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // halfway, even stays
  EXPECT_EQ(float_to_half(std::nanf("")) & 0x7c00, 0x7c00);
}

TEST(CalibrateImageOps, HalfRoundTripIsExactForRepresentableValues) {
  for (uint32_t h = 0; h < 0x7c00; h += 7)
    EXPECT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h);
}

namespace {
Image gradient(int w, int h) {
  Image img;
  img.width = w;
  img.height = h;
  img.rgb.resize(img.pixels() * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img.rgb[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(x * 255 / (w - 1));
      p[1] = static_cast<uint8_t>(y * 255 / (h - 1));
      p[2] = 128;
    }
  return img;
}
} // namespace

TEST(CalibrateImageOps, JpegRoundTripKeepsSizeAndContent) {
  Image src = gradient(320, 240);
  std::vector<uint8_t> jpg = encode_jpeg(src, 95);
  ASSERT_GT(jpg.size(), 100u);
  Image back = decode_jpeg(jpg.data(), jpg.size());
  ASSERT_EQ(back.width, 320);
  ASSERT_EQ(back.height, 240);
  double err = 0;
  for (size_t i = 0; i < src.rgb.size(); ++i)
    err += std::abs(int(src.rgb[i]) - int(back.rgb[i]));
  EXPECT_LT(err / static_cast<double>(src.rgb.size()), 3.0); // a smooth gradient survives q95
  EXPECT_THROW(decode_jpeg(jpg.data(), 10), std::runtime_error);
}

TEST(CalibrateImageOps, DecodingIntoAReusedBufferGivesTheSamePixels) {
  std::vector<uint8_t> big = encode_jpeg(gradient(640, 480), 90), small = encode_jpeg(gradient(320, 240), 90);
  Image reused;
  decode_jpeg_into(big.data(), big.size(), reused);
  const uint8_t* buffer = reused.rgb.data();
  decode_jpeg_into(small.data(), small.size(), reused); // fits: the same memory, not shrunk
  EXPECT_EQ(reused.rgb.data(), buffer);
  EXPECT_EQ(reused.width, 320);
  EXPECT_EQ(reused.height, 240);
  Image fresh = decode_jpeg(small.data(), small.size());
  ASSERT_EQ(fresh.rgb.size(), reused.pixels() * 3);
  EXPECT_TRUE(std::equal(fresh.rgb.begin(), fresh.rgb.end(), reused.rgb.begin()));
  // What the loader does next with it sees only width x height pixels.
  std::mt19937 a(3), b(3);
  EXPECT_EQ(random_resized_crop(reused, a, 64).rgb, random_resized_crop(fresh, b, 64).rgb);
}

TEST(CalibrateImageOps, RandomResizedCropGivesTheOutputSize) {
  Image src = gradient(500, 375);
  std::mt19937 rng(3);
  for (int i = 0; i < 20; ++i) {
    Image c = random_resized_crop(src, rng, 224);
    EXPECT_EQ(c.width, 224);
    EXPECT_EQ(c.height, 224);
  }
  // A full-frame resize of a horizontal gradient stays monotone left to right.
  Image r = resize_crop_bilinear(src, 0, 0, 500, 375, 100, 75);
  EXPECT_LT(r.rgb[0], r.rgb[99 * 3]);
}

TEST(CalibrateImageOps, FlipTwiceIsIdentityAndNormaliseUsesImagenetStats) {
  Image src = gradient(31, 7);
  Image f = src;
  hflip(f);
  EXPECT_EQ(f.rgb[0], src.rgb[30 * 3]);
  hflip(f);
  EXPECT_EQ(f.rgb, src.rgb);

  Image one;
  one.width = one.height = 1;
  one.rgb = {255, 0, 128};
  float out[3];
  normalize_to_fp32(one, out);
  EXPECT_NEAR(out[0], (1.0 - 0.485) / 0.229, 1e-5);
  EXPECT_NEAR(out[1], (0.0 - 0.456) / 0.224, 1e-5);
  EXPECT_NEAR(out[2], (128.0 / 255.0 - 0.406) / 0.225, 1e-5);
}

TEST(CalibrateImageOps, FashionMnistIdxParse) {
  std::string dir = fashion_mnist_dir();
  if (dir.empty())
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  IdxData d = read_idx_gz(dir + "/t10k-images-idx3-ubyte.gz", 100);
  ASSERT_EQ(d.dims.size(), 3u);
  EXPECT_EQ(d.dims[0], 10000u);
  EXPECT_EQ(d.dims[1], 28u);
  EXPECT_EQ(d.dims[2], 28u);
  EXPECT_EQ(d.records, 100u);
  EXPECT_EQ(d.data.size(), 100u * 784u);
  IdxData labels = read_idx_gz(dir + "/t10k-labels-idx1-ubyte.gz");
  EXPECT_EQ(labels.records, 10000u);
  for (uint8_t l : labels.data)
    ASSERT_LT(l, 10);
}
