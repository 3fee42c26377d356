#include "io/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <numeric>
#include <thread>
#include <vector>

namespace sluice {
namespace {

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

TEST(SamplerTest, PermutationIsAPermutation) {
  for (int64_t n : {1, 2, 3, 10, 257, 5000}) {
    for (int64_t epoch : {0, 1, 9}) {
      std::vector<int64_t> p = Sampler::Permutation(n, 42, epoch);
      ASSERT_EQ(static_cast<int64_t>(p.size()), n);
      std::sort(p.begin(), p.end());
      ASSERT_EQ(p, Iota(n)) << "n=" << n << " epoch=" << epoch;
    }
  }
  EXPECT_TRUE(Sampler::Permutation(0, 1, 0).empty());
}

TEST(SamplerTest, DeterministicAndDifferentPerEpochAndSeed) {
  const std::vector<int64_t> a = Sampler::Permutation(1000, 7, 3);
  EXPECT_EQ(Sampler::Permutation(1000, 7, 3), a);
  EXPECT_NE(Sampler::Permutation(1000, 7, 4), a);
  EXPECT_NE(Sampler::Permutation(1000, 8, 3), a);
  EXPECT_NE(a, Iota(1000));
  // Epochs differ from each other, not just from epoch 3.
  for (int64_t e = 0; e < 10; ++e)
    for (int64_t f = 0; f < e; ++f)
      EXPECT_NE(Sampler::Permutation(100, 7, e), Sampler::Permutation(100, 7, f)) << e << " " << f;
}

TEST(SamplerTest, IndexAtFollowsThePermutation) {
  Sampler s(300, true, 11);
  EXPECT_EQ(s.size(), 300);
  for (int64_t epoch : {0, 1, 0, 5}) {  // going back to an earlier epoch recomputes it
    const std::vector<int64_t> p = Sampler::Permutation(300, 11, epoch);
    for (int64_t i = 0; i < 300; ++i) ASSERT_EQ(s.IndexAt(epoch, i), p[static_cast<size_t>(i)]);
  }
}

TEST(SamplerTest, NoShuffleIsIdentity) {
  Sampler s(50, false, 11);
  for (int64_t epoch : {0, 3})
    for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(s.IndexAt(epoch, i), i);
}

TEST(SamplerTest, AllOrdersOfThreeAreEquallyLikely) {
  // Fisher-Yates gives each of the 3! orders probability 1/6; an off-by-one (e.g. drawing j in
  // [0, i) instead of [0, i]) gives only the 2 cyclic orders, or a skewed split.
  std::map<std::vector<int64_t>, int64_t> counts;
  const int kEpochs = 6000;
  for (int64_t e = 0; e < kEpochs; ++e) ++counts[Sampler::Permutation(3, 99, e)];
  ASSERT_EQ(counts.size(), 6u);
  double chi2 = 0;
  for (const auto& [order, c] : counts) {
    const double d = static_cast<double>(c) - kEpochs / 6.0;
    chi2 += d * d / (kEpochs / 6.0);
  }
  EXPECT_LT(chi2, 25.7);  // 5 degrees of freedom, 99.99% quantile
}

TEST(SamplerTest, EveryPositionIsUniform) {
  // Where element 0 lands, over many epochs of a 10-element permutation.
  std::vector<int64_t> where(10, 0);
  const int kEpochs = 10000;
  for (int64_t e = 0; e < kEpochs; ++e) {
    const std::vector<int64_t> p = Sampler::Permutation(10, 5, e);
    ++where[static_cast<size_t>(std::find(p.begin(), p.end(), 0) - p.begin())];
  }
  double chi2 = 0;
  for (int64_t c : where) {
    const double d = static_cast<double>(c) - 1000.0;
    chi2 += d * d / 1000.0;
  }
  EXPECT_LT(chi2, 33.7);  // 9 degrees of freedom, 99.99% quantile
}

TEST(SamplerTest, ConcurrentIndexAt) {
  Sampler s(300, true, 3);
  const std::vector<int64_t> p0 = Sampler::Permutation(300, 3, 0);
  const std::vector<int64_t> p1 = Sampler::Permutation(300, 3, 1);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0; i < 300; ++i) {
        const int64_t epoch = (i + t) % 2;  // threads switch epochs all the time
        if (s.IndexAt(epoch, i) != (epoch ? p1 : p0)[static_cast<size_t>(i)]) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace sluice
