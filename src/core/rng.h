// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11) and the per-sample stream
// every random sluice decision draws from.
//
// A stream is keyed by (seed, epoch, sample index, op index): the same sample gets the same crop
// whatever the thread, the batch size, the device or the number of ranks, because nothing
// depends on the order in which samples are processed.
//
// Thread-safety: values; each thread uses its own SampleRng.
#ifndef SLUICE_CORE_RNG_H_
#define SLUICE_CORE_RNG_H_

#include <cstdint>

#include "core/hd.h"

namespace sluice {

struct Philox4x32 {
  uint32_t v[4];
};

// Philox4x32 with 10 rounds: a bijection of the 128-bit counter under a 64-bit key.
SLUICE_HD Philox4x32 Philox4x32_10(Philox4x32 ctr, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * ctr.v[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * ctr.v[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    ctr = Philox4x32{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
  }
  return ctr;
}

// Op index reserved for the sampler's shuffle (transform ops use their position in the list).
inline constexpr uint32_t kShuffleStream = 0xFFFFFFFFu;

// The key of one (seed, epoch, sample, op) stream, as Philox's key (k0, k1) and the fixed words of
// its counter (op, sample, epoch). The one place a stream's identity is computed: SampleRng draws
// from it, and GaussianNoise keys its per-element normals with it.
struct StreamKey {
  uint32_t k0 = 0, k1 = 0, op = 0, sample = 0, epoch = 0;
};

SLUICE_HD StreamKey MakeStreamKey(uint64_t seed, uint64_t epoch, uint64_t sample, uint32_t op) {
  // The high halves of the sample index are mixed into the epoch word so that large values stay
  // distinct.
  return StreamKey{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), op, static_cast<uint32_t>(sample),
                   static_cast<uint32_t>(epoch) ^ static_cast<uint32_t>(sample >> 32) * 0x9E3779B9u};
}

// The random stream of one (seed, epoch, sample, op). Draws are numbered; the n-th draw is a
// pure function of the key and n.
class SampleRng {
 public:
  SLUICE_HD SampleRng(uint64_t seed, uint64_t epoch, uint64_t sample, uint32_t op)
      : key_(MakeStreamKey(seed, epoch, sample, op)) {}

  SLUICE_HD const StreamKey& key() const { return key_; }

  SLUICE_HD uint32_t NextU32() {
    if (used_ == 4) {
      block_ = Philox4x32_10(Philox4x32{{counter_++, key_.op, key_.sample, key_.epoch}}, key_.k0, key_.k1);
      used_ = 0;
    }
    return block_.v[used_++];
  }

  SLUICE_HD uint64_t NextU64() {
    const uint64_t hi = NextU32();
    return (hi << 32) | NextU32();
  }

  // Uniform in [0, 1) with 53 random bits.
  SLUICE_HD double Uniform01() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

  // Uniform in [a, b).
  SLUICE_HD double Uniform(double a, double b) { return a + (b - a) * Uniform01(); }

  // Uniform integer in [lo, hi) without modulo bias. REQUIRES: lo < hi.
  SLUICE_HD int64_t RandInt(int64_t lo, int64_t hi) {
    // In unsigned arithmetic: spans of 2^63 or more must not overflow.
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    // Rejection sampling on the largest multiple of `range` below 2^64.
    const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % range + 1) % range;
    uint64_t x = NextU64();
    while (x > limit) x = NextU64();
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
  }

  SLUICE_HD bool Bernoulli(double p) { return Uniform01() < p; }

 private:
  StreamKey key_;
  uint32_t counter_ = 0;
  uint32_t used_ = 4;
  Philox4x32 block_{{0, 0, 0, 0}};
};

}  // namespace sluice

#endif  // SLUICE_CORE_RNG_H_
