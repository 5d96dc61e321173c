// The seed of one stream of draws: a batch's sample sizes from (run seed, stream, batch index).
//
//   seed = mix(mix(mix(run seed) ^ stream) ^ index),  mix = SplitMix64's output function
//
// Why: each batch's sizes depend on nothing but these three numbers (not on the order in which
// batches are built, nor on how many were drawn before), so every batch gets its own generator. A
// 64-bit seed sets std::mt19937_64's state by its own cheap recurrence; seeding it from a seed
// sequence instead (624 words of mixing) cost more than the batch's draws. SplitMix64 (Steele, Lea
// and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; the finaliser Vigna
// publishes with it) spreads nearby inputs over the whole 64 bits.
#pragma once

#include <cstdint>
#include <random>

namespace mlsim {

// SplitMix64: advances `state` by the golden-ratio increment and returns its mix.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t draw_seed(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t index) {
  std::uint64_t s = run_seed;
  s = splitmix64(s) ^ stream;
  s = splitmix64(s) ^ index;
  return splitmix64(s);
}

inline std::mt19937_64 draw_engine(std::uint64_t run_seed, std::uint64_t stream, std::uint64_t index) {
  return std::mt19937_64(draw_seed(run_seed, stream, index));
}

} // namespace mlsim
