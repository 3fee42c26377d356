#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

// The oracle is the compiler's IEEE binary16 type (GCC >= 12 on x86-64: `_Float16`, converted
// with round-to-nearest-even by libgcc or F16C).

namespace sluice {
namespace {

uint32_t FloatBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  return x;
}

float BitsToFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

uint16_t OracleFloatToHalf(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof(bits));
  return bits;
}

float OracleHalfToFloat(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof(h));
  return static_cast<float>(h);
}

bool HalfIsNan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

// Checks FloatToHalfBits(f) against the oracle; NaNs must stay NaN with their sign (payload bits
// are not specified). Returns false (and records a failure) on mismatch.
bool CheckToHalf(float f) {
  const uint16_t got = FloatToHalfBits(f), want = OracleFloatToHalf(f);
  if (std::isnan(f)) {
    if (!HalfIsNan(got) || (got & 0x8000u) != (want & 0x8000u)) {
      ADD_FAILURE() << "NaN 0x" << std::hex << FloatBits(f) << " -> 0x" << got;
      return false;
    }
    return true;
  }
  if (got != want) {
    ADD_FAILURE() << "float 0x" << std::hex << FloatBits(f) << " (" << std::hexfloat << f
                  << ") -> 0x" << got << ", expected 0x" << want;
    return false;
  }
  return true;
}

TEST(HalfTest, EveryHalfConvertsToFloatExactly) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float got = HalfBitsToFloat(h), want = OracleHalfToFloat(h);
    if (HalfIsNan(h)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << i;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << i;
    } else {
      ASSERT_EQ(FloatBits(got), FloatBits(want)) << "half 0x" << std::hex << i;
    }
  }
}

TEST(HalfTest, EveryHalfRoundTrips) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const uint16_t back = FloatToHalfBits(HalfBitsToFloat(h));
    if (HalfIsNan(h)) {
      ASSERT_TRUE(HalfIsNan(back)) << std::hex << i;
      ASSERT_EQ(back & 0x8000u, h & 0x8000u) << std::hex << i;
    } else {
      ASSERT_EQ(back, h) << "half 0x" << std::hex << i;
    }
  }
}

TEST(HalfTest, HandValues) {
  EXPECT_EQ(FloatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);            // largest finite half
  EXPECT_EQ(FloatToHalfBits(65519.996f), 0x7BFF);          // just below the tie to infinity
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);            // tie rounds to even: infinity
  EXPECT_EQ(FloatToHalfBits(1e9f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(FloatToHalfBits(0x1.0p-14f), 0x0400);          // smallest normal
  EXPECT_EQ(FloatToHalfBits(0x1.0p-24f), 0x0001);          // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(0x1.0p-25f), 0x0000);          // tie between 0 and 2^-24: even
  EXPECT_EQ(FloatToHalfBits(0x1.000002p-25f), 0x0001);     // just above the tie
  EXPECT_EQ(FloatToHalfBits(0x1.8p-24f), 0x0002);          // 1.5 * 2^-24: tie to even (2)
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x1.0p-11f), 0x3C00);   // tie, even mantissa stays
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x3.0p-11f), 0x3C02);   // tie, odd mantissa rounds up
  EXPECT_TRUE(HalfIsNan(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(HalfBitsToFloat(0x3555), 0x1.554p-2f);         // 0.333251953125
  EXPECT_EQ(HalfBitsToFloat(0x0001), 0x1.0p-24f);
  EXPECT_EQ(HalfBitsToFloat(0x7BFF), 65504.0f);
}

TEST(HalfTest, TiesAndNeighboursOfEveryHalf) {
  // For each pair of adjacent finite halves, the exact midpoint (a tie) and the floats one ulp
  // either side of it.
  int failures = 0;
  for (uint32_t i = 0; i < 0x7C00u && failures < 10; ++i) {
    const float lo = HalfBitsToFloat(static_cast<uint16_t>(i));
    const float hi = HalfBitsToFloat(static_cast<uint16_t>(i + 1));  // 0x7C00 is +inf
    const float mid = i + 1 == 0x7C00u ? 65520.0f : lo + (hi - lo) / 2;
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      failures += CheckToHalf(f) ? 0 : 1;
      failures += CheckToHalf(-f) ? 0 : 1;
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(HalfTest, MillionsOfRandomFloats) {
  std::mt19937_64 gen(12345);
  int failures = 0;
  // Uniformly random bit patterns: every exponent, NaN and Inf payloads included.
  for (int i = 0; i < 2000000 && failures < 10; ++i)
    failures += CheckToHalf(BitsToFloat(static_cast<uint32_t>(gen()))) ? 0 : 1;
  // Exponents where the conversion does work: from below the smallest subnormal half (2^-26)
  // through the overflow threshold (2^17), every mantissa pattern equally likely.
  std::uniform_int_distribution<uint32_t> exp_dist(127 - 27, 127 + 17);
  for (int i = 0; i < 3000000 && failures < 10; ++i) {
    const uint32_t r = static_cast<uint32_t>(gen());
    const uint32_t bits = (r & 0x80000000u) | (exp_dist(gen) << 23) | (r & 0x7FFFFFu);
    failures += CheckToHalf(BitsToFloat(bits)) ? 0 : 1;
  }
  // Float subnormals and zeros.
  for (int i = 0; i < 100000 && failures < 10; ++i)
    failures += CheckToHalf(BitsToFloat(static_cast<uint32_t>(gen()) & 0x807FFFFFu)) ? 0 : 1;
  EXPECT_EQ(failures, 0);
}

TEST(HalfTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {inf, -inf, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::signaling_NaN(), BitsToFloat(0x7F800001u),
                  BitsToFloat(0xFFFFFFFFu), BitsToFloat(0x7FC00000u | 0x1000u)})
    EXPECT_TRUE(CheckToHalf(f));
  // A NaN whose payload sits only in the low 13 bits must not become infinity.
  EXPECT_TRUE(HalfIsNan(FloatToHalfBits(BitsToFloat(0x7F800001u))));
  EXPECT_TRUE(std::isinf(HalfBitsToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7E00)));
}

}  // namespace
}  // namespace sluice
