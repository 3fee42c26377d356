#include "core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

namespace sluice {
namespace {

// Chi-square statistic of observed counts against equal expected frequencies.
double ChiSquareUniform(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const double expected = static_cast<double>(total) / static_cast<double>(counts.size());
  double chi2 = 0;
  for (int64_t c : counts) {
    const double d = static_cast<double>(c) - expected;
    chi2 += d * d / expected;
  }
  return chi2;
}

std::vector<uint32_t> Draws(SampleRng rng, int n) {
  std::vector<uint32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(rng.NextU32());
  return out;
}

// Known-answer vectors from Random123's kat_vectors (philox4x32, 10 rounds):
// counter words v[0..3], key words k0, k1, expected output words.
struct PhiloxKat {
  uint32_t ctr[4];
  uint32_t k0, k1;
  uint32_t out[4];
};

TEST(PhiloxTest, Random123KnownAnswers) {
  const PhiloxKat kats[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, 0x00000000, 0x00000000,
       {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff,
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0,
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const PhiloxKat& k : kats) {
    const Philox4x32 r =
        Philox4x32_10(Philox4x32{{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}}, k.k0, k.k1);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(r.v[i], k.out[i]) << "word " << i << " for counter " << std::hex << k.ctr[0];
  }
}

TEST(PhiloxTest, BijectionOnNeighbouringCounters) {
  // Distinct counters must give distinct blocks (Philox is a bijection); also every output bit
  // should flip about half the time when the counter's low bit changes (avalanche).
  std::set<std::vector<uint32_t>> seen;
  int64_t flipped = 0;
  const int kN = 2000;
  for (uint32_t c = 0; c < kN; ++c) {
    const Philox4x32 a = Philox4x32_10(Philox4x32{{2 * c, 7, 0, 0}}, 1, 2);
    const Philox4x32 b = Philox4x32_10(Philox4x32{{2 * c + 1, 7, 0, 0}}, 1, 2);
    seen.insert({a.v[0], a.v[1], a.v[2], a.v[3]});
    seen.insert({b.v[0], b.v[1], b.v[2], b.v[3]});
    for (int i = 0; i < 4; ++i) flipped += __builtin_popcount(a.v[i] ^ b.v[i]);
  }
  EXPECT_EQ(seen.size(), 2u * kN);
  const double frac = static_cast<double>(flipped) / (128.0 * kN);
  EXPECT_NEAR(frac, 0.5, 0.01);
}

TEST(SampleRngTest, StreamIsPhiloxOfTheKey) {
  // The stream layout is part of reproducibility (CPU and GPU must agree, checkpoints must replay
  // the same augmentations): draw n is word n % 4 of Philox4x32_10 with counter
  // {n / 4, op, sample, epoch} under the key (seed low, seed high).
  const uint64_t seed = 0x0123456789ABCDEFull;
  SampleRng rng(seed, 5, 1234, 3);
  for (uint32_t block = 0; block < 3; ++block) {
    const Philox4x32 expect =
        Philox4x32_10(Philox4x32{{block, 3, 1234, 5}}, 0x89ABCDEFu, 0x01234567u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(rng.NextU32(), expect.v[i]) << block << "/" << i;
  }
}

TEST(SampleRngTest, DeterministicForTheSameKey) {
  EXPECT_EQ(Draws(SampleRng(42, 3, 17, 2), 64), Draws(SampleRng(42, 3, 17, 2), 64));
  SampleRng a(9, 1, 2, 3), b(9, 1, 2, 3);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(a.Uniform01(), b.Uniform01());
    EXPECT_EQ(a.RandInt(-5, 1000), b.RandInt(-5, 1000));
  }
}

TEST(SampleRngTest, DifferentKeysGiveDifferentStreams) {
  const std::vector<uint32_t> base = Draws(SampleRng(42, 3, 17, 2), 16);
  // Each component of the key, including the high halves of the 64-bit fields.
  const std::vector<std::vector<uint32_t>> others = {
      Draws(SampleRng(43, 3, 17, 2), 16),
      Draws(SampleRng(42 + (uint64_t{1} << 32), 3, 17, 2), 16),
      Draws(SampleRng(42, 4, 17, 2), 16),
      Draws(SampleRng(42, 3, 18, 2), 16),
      Draws(SampleRng(42, 3, 17 + (uint64_t{1} << 32), 2), 16),
      Draws(SampleRng(42, 3, 17, 3), 16),
      Draws(SampleRng(42, 3, 17, kShuffleStream), 16),
  };
  for (size_t i = 0; i < others.size(); ++i) {
    EXPECT_NE(others[i], base) << "variant " << i;
    for (size_t j = 0; j < i; ++j) EXPECT_NE(others[i], others[j]) << i << " vs " << j;
  }
  // Swapping the roles of epoch and sample must not collide either.
  EXPECT_NE(Draws(SampleRng(1, 2, 3, 0), 8), Draws(SampleRng(1, 3, 2, 0), 8));
}

TEST(SampleRngTest, ManySamplesHaveDistinctFirstDraws) {
  std::set<uint64_t> seen;
  for (uint64_t s = 0; s < 5000; ++s) seen.insert(SampleRng(0, 0, s, 0).NextU64());
  EXPECT_EQ(seen.size(), 5000u);
}

TEST(SampleRngTest, RandIntStaysInRangeAndHitsEveryValue) {
  struct Range {
    int64_t lo, hi;
  };
  const Range ranges[] = {{0, 1}, {0, 2}, {-3, 4}, {10, 17}, {-100, -90}, {0, 1000}};
  for (const Range& r : ranges) {
    SampleRng rng(7, 0, 0, 0);
    const int64_t span = r.hi - r.lo;
    std::vector<int64_t> counts(static_cast<size_t>(span), 0);
    const int64_t n = std::max<int64_t>(span * 200, 1000);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = rng.RandInt(r.lo, r.hi);
      ASSERT_GE(v, r.lo);
      ASSERT_LT(v, r.hi);
      ++counts[static_cast<size_t>(v - r.lo)];
    }
    for (size_t i = 0; i < counts.size(); ++i)
      EXPECT_GT(counts[i], 0) << "value " << r.lo + static_cast<int64_t>(i) << " never drawn";
  }
}

TEST(SampleRngTest, RandIntIsUniformOnSmallRange) {
  // 7 values, 70000 draws: chi-square with 6 degrees of freedom. The 99.99% quantile is 27.9; a
  // generator off by 2% on one value gives about 28 here, a missing value about 11700.
  SampleRng rng(2024, 1, 99, 4);
  std::vector<int64_t> counts(7, 0);
  for (int i = 0; i < 70000; ++i) ++counts[static_cast<size_t>(rng.RandInt(3, 10) - 3)];
  EXPECT_LT(ChiSquareUniform(counts), 27.9);
}

TEST(SampleRngTest, RandIntHasNoModuloBiasOnHugeRange) {
  // range = 3 * 2^61. Plain "x % range" on 64 random bits would put 3/8, 3/8, 2/8 of the draws in
  // the three thirds of the range; rejection sampling gives 1/3 each.
  const int64_t range = int64_t{3} << 61;
  const int64_t third = int64_t{1} << 61;
  SampleRng rng(5, 6, 7, 8);
  std::vector<int64_t> counts(3, 0);
  for (int i = 0; i < 30000; ++i) {
    const int64_t v = rng.RandInt(0, range);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, range);
    ++counts[static_cast<size_t>(v / third)];
  }
  // 2 degrees of freedom: 99.99% quantile is 18.4; the biased split gives about 1250.
  EXPECT_LT(ChiSquareUniform(counts), 18.4);
}

TEST(SampleRngTest, RandIntWithNegativeBoundsAndWideSpans) {
  SampleRng rng(1, 1, 1, 1);
  const int64_t lo = -(int64_t{1} << 62), hi = (int64_t{1} << 62);
  bool neg = false, pos = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = rng.RandInt(lo, hi);
    ASSERT_GE(v, lo);
    ASSERT_LT(v, hi);
    neg |= v < 0;
    pos |= v > 0;
  }
  EXPECT_TRUE(neg);
  EXPECT_TRUE(pos);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.RandInt(-7, -6), -7);
  // The widest span: every int64 but the largest.
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  neg = pos = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = rng.RandInt(kMin, kMax);
    ASSERT_LT(v, kMax);
    neg |= v < 0;
    pos |= v > 0;
  }
  EXPECT_TRUE(neg);
  EXPECT_TRUE(pos);
  EXPECT_EQ(rng.RandInt(kMax - 1, kMax), kMax - 1);
  EXPECT_EQ(rng.RandInt(kMin, kMin + 1), kMin);
}

TEST(SampleRngTest, Uniform01InUnitIntervalAndUniform) {
  SampleRng rng(11, 0, 3, 1);
  std::vector<int64_t> bins(20, 0);
  double sum = 0;
  const int kN = 100000;
  for (int i = 0; i < kN; ++i) {
    const double u = rng.Uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    // 53 random bits: u * 2^53 is an integer.
    ASSERT_EQ(std::floor(u * 0x1.0p53), u * 0x1.0p53);
    sum += u;
    ++bins[static_cast<size_t>(u * 20)];
  }
  EXPECT_NEAR(sum / kN, 0.5, 0.005);
  // 19 degrees of freedom: 99.99% quantile is 49.0.
  EXPECT_LT(ChiSquareUniform(bins), 49.0);
}

TEST(SampleRngTest, UniformAndBernoulli) {
  SampleRng rng(3, 3, 3, 3);
  for (int i = 0; i < 1000; ++i) {
    const double v = rng.Uniform(-2.0, 5.0);
    ASSERT_GE(v, -2.0);
    ASSERT_LT(v, 5.0);
    EXPECT_FALSE(rng.Bernoulli(0.0));
    EXPECT_TRUE(rng.Bernoulli(1.0));
  }
  int hits = 0;
  const int kN = 40000;
  for (int i = 0; i < kN; ++i) hits += rng.Bernoulli(0.3) ? 1 : 0;
  // Standard deviation of the count is sqrt(N p (1-p)) = 92; allow 5 of them.
  EXPECT_NEAR(hits, 0.3 * kN, 460);
}

}  // namespace
}  // namespace sluice
