// StandardNormals3: three standard normals per element of a sample's random stream, for the
// per-pixel noise of GaussianNoise and of RandomErasing(value="random"), the same on the CPU and
// the GPU up to the last bit of their log/sin/cos in double, which float32 rounding almost
// always hides.
//
// Thread-safety: a pure function.
#ifndef SLUICE_CORE_NORMALS_H_
#define SLUICE_CORE_NORMALS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"
#include "core/rng.h"

namespace sluice {

// Three standard normals for element `element` of a stream (GaussianNoise's per pixel, a random
// RandomErasing's): Philox4x32-10 on (element, op, sample, epoch) with the seed as the key, then
// Box-Muller in double, rounded to float32: a pure function of the key and the element.
SLUICE_HD void StandardNormals3(const StreamKey& key, int64_t element, float z[3]) {
  const Philox4x32 r = Philox4x32_10(
      Philox4x32{{static_cast<uint32_t>(element), key.op ^ (static_cast<uint32_t>(element >> 32) * 0x9E3779B9u),
                  key.sample, key.epoch ^ 0x6A09E667u}},
      key.k0, key.k1);
  constexpr double kTwoPi = 6.283185307179586476925;
  const double u1 = (static_cast<double>(r.v[0]) + 1.0) * 0x1.0p-32;  // (0, 1]
  const double u2 = static_cast<double>(r.v[1]) * 0x1.0p-32;
  const double u3 = (static_cast<double>(r.v[2]) + 1.0) * 0x1.0p-32;
  const double u4 = static_cast<double>(r.v[3]) * 0x1.0p-32;
  const double a = sqrt(-2.0 * log(u1)), b = sqrt(-2.0 * log(u3));
  z[0] = static_cast<float>(a * cos(kTwoPi * u2));
  z[1] = static_cast<float>(a * sin(kTwoPi * u2));
  z[2] = static_cast<float>(b * cos(kTwoPi * u4));
}

}  // namespace sluice

#endif  // SLUICE_CORE_NORMALS_H_
