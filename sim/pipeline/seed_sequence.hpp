// std::seed_seq's generate(), as the standard specifies it ([rand.util.seedseq]),
// without its divisions: the same words for the same entries, so a generator
// seeded from it starts in the same state as from std::seed_seq.
//
// Why: the input pipeline seeds one std::mt19937_64 per batch from (seed, rank,
// batch) so that a batch's sample sizes depend on nothing else (624 words of
// seed material each), and libstdc++ computes every index of the mixing loops
// with a modulo: ~10 % of a 1 node x 8 run's instructions. Here the indices
// advance and wrap instead.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>

namespace mlsim {

template <size_t S> class SeedSequence {
public:
  using result_type = std::uint_least32_t;

  SeedSequence(std::initializer_list<std::uint32_t> entries) {
    std::copy_n(entries.begin(), std::min(entries.size(), S), v_.begin());
  }

  template <class It> void generate(It begin, It end) const {
    if (begin == end)
      return;
    using Word = std::uint32_t;
    std::fill(begin, end, static_cast<Word>(0x8b8b8b8bu));
    const size_t n = static_cast<size_t>(std::distance(begin, end));
    const size_t t = n >= 623 ? 11 : n >= 68 ? 7 : n >= 39 ? 5 : n >= 7 ? 3 : (n - 1) / 2;
    const size_t p = (n - t) / 2, q = p + t, m = std::max(S + 1, n);
    auto at = [&](size_t i) -> decltype(*begin) { return begin[static_cast<std::ptrdiff_t>(i)]; };
    auto mix = [](Word x) { return x ^ (x >> 27); };
    // i = k mod n, ip = (k + p) mod n, iq = (k + q) mod n, im = (k - 1) mod n, each moved by one per k.
    size_t i = 0, ip = p % n, iq = q % n, im = n - 1;
    auto step = [n](size_t& x) { x = x + 1 == n ? 0 : x + 1; };
    for (size_t k = 0; k < m; ++k) {
      const Word r1 = 1664525u * mix(static_cast<Word>(at(i) ^ at(ip) ^ at(im)));
      const Word r2 = r1 + (k == 0 ? static_cast<Word>(S) : static_cast<Word>(i) + (k <= S ? v_[k - 1] : 0u));
      at(ip) += r1;
      at(iq) += r2;
      at(i) = r2;
      step(i), step(ip), step(iq), step(im);
    }
    for (size_t k = m; k < m + n; ++k) {
      const Word r3 = 1566083941u * mix(static_cast<Word>(at(i) + at(ip) + at(im)));
      const Word r4 = r3 - static_cast<Word>(i);
      at(ip) ^= r3;
      at(iq) ^= r4;
      at(i) = r4;
      step(i), step(ip), step(iq), step(im);
    }
  }

  static constexpr size_t size() { return S; }

private:
  std::array<std::uint32_t, S> v_{};
};

} // namespace mlsim
