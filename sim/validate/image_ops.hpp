// The real loader stages of an image pipeline, as a PyTorch/torchvision
// ImageNet training transform does them on the host:
//   JPEG decode (libjpeg-turbo, RGB) -> RandomResizedCrop(224, scale 0.08..1,
//   ratio 3/4..4/3) with bilinear resampling -> random horizontal flip ->
//   ToTensor + Normalize (uint8 HWC -> float32 CHW) -> optional float16 on
//   the host -> collation of samples into one contiguous batch tensor.
// The float16 conversion is the portable software routine (round to nearest
// even, subnormals, inf/NaN), as frameworks use where no F16C path is taken:
// that is the cost the simulator's `fp16_emulation_factor` describes.
// Ignores: antialiasing on downscale (torchvision's antialias=True costs more
// per source pixel), colour jitter and other augmentations, chroma-upsampling
// options of the decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace mlsim::validate {

struct Image {
  int width = 0, height = 0; // pixels; 3 channels, interleaved RGB, row-major
  std::vector<uint8_t> rgb;
  size_t pixels() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
};

// Decodes a JPEG to RGB (throws std::runtime_error on a corrupt file). One
// libjpeg-turbo handle per thread is reused, as a real loader does.
Image decode_jpeg(const uint8_t* data, size_t size);
// The same into `out`, reusing its memory (grown, never shrunk, never zeroed
// when it is large enough), as an image library's block cache does (PIL keeps
// freed image blocks for the next image). Why the loaders use it: with a fresh
// allocation per image, the cost of a 1024x768 decode on a 2-core VM was 1.6 or
// 2.1 ms depending on where the allocator happened to place the buffer (per
// thread, run to run); a reused buffer measures the same in every thread.
void decode_jpeg_into(const uint8_t* data, size_t size, Image& out);
// Encodes RGB as baseline JPEG with 4:2:0 subsampling at `quality` (1..100).
std::vector<uint8_t> encode_jpeg(const Image& img, int quality);
// Width and height from the JPEG header, without decoding.
void jpeg_dimensions(const uint8_t* data, size_t size, int& width, int& height);

// Bilinear resample of the crop (x0, y0, w, h) of `src` to out_w x out_h.
Image resize_crop_bilinear(const Image& src, int x0, int y0, int w, int h, int out_w, int out_h);
// torchvision RandomResizedCrop: a random crop of 8..100 % of the area and
// aspect 3/4..4/3 (10 tries, then a centre crop), resized to out x out.
Image random_resized_crop(const Image& src, std::mt19937& rng, int out = 224);
// Mirror left-right in place.
void hflip(Image& img);
// (x/255 - mean[c]) / std[c] with the ImageNet mean/std, HWC uint8 -> CHW float32.
// `out` holds 3 * pixels floats.
void normalize_to_fp32(const Image& img, float* out);
// IEEE binary16 conversions in software.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
void convert_to_fp16(const float* in, uint16_t* out, size_t n);
// Copies `count` samples of `bytes_each` into one contiguous batch buffer.
void collate(const std::vector<const void*>& samples, size_t bytes_each, void* batch);

} // namespace mlsim::validate
