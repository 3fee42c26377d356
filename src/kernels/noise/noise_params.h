// GaussianNoise in the finish step: the per-sample parameters and the per-element math, shared
// by the CPU and the GPU finish. torchvision's gaussian_noise on the float tensor:
//   out = x + (mean + z * sigma), clamped to [0, 1] when `clip`,
// x being ToTensor's value (v / 255), or the normalized value when the noise comes after
// Normalize (and then, when it comes before, Normalize runs on the noisy value). The normals z
// come from a counter-based generator keyed by the sample and the element: Philox4x32-10 on
// (pixel index, op, sample, epoch) with the seed, then Box-Muller in double, rounded to float32,
// so a sample's noise does not depend on threads, batches or the device. The float math is one
// rounding per operation (no fused multiply-add); the CPU's and the GPU's transcendental
// functions may differ in the last bit of a double, which float32 rounding almost always hides.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_NOISE_NOISE_PARAMS_H_
#define SLUICE_KERNELS_NOISE_NOISE_PARAMS_H_

#include <cmath>
#include <cstdint>

#include "core/hd.h"
#include "core/normals.h"
#include "core/rng.h"

namespace sluice {

struct NoiseParams {
  bool enabled = false;
  bool clip = true;
  bool after_normalize = false;  // the noise is added to normalized values
  bool normalize = false;        // the loader normalizes (with norm_mean, norm_std)
  float mean = 0.f, sigma = 0.f;
  float norm_mean[3] = {0.f, 0.f, 0.f}, norm_std[3] = {1.f, 1.f, 1.f};
  StreamKey key;  // the generator's: GaussianNoise's stream (MakeStreamKey)
};

namespace noise {

// The standard normals of pixel `pixel` (row-major index), one per channel.
SLUICE_HD void Normals(const NoiseParams& n, int64_t pixel, float z[3]) { StandardNormals3(n.key, pixel, z); }

// The finished value of channel c of a pixel whose RGB8 value is v, with normal z.
SLUICE_HD float Value(const NoiseParams& n, uint8_t v, int c, float z) {
  using hd::Add;
  using hd::Mul;
  float x = static_cast<float>(v) / 255.0f;
  if (n.normalize && n.after_normalize) x = (x - n.norm_mean[c]) / n.norm_std[c];
  x = Add(x, Add(n.mean, Mul(z, n.sigma)));
  if (n.clip) x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
  if (n.normalize && !n.after_normalize) x = (x - n.norm_mean[c]) / n.norm_std[c];
  return x;
}

}  // namespace noise
}  // namespace sluice

#endif  // SLUICE_KERNELS_NOISE_NOISE_PARAMS_H_
