// Neighbourhood steps ("filters") that run between the colour steps on an RGB8 image and keep
// its size: GaussianBlur, the sharpness adjustment of RandAugment/TrivialAugmentWide, and their
// shear/translate/rotate (an affine warp of the whole image). Parameters and per-pixel math,
// shared by the CPU and the GPU kernels; torchvision.transforms.v2.functional's formulas on
// uint8 images:
//   - gaussian_blur: a kx x ky kernel (the outer product of two 1-D Gaussians, each normalized
//     to sum 1), reflect padding (mirror without repeating the edge), rounded half to even.
//     torchvision convolves in float32 with the 2-D kernel; we convolve separably in double
//     (rows, then columns, each product and sum rounded on its own), so the CPU and the GPU
//     agree bit for bit and differ from torchvision only where the exact value lies within
//     ~1e-4 of a rounding boundary.
//   - adjust_sharpness: interior pixels blend with round(3x3 box blur with centre weight 5 / 13)
//     as v + (1 - factor) * (blurred - v) in float32 with one rounding (torch's add with alpha
//     is a fused multiply-add), clamped and truncated; border pixels are unchanged.
//   - affine: warp_params.h's WarpPixel over the whole image.
//   - elastic (ElasticTransform, CPU only): a displacement field drawn per sample
//     (kernels/filter/elastic.h) and grid_sample at the displaced points.
//
// Thread-safety: plain values and pure functions.
#ifndef SLUICE_KERNELS_FILTER_FILTER_PARAMS_H_
#define SLUICE_KERNELS_FILTER_FILTER_PARAMS_H_

#include <cstdint>

#include "core/hd.h"
#include "core/rng.h"
#include "kernels/warp/warp_params.h"

namespace sluice {

enum class FilterKind : uint8_t { kGaussianBlur, kSharpness, kAffine, kElastic, kAugMix };

struct FilterStep {
  static constexpr int kMaxTaps = 63;  // the largest blur kernel side
  FilterKind kind = FilterKind::kGaussianBlur;
  int kx = 1, ky = 1;                  // blur kernel width and height (odd)
  float wx[kMaxTaps] = {}, wy[kMaxTaps] = {};  // blur weights, torchvision's float32 values
  float sigma = 0.0f;                  // blur: the sigma drawn (for reports)
  float alpha = 0.0f;                  // sharpness: 1 - factor, computed in double, as torch's alpha
  WarpParams warp;                     // affine: window = the whole image; elastic: filter and fill
  float elastic_alpha[2] = {0.f, 0.f};  // elastic: torchvision's alpha and sigma (x, y)
  float elastic_sigma[2] = {0.f, 0.f};
  StreamKey key;                        // elastic: the noise's stream
};

namespace filter {

// torch's "reflect" padding index: -1 -> 1, n -> n - 2 (repeated for kernels wider than the
// image, where torch refuses).
SLUICE_HD int Reflect(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

SLUICE_HD uint8_t RoundToU8(double v) { return warp::ToU8(v); }

// Blurred pixel (x, y) of a w x h image; fetch(x, y, rgb) reads a pixel.
template <typename Fetch>
SLUICE_HD void BlurPixel(const FilterStep& f, int w, int h, int x, int y, const Fetch& fetch, uint8_t out[3]) {
  using hd::Add;
  using hd::Mul;
  double acc[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < f.ky; ++i) {
    const int yy = Reflect(y + i - f.ky / 2, h);
    double row[3] = {0.0, 0.0, 0.0};
    for (int j = 0; j < f.kx; ++j) {
      uint8_t px[3];
      fetch(Reflect(x + j - f.kx / 2, w), yy, px);
      const double wj = f.wx[j];
      for (int c = 0; c < 3; ++c) row[c] = Add(row[c], Mul(wj, static_cast<double>(px[c])));
    }
    const double wi = f.wy[i];
    for (int c = 0; c < 3; ++c) acc[c] = Add(acc[c], Mul(wi, row[c]));
  }
  for (int c = 0; c < 3; ++c) out[c] = RoundToU8(acc[c]);
}

// v + alpha * d in float32 with one rounding, clamped to [0, 255] and truncated (alpha has 24
// significant bits and d at most 9, so the double product and sum are exact).
SLUICE_HD uint8_t FusedBlendU8(uint8_t v, float alpha, int d) {
  const float r = static_cast<float>(static_cast<double>(v) + static_cast<double>(alpha) * d);
  return static_cast<uint8_t>(r < 0.0f ? 0.0f : (r > 255.0f ? 255.0f : r));
}

// Sharpened pixel (x, y).
template <typename Fetch>
SLUICE_HD void SharpenPixel(const FilterStep& f, int w, int h, int x, int y, const Fetch& fetch, uint8_t out[3]) {
  fetch(x, y, out);
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) return;  // also every pixel when w or h <= 2
  int sum[3] = {0, 0, 0};
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      uint8_t px[3];
      fetch(x + dx, y + dy, px);
      const int wgt = dx == 0 && dy == 0 ? 5 : 1;
      for (int c = 0; c < 3; ++c) sum[c] += wgt * px[c];
    }
  // round(sum / 13): never a tie (13 is odd), so the nearest integer.
  for (int c = 0; c < 3; ++c) {
    const int blurred = (2 * sum[c] + 13) / 26;
    out[c] = FusedBlendU8(out[c], f.alpha, blurred - out[c]);
  }
}

// Any filter's pixel (x, y) of a w x h image.
template <typename Fetch>
SLUICE_HD void FilterPixel(const FilterStep& f, int w, int h, int x, int y, const Fetch& fetch, uint8_t out[3]) {
  switch (f.kind) {
    case FilterKind::kGaussianBlur: BlurPixel(f, w, h, x, y, fetch, out); break;
    case FilterKind::kSharpness: SharpenPixel(f, w, h, x, y, fetch, out); break;
    case FilterKind::kAffine: WarpPixel(f.warp, x, y, fetch, out); break;
    case FilterKind::kElastic:  // needs its field: ElasticCpu
    case FilterKind::kAugMix: fetch(x, y, out); break;  // needs the sample's chains: ApplyAugMix
  }
}

}  // namespace filter
}  // namespace sluice

#endif  // SLUICE_KERNELS_FILTER_FILTER_PARAMS_H_
