// SeedSequence is std::seed_seq without its divisions: the standard library's
// own seed_seq is the reference, word for word and through the generator the
// pipeline seeds with it.
#include "sim/pipeline/seed_sequence.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

TEST(SeedSequence, GeneratesStdSeedSeqsWordsForEveryLength) {
  std::mt19937 entropy(11);
  for (int trial = 0; trial < 500; ++trial) {
    const unsigned a = trial % 2 ? entropy() : static_cast<unsigned>(trial), b = entropy() % 5, c = entropy();
    std::seed_seq reference{a, b, c};
    const mlsim::SeedSequence<3> ours{a, b, c};
    for (size_t n : {0, 1, 2, 3, 6, 7, 38, 39, 67, 68, 100, 622, 623, 624, 1000}) {
      std::vector<std::uint32_t> want(n), got(n);
      reference.generate(want.begin(), want.end());
      ours.generate(got.begin(), got.end());
      ASSERT_EQ(got, want) << "entries " << a << ", " << b << ", " << c << "; " << n << " words";
    }
  }
}

TEST(SeedSequence, SeedsTheSameGeneratorState) {
  for (unsigned batch = 0; batch < 64; ++batch) {
    std::seed_seq reference{1u, 3u, batch};
    const mlsim::SeedSequence<3> ours{1u, 3u, batch};
    std::mt19937_64 want(reference), got(ours);
    for (int i = 0; i < 1000; ++i)
      ASSERT_EQ(got(), want()) << "batch " << batch << ", draw " << i;
  }
}

} // namespace
