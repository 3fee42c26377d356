// IEEE 754 binary16 conversion (round to nearest even), shared by CPU and GPU code.
#ifndef SLUICE_CORE_HALF_H_
#define SLUICE_CORE_HALF_H_

#include <cstdint>
#include <cstring>

#include "core/hd.h"

namespace sluice {

SLUICE_HD uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u) {  // Inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u | (mag > 0x7F800000u ? 0x200u : 0u));
  }
  if (mag >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to Inf
  if (mag < 0x38800000u) {  // subnormal half or zero
    if (mag < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest
    const uint32_t exp = mag >> 23;
    uint32_t mant = (mag & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - exp;  // 14 + (113 - exp) - 1 ... aligns to 10-bit mantissa
    uint32_t r = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half_point = 1u << (shift - 1u);
    if (rem > half_point || (rem == half_point && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias exponent (127 -> 15) and round the mantissa from 23 to 10 bits.
  uint32_t h = ((mag - 0x38000000u) >> 13);
  const uint32_t rem = mag & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

SLUICE_HD float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = static_cast<float>(mant) * 5.9604644775390625e-8f;
      std::memcpy(&x, &f, sizeof(x));
      x |= sign;
    }
  } else if (exp == 31) {
    x = sign | 0x7F800000u | (mant << 13);
  } else {
    x = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

}  // namespace sluice

#endif  // SLUICE_CORE_HALF_H_
